import type { Db } from '../db/open.js';
import { getSetting, setSetting } from '../station/settings.js';
import { endUsageOfToolsLeft } from '../station/usageEnd.js';
import { AppError } from '../util/errors.js';
import { nowIso } from '../util/ids.js';
import {
  clearStationReservations,
  markReservationsSynced,
  replaceStationReservations,
} from '../station/reservations.js';
import { applyHarvestConfig, takeQueuedRuns, type DeclinedRun } from './applyHarvest.js';
import type { FacilityDelta } from './protocol.js';

const CURSOR_KEY = 'pull.cursor';

/** What the server said its change at the cursor was (FacilityDelta.cursor_mark). */
const MARK_KEY = 'pull.cursorMark';

export function syncCursor(db: Db): number {
  const raw = db.prepare('SELECT value FROM sync_state WHERE key = ?').pluck().get(CURSOR_KEY) as
    string | undefined;
  return raw === undefined ? 0 : Number(raw);
}

/** The mark of the cursor, sent with it; undefined from a server that gave none. */
export function syncCursorMark(db: Db): string | undefined {
  return db.prepare('SELECT value FROM sync_state WHERE key = ?').pluck().get(MARK_KEY) as
    string | undefined;
}

/**
 * Forgets the pull position, and the reservations the last server sent: the next pull brings
 * the whole facility (another server, or none).
 */
export function resetSyncCursor(db: Db): void {
  db.transaction(() => {
    db.prepare('DELETE FROM sync_state WHERE key IN (?, ?)').run(CURSOR_KEY, MARK_KEY);
    clearStationReservations(db);
  })();
}

function setCursor(db: Db, cursor: number, mark: string | undefined): void {
  const set = db.prepare(
    'INSERT INTO sync_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  );
  set.run(CURSOR_KEY, String(cursor));
  if (mark === undefined) db.prepare('DELETE FROM sync_state WHERE key = ?').run(MARK_KEY);
  else set.run(MARK_KEY, mark);
}

type Table = 'users' | 'projects' | 'tools';

/**
 * Finds the local row for a server record: by uuid, else by its name (a record imported locally
 * before the station was connected), which then takes the server's uuid. Outbox rows waiting to
 * be pushed name the old uuid; they are rewritten so the server can resolve them.
 */
function localId(
  db: Db,
  table: Table,
  nameColumn: string,
  uuid: string,
  name: string,
): number | null {
  const byUuid = db.prepare(`SELECT id FROM ${table} WHERE uuid = ?`).pluck().get(uuid) as
    number | undefined;
  if (byUuid !== undefined) return byUuid;
  const byName = db.prepare(`SELECT id, uuid FROM ${table} WHERE ${nameColumn} = ?`).get(name) as
    { id: number; uuid: string } | undefined;
  if (!byName) return null;
  db.prepare(`UPDATE ${table} SET uuid = ? WHERE id = ?`).run(uuid, byName.id);
  db.prepare('UPDATE outbox SET payload = replace(payload, ?, ?) WHERE instr(payload, ?) > 0').run(
    byName.uuid,
    uuid,
    byName.uuid,
  );
  return byName.id;
}

/**
 * Gives the records about to be renamed their uuid as a name until the delta names them; and
 * a record the delta does not name that holds a name the delta gives to a record this station
 * has by its uuid gives it up the same way. That one the server no longer has by that name:
 * made after the backup a server was restored from, its original renamed then, say (a full
 * delta deactivates it below). Kept, its name stopped every pull at the unique index for good.
 * A record the station does not have by its uuid takes over a namesake instead (localId).
 */
function parkNames(db: Db, table: Table, column: string, names: [string, string][]): void {
  const park = db.prepare(`UPDATE ${table} SET ${column} = uuid WHERE uuid = ? AND ${column} <> ?`);
  for (const [uuid, name] of names) park.run(uuid, name);
  const known = db.prepare(`SELECT 1 FROM ${table} WHERE uuid = ?`).pluck();
  const giveUp = db.prepare(
    `UPDATE ${table} SET ${column} = uuid WHERE ${column} = ? AND uuid <> ?`,
  );
  for (const [uuid, name] of names) {
    if (known.get(uuid) !== undefined) giveUp.run(name, uuid);
  }
}

export interface ApplySummary {
  cursor: number;
  changed: boolean;
  tool: string | null;
  /** The station's tool changed: so do the instruments it harvests. */
  toolChanged: boolean;
  /** Usages in progress on the tool the station was moved from, ended (usageEnd.ts). */
  usagesEnded: string[];
  /** The delta carried the harvest configuration: the harvester reloads it. */
  harvestChanged: boolean;
  /** Instruments the server listed whose tool this station does not know. */
  harvestSkipped: string[];
  /** Manual harvest runs newly queued by the server. */
  runsAdded: number;
  /** Runs the server queued that this station cannot take, reported failed at this pull. */
  runsDeclined: DeclinedRun[];
  /** The delta carried the tool's reservations (the station's copy was replaced). */
  reservationsChanged: boolean;
}

/**
 * Applies a facility delta from the server in one transaction, upserting by uuid, and stores the
 * new cursor with it: a crash leaves the station at the old cursor with the old facility, and
 * the same delta is pulled again. The tool's local shutdown state is the station's own.
 */
export function applyDelta(db: Db, delta: FacilityDelta): ApplySummary {
  return db
    .transaction((): ApplySummary => {
      const mode = getSetting(db, 'mode');
      if (mode === 'server') {
        throw new AppError(
          'conflict',
          "this data dir holds a server's data; it cannot sync as a station",
        );
      }
      if (mode === null) setSetting(db, 'mode', 'station');
      // A data dir that got a bundle before it knew it was a station logged it; nothing reads it.
      db.prepare('DELETE FROM sync_changes').run();
      const now = nowIso();
      // Names are unique, and a delta may swap them (A renamed away, B renamed to A's old name):
      // every record the delta renames first takes its uuid as a stand-in name.
      parkNames(
        db,
        'projects',
        'name',
        delta.projects.map((p) => [p.uuid, p.name]),
      );
      parkNames(
        db,
        'tools',
        'name',
        delta.tools.map((t) => [t.uuid, t.name]),
      );
      parkNames(
        db,
        'users',
        'username',
        delta.users.map((u) => [u.uuid, u.username]),
      );

      for (const p of delta.projects) {
        const id = localId(db, 'projects', 'name', p.uuid, p.name);
        const values = [p.name, p.application_identifier, p.active ? 1 : 0, now];
        if (id === null) {
          db.prepare(
            `INSERT INTO projects (name, application_identifier, active, updated_at, uuid, created_at)
             VALUES (?, ?, ?, ?, ?, ?)`,
          ).run(...values, p.uuid, now);
        } else {
          db.prepare(
            'UPDATE projects SET name = ?, application_identifier = ?, active = ?, updated_at = ? WHERE id = ?',
          ).run(...values, id);
        }
      }
      for (const t of delta.tools) {
        const id = localId(db, 'tools', 'name', t.uuid, t.name);
        const values = [
          t.name,
          t.pre_usage_questions,
          t.post_usage_questions,
          t.category,
          t.operational ? 1 : 0,
          t.visible ? 1 : 0,
          now,
        ];
        if (id === null) {
          db.prepare(
            `INSERT INTO tools (name, pre_usage_questions, post_usage_questions, category,
               operational, visible, updated_at, uuid, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          ).run(...values, t.uuid, now);
        } else {
          db.prepare(
            `UPDATE tools SET name = ?, pre_usage_questions = ?, post_usage_questions = ?,
               category = ?, operational = ?, visible = ?, updated_at = ? WHERE id = ?`,
          ).run(...values, id);
        }
      }
      const userIds = new Map<string, number>();
      for (const u of delta.users) {
        const id = localId(db, 'users', 'username', u.uuid, u.username);
        // Badges and e-mail addresses are set in a second pass: each is unique, and one may
        // move from one person to another in a delta (in either order). '' is no address.
        const values = [
          u.username,
          '',
          u.first_name,
          u.last_name,
          // As the server sends it since 2026-12-08 (export.ts userRecord); an older server
          // sent the hash of a person turned off too.
          u.is_active ? u.pin_hash : null,
          u.is_staff ? 1 : 0,
          u.is_active ? 1 : 0,
          now,
        ];
        if (id === null) {
          const inserted = db
            .prepare(
              `INSERT INTO users (username, email, first_name, last_name, pin_hash, is_staff,
                 is_active, updated_at, uuid, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
            )
            .run(...values, u.uuid, now);
          userIds.set(u.uuid, Number(inserted.lastInsertRowid));
        } else {
          db.prepare(
            `UPDATE users SET username = ?, email = ?, first_name = ?, last_name = ?, pin_hash = ?,
               is_staff = ?, is_active = ?, updated_at = ?, badge_number = NULL WHERE id = ?`,
          ).run(...values, id);
          userIds.set(u.uuid, id);
        }
      }
      for (const u of delta.users) {
        const id = userIds.get(u.uuid)!;
        if (u.badge_number && u.is_active) {
          db.prepare('UPDATE users SET badge_number = NULL WHERE badge_number = ? AND id <> ?').run(
            u.badge_number,
            id,
          );
          db.prepare('UPDATE users SET badge_number = ? WHERE id = ?').run(u.badge_number, id);
        }
        if (u.email) {
          // The server says who has the address now; anyone else here had it before.
          db.prepare(`UPDATE users SET email = '' WHERE email = ? COLLATE NOCASE AND id <> ?`).run(
            u.email,
            id,
          );
          db.prepare('UPDATE users SET email = ? WHERE id = ?').run(u.email, id);
        }
        db.prepare('DELETE FROM user_projects WHERE user_id = ?').run(id);
        for (const p of u.projects) {
          db.prepare(
            'INSERT INTO user_projects (user_id, project_id) SELECT ?, id FROM projects WHERE uuid = ?',
          ).run(id, p);
        }
        db.prepare('DELETE FROM qualifications WHERE user_id = ?').run(id);
        for (const t of u.qualified_tools) {
          db.prepare(
            'INSERT INTO qualifications (user_id, tool_id) SELECT ?, id FROM tools WHERE uuid = ?',
          ).run(id, t);
        }
      }

      // Records the server no longer has (or never had, for a full delta) cannot be deleted
      // here, as usage events name them: people and projects are deactivated instead.
      const goneUsers = [...delta.deleted.users];
      const goneProjects = [...delta.deleted.projects];
      if (delta.full) {
        const users = new Set(delta.users.map((u) => u.uuid));
        const projects = new Set(delta.projects.map((p) => p.uuid));
        goneUsers.push(
          ...(db.prepare('SELECT uuid FROM users').pluck().all() as string[]).filter(
            (uuid) => !users.has(uuid),
          ),
        );
        goneProjects.push(
          ...(db.prepare('SELECT uuid FROM projects').pluck().all() as string[]).filter(
            (uuid) => !projects.has(uuid),
          ),
        );
      }
      for (const uuid of goneUsers) {
        db.prepare(
          'UPDATE users SET is_active = 0, pin_hash = NULL, badge_number = NULL, updated_at = ? WHERE uuid = ?',
        ).run(now, uuid);
      }
      for (const uuid of goneProjects) {
        db.prepare('UPDATE projects SET active = 0, updated_at = ? WHERE uuid = ?').run(now, uuid);
      }

      const harvestSkipped = delta.harvest ? applyHarvestConfig(db, delta.harvest) : [];
      const runs = takeQueuedRuns(db, delta.runs ?? []);
      // A delta without reservations means none changed: the copy is current as of now.
      if (delta.reservations) replaceStationReservations(db, delta.reservations, now);
      else markReservationsSynced(db, now);

      const tool = delta.station.tool;
      const toolChanged = tool !== null && getSetting(db, 'station.tool') !== tool;
      if (toolChanged) setSetting(db, 'station.tool', tool);
      const usagesEnded = tool === null ? [] : endUsageOfToolsLeft(db, tool, now);
      setCursor(db, delta.cursor, delta.cursor_mark);
      const changed =
        toolChanged ||
        delta.users.length + delta.projects.length + delta.tools.length > 0 ||
        goneUsers.length + goneProjects.length > 0;
      return {
        cursor: delta.cursor,
        changed,
        tool,
        toolChanged,
        usagesEnded,
        harvestChanged: delta.harvest !== undefined,
        harvestSkipped,
        runsAdded: runs.added,
        runsDeclined: runs.declined,
        reservationsChanged: delta.reservations !== undefined,
      };
    })
    .immediate();
}
