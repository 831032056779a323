/**
 * Schedules and their deployments. Spec 002's external workflow scheduler is, here, the fleet
 * of stations: a schedule is deployed on the station that runs its instrument. Every change
 * bumps the schedule's version and sets its deployment pending; the station's next delta
 * carries it, and the station reports back which version it deployed (or why it could not),
 * with its next run (electron/core/server/sync/ingest.ts, kind harvest_deployment).
 */
import {
  scheduleCreate,
  scheduleOut,
  schedulePatch,
  type ScheduleInput,
  type ScheduleOut,
} from '../../../../shared/harvest/management.js';
import type { Db } from '../../db/open.js';
import { newUuid } from '../../util/ids.js';
import { cronKey, cronProblems, sameZone, timezoneProblems } from '../../harvest/configCheck.js';
import { notifyStations, stationOfInstrument } from './notify.js';
import { ValidationProblems, problem, type Problem } from './problems.js';
import { checkReference, requireRecord, type Context, type ManagedResource } from './resource.js';
import { recentRuns } from './runs.js';

const createSchema = scheduleCreate;
const patchSchema = schedulePatch;
type Input = ScheduleInput;

interface Row {
  id: number;
  instrument_id: number;
  cron: string;
  timezone: string | null;
  enabled: number;
  station_id: number | null;
  station_name: string | null;
  deployment_state: 'pending' | 'deployed' | 'failed' | 'removed';
  deployed_at: string | null;
  last_run_at: string | null;
  next_run_at: string | null;
  deployment_error: string;
}

function row(db: Db, id: number): Row {
  return db
    .prepare(
      `SELECT s.id, s.instrument_id, s.cron, s.timezone, s.enabled, s.station_id,
         st.name AS station_name, s.deployment_state, s.deployed_at, s.last_run_at,
         s.next_run_at, s.deployment_error
       FROM harvest_schedules s LEFT JOIN stations st ON st.id = s.station_id WHERE s.id = ?`,
    )
    .get(id) as Row;
}

/**
 * Another enabled schedule that runs the same instrument at the same times (cron and time zone),
 * which would start every run twice; a bundle's import matches schedules by instrument and cron
 * too. The cron is compared as written, the zone as a zone (sameZone).
 */
function sameSchedule(db: Db, merged: Required<Input>, self: number | null): number | undefined {
  // Compared by their times (cronKey): "0 2 * * *" and "0  0 2 * * *" repeat each other.
  const alike = db
    .prepare(
      `SELECT id, cron, timezone FROM harvest_schedules WHERE instrument_id = ?
         AND enabled = 1 AND id IS NOT ? ORDER BY id`,
    )
    .all(merged.instrument_id, self) as { id: number; cron: string; timezone: string | null }[];
  const key = cronKey(merged.cron);
  return alike.find((s) => cronKey(s.cron) === key && sameZone(s.timezone, merged.timezone))?.id;
}

/**
 * Whether a save makes this schedule an enabled one at new times: only then can it repeat
 * another. A save that leaves the times alone (disabling one of two that repeat each other,
 * say) is never refused for it.
 */
function startsRunningAt(merged: Required<Input>, before: Row | null): boolean {
  if (!merged.enabled) return false;
  return (
    before === null ||
    before.enabled !== 1 ||
    before.instrument_id !== merged.instrument_id ||
    cronKey(before.cron) !== cronKey(merged.cron) ||
    !sameZone(before.timezone, merged.timezone)
  );
}

function check(db: Db, merged: Required<Input>, input: Input, before: Row | null): void {
  const problems: Problem[] = [
    ...checkReference(db, 'instruments', 'instrument', 'instrument_id', input.instrument_id),
    ...timezoneProblems('timezone', input.timezone).map((text) =>
      problem(['body', 'timezone'], text.slice('timezone: '.length)),
    ),
  ];
  // The cron is checked beside the rest (it needs no time zone): every problem is named at once.
  if (input.cron !== undefined) {
    for (const text of cronProblems('cron', merged.cron)) {
      problems.push(problem(['body', 'cron'], text.slice('cron: '.length), 'cron'));
    }
  }
  if (!problems.length && startsRunningAt(merged, before)) {
    const other = sameSchedule(db, merged, before?.id ?? null);
    if (other !== undefined) {
      problems.push(
        problem(
          ['body', 'cron'],
          `schedule ${other} already runs instrument ${merged.instrument_id} at these times ` +
            '(the same cron and time zone)',
          'unique',
        ),
      );
    }
  }
  if (problems.length) throw new ValidationProblems(problems);
}

/**
 * What the last station reported of a schedule's deployment, dropped once the schedule moves to
 * another station (or to none): when it deployed it, its next run and the version it deployed
 * were that station's, and nothing is deployed on the new one yet. Its runs and last_run_at stay:
 * they are the schedule's history.
 */
const FORGET_DEPLOYMENT = 'deployed_version = NULL, deployed_at = NULL, next_run_at = NULL';

/**
 * An instrument moved to another station (or to none): its schedules are deployed there, an
 * enabled one pending until that station reports it, a disabled one removed (nothing to deploy).
 */
export function moveSchedules(
  db: Db,
  instrumentId: number,
  stationId: number | null,
  now: string,
): void {
  db.prepare(
    `UPDATE harvest_schedules SET station_id = ?, version = version + 1,
       deployment_state = CASE WHEN enabled = 1 THEN 'pending' ELSE 'removed' END,
       deployment_error = '', ${FORGET_DEPLOYMENT}, updated_at = ? WHERE instrument_id = ?`,
  ).run(stationId, now, instrumentId);
}

export const schedules: ManagedResource<ScheduleOut> = {
  path: 'schedules',
  label: 'schedule',
  table: 'harvest_schedules',
  createSchema,
  patchSchema,
  outSchema: scheduleOut,
  readOnly: ['id', 'deployment'],
  examples: {
    out: {
      id: 2,
      instrument_id: 7,
      cron: '0 */2 * * *',
      timezone: 'Europe/Zurich',
      enabled: true,
      deployment: {
        station: { id: 3, name: 'tem-pc' },
        state: 'deployed',
        deployed_at: '2026-11-20T08:00:02.511Z',
        last_run_at: '2026-11-20T10:00:00.004Z',
        next_run_at: '2026-11-20T12:00:00.000Z',
        error: '',
        runs: [
          {
            id: 31,
            trigger: 'schedule',
            state: 'completed',
            requested_at: '2026-11-20T10:00:00.004Z',
            started_at: '2026-11-20T10:00:00.004Z',
            finished_at: '2026-11-20T10:00:07.310Z',
            files_completed: 12,
            files_skipped: 0,
            files_failed: 1,
            error: '',
          },
        ],
      },
    },
    create: { instrument_id: 7, cron: '0 */2 * * *', timezone: 'Europe/Zurich' },
    patch: { enabled: false },
  },

  serialize(db, id) {
    const r = row(db, id);
    let error = r.deployment_error;
    if (r.station_id === null) {
      error = `instrument ${r.instrument_id} has no service account to run it`;
    }
    return {
      id: r.id,
      instrument_id: r.instrument_id,
      cron: r.cron,
      timezone: r.timezone,
      enabled: r.enabled === 1,
      deployment: {
        station: r.station_id === null ? null : { id: r.station_id, name: r.station_name ?? '' },
        state: r.deployment_state,
        deployed_at: r.deployed_at,
        last_run_at: r.last_run_at,
        next_run_at: r.next_run_at,
        error,
        runs: recentRuns(db, r.id, 10),
      },
    };
  },

  create({ db, now }: Context, input) {
    const i = input as Input & { instrument_id: number; cron: string };
    const merged: Required<Input> = { timezone: null, enabled: true, ...i };
    check(db, merged, i, null);
    const stationId = stationOfInstrument(db, merged.instrument_id);
    const id = Number(
      db
        .prepare(
          `INSERT INTO harvest_schedules (uuid, instrument_id, cron, timezone, enabled, station_id,
             version, deployment_state, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?)`,
        )
        .run(
          newUuid(),
          merged.instrument_id,
          merged.cron,
          merged.timezone,
          merged.enabled ? 1 : 0,
          stationId,
          // Made disabled, it has nothing to deploy, and nothing to wait for.
          merged.enabled ? 'pending' : 'removed',
          now,
          now,
        ).lastInsertRowid,
    );
    notifyStations(db, [stationId]);
    return { id };
  },

  update({ db, now }, id, input) {
    requireRecord(db, this, id);
    const before = row(db, id);
    const i = input as Input;
    const merged: Required<Input> = {
      instrument_id: before.instrument_id,
      cron: before.cron,
      timezone: before.timezone,
      enabled: before.enabled === 1,
      ...i,
    };
    check(db, merged, i, before);
    const stationId = stationOfInstrument(db, merged.instrument_id);
    // The schedule as it is (a client that PATCHes back what it read): nothing to deploy again,
    // unless the last deployment failed, which this retries.
    const unchanged =
      merged.instrument_id === before.instrument_id &&
      merged.cron === before.cron &&
      merged.timezone === before.timezone &&
      (merged.enabled ? 1 : 0) === before.enabled &&
      stationId === before.station_id;
    if (unchanged && before.deployment_state !== 'failed') return;
    const moved = stationId !== before.station_id;
    // Pending until the station takes the change; a disabled schedule waits only for a station
    // that still runs it: not for one it has moved to, one that has already removed it, or none.
    const state =
      !merged.enabled && (moved || stationId === null || before.deployment_state === 'removed')
        ? 'removed'
        : 'pending';
    db.prepare(
      `UPDATE harvest_schedules SET instrument_id = ?, cron = ?, timezone = ?, enabled = ?,
         station_id = ?, version = version + 1, deployment_state = ?, deployment_error = '',
         updated_at = ? WHERE id = ?`,
    ).run(
      merged.instrument_id,
      merged.cron,
      merged.timezone,
      merged.enabled ? 1 : 0,
      stationId,
      state,
      now,
      id,
    );
    if (moved) db.prepare(`UPDATE harvest_schedules SET ${FORGET_DEPLOYMENT} WHERE id = ?`).run(id);
    notifyStations(db, [before.station_id, stationId]);
  },

  remove({ db }, id) {
    requireRecord(db, this, id);
    const before = row(db, id);
    // Its runs stay (the history of the instrument), without the schedule.
    db.prepare('DELETE FROM harvest_schedules WHERE id = ?').run(id);
    notifyStations(db, [before.station_id]);
  },
};
