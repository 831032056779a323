import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';

/** Settings of a data dir (station or server), stored as JSON values in the settings table. */
export interface StationSettings {
  /** Which role this data dir serves; fixed by its first `station`, `serve` or `admin` use. */
  mode: 'station' | 'server' | null;
  'server.jwtSecret': string | null;
  /** LABSTATION_ADMIN_EMAIL has made its admin once (it is not made again after a rename). */
  'server.envAdminMade': boolean;
  /** IANA time zone of naive date-times in the NEMO API; null = this machine's zone. */
  'server.timeZone': string | null;
  /** Address of the server as people reach it, for links in e-mail; null = the listen URL. */
  'server.publicUrl': string | null;
  /** smtp://user:pass@host:port (or smtps://); null = mail written as .eml files under <data>/mail/. */
  'mail.smtpUrl': string | null;
  /** From address of the server's e-mail; null = Labstation <labstation@localhost>. */
  'mail.from': string | null;
  /** Hours after the first notice before the pending-answers reminder; null or 0 = none. */
  'mail.reminderHours': number | null;
  'station.tool': string | null;
  'station.lockMode': boolean;
  /** The server this station syncs with (base URL ending in /), null = standalone. */
  'sync.server': string | null;
  /** The station's key on that server (kept here: the station must send it). */
  'sync.key': string | null;
  /**
   * A hash of the `--server` and `--key` a start last applied (runStation.ts): the same flags
   * again, at each start of a service, do not undo what staff set in Settings since.
   */
  'sync.startFlags': string | null;
  /**
   * When the station last exchanged with its server, kept (at most a minute behind: linkStatus.ts)
   * so that the status line says it after a restart too, not "never synced".
   */
  'sync.lastSyncAt': string | null;
  /**
   * This data dir's id, sent with the key, and the host it was made on (sync/identity.ts);
   * made at its first use, and anew on another host, which keeps the id before as `previous`.
   */
  'sync.install': { id: string; host: string; previous?: string | null } | null;
  /**
   * Days a record the server acknowledged is kept with its payload, to be sent again should the
   * server come back from a backup older than it (sync/resend.ts); 0 keeps none.
   */
  'sync.keepSentDays': number;
  /**
   * The key the kept records were acknowledged for, and the highest id below which
   * no record is sent again (a server whose count for this data dir started anew, not one
   * restored): sync/resend.ts.
   */
  'sync.sent': { link: string; floor: number } | null;
  'idle.logoffMinutes': number;
  'idle.forceEndMinutes': number | null;
  'security.lockMinutes': number;
  /** NAAN and shoulder of the ARKs this station mints; null = the test ones (99999/fk4). */
  'harvest.ark': { naan: string; shoulder: string } | null;
  /** Minutes between full rescans of the watched folders (the watcher misses things on shares). */
  'harvest.rescanMinutes': number;
  /** Transfers at once. */
  'harvest.concurrency': number;
  /** First retry of a failed transfer after this many seconds, doubling up to the maximum. */
  'harvest.retryBaseSeconds': number;
  'harvest.retryMaxSeconds': number;
  /** A harvest run (a trigger, a schedule) reports what it did by then at the latest. */
  'harvest.runTimeoutMinutes': number;
  /**
   * Run `command` hooks that came from the server. Off by default: a server admin would
   * otherwise choose programs to run on every station.
   */
  'harvest.serverCommandHooks': boolean;
  /**
   * When a facility bundle was last imported (`labstation import`): a station already running
   * on the data dir sees it change and takes the new harvest configuration.
   */
  'harvest.importedAt': string | null;
  /**
   * Local storage locations' folders seen as the root of a mounted file system (a share, a
   * disk): should one later be a plain folder again, its share is not mounted, and copies fail
   * rather than fill the local disk under the empty mount point (harvest/place.ts).
   */
  'harvest.mountedBases': string[];
}

export const DEFAULT_SETTINGS: StationSettings = {
  mode: null,
  'server.jwtSecret': null,
  'server.envAdminMade': false,
  'server.timeZone': null,
  'server.publicUrl': null,
  'mail.smtpUrl': null,
  'mail.from': null,
  'mail.reminderHours': 24,
  'station.tool': null,
  'station.lockMode': false,
  'sync.server': null,
  'sync.key': null,
  'sync.startFlags': null,
  'sync.lastSyncAt': null,
  'sync.install': null,
  'sync.keepSentDays': 7,
  'sync.sent': null,
  'idle.logoffMinutes': 10,
  'idle.forceEndMinutes': null,
  'security.lockMinutes': 5,
  'harvest.ark': null,
  'harvest.rescanMinutes': 5,
  'harvest.concurrency': 2,
  'harvest.retryBaseSeconds': 30,
  'harvest.retryMaxSeconds': 3600,
  'harvest.runTimeoutMinutes': 60,
  'harvest.serverCommandHooks': false,
  'harvest.importedAt': null,
  'harvest.mountedBases': [],
};

export function getSetting<K extends keyof StationSettings>(db: Db, key: K): StationSettings[K] {
  const raw = cachedStatement(db, 'SELECT value FROM settings WHERE key = ?').pluck().get(key) as
    string | undefined;
  return raw === undefined ? DEFAULT_SETTINGS[key] : (JSON.parse(raw) as StationSettings[K]);
}

export function setSetting<K extends keyof StationSettings>(
  db: Db,
  key: K,
  value: StationSettings[K],
): void {
  db.prepare(
    'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  ).run(key, JSON.stringify(value));
}
