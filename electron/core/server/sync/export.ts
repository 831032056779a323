import { createHash } from 'node:crypto';
import type { Db } from '../../db/open.js';
import type {
  FacilityDelta,
  SyncAnswer,
  SyncProject,
  SyncTool,
  SyncUser,
  SyncValidation,
} from '../../sync/protocol.js';

import { nowIso } from '../../util/ids.js';
import { harvestChangedSince, harvestConfig, queuedRuns } from './exportHarvest.js';
import { reservationsChangedSince, stationReservations } from './exportReservations.js';
import { resolutionsOwed } from './shutdown.js';

export interface StationAccount {
  id: number;
  uuid: string;
  name: string;
  tool_id: number | null;
  /**
   * The data dir the request came from (X-Labstation-Install), which holds the key
   * (stationAuth.ts); null for a caller that names none. Unset outside the station routes.
   */
  install?: string | null;
}

/** The newest change number: a station whose cursor is below it has something to pull. */
export function latestChange(db: Db): number {
  return (
    (db.prepare('SELECT coalesce(max(seq), 0) FROM sync_changes').pluck().get() as number) ?? 0
  );
}

/**
 * A short fingerprint of change `seq` (its number, kind, record and random nonce, migration
 * 17), '' for none. A station sends the one of its cursor back: a database restored from a
 * backup numbers its new changes on from the backup's last one, so a number alone (or with
 * its record: the same record changed again) may name another change than the station
 * applied, and the changes between would never reach it.
 */
export function changeMark(db: Db, seq: number): string {
  const row = db.prepare('SELECT entity, uuid, nonce FROM sync_changes WHERE seq = ?').get(seq) as
    { entity: string; uuid: string | null; nonce: string | null } | undefined;
  if (!row) return '';
  return createHash('sha256')
    .update(`${seq}|${row.entity}|${row.uuid ?? ''}|${row.nonce ?? ''}`)
    .digest('hex')
    .slice(0, 16);
}

interface UserRecord {
  id: number;
  uuid: string;
  username: string;
  email: string;
  first_name: string;
  last_name: string;
  badge_number: string | null;
  pin_hash: string | null;
  is_staff: number;
  is_active: number;
}

const USER_COLUMNS =
  'id, uuid, username, email, first_name, last_name, badge_number, pin_hash, is_staff, is_active';

function userRecord(db: Db, row: UserRecord): SyncUser {
  return {
    uuid: row.uuid,
    username: row.username,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    // A person turned off cannot log on at a station, and no station need hold what would let
    // them (or anyone reading its disk) try: the server keeps both for the day they are back.
    badge_number: row.is_active === 1 ? row.badge_number : null,
    pin_hash: row.is_active === 1 ? row.pin_hash : null,
    is_staff: row.is_staff === 1,
    is_active: row.is_active === 1,
    projects: db
      .prepare(
        `SELECT p.uuid FROM user_projects m JOIN projects p ON p.id = m.project_id
         WHERE m.user_id = ? ORDER BY p.uuid`,
      )
      .pluck()
      .all(row.id) as string[],
    qualified_tools: db
      .prepare(
        `SELECT t.uuid FROM qualifications q JOIN tools t ON t.id = q.tool_id
         WHERE q.user_id = ? ORDER BY t.uuid`,
      )
      .pluck()
      .all(row.id) as string[],
  };
}

function projectRecord(row: {
  uuid: string;
  name: string;
  application_identifier: string;
  active: number;
}): SyncProject {
  return { ...row, active: row.active === 1 };
}

function toolRecord(row: {
  uuid: string;
  name: string;
  pre_usage_questions: string;
  post_usage_questions: string;
  category: string;
  operational: number;
  visible: number;
}): SyncTool {
  return { ...row, operational: row.operational === 1, visible: row.visible === 1 };
}

const PROJECT_COLUMNS = 'uuid, name, application_identifier, active';
const TOOL_COLUMNS =
  'uuid, name, pre_usage_questions, post_usage_questions, category, operational, visible';

/** Answers given on the server to this station's events, not yet pushed back by it. */
function answersOwed(db: Db, stationId: number): SyncAnswer[] {
  return db
    .prepare(
      `SELECT e.uuid AS usage_uuid, e.run_data, e.answered_on_server_at AS answered_at,
         u.uuid AS answered_by_uuid
       FROM usage_events e LEFT JOIN users u ON u.id = e.answered_on_server_by_id
       WHERE e.station_id = ? AND e.answer_acked = 0 ORDER BY e.id`,
    )
    .all(stationId) as SyncAnswer[];
}

/** Validations given on the server to this station's events, not yet pushed back by it. */
function validationsOwed(db: Db, stationId: number): SyncValidation[] {
  return db
    .prepare(
      `SELECT e.uuid AS usage_uuid, u.uuid AS validated_by_uuid,
         e.validated_on_server_at AS validated_at
       FROM usage_events e LEFT JOIN users u ON u.id = e.validated_by_id
       WHERE e.station_id = ? AND e.validation_acked = 0 ORDER BY e.id`,
    )
    .all(stationId) as SyncValidation[];
}

/**
 * What a station must apply to be current: everything when `cursor` is 0 or unknown to this
 * server, or `mark` says it names another change than this server's of that number (a
 * restored database), else the records changed since it. Read in one transaction so
 * the records and the cursor returned agree.
 */
export function facilityDelta(
  db: Db,
  station: StationAccount,
  cursor: number,
  mark?: string,
): FacilityDelta {
  return db.transaction((): FacilityDelta => {
    const latest = latestChange(db);
    const full =
      cursor <= 0 || cursor > latest || (mark !== undefined && mark !== changeMark(db, cursor));
    const toolName =
      station.tool_id === null
        ? null
        : ((db.prepare('SELECT name FROM tools WHERE id = ?').pluck().get(station.tool_id) as
            string | undefined) ?? null);
    const delta: FacilityDelta = {
      cursor: latest,
      cursor_mark: changeMark(db, latest),
      full,
      station: { uuid: station.uuid, name: station.name, tool: toolName },
      users: [],
      projects: [],
      tools: [],
      deleted: { users: [], projects: [], tools: [] },
      answers: answersOwed(db, station.id),
      validations: validationsOwed(db, station.id),
      resolutions: resolutionsOwed(db, station.id),
      runs: queuedRuns(db, station.id),
    };
    if (full || harvestChangedSince(db, station.uuid, cursor)) {
      delta.harvest = harvestConfig(db, station.id);
    }
    if (full || reservationsChangedSince(db, station, cursor)) {
      delta.reservations = stationReservations(db, station.tool_id, nowIso());
    }
    if (full) {
      delta.projects = (
        db.prepare(`SELECT ${PROJECT_COLUMNS} FROM projects ORDER BY id`).all() as Parameters<
          typeof projectRecord
        >[0][]
      ).map(projectRecord);
      delta.tools = (
        db.prepare(`SELECT ${TOOL_COLUMNS} FROM tools ORDER BY id`).all() as Parameters<
          typeof toolRecord
        >[0][]
      ).map(toolRecord);
      delta.users = (
        db.prepare(`SELECT ${USER_COLUMNS} FROM users ORDER BY id`).all() as UserRecord[]
      ).map((u) => userRecord(db, u));
      return delta;
    }
    const changed = db
      .prepare(
        `SELECT entity, uuid FROM sync_changes WHERE seq > ? AND uuid IS NOT NULL
         GROUP BY entity, uuid ORDER BY min(seq)`,
      )
      .all(cursor) as { entity: string; uuid: string }[];
    for (const { entity, uuid } of changed) {
      if (entity === 'project') {
        const row = db.prepare(`SELECT ${PROJECT_COLUMNS} FROM projects WHERE uuid = ?`).get(uuid);
        if (row) delta.projects.push(projectRecord(row as Parameters<typeof projectRecord>[0]));
        else delta.deleted.projects.push(uuid);
      } else if (entity === 'tool') {
        const row = db.prepare(`SELECT ${TOOL_COLUMNS} FROM tools WHERE uuid = ?`).get(uuid);
        if (row) delta.tools.push(toolRecord(row as Parameters<typeof toolRecord>[0]));
        else delta.deleted.tools.push(uuid);
      } else if (entity === 'user') {
        const row = db.prepare(`SELECT ${USER_COLUMNS} FROM users WHERE uuid = ?`).get(uuid) as
          UserRecord | undefined;
        if (row) delta.users.push(userRecord(db, row));
        else delta.deleted.users.push(uuid);
      }
      // 'station': the station's own binding travels in every delta.
    }
    return delta;
  })();
}
