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
import { newUuid } from '../util/ids.js';

/** The data dir's id (a UUID), on every station request. */
export const INSTALL_HEADER = 'x-labstation-install';
/** The machine's host name, URI-encoded (a header carries ASCII only); shown to admins. */
export const HOST_HEADER = 'x-labstation-host';

/**
 * The `code` of the server's 409 when another Labstation holds the key: the station waits and
 * asks again (the holder may be gone for good), and shows the server's `detail`.
 */
export const KEY_IN_USE = 'station_key_in_use';
/** The `code` of the server's 400 for identity headers it cannot read. */
export const BAD_IDENTITY = 'bad_station_identity';

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Read once: every request of this process names the same machine. */
const HOST = hostname();

/**
 * This data dir's id: made at its first use, and made anew when the data dir is used on
 * another machine than the one it was made on (a PC image cloned with it), so that the clone
 * is another Labstation to the server. Read and written in one transaction: processes on one
 * data dir (a station and a `harvest --once` beside it) get the same id.
 */
export function installId(db: Db): string {
  return db
    .transaction((): string => {
      const known = getSetting(db, 'sync.install');
      if (known !== null && UUID_PATTERN.test(known.id) && known.host === HOST) return known.id;
      const made = newUuid();
      setSetting(db, 'sync.install', { id: made, host: HOST });
      return made;
    })
    .immediate();
}

/** The headers of every request a station makes to its server with `key`. */
export function stationHeaders(db: Db, key: string): Record<string, string> {
  return {
    authorization: `Station ${key}`,
    [INSTALL_HEADER]: installId(db),
    [HOST_HEADER]: encodeURIComponent(HOST),
  };
}
