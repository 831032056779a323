/**
 * Harvest runs: a manual harvest asked for through `POST /api/schedules/{id}/trigger`, or one a
 * schedule started on its station. A trigger queues the run for the station that runs the
 * instrument and wakes its long-poll; the station reports when it starts and what it did
 * (kind harvest_run of the sync push).
 */
import {
  runOut,
  triggerOut,
  type RunOut,
  type TriggerOut,
} from '../../../../shared/harvest/management.js';
import type { Db } from '../../db/open.js';
import { newUuid } from '../../util/ids.js';
import { MAX_WAIT_SECONDS } from '../../sync/protocol.js';
import { notifyStations } from './notify.js';
import { Conflict, NotFound } from './problems.js';

export { runOut, triggerOut, type RunOut, type TriggerOut };

const RUN_COLUMNS = `id, "trigger", state, requested_at, started_at, finished_at, files_completed,
  files_skipped, files_failed, error`;

export function recentRuns(db: Db, scheduleId: number, limit: number): RunOut[] {
  return db
    .prepare(
      `SELECT ${RUN_COLUMNS} FROM harvest_runs WHERE schedule_id = ?
       ORDER BY requested_at DESC, id DESC LIMIT ?`,
    )
    .all(scheduleId, limit) as RunOut[];
}

/**
 * A station is online while it holds a long-poll or has just made a request: its pull waits
 * at most MAX_WAIT_SECONDS, and every request let in stamps last_seen_at (one refused for
 * its key or because another Labstation holds the key does not).
 */
export function stationOnline(lastSeenAt: string | null, now: number): boolean {
  if (lastSeenAt === null) return false;
  return now - Date.parse(lastSeenAt) <= (MAX_WAIT_SECONDS + 15) * 1000;
}

/** Queues a manual harvest of the schedule's instrument on its station. */
export function triggerRun(
  db: Db,
  scheduleId: number,
  requestedBy: number,
  now: number,
): TriggerOut {
  return db
    .transaction((): TriggerOut => {
      const schedule = db
        .prepare(
          `SELECT s.id, s.instrument_id, i.name AS instrument, i.station_id, i.enabled
           FROM harvest_schedules s JOIN instruments i ON i.id = s.instrument_id WHERE s.id = ?`,
        )
        .get(scheduleId) as
        | {
            id: number;
            instrument_id: number;
            instrument: string;
            station_id: number | null;
            enabled: number;
          }
        | undefined;
      if (!schedule) throw new NotFound(`no schedule with id ${scheduleId}`);
      if (schedule.station_id === null) {
        throw new Conflict(
          `instrument ${schedule.instrument_id} (${schedule.instrument}) has no service account to run it`,
        );
      }
      if (schedule.enabled !== 1) {
        throw new Conflict(
          `instrument ${schedule.instrument_id} (${schedule.instrument}) is disabled`,
        );
      }
      const station = db
        .prepare('SELECT id, name, enabled, last_seen_at FROM stations WHERE id = ?')
        .get(schedule.station_id) as {
        id: number;
        name: string;
        enabled: number;
        last_seen_at: string | null;
      };
      if (station.enabled !== 1) {
        throw new Conflict(`service account ${station.id} (${station.name}) is disabled`);
      }
      const requestedAt = new Date(now).toISOString();
      const runId = Number(
        db
          .prepare(
            `INSERT INTO harvest_runs (uuid, schedule_id, instrument_id, station_id, "trigger",
               state, requested_by_id, requested_at) VALUES (?, ?, ?, ?, 'manual', 'queued', ?, ?)`,
          )
          .run(newUuid(), schedule.id, schedule.instrument_id, station.id, requestedBy, requestedAt)
          .lastInsertRowid,
      );
      notifyStations(db, [station.id]);
      const online = stationOnline(station.last_seen_at, now);
      return {
        run_id: runId,
        state: 'queued',
        station: { id: station.id, name: station.name, online },
        queued_offline: !online,
        detail: online
          ? `run ${runId} is queued; station ${station.name} starts it within seconds`
          : `station ${station.name} is offline (last seen ${station.last_seen_at ?? 'never'}); ` +
            `run ${runId} is queued and starts when it connects`,
      };
    })
    .immediate();
}

/**
 * The manual runs of an instrument still queued for `fromStation` when the instrument moves to
 * `toStation` (or to none): the old station will never run them, and until now they stayed
 * queued there (or failed when it next connected). Each is marked failed, saying why, and
 * queued anew, as asked then, for the station that runs the instrument now. The old run keeps
 * its station, so that station's report on it, should it have taken it already, still counts.
 */
export function moveQueuedRuns(
  db: Db,
  instrumentId: number,
  fromStation: number,
  toStation: number | null,
  now: string,
): void {
  const queued = db
    .prepare(
      `SELECT id, schedule_id, requested_by_id, requested_at FROM harvest_runs
       WHERE instrument_id = ? AND station_id = ? AND state = 'queued' AND "trigger" = 'manual'
       ORDER BY id`,
    )
    .all(instrumentId, fromStation) as {
    id: number;
    schedule_id: number | null;
    requested_by_id: number | null;
    requested_at: string;
  }[];
  if (queued.length === 0) return;
  const target =
    toStation === null
      ? undefined
      : (db.prepare('SELECT id, name FROM stations WHERE id = ?').get(toStation) as
          { id: number; name: string } | undefined);
  const fail = db.prepare(
    "UPDATE harvest_runs SET state = 'failed', finished_at = ?, error = ? WHERE id = ?",
  );
  const requeue = db.prepare(
    `INSERT INTO harvest_runs (uuid, schedule_id, instrument_id, station_id, "trigger", state,
       requested_by_id, requested_at) VALUES (?, ?, ?, ?, 'manual', 'queued', ?, ?)`,
  );
  for (const run of queued) {
    if (!target) {
      fail.run(
        now,
        'the instrument was taken off its service account before this run started',
        run.id,
      );
      continue;
    }
    const again = Number(
      requeue.run(
        newUuid(),
        run.schedule_id,
        instrumentId,
        target.id,
        run.requested_by_id,
        run.requested_at,
      ).lastInsertRowid,
    );
    fail.run(
      now,
      `the instrument moved to service account ${target.id} (${target.name}) before this run ` +
        `started: run ${again} is queued there instead`,
      run.id,
    );
  }
}
