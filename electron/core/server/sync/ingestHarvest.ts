/**
 * What a station made of its schedules (deployments) and its harvest runs: reports answering
 * what the harvest API asked of the station, applied in the order the station made them. The
 * station's own file and transfer records are ingestHarvestFile.ts and ingestHarvestTransfer.ts.
 */
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';
import type { PushRecord } from '../../sync/protocol.js';
import { deploymentSchema, runSchema } from './harvestSchemas.js';
import { checkInstrument, type InstrumentRef } from './harvestWriters.js';
import { checkOwner, parse, type StationRef } from './records.js';

/**
 * Where a station's report stands against the last one applied, by the moment the station
 * made each (NEXT_REPORTED_AT on the station): an older one arrives late (set aside and
 * offered again, or sent again after a cut) and is kept out, the same one is a resend. Reports
 * without a stamp (a station too old to make one) are taken as before.
 */
function reportOrder(
  pushed: string | undefined,
  applied: string | null,
): 'newer' | 'same' | 'older' {
  if (pushed === undefined || applied === null || pushed > applied) return 'newer';
  return pushed === applied ? 'same' : 'older';
}

/**
 * What the station made of a schedule. A report about an older version than the schedule's
 * (it changed since) leaves the deployment pending; one about a schedule that moved to another
 * station, or was deleted, is acknowledged and dropped; one made before the last report of the
 * same version the server applied is stale.
 */
export function applyDeployment(db: Db, station: StationRef, record: PushRecord): 'ok' | 'stale' {
  const p = parse(deploymentSchema, record);
  const stored = cachedStatement(
    db,
    `SELECT deployed_version, deployment_reported_at FROM harvest_schedules
     WHERE uuid = ? AND station_id = ? AND version = ?`,
  ).get(p.uuid.toLowerCase(), station.id, p.version) as
    { deployed_version: number | null; deployment_reported_at: string | null } | undefined;
  if (!stored) return 'ok';
  // The stamp kept is of a report of this version only: a change of the schedule forgets it.
  const order = reportOrder(
    p.reported_at,
    stored.deployed_version === p.version ? stored.deployment_reported_at : null,
  );
  if (order === 'older') return 'stale';
  if (order === 'same') return 'ok';
  cachedStatement(
    db,
    `UPDATE harvest_schedules SET deployment_state = @state, deployed_version = @version,
       deployed_at = @deployed_at, next_run_at = @next_run_at,
       last_run_at = coalesce(@last_run_at, last_run_at), deployment_error = @error,
       deployment_reported_at = coalesce(@reported_at, deployment_reported_at)
     WHERE uuid = @uuid AND station_id = @station AND version = @version`,
  ).run({
    uuid: p.uuid.toLowerCase(),
    station: station.id,
    version: p.version,
    state: p.state,
    deployed_at: p.deployed_at,
    next_run_at: p.next_run_at,
    last_run_at: p.last_run_at,
    error: p.error,
    reported_at: p.reported_at ?? null,
  });
  return 'ok';
}

const RUN_ORDER = { queued: 0, running: 1, completed: 2, failed: 2 } as const;

/**
 * A run's progress; a report never takes a run back (completed stays completed), and one the
 * station made before the last one applied (reportOrder) is stale.
 */
export function upsertRun(db: Db, station: StationRef, record: PushRecord): 'ok' | 'stale' {
  const p = parse(runSchema, record);
  const existing = cachedStatement(
    db,
    'SELECT id, station_id, state, reported_at FROM harvest_runs WHERE uuid = ?',
  ).get(p.uuid.toLowerCase()) as
    | {
        id: number;
        station_id: number | null;
        state: keyof typeof RUN_ORDER;
        reported_at: string | null;
      }
    | undefined;
  checkOwner(existing, station.id, record);
  const scheduleId = p.schedule_uuid
    ? // Only a schedule deployed on this station: a key cannot touch another's history.
      ((cachedStatement(db, 'SELECT id FROM harvest_schedules WHERE uuid = ? AND station_id = ?')
        .pluck()
        .get(p.schedule_uuid.toLowerCase(), station.id) as number | undefined) ?? null)
    : null;
  if (existing) {
    const order = reportOrder(p.reported_at, existing.reported_at);
    if (order === 'older') return 'stale';
    if (order === 'same' || RUN_ORDER[p.state] < RUN_ORDER[existing.state]) return 'ok';
    cachedStatement(
      db,
      `UPDATE harvest_runs SET state = ?, started_at = ?, finished_at = ?, files_completed = ?,
         files_skipped = ?, files_failed = ?, error = ?, reported_at = coalesce(?, reported_at)
       WHERE id = ?`,
    ).run(
      p.state,
      p.started_at,
      p.finished_at,
      p.files_completed,
      p.files_skipped,
      p.files_failed,
      p.error,
      p.reported_at ?? null,
      existing.id,
    );
  } else {
    // A run of an instrument the server does not know (one configured on the station alone,
    // before any of its files arrived) means nothing here.
    const instrument = cachedStatement(
      db,
      'SELECT id, tool_id, station_id FROM instruments WHERE uuid = ?',
    ).get(p.instrument_uuid.toLowerCase()) as InstrumentRef | undefined;
    if (!instrument) return 'ok';
    const instrumentId = instrument.id;
    checkInstrument(db, station, instrumentId, record, p.requested_at);
    cachedStatement(
      db,
      `INSERT INTO harvest_runs (uuid, schedule_id, instrument_id, station_id, "trigger", state,
         requested_at, started_at, finished_at, files_completed, files_skipped, files_failed,
         error, reported_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      p.uuid.toLowerCase(),
      scheduleId,
      instrumentId,
      station.id,
      p.trigger,
      p.state,
      p.requested_at,
      p.started_at,
      p.finished_at,
      p.files_completed,
      p.files_skipped,
      p.files_failed,
      p.error,
      p.reported_at ?? null,
    );
  }
  if (scheduleId !== null && p.started_at) {
    cachedStatement(
      db,
      `UPDATE harvest_schedules SET last_run_at = ?
       WHERE id = ? AND (last_run_at IS NULL OR last_run_at < ?)`,
    ).run(p.started_at, scheduleId, p.started_at);
  }
  return 'ok';
}
