/**
 * The one contract between the UI and the core: call name -> argument schema and result type.
 * Both carriers (Electron IPC and `POST /rpc/<name>`) validate arguments with these schemas
 * and dispatch to the same handler map, so they cannot drift.
 */
import { z } from 'zod';
import { adminSchemas, type AdminResults } from './adminApi.js';
import type { ApiError } from './errors.js';
import { harvestApiAccess, harvestApiSchemas, type HarvestApiResults } from './harvestAdminApi.js';
import { notebookApiSchemas, type NotebookApiResults } from './notebookApi.js';
import type { Answers, Question } from './questions/index.js';
import { FILE_STATES, type FileState, type TransferStatus } from './harvest/management.js';
import {
  reservationApiAccess,
  reservationSchemas,
  type ReservationApiResults,
} from './reservationApi.js';
import {
  stationReservationSchemas,
  type StationReservationResults,
} from './stationReservationApi.js';

/** A record named by its integer id, its UUID, or (for people, tools, projects) its name. */
const ref = z.union(
  [
    z.number().int().positive('must be an id above 0'),
    z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  ],
  { error: 'must be an id (a whole number above 0), a UUID or a name' },
);
const isoDateOrTime = z
  .string()
  .regex(
    /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/,
    'must be an ISO 8601 date (YYYY-MM-DD) or date-time',
  );
const answers = z.unknown();
const empty = z.object({}).strict();

export const apiSchemas = {
  'station.info': empty,
  'session.logon': z
    .object({ login: z.string().trim().min(1).max(200), pin: z.string().min(1).max(64) })
    .strict(),
  'session.logoff': empty,
  'session.current': empty,
  'session.touch': empty,
  'toolControl.status': z.object({ tool: ref }).strict(),
  'toolControl.enable': z
    .object({
      tool: ref,
      project: ref,
      answers,
      user: ref.optional(),
      remoteWork: z.boolean().optional(),
    })
    .strict(),
  'toolControl.disable': z
    .object({
      tool: ref,
      answers,
      /**
       * The uuid of the usage the answers were given for (the form as shown): refused
       * (conflict) when another usage is active now. Left out: the one active now.
       */
      usage: z.string().min(1).max(200).optional(),
    })
    .strict(),
  'toolControl.forceEnd': z.object({ tool: ref }).strict(),
  'toolControl.validate': z.object({ usage: ref }).strict(),
  'toolControl.clearShutdown': z.object({ tool: ref }).strict(),
  'usage.history': z
    .object({
      tool: ref,
      /**
       * Whose events: staff may name anyone (none: everyone's); anyone else gets only their own
       * (none: theirs too) and is refused `forbidden` for someone else, as on the server.
       */
      user: ref.optional(),
      from: isoDateOrTime.optional(),
      to: isoDateOrTime.optional(),
    })
    .strict(),
  'usage.pending': empty,
  'usage.completePending': z.object({ usage: ref, answers }).strict(),
  'users.list': z.object({ tool: ref }).strict(),
  'sync.status': empty,
  'settings.get': empty,
  'settings.setSync': z
    .object({ server: z.string().max(2000), key: z.string().max(500).optional() })
    .strict(),
  'settings.setDesktopMode': z
    .object({
      mode: z.enum(['station', 'server']),
      port: z.number().int().min(1).max(65535).optional(),
      /** Listen on every network interface (other computers reach it), not only on this PC. */
      network: z.boolean().optional(),
      admin_email: z.string().max(320).optional(),
      admin_password: z.string().max(200).optional(),
    })
    .strict(),
  'harvest.status': empty,
  'harvest.files': z
    .object({
      state: z.enum(FILE_STATES).optional(),
      limit: z.number().int().min(1).max(1000).optional(),
      /** Page further back: files with a smaller id. */
      before_id: z.number().int().positive().optional(),
      /** An ARK (ark:NAAN/name or ark:/NAAN/name) finds its file; other text, the files whose
       * path below the watched folder holds it (ignoring case). */
      search: z
        .string()
        .trim()
        .min(1, 'must hold something to look for')
        // A whole source path pasted from a file's details: as long as a system's paths go.
        .max(4096, 'must be at most 4096 characters')
        .optional(),
    })
    .strict(),
  'harvest.file': z.object({ id: z.number().int().positive() }).strict(),
  'harvest.retry': z.object({ file_id: z.number().int().positive() }).strict(),
  'harvest.retryAll': empty,
  'harvest.rescan': empty,
  ...notebookApiSchemas,
  ...stationReservationSchemas,
} as const;

export type ApiName = keyof typeof apiSchemas;
export type ApiArgs<N extends ApiName> = z.input<(typeof apiSchemas)[N]>;
export type ApiParsedArgs<N extends ApiName> = z.output<(typeof apiSchemas)[N]>;
export const API_NAMES = Object.keys(apiSchemas) as ApiName[];

export function isApiName(name: string): name is ApiName {
  return Object.prototype.hasOwnProperty.call(apiSchemas, name);
}

export interface UserSummary {
  id: number;
  uuid: string;
  username: string;
  first_name: string;
  last_name: string;
  is_staff: boolean;
}

export interface ProjectSummary {
  id: number;
  uuid: string;
  name: string;
  application_identifier: string;
}

export interface ToolInfo {
  id: number;
  uuid: string;
  name: string;
  pre_usage_questions: Question[];
  post_usage_questions: Question[];
}

/** A usage event as stored (spec 000 fields), plus names for display. */
export interface UsageEventView {
  id: number;
  uuid: string;
  user_id: number;
  operator_id: number;
  project_id: number;
  tool_id: number;
  start: string;
  end: string | null;
  validated: boolean;
  validated_by_id: number | null;
  remote_work: boolean;
  pre_run_data: string;
  run_data: string;
  /** Post-usage questions were not answered because the usage was force-ended. */
  post_usage_pending: boolean;
  /** A reminder e-mail about the pending post-usage questions is due (the server sends it). */
  reminder_due: boolean;
  force_ended_by_id: number | null;
  user_name: string;
  operator_name: string;
  project_name: string;
  tool_name: string;
  validated_by_name: string | null;
  /**
   * On the server, a pending form answered there first and, offline, at the station too: the
   * station's answers (JSON text, as run_data), which were not kept. Absent when there are none.
   */
  station_answers_not_kept?: string;
}

/** The usage a harvested file was made during, as the Data tab names it. */
export interface FileUsageView {
  uuid: string;
  user_name: string;
  project_name: string;
  tool_name: string;
  start: string;
  end: string | null;
  /**
   * Held on another station, not this one: a file of an instrument's history made there, named
   * as the server described the usage when it sent the history.
   */
  elsewhere: boolean;
}

export type ToolState = 'idle' | 'in_use' | 'shutdown';

export interface ToolStatus {
  tool: ToolInfo;
  state: ToolState;
  active: UsageEventView | null;
  shutdown: { reason: string; since: string } | null;
  /**
   * False while staff have marked the tool not operational (the server's tool admin): only
   * staff may start a usage on it. A shutdown by a problem report is `shutdown` above.
   */
  operational: boolean;
}

export interface PendingForm {
  usage: UsageEventView;
  questions: Question[];
}

export interface SessionInfo {
  user: UserSummary;
  projects: ProjectSummary[];
  qualified: boolean;
  pending: PendingForm[];
  started_at: string;
}

export interface StationInfo {
  role: 'station';
  tool: string | null;
  idle: { logoffMinutes: number; forceEndMinutes: number | null };
  lockMode: boolean;
}

/** The station's link to the server, for the screen: configured, reachable, what is waiting. */
export interface SyncStatus {
  configured: boolean;
  online: boolean;
  lastSyncAt: string | null;
  /** Records recorded here and not yet acknowledged by the server. */
  waiting: number;
  /**
   * Among `waiting`: records the server refused at their last try. They are set aside (the rest
   * still goes) and offered again later, when the facility changes, or when the link restarts.
   */
  refused: number;
  /** Why the oldest of them was refused. */
  refusedReason: string | null;
  lastError: string | null;
  /**
   * The server's reason for refusing this station's key (401: unknown, replaced, or the station
   * disabled) or for holding it for another Labstation (409), until an exchange goes through;
   * null otherwise. Not an outage that passes, so the status line says it.
   */
  keyRefused: string | null;
  /**
   * This station's clock minus the server's, in whole seconds, from the server's last answer
   * (its `Date` header); null before the first answer. Past CLOCK_SKEW_WARN_SECONDS
   * (shared/clock.ts) the station says so.
   */
  clockSkewSeconds: number | null;
}

/** What staff can set at a station: its server link, and (desktop app) the app's role. */
export interface StationSettingsView {
  sync: { server: string | null; keySet: boolean };
  /** null where no desktop shell runs (headless station, browser mode). */
  desktop: { mode: 'station' | 'server'; port: number; network: boolean } | null;
}

/** A transfer record: spec 002's fields, plus the error text and a note. */
export interface HarvestTransferView {
  id: number;
  uuid: string;
  file_id: number;
  persistent_id: string;
  status: TransferStatus;
  storage_location: string | null;
  destination_path: string | null;
  bytes_transferred: number;
  dest_checksum: string | null;
  checksum_verified: boolean;
  started_at: string;
  completed_at: string | null;
  /** Why a failed transfer failed. */
  error: string;
  /** E.g. that the copy got another name because the destination held other content. */
  note: string;
}

/** A file record: spec 002's fields, plus what the station knows about its harvest. */
export interface HarvestFileView {
  id: number;
  uuid: string;
  persistent_id: string;
  persistent_id_type: 'ark';
  /** Minted under the test NAAN 99999: not a real persistent identifier. */
  test_identifier: boolean;
  instrument: string;
  source_path: string;
  relative_path: string;
  filename: string;
  size: number;
  mtime: string;
  xxhash: string | null;
  hash_algorithm: string;
  first_discovered_at: string;
  /** UUID of the usage event active when the file was first seen. */
  usage_event: string | null;
  metadata_: Record<string, unknown>;
  /** waiting (for its transfer), failed (retried later), done (completed or skipped), gone. */
  state: FileState;
  attempts: number;
  next_attempt_at: string | null;
  last_transfer: HarvestTransferView | null;
}

export interface ActiveTransfer {
  file_id: number;
  filename: string;
  /** Below the watched folder: tells apart files of one name in two folders. */
  relative_path: string;
  persistent_id: string;
  bytes_done: number;
  bytes_total: number;
  /** Bytes per second over the transfer so far (the Data tab shows the last seconds' rate). */
  rate: number;
  /** Seconds left at that rate; null before the rate is known. */
  seconds_left: number | null;
  started_at: string;
}

/** A file found and not yet stable: being written, or inside its stability window. */
export interface SettlingFile {
  instrument: string;
  /** Below the watched folder. */
  relative_path: string;
  /** Its size when last seen. */
  size: number;
  /** When its size or mtime was last seen to change (or it was found). */
  changed_at: string;
  /** Why it would not open for reading at its last check (an errno code, EBUSY), or null. */
  open_error: string | null;
}

export interface HarvestStatus {
  /** False where this station has no enabled instrument on its tool, or `problem` says why. */
  running: boolean;
  /** Why the station does not harvest now (another harvest holds the data dir), or null. */
  problem: string | null;
  /**
   * The harvest has started and read its instruments: `instruments` are all it harvests (none
   * when every instrument of the tool is turned off). False in a station's first seconds (it
   * waits up to 5 s for the server's first answer) and where no harvest runs at all.
   */
  started: boolean;
  instruments: {
    name: string;
    watch: string[];
    storage: string | null;
    problem: string | null;
    /** Taken over by this station and not harvested until the server sent its files' records. */
    waiting_for_history: boolean;
  }[];
  active: ActiveTransfer[];
  /** Files found and not yet stable (still being written, or inside the stability window). */
  settling: number;
  /** Of those, the five that changed last, newest change first: what is being written now. */
  settling_files: SettlingFile[];
  /** Stable files waiting for a transfer slot. */
  queued: number;
  /** Files whose last transfer failed (retried later or on request). */
  failed: number;
  /**
   * Changes when what the failure list shows does (a file fails, fails again, is made due by a
   * Retry, or is no longer failed; an instrument or a storage location is renamed; a page of
   * an instrument's history is taken), not when other files complete: the Data tab reads the
   * failure list again only then. A token to compare, nothing to read a meaning from.
   */
  failures_version: string;
  /**
   * What Retry all takes now: the failed files of the instruments harvested here that wait for
   * no history and are not being tried already (queued or under way). 0 where no harvest runs.
   */
  retriable: number;
  today: { completed: number; skipped: number; failed: number; bytes: number };
  /** The ARK authority in use, and whether it is the test one (99999/fk4). */
  ark: { naan: string; shoulder: string; test: boolean };
  last_scan_at: string | null;
}

export interface QualifiedUser extends UserSummary {
  projects: ProjectSummary[];
}

export interface ApiResults extends NotebookApiResults, StationReservationResults {
  'station.info': StationInfo;
  'session.logon': SessionInfo;
  'session.logoff': { ok: true };
  'session.current': { session: SessionInfo | null };
  'session.touch': { ok: true };
  'toolControl.status': ToolStatus;
  'toolControl.enable': { usage: UsageEventView };
  'toolControl.disable': { usage: UsageEventView };
  'toolControl.forceEnd': { usage: UsageEventView };
  'toolControl.validate': { usage: UsageEventView };
  'toolControl.clearShutdown': ToolStatus;
  'usage.history': { tool: ToolInfo; events: UsageEventView[] };
  'usage.pending': { pending: PendingForm[] };
  'usage.completePending': { usage: UsageEventView };
  'users.list': { users: QualifiedUser[] };
  'sync.status': SyncStatus;
  'settings.get': StationSettingsView;
  'settings.setSync': SyncStatus;
  /** The desktop app restarts in the chosen mode once this answers. */
  'settings.setDesktopMode': { restarting: true };
  'harvest.status': HarvestStatus;
  'harvest.files': { files: HarvestFileView[] };
  /**
   * `usage`: the usage during which the file was first seen, for whom the file is whole: staff,
   * and the person whose usage it was. `withheld`: the file was made during another person's
   * usage, and its metadata, usage and destination are left out for the one logged on.
   */
  'harvest.file': {
    file: HarvestFileView;
    transfers: HarvestTransferView[];
    usage: FileUsageView | null;
    withheld: boolean;
  };
  /**
   * note: why the Retry does not copy the file now, where it waits for something (its source
   * being written again); null when it is copied in its turn.
   */
  'harvest.retry': { file: HarvestFileView; note: string | null };
  /** Every failed file of the instruments harvested here, made due now: how many. */
  'harvest.retryAll': { count: number };
  'harvest.rescan': { ok: true };
}

export type ApiResult<N extends ApiName> = ApiResults[N];

/** Events pushed from the core to every UI (server-sent events or IPC). */
export type CoreEvent =
  | { type: 'tool.changed'; tool: string }
  | { type: 'session.changed'; reason: 'logon' | 'logoff' | 'idle' | 'deactivated' }
  | { type: 'usage.changed'; usage: string }
  /** Harvest records changed (a file found, a transfer finished); progress is polled. */
  | { type: 'harvest.changed' }
  /** A notebook entry was saved (created, changed, linked or deleted) on this station. */
  | { type: 'notebook.changed'; entry: string }
  /** The tool's reservations changed (a pull brought them, or one was booked or cancelled here). */
  | { type: 'reservations.changed' }
  /** Staff changed the station's settings (its server link): other open pages read them again. */
  | { type: 'settings.changed' };

/**
 * What the Electron preload exposes as `window.labstation`. Errors do not survive the context
 * bridge with their fields, so every answer comes back as an envelope; the renderer's bridge
 * turns it into a LabstationBridge.
 */
export type RpcEnvelope<T = unknown> = { ok: true; result: T } | { ok: false; error: ApiError };

export interface LabstationPreload {
  invoke(name: ApiName, args: unknown): Promise<RpcEnvelope>;
  subscribe(listener: (event: CoreEvent) => void): () => void;
}

/** What the UI codes against: the preload (adapted) or the HTTP carrier. */
export interface LabstationBridge {
  call<N extends ApiName>(name: N, args: ApiArgs<N>): Promise<ApiResult<N>>;
  subscribe(listener: (event: CoreEvent) => void): () => void;
}

export type { Answers, Question };

/*
 * Server-mode calls: what a browser user of the server (logged in with a JWT from
 * `POST /auth/jwt/login`) may call over `POST /rpc/<name>` on the server. A separate map, so the
 * station's handler map (one handler per ApiName) stays as it is.
 */
export const serverApiSchemas = {
  'account.me': empty,
  'usage.mine': z.object({ limit: z.number().int().min(1).max(500).optional() }).strict(),
  'usage.pendingMine': empty,
  'usage.pendingForm': z.object({ usage: ref }).strict(),
  'usage.completePendingServer': z
    .object({ usage: ref, answers, version: z.number().int().min(1) })
    .strict(),
  'usage.recent': z
    .object({
      limit: z.number().int().min(1).max(500).optional(),
      /** Only the ended events nobody has validated yet: what staff have left to validate. */
      to_validate: z.boolean().optional(),
      /** Only the usage of this tool (`usage.tools` lists them). */
      tool_id: z.number().int().positive().optional(),
      /** Page further back: the events after this one in the list (older ones). */
      before_id: z.number().int().positive().optional(),
    })
    .strict(),
  'usage.tools': empty,
  'usage.validateServer': z.object({ usage: ref }).strict(),
  /** Brings a shut-down tool back into service on the server, as staff do at its station. */
  'usage.clearShutdownServer': z.object({ tool: z.number().int().positive() }).strict(),
  ...adminSchemas,
  ...harvestApiSchemas,
  ...reservationSchemas,
} as const;

export type ServerApiName = keyof typeof serverApiSchemas;
export type ServerApiArgs<N extends ServerApiName> = z.input<(typeof serverApiSchemas)[N]>;
export type ServerApiParsedArgs<N extends ServerApiName> = z.output<(typeof serverApiSchemas)[N]>;

export function isServerApiName(name: string): name is ServerApiName {
  return Object.prototype.hasOwnProperty.call(serverApiSchemas, name);
}

/**
 * Who may make each server call: any logged-in person (each handler then limits them to their
 * own records), staff and admins, or admins only. Checked in one place, before the handler
 * runs.
 */
export type ServerApiAccess = 'any' | 'staff' | 'admin';

export const serverApiAccess: Record<ServerApiName, ServerApiAccess> = {
  'account.me': 'any',
  'usage.mine': 'any',
  'usage.pendingMine': 'any',
  'usage.pendingForm': 'any',
  'usage.completePendingServer': 'any',
  'usage.recent': 'staff',
  'usage.tools': 'staff',
  'usage.validateServer': 'staff',
  'usage.clearShutdownServer': 'staff',
  'admin.facility': 'admin',
  'admin.users.save': 'admin',
  'admin.projects.save': 'admin',
  'admin.tools.save': 'admin',
  'admin.tokens.list': 'admin',
  'admin.tokens.create': 'admin',
  'admin.tokens.revoke': 'admin',
  'admin.stations.list': 'admin',
  'admin.stations.create': 'admin',
  'admin.stations.update': 'admin',
  'admin.stations.newKey': 'admin',
  'admin.mail.list': 'admin',
  'admin.mail.retry': 'admin',
  ...harvestApiAccess,
  ...reservationApiAccess,
};

export type AccountRole = 'admin' | 'staff' | 'user';

/** Staff and admins: who may make the server's 'staff' calls (serverApiAccess). */
export function isStaffRole(role: AccountRole | undefined): boolean {
  return role === 'staff' || role === 'admin';
}

export interface AccountInfo {
  id: number;
  uuid: string;
  email: string;
  username: string;
  first_name: string;
  last_name: string;
  role: AccountRole;
}

/**
 * A pending post-usage form on the server, with the version of what it shows, as loaded: the
 * answers and a station's change of the event move it, a validation does not.
 */
export interface ServerPendingForm extends PendingForm {
  version: number;
}

export interface ServerApiResults extends AdminResults, HarvestApiResults, ReservationApiResults {
  'account.me': { account: AccountInfo };
  'usage.mine': { events: UsageEventView[] };
  'usage.pendingMine': { pending: ServerPendingForm[] };
  'usage.pendingForm': { form: ServerPendingForm };
  'usage.completePendingServer': { usage: UsageEventView; version: number };
  /** Everyone's usage events (or those still to validate), newest first: what staff validate. */
  'usage.recent': { events: UsageEventView[] };
  'usage.tools': { tools: { id: number; name: string }[] };
  'usage.validateServer': { usage: UsageEventView };
  /** How many problem reports that resolved (0: the tool was not shut down). */
  'usage.clearShutdownServer': { resolved: number };
}

export type ServerApiResult<N extends ServerApiName> = ServerApiResults[N];
