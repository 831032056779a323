/**
 * Which Labstation calls the server with a station key. A key serves one station; the same key
 * set on two (typed into a second station, a PC image cloned with its data dir) would mix two
 * instruments' usage and files under one station without anyone noticing. So every request
 * names the data dir it comes from (an id made once per data dir) and the machine's host name;
 * the server holds a key to the one that uses it and refuses another while that one is in use
 * (server/sync/stationAuth.ts). Not a secret: the key is; this only catches a mistake.
 */
import { hostname } from 'node:os';
import type { Db } from '../db/open.js';
import { getSetting, setSetting } from '../station/settings.js';
import { newUuid } from '../util/ids.js';

/** The data dir's id (a UUID), on every station request. */
export const INSTALL_HEADER = 'x-labstation-install';
/** The machine's host name, URI-encoded (a header carries ASCII only). */
export const HOST_HEADER = 'x-labstation-host';

/**
 * The `code` of the server's 409 when another Labstation holds the key: the station waits and
 * asks again (the holder may be gone for good), and shows the server's `detail`.
 */
export const KEY_IN_USE = 'station_key_in_use';

/** This data dir's id, made at its first use. */
export function installId(db: Db): string {
  const known = getSetting(db, 'sync.install');
  if (known !== null) return known;
  const made = newUuid();
  setSetting(db, 'sync.install', made);
  return made;
}

/** The headers of every request a station makes to its server with `key`. */
export function stationHeaders(db: Db, key: string): Record<string, string> {
  return {
    authorization: `Station ${key}`,
    [INSTALL_HEADER]: installId(db),
    [HOST_HEADER]: encodeURIComponent(hostname()),
  };
}
