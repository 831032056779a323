/**
 * The station's harvest runs and schedule deployments, and the reports the server gets about
 * them (outbox kinds harvest_run and harvest_deployment). A run is one harvest of one
 * instrument: queued by the server (a trigger) or started by a schedule here.
 */
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { enqueue } from '../station/outbox.js';
import { newUuid, nowIso } from '../util/ids.js';
import type { Schedule } from './config.js';

export interface RunRow {
  id: number;
  uuid: string;
  instrument_id: number;
  schedule_id: number | null;
}

export interface RunCounts {
  files_completed: number;
  files_skipped: number;
  files_failed: number;
}

/**
 * A report's stamp: now, but always after the last report of the same record, so the server
 * tells the newer of two apart (server/sync/ingestHarvest.ts) even after this clock was set back.
 */
export const NEXT_REPORTED_AT = (column: string): string =>
  `max(?, coalesce(strftime('%Y-%m-%dT%H:%M:%fZ', ${column}, '+0.001 seconds'), ''))`;

function enqueueRun(db: Db, runId: number): void {
  cachedStatement(
    db,
    `UPDATE harvest_runs SET reported_at = ${NEXT_REPORTED_AT('reported_at')} WHERE id = ?`,
  ).run(nowIso(), runId);
  const row = cachedStatement(
    db,
    `SELECT r.uuid, s.uuid AS schedule_uuid, i.uuid AS instrument_uuid, r."trigger", r.state,
       r.requested_at, r.started_at, r.finished_at, r.files_completed, r.files_skipped,
       r.files_failed, r.error, r.reported_at
     FROM harvest_runs r JOIN instruments i ON i.id = r.instrument_id
     LEFT JOIN harvest_schedules s ON s.id = r.schedule_id WHERE r.id = ?`,
  ).get(runId) as { uuid: string } & Record<string, unknown>;
  enqueue(db, 'harvest_run', row.uuid, row);
}

/** Runs queued here, oldest first. */
export function queuedRuns(db: Db): RunRow[] {
  return cachedStatement(
    db,
    `SELECT id, uuid, instrument_id, schedule_id FROM harvest_runs WHERE state = 'queued'
     ORDER BY requested_at, id`,
  ).all() as RunRow[];
}

/** Whether a run of `scheduleId` is queued and not started yet. */
export function hasQueuedRun(db: Db, scheduleId: number): boolean {
  return (
    cachedStatement(
      db,
      "SELECT 1 FROM harvest_runs WHERE schedule_id = ? AND state = 'queued' LIMIT 1",
    ).get(scheduleId) !== undefined
  );
}

/** A run a restart interrupted is run again. */
export function requeueInterruptedRuns(db: Db): void {
  cachedStatement(
    db,
    "UPDATE harvest_runs SET state = 'queued', started_at = NULL WHERE state = 'running'",
  ).run();
}

/**
 * A schedule fired: its run, recorded and reported like a triggered one. Null when the
 * schedule is no longer the one its timer was started for (removed, disabled, its cron, time
 * zone or instrument changed by an import or the server): the timers are rebuilt only at the
 * next reload, and until then the old one must queue nothing.
 */
export function createScheduledRun(db: Db, schedule: Schedule, now: string): number | null {
  return db
    .transaction(() => {
      const inserted = cachedStatement(
        db,
        `INSERT INTO harvest_runs (uuid, schedule_id, instrument_id, "trigger", state,
           requested_at)
         SELECT ?, id, instrument_id, 'schedule', 'queued', ? FROM harvest_schedules
          WHERE id = ? AND enabled = 1 AND instrument_id = ? AND cron = ? AND timezone IS ?`,
      ).run(newUuid(), now, schedule.id, schedule.instrument_id, schedule.cron, schedule.timezone);
      if (!inserted.changes) return null;
      cachedStatement(db, 'UPDATE harvest_schedules SET last_run_at = ? WHERE id = ?').run(
        now,
        schedule.id,
      );
      return Number(inserted.lastInsertRowid);
    })
    .immediate();
}

export function startRun(db: Db, runId: number, now: string): void {
  db.transaction(() => {
    cachedStatement(
      db,
      "UPDATE harvest_runs SET state = 'running', started_at = ? WHERE id = ?",
    ).run(now, runId);
    enqueueRun(db, runId);
  }).immediate();
}

export function finishRun(
  db: Db,
  runId: number,
  outcome: { state: 'completed' | 'failed'; counts: RunCounts; error: string; now: string },
): void {
  db.transaction(() => {
    cachedStatement(
      db,
      `UPDATE harvest_runs SET state = ?, finished_at = ?, files_completed = ?,
         files_skipped = ?, files_failed = ?, error = ? WHERE id = ?`,
    ).run(
      outcome.state,
      outcome.now,
      outcome.counts.files_completed,
      outcome.counts.files_skipped,
      outcome.counts.files_failed,
      outcome.error,
      runId,
    );
    enqueueRun(db, runId);
  }).immediate();
}

/**
 * What a run did: each file of the instrument transferred since the run started, counted once
 * by its latest transfer (a file that failed and then completed counts as completed).
 */
export function runCounts(db: Db, instrumentId: number, since: string): RunCounts {
  const rows = cachedStatement(
    db,
    `SELECT status, count(*) AS n FROM (
       SELECT t.status AS status, max(t.id) FROM harvest_transfers t
       JOIN harvest_files f ON f.id = t.file_id
       WHERE f.instrument_id = ? AND t.started_at >= ? GROUP BY t.file_id)
     GROUP BY status`,
  ).all(instrumentId, since) as { status: string; n: number }[];
  const count = (status: string): number => rows.find((r) => r.status === status)?.n ?? 0;
  return {
    files_completed: count('completed'),
    files_skipped: count('skipped'),
    files_failed: count('failed'),
  };
}

export interface Deployment {
  state: 'deployed' | 'failed' | 'removed';
  next_run_at: string | null;
  error: string;
}

/**
 * Records what became of each schedule the server deployed here and reports the ones that
 * changed (state, next run, error, or a new version).
 */
export function reportDeployments(db: Db, deployments: Map<number, Deployment>, now: string): void {
  db.transaction(() => {
    const rows = cachedStatement(
      db,
      `SELECT id, uuid, version, deployment_state, deployed_version, next_run_at,
         deployment_error, deployed_at, last_run_at FROM harvest_schedules WHERE from_server = 1`,
    ).all() as {
      id: number;
      uuid: string;
      version: number;
      deployment_state: string;
      deployed_version: number | null;
      next_run_at: string | null;
      deployment_error: string;
      deployed_at: string | null;
      last_run_at: string | null;
    }[];
    for (const row of rows) {
      const d = deployments.get(row.id) ?? {
        state: 'removed' as const,
        next_run_at: null,
        error: '',
      };
      if (
        row.deployed_version === row.version &&
        row.deployment_state === d.state &&
        row.next_run_at === d.next_run_at &&
        row.deployment_error === d.error
      ) {
        continue;
      }
      const deployedAt =
        d.state === 'deployed' &&
        (row.deployment_state !== 'deployed' || row.deployed_version !== row.version)
          ? now
          : row.deployed_at;
      const reportedAt = cachedStatement(
        db,
        `UPDATE harvest_schedules SET deployment_state = ?, deployed_version = version,
           next_run_at = ?, deployment_error = ?, deployed_at = ?,
           deployment_reported_at = ${NEXT_REPORTED_AT('deployment_reported_at')}
         WHERE id = ? RETURNING deployment_reported_at`,
      )
        .pluck()
        .get(d.state, d.next_run_at, d.error, deployedAt, now, row.id) as string;
      enqueue(db, 'harvest_deployment', row.uuid, {
        uuid: row.uuid,
        version: row.version,
        state: d.state,
        deployed_at: deployedAt,
        next_run_at: d.next_run_at,
        last_run_at: row.last_run_at,
        error: d.error,
        reported_at: reportedAt,
      });
    }
  }).immediate();
}
