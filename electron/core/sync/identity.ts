/**
 * Which Labstation calls the server with a station key. A key serves one station; the same key
 * set on two (typed into a second station, a PC image cloned with its data dir) would mix two
 * instruments' usage and files under one station without anyone noticing. So every request
 * names the data dir it comes from (an id made once per data dir, made anew when the data dir
 * turns up on another machine: a clone) and the machine's host name; the server holds a key
 * to the one data dir that uses it and refuses another while that one is in use
 * (server/sync/stationAuth.ts). Not a secret: the key is; this only catches a mistake.
 */
import { hostname } from 'node:os';
import type { Db } from '../db/open.js';
import { getSetting, setSetting } from '../station/settings.js';
import { newUuid, UUID_PATTERN } from '../util/ids.js';

/** The data dir's id (a UUID), on every station request. */
export const INSTALL_HEADER = 'x-labstation-install';
/** The machine's host name, URI-encoded (a header carries ASCII only); shown to admins. */
export const HOST_HEADER = 'x-labstation-host';
/**
 * The id this data dir had on the machine before (restored, or cloned, onto another, or its
 * machine renamed): the server lets it take the key from that one at once, with what it took
 * from that one (sync/restored.ts).
 */
export const PREVIOUS_HEADER = 'x-labstation-previous-install';

/**
 * The `code` of the server's 409 when another Labstation holds the key: the station waits and
 * asks again (the holder may be gone for good), and shows the server's `detail`.
 */
export const KEY_IN_USE = 'station_key_in_use';
/** The `code` of the server's 400 for identity headers it cannot read. */
export const BAD_IDENTITY = 'bad_station_identity';

/** Read once: every request of this process names the same machine. */
const HOST = hostname();

/** Each database's id, as this process read or made it: it does not change while it runs. */
const known = new WeakMap<Db, { id: string; previous: string | null }>();

/**
 * This data dir's id: made at its first use, and made anew when the data dir is used on
 * another machine than the one it was made on (a PC image cloned with it), so that the clone
 * is another Labstation to the server. Read and written in one transaction: processes on one
 * data dir (a station and a `harvest --once` beside it) get the same id. Read once per
 * process (an upload asks for every file).
 */
export function installId(db: Db): { id: string; previous: string | null } {
  const read = known.get(db);
  if (read) return read;
  const install = readOrMakeInstallId(db);
  known.set(db, install);
  return install;
}

function readOrMakeInstallId(db: Db): { id: string; previous: string | null } {
  return db
    .transaction(() => {
      const stored = getSetting(db, 'sync.install');
      const valid = stored !== null && UUID_PATTERN.test(stored.id);
      if (valid && stored.host === HOST) {
        const previous = stored.previous ?? null;
        return {
          id: stored.id,
          previous: previous && UUID_PATTERN.test(previous) ? previous : null,
        };
      }
      const made = { id: newUuid(), host: HOST, previous: valid ? stored.id : null };
      setSetting(db, 'sync.install', made);
      return { id: made.id, previous: made.previous };
    })
    .immediate();
}

/** The headers of every request a station makes to its server with `key`. */
export function stationHeaders(db: Db, key: string): Record<string, string> {
  const install = installId(db);
  return {
    authorization: `Station ${key}`,
    [INSTALL_HEADER]: install.id,
    [HOST_HEADER]: encodeURIComponent(HOST),
    ...(install.previous === null ? {} : { [PREVIOUS_HEADER]: install.previous }),
  };
}
