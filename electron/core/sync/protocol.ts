/**
 * The station <-> server sync protocol, shared by the client (electron/core/sync) and the
 * server routes (electron/core/server/sync). Every request carries `Authorization: Station <key>`.
 *
 * Pull (server -> station), config as deltas since a cursor:
 *   GET /sync/changes?cursor=N[&wait=S]  ->  FacilityDelta
 *   With `wait`, the server holds the request up to S seconds (at most 30) until something
 *   newer than N exists, then answers; with nothing new it answers an empty delta, same cursor.
 *   Cursor 0 (or a cursor the server never issued) gets everything, with `full: true`.
 *   The station parses the answer with the schema in deltaSchema.ts (kept identical to the
 *   interfaces below by the compiler) and applies nothing of one that does not fit. The push
 *   answer, history pages and booking answers are parsed likewise (answerSchema.ts): nothing of
 *   one that does not fit is stored, and no outbox row is deleted.
 *
 * Push (station -> server), the outbox rows in id order:
 *   POST /sync/push  { records: PushRecord[] }  ->  PushResult
 *   One transaction per batch; records are upserted by uuid, so a resend changes nothing. The
 *   first record that cannot be stored stops the batch: those before it are acknowledged, it is
 *   reported in `error`, and the station resends it (and what follows) later.
 *
 * History (server -> station), the file records of an instrument the station was given:
 *   GET /sync/harvest/history?instrument=UUID[&after=ID]  ->  SyncHistoryPage
 *   Made on another station (the instrument moved) or on this one before its data dir was made
 *   anew. The station takes them before it harvests the instrument, so a file already harvested
 *   keeps its ARK and is not harvested again; it then writes those records as if its own.
 */
import type { FileState, TransferStatus } from '../../../shared/harvest/management.js';

export const SYNC_PUSH_PATH = '/sync/push';
export const SYNC_CHANGES_PATH = '/sync/changes';
/**
 * The station's clock (ISO 8601) when it sent a pull: the server dates what the pull proves the
 * station applied by the station's own clock, as the station dates its records
 * (server/sync/formerRights.ts).
 */
export const STATION_CLOCK_HEADER = 'x-labstation-clock';
/** Booking from a station while it is online (the server books for the station's tool). */
export const SYNC_RESERVATION_FORM_PATH = '/sync/reservations/form';
export const SYNC_RESERVATIONS_PATH = '/sync/reservations';
export const SYNC_RESERVATION_CANCEL_PATH = '/sync/reservations/cancel';
export const SYNC_HARVEST_HISTORY_PATH = '/sync/harvest/history';
export const MAX_PUSH_BATCH = 500;
/** File records per history page. */
export const HISTORY_PAGE = 500;
export const MAX_WAIT_SECONDS = 30;

/** The kinds of outbox rows the server takes (electron/core/server/sync/ingest.ts). */
export const PUSH_KINDS = [
  'usage_event',
  'problem_report',
  'consumable_withdrawal',
  'harvest_file',
  'harvest_transfer',
  'harvest_deployment',
  'harvest_run',
  'notebook_entry',
] as const;
export type PushKind = (typeof PUSH_KINDS)[number];
/** `kind IN (...)` for the outbox rows the push sends. */
export const PUSH_KINDS_SQL = PUSH_KINDS.map((k) => `'${k}'`).join(', ');

export interface PushRecord {
  /** The station's outbox row id: what the answer acknowledges. */
  id: number;
  kind: PushKind;
  uuid: string;
  payload: Record<string, unknown>;
}

/**
 * The refusal of a transfer completed into a `server` storage location of which the server
 * holds no finished upload (server/sync/transferLocation.ts checkUploaded): the station sends
 * the file again and offers the transfer again once that is done.
 */
export const UPLOAD_MISSING = 'upload_missing';

export interface PushError {
  id: number;
  kind: string;
  uuid: string;
  /** unknown_reference | invalid | forbidden | conflict | upload_missing (UPLOAD_MISSING) */
  code: string;
  detail: string;
  /**
   * With unknown_reference: the record the server lacks, by its table and uuid. A station that
   * made it pushes it again (a new server, or one restored from a backup, lacks what it took
   * before), and holds the refused record until the server has it.
   */
  missing?: { table: string; uuid: string };
}

export interface PushResult {
  /** Outbox ids the server has stored (or already had): the station deletes exactly these. */
  acked: number[];
  /** Among `acked`: older versions than what the server holds, rejected rather than merged. */
  stale: number[];
  error: PushError | null;
  /**
   * The highest outbox id the server had taken from this data dir before this batch (null:
   * none yet, for this data dir); left out by servers before it. A station that had more
   * acknowledged sends what the server lost again (sync/resend.ts).
   */
  acked_before?: number | null;
  /**
   * The number of the last push the server took records from this data dir, before this batch
   * (null: none yet) and after it; left out by servers before migration 36. A station that kept
   * records of a later push sends them again (sync/resend.ts resendLostPushes).
   */
  ack_seq_before?: number | null;
  ack_seq?: number | null;
}

export interface SyncUser {
  uuid: string;
  username: string;
  email: string;
  first_name: string;
  last_name: string;
  badge_number: string | null;
  pin_hash: string | null;
  is_staff: boolean;
  is_active: boolean;
  /** Uuids of the user's projects and of the tools the user is qualified for (complete lists). */
  projects: string[];
  qualified_tools: string[];
}

export interface SyncProject {
  uuid: string;
  name: string;
  application_identifier: string;
  active: boolean;
}

export interface SyncTool {
  uuid: string;
  name: string;
  /** The question lists as the server stores them (JSON text). */
  pre_usage_questions: string;
  post_usage_questions: string;
  category: string;
  operational: boolean;
  visible: boolean;
}

/**
 * Post-usage answers given on the server for a force-ended event of this station. The station
 * stores them as its own (recording their consumables and problem reports) and pushes the
 * event back; the server sends them until that push arrives.
 */
export interface SyncAnswer {
  usage_uuid: string;
  /** The canonical answers as JSON text, as stored in run_data. */
  run_data: string;
  answered_at: string;
  answered_by_uuid: string | null;
}

/**
 * A validation given by staff on the server for an ended event of this station. The station
 * marks its event validated and pushes it back; the server sends it until that push arrives.
 */
export interface SyncValidation {
  usage_uuid: string;
  /** Who validated it; null when that person is no longer on the server. */
  validated_by_uuid: string | null;
  validated_at: string;
}

/** A problem report of the station's resolved on the server (staff brought its tool back). */
export interface SyncResolution {
  report_uuid: string;
  resolved_at: string;
  /** Who resolved it; null when that person is no longer on the server. */
  resolved_by_uuid: string | null;
}

export interface SyncStorageLocation {
  uuid: string;
  name: string;
  type: 'local' | 'server';
  base_path: string;
  enabled: boolean;
}

export interface SyncInstrument {
  uuid: string;
  name: string;
  description: string;
  tool_uuid: string;
  watch: { path: string; include: string[]; exclude: string[] }[];
  stability_seconds: number;
  storage_location_uuid: string | null;
  destination_template: string;
  enabled: boolean;
}

export interface SyncHook {
  uuid: string;
  name: string;
  trigger: 'pre_transfer' | 'post_transfer';
  kind: string;
  config: Record<string, unknown>;
  priority: number;
  /** null: every instrument of the station. */
  instrument_uuid: string | null;
  enabled: boolean;
}

export interface SyncSchedule {
  uuid: string;
  instrument_uuid: string;
  cron: string;
  timezone: string | null;
  enabled: boolean;
  /** The station reports the version it deployed (push kind harvest_deployment). */
  version: number;
}

/**
 * The station's whole harvest configuration as the server holds it: the instruments it runs,
 * the storage locations they (or redirect hooks) use, the hooks that apply to them, and their
 * schedules. What the server no longer lists is no longer run.
 */
export interface SyncHarvest {
  storage_locations: SyncStorageLocation[];
  instruments: SyncInstrument[];
  hooks: SyncHook[];
  schedules: SyncSchedule[];
}

/** A transfer record of a file in an instrument's history (spec 002 fields). */
export interface SyncHistoryTransfer {
  uuid: string;
  status: TransferStatus;
  storage_location_uuid: string | null;
  destination_path: string | null;
  bytes_transferred: number;
  dest_checksum: string | null;
  checksum_verified: boolean;
  started_at: string;
  completed_at: string | null;
  error: string;
  note: string;
}

/** A file record of an instrument's history, as the push sent it, with its transfers. */
export interface SyncHistoryFile {
  /** The server's id: the next page starts after the last one. */
  id: number;
  uuid: string;
  persistent_id: string;
  persistent_id_type: string;
  watch_path: string;
  source_path: string;
  relative_path: string;
  filename: string;
  size: number;
  mtime_ms: number;
  xxhash: string | null;
  hash_algorithm: string;
  first_discovered_at: string;
  usage_event_uuid: string | null;
  /**
   * That usage as the usage_context hook describes it (harvest/usageContext.ts), so that a
   * station that does not hold the usage can still name it; null without a usage. A server
   * from before it sends none.
   */
  usage_context?: Record<string, unknown> | null;
  metadata_: Record<string, unknown>;
  state: FileState;
  updated_at: string;
  transfers: SyncHistoryTransfer[];
}

/** GET /sync/harvest/history: one page, in id order; `next` is null after the last. */
export interface SyncHistoryPage {
  files: SyncHistoryFile[];
  next: number | null;
}

/** A manual harvest asked for on the server, not yet taken up by the station. */
export interface SyncRun {
  uuid: string;
  instrument_uuid: string;
  schedule_uuid: string | null;
  requested_at: string;
}

/**
 * A reservation of the station's tool (or of an area holding it), not cancelled and not ended
 * when sent. Names travel with it so the station lists it offline.
 */
export interface SyncReservation {
  uuid: string;
  /** The server's id: what people see and what the API's reservation filters take. */
  id: number;
  /** null: an area reservation (area_name says which). */
  tool_uuid: string | null;
  area_name: string | null;
  target_name: string;
  user_uuid: string;
  user_name: string;
  creator_uuid: string;
  project_uuid: string | null;
  project_name: string | null;
  start: string;
  end: string;
  /** The answers to the reservation questions (JSON text, spec 000). */
  question_data: string;
}

/** POST /sync/reservations: a booking made at the station by the person logged on there. */
export interface SyncBooking {
  user_uuid: string;
  project_uuid: string;
  start: string;
  end: string;
  answers: unknown;
}

export interface FacilityDelta {
  cursor: number;
  /**
   * What the server's change `cursor` was (changeMark): sent back with the cursor, it tells a
   * server restored from a backup, whose numbers went on from an older change, that the
   * station's cursor names another history, and the next delta is full.
   */
  cursor_mark?: string;
  /** True when this delta holds the whole facility (first pull, or a reset cursor). */
  full: boolean;
  /**
   * The highest outbox id the server has taken from the station's data dir (named by
   * X-Labstation-Install, holding the key): one the data dir's outbox has not made yet means it
   * was restored from a backup (sync/restored.ts). Absent until the data dir holding the key
   * has pushed something (also after another data dir took the key).
   */
  acked_through?: number;
  /**
   * The number of the last push taken from that data dir (PushResult.ack_seq), beside
   * acked_through; null when its count is from before the pushes were numbered.
   */
  ack_seq?: number | null;
  station: { uuid: string; name: string; tool: string | null };
  users: SyncUser[];
  projects: SyncProject[];
  tools: SyncTool[];
  /** Uuids of records deleted on the server since the cursor. */
  deleted: { users: string[]; projects: string[]; tools: string[] };
  /** Answers given on the server that the station has not pushed back yet (every delta). */
  answers?: SyncAnswer[];
  /** Validations given on the server that the station has not pushed back yet (every delta). */
  validations?: SyncValidation[];
  /** Its problem reports resolved on the server that the station has not pushed back. */
  resolutions?: SyncResolution[];
  /** The harvest configuration, when it changed since the cursor (and in a full delta). */
  harvest?: SyncHarvest;
  /** Queued harvest runs for this station (every delta, until it reports them started). */
  runs?: SyncRun[];
  /**
   * The station tool's reservations that have not ended, all of them (the station replaces its
   * copy): sent when a reservation, an area or the station changed since the cursor, and in a
   * full delta.
   */
  reservations?: SyncReservation[];
}
