/**
 * The station's reservations: the copy of its tool's upcoming reservations that the sync client
 * keeps (sync/apply.ts replaces it with each delta that carries them), read offline; the one on
 * now for a person, whose answers fill the pre-usage form where names match; and booking and
 * cancelling, which the server does (server/sync/reservationRoutes.ts) while the station is
 * online.
 */
import type { Answers, Question } from '../../../shared/questions/index.js';
import { normalizeAnswers, validateAnswers } from '../../../shared/questions/index.js';
import {
  EARLY_START_MINUTES,
  type StationReservationResults,
  type StationReservationView,
} from '../../../shared/stationReservationApi.js';
import type { Db } from '../db/open.js';
import type { SyncReservation } from '../sync/protocol.js';
import { activeProjectsOf, projectSummary, type UserRow } from './records.js';

const SYNCED_AT_KEY = 'reservations.synced_at';

/** A row of station_reservations: the server's record, its id kept as server_id. */
type Row = Omit<SyncReservation, 'id'> & { server_id: number };

const UPSERT = `INSERT INTO station_reservations (uuid, server_id, tool_uuid, area_name,
    target_name, user_uuid, user_name, creator_uuid, project_uuid, project_name, start, "end",
    question_data)
  VALUES (@uuid, @id, @tool_uuid, @area_name, @target_name, @user_uuid, @user_name,
    @creator_uuid, @project_uuid, @project_name, @start, @end, @question_data)
  ON CONFLICT (uuid) DO UPDATE SET server_id = excluded.server_id, tool_uuid = excluded.tool_uuid,
    area_name = excluded.area_name, target_name = excluded.target_name,
    user_uuid = excluded.user_uuid, user_name = excluded.user_name,
    creator_uuid = excluded.creator_uuid, project_uuid = excluded.project_uuid,
    project_name = excluded.project_name, start = excluded.start, "end" = excluded."end",
    question_data = excluded.question_data`;

/** Replaces the copy with the server's list (inside the delta's transaction). */
export function replaceStationReservations(
  db: Db,
  reservations: SyncReservation[],
  now: string,
): void {
  db.prepare('DELETE FROM station_reservations').run();
  const upsert = db.prepare(UPSERT);
  for (const r of reservations) upsert.run(r);
  markReservationsSynced(db, now);
}

/** Adds (or refreshes) one reservation the server just booked for this station. */
export function storeStationReservation(db: Db, r: SyncReservation): void {
  db.prepare(UPSERT).run(r);
}

export function dropStationReservation(db: Db, uuid: string): void {
  db.prepare('DELETE FROM station_reservations WHERE uuid = ?').run(uuid);
}

/** Another server, or none: what the last one sent no longer holds. */
export function clearStationReservations(db: Db): void {
  db.prepare('DELETE FROM station_reservations').run();
  db.prepare('DELETE FROM sync_state WHERE key = ?').run(SYNCED_AT_KEY);
}

/** Every pull brings the copy up to date (a delta without reservations: nothing changed). */
export function markReservationsSynced(db: Db, now: string): void {
  db.prepare(
    `INSERT INTO sync_state (key, value) VALUES (?, ?)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
  ).run(SYNCED_AT_KEY, now);
}

export function reservationsSyncedAt(db: Db): string | null {
  return (
    (db.prepare('SELECT value FROM sync_state WHERE key = ?').pluck().get(SYNCED_AT_KEY) as
      string | undefined) ?? null
  );
}

/** The server's answer to a booking, as the station lists it. */
export function viewOfSynced(r: SyncReservation, viewer: UserRow): StationReservationView {
  return view({ ...r, server_id: r.id }, viewer);
}

function view(row: Row, viewer: UserRow | null): StationReservationView {
  const mine =
    viewer !== null && (row.user_uuid === viewer.uuid || row.creator_uuid === viewer.uuid);
  return {
    uuid: row.uuid,
    id: row.server_id,
    target_name: row.target_name,
    area_name: row.area_name,
    user_name: row.user_name,
    project_name: row.project_name,
    start: row.start,
    end: row.end,
    mine,
    question_data: mine ? row.question_data : '',
  };
}

/** Not yet ended, by start; anyone at the station may see when the tool is booked. */
export function upcomingReservations(
  db: Db,
  viewer: UserRow | null,
  now: string,
  limit = 100,
): StationReservationView[] {
  const rows = db
    .prepare(`SELECT * FROM station_reservations WHERE "end" > ? ORDER BY start, server_id LIMIT ?`)
    .all(now, limit) as Row[];
  return rows.map((row) => view(row, viewer));
}

/**
 * The reservation of `person` on now (or starting within EARLY_START_MINUTES), the earliest
 * if two are; with its answers that fit the pre-usage questions. An answer is offered only
 * where a question of the same name takes it as it is.
 */
export function currentReservation(
  db: Db,
  person: UserRow,
  preUsageQuestions: Question[],
  now: Date,
): StationReservationResults['reservations.current'] {
  const soon = new Date(now.getTime() + EARLY_START_MINUTES * 60_000).toISOString();
  const row = db
    .prepare(
      `SELECT * FROM station_reservations
       WHERE user_uuid = ? AND start <= ? AND "end" > ? ORDER BY start, server_id LIMIT 1`,
    )
    .get(person.uuid, soon, now.toISOString()) as Row | undefined;
  if (!row) return { reservation: null, answers: {}, matched: [], project: null };
  const { answers, matched } = answersFor(preUsageQuestions, row.question_data);
  const project =
    activeProjectsOf(db, person.id).find((p) => p.uuid === row.project_uuid) ?? undefined;
  return {
    reservation: view(row, person),
    answers,
    matched,
    project: project ? projectSummary(project) : null,
  };
}

/** The reservation's answers to the questions of the same name, where they read cleanly. */
export function answersFor(
  questions: Question[],
  questionData: string,
): { answers: Answers; matched: string[] } {
  let raw: unknown;
  try {
    raw = questionData.trim() === '' ? {} : JSON.parse(questionData);
  } catch {
    return { answers: {}, matched: [] };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { answers: {}, matched: [] };
  }
  const given = raw as Record<string, unknown>;
  const answers = normalizeAnswers(questions, given);
  // A value this form would refuse (a choice it does not offer, text for a number) is not
  // offered; a missing required answer is for the person to give.
  const checked = validateAnswers(questions, answers);
  const troubled = new Set(
    checked.ok
      ? []
      : checked.problems.filter((p) => p.rule !== 'required').map((p) => String(p.path[0])),
  );
  const out: Answers = {};
  const matched: string[] = [];
  for (const question of questions) {
    const name = question.name;
    if (question.type === 'formula' || !Object.prototype.hasOwnProperty.call(given, name)) continue;
    const value = answers[name];
    if (value === undefined || troubled.has(name)) continue;
    if (Array.isArray(value) && value.length === 0) continue;
    out[name] = value;
    matched.push(name);
  }
  return { answers: out, matched };
}
