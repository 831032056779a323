/**
 * Harvest schedules in a running station: a disabled one does not run (beside an enabled one
 * that fires every second, it queues no run of its own), and a run is a full harvest of its
 * instrument, which tries its failed files again at once rather than at their backoff.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HarvestFileView, HarvestStatus } from '../../shared/api.js';
import { startStation, waitFor } from './helpers.js';
import {
  copyHold,
  failingTransfer,
  filesOf,
  harvestOnce,
  setupHarvest,
  setupTwoInstruments,
  withDb,
} from './harvestSetup.js';

describe('harvest schedules', () => {
  it('run only when enabled', async () => {
    const dirs = await setupHarvest({
      schedules: [
        { instrument: 'sem-1', cron: '* * * * * *' },
        // Every second as well, written otherwise to tell the two apart.
        { instrument: 'sem-1', cron: '*/1 * * * * *', enabled: false },
      ],
    });
    const runs = (): Record<string, number> =>
      Object.fromEntries(
        withDb(dirs.data, (db) =>
          db
            .prepare(
              `SELECT s.cron, count(r.id) AS n FROM harvest_schedules s
                 LEFT JOIN harvest_runs r ON r.schedule_id = s.id GROUP BY s.id`,
            )
            .all(),
        ).map((row) => {
          const { cron, n } = row as { cron: string; n: number };
          return [cron, n];
        }),
      );
    const station = await startStation(dirs.data);
    try {
      // Two runs of the enabled schedule: the schedules' timers have fired twice.
      await waitFor(
        'two scheduled runs',
        () => (runs()['* * * * * *'] >= 2 ? true : undefined),
        30_000,
      );
    } finally {
      await station.stop();
    }
    expect(runs()['*/1 * * * * *']).toBe(0);
  }, 60_000);

  it("retry their instrument's failed files at once, not at their backoff", async () => {
    const dirs = await setupHarvest({ schedules: [{ instrument: 'sem-1', cron: '* * * * * *' }] });
    // The transfer fails, and a failed file is tried again 10 minutes on, without a run.
    await failingTransfer(dirs, { base: 600, max: 3600 });
    expect((await harvestOnce(dirs.data)).code).toBe(1);
    const [failed] = await filesOf(dirs.data);
    expect(failed?.state).toBe('failed');
    expect(Date.parse(failed?.next_attempt_at ?? '')).toBeGreaterThan(Date.now() + 60_000);
    rmSync(join(dirs.dest, 'sem-1'));
    const station = await startStation(dirs.data);
    try {
      const done = await waitFor(
        'img.tif copied by a scheduled run',
        async () => {
          const res = await station.rpc('harvest.files', { limit: 10 });
          const files = (res.body as { files: HarvestFileView[] }).files;
          return files.find((f) => f.state === 'done');
        },
        30_000,
      );
      expect(done.relative_path).toBe('run1/img.tif');
    } finally {
      await station.stop();
    }
  }, 60_000);

  // Mutation: the timer's callback as it was (no check that its schedule is still there, no
  // catch): the insert of the run broke the foreign key, croner held the error as an unhandled
  // rejection, and the station exited 1 within a second of the schedule's removal.
  it('whose schedule was removed since their timer started queue nothing and stop no station', async () => {
    const dirs = await setupHarvest({ schedules: [{ instrument: 'sem-1', cron: '* * * * * *' }] });
    const runCount = (): number =>
      withDb(dirs.data, (db) =>
        db.prepare('SELECT count(*) FROM harvest_runs').pluck().get(),
      ) as number;
    const station = await startStation(dirs.data, { LABSTATION_LOG_LEVEL: 'info' });
    let exited = false;
    void station.exited.then(() => (exited = true));
    try {
      await waitFor('a scheduled run', () => (runCount() >= 1 ? true : undefined), 30_000);
      // Removed as the server's word on it removes it at a station (sync/applyHarvest.ts),
      // with no import to reload the timers: the old timer fires on.
      const before = withDb(dirs.data, (db) => {
        db.prepare('DELETE FROM harvest_schedules').run();
        return db.prepare('SELECT count(*) FROM harvest_runs').pluck().get() as number;
      });
      await waitFor(
        'the old timer stopped',
        () => {
          if (exited) throw new Error(`the station exited: ${station.stderr()}`);
          return station.stderr().includes('its old timer stopped') ? true : undefined;
        },
        15_000,
      );
      expect(runCount()).toBe(before);
      const status = await station.rpc('harvest.status', {});
      expect(status.status).toBe(200);
      expect(exited).toBe(false);
    } finally {
      await station.stop();
    }
  }, 60_000);

  // Mutation: a run settled only when the whole station was idle, as it was: the camera's run
  // stayed running until the detector's big copy had ended (and with a detector that writes
  // all day, until the run timeout, stored with "still being transferred").
  it("of one instrument end with its own transfers, not another instrument's", async () => {
    // sem-1 a camera, sem-2 a detector that writes one big map.
    const dirs = await setupTwoInstruments({
      schedules: [{ instrument: 'sem-1', cron: '* * * * * *' }],
    });
    const data = dirs.data;
    writeFileSync(join(dirs.src, 'frame.tif'), 'a frame');
    // Its copy held after its first span until the camera's run has ended.
    writeFileSync(join(dirs.src2, 'map.h5'), Buffer.alloc(200 * 1024 * 1024, 7));
    const hold = copyHold();
    const station = await startStation(data, hold.env);
    try {
      const files = async (): Promise<HarvestFileView[]> =>
        ((await station.rpc('harvest.files', { limit: 10 })).body as { files: HarvestFileView[] })
          .files;
      // A run of the camera that starts once the detector's copy is under way: under the old
      // rule it could end only after that copy had.
      await waitFor("the detector's copy under way", async () => {
        const status = (await station.rpc('harvest.status', {})).body as HarvestStatus;
        // Listed from its start; its bytes may not be told before the hold (a progress
        // message goes per 16 MiB or 250 ms).
        return status.active.find((a) => a.filename === 'map.h5');
      });
      const copying = new Date().toISOString();
      const run = await waitFor(
        'a camera run ended',
        () =>
          withDb(data, (db) =>
            db
              .prepare(
                `SELECT r.state, r.error FROM harvest_runs r JOIN instruments i
                   ON i.id = r.instrument_id
                 WHERE i.name = 'sem-1' AND r.state IN ('completed', 'failed')
                   AND r.started_at > ? LIMIT 1`,
              )
              .get(copying),
          ) as { state: string; error: string } | undefined,
        30_000,
      );
      expect(run).toEqual({ state: 'completed', error: '' });
      const map = (await files()).find((f) => f.instrument === 'sem-2');
      expect(map?.state).toBe('waiting');
      hold.release();
      await waitFor(
        "the detector's file done",
        async () =>
          (await files()).find((f) => f.instrument === 'sem-2')?.state === 'done'
            ? true
            : undefined,
        60_000,
      );
    } finally {
      await station.stop();
    }
  }, 120_000);
});
