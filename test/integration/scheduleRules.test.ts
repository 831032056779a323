/**
 * A disabled harvest schedule does not run, in a running station: beside an enabled one that
 * fires every second, it queues no run of its own.
 */
import { describe, expect, it } from 'vitest';
import { startStation, waitFor } from './helpers.js';
import { setupHarvest, withDb } from './harvestSetup.js';

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
});
