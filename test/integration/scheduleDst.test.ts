/**
 * Harvest schedules whose timers start (a station starting, a reload) in the hour repeated
 * when summer time ends. croner names the first of the repeated times for the next run, which
 * has passed: its own timer fired at once, named the same time again, and fired again, five
 * thousand runs in five seconds. Each time named is in the future now (scheduleCrons.ts
 * ScheduleTimer), and the timers run on fake time here.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ScheduleCrons } from '../../electron/core/harvest/scheduleCrons.js';
import { openStationDatabase } from '../../electron/core/station/database.js';
import { createLogger } from '../../electron/core/util/log.js';
import { setupHarvest } from './harvestSetup.js';

afterEach(() => vi.useRealTimers());

describe('harvest schedules started in the repeated hour', () => {
  for (const { cron, timezone, start, next, later, runs } of [
    // Started at 01:10 EST, the repeated hour's second pass: 01:30 EDT has passed; the next
    // run is the next day's 01:30 EST.
    {
      cron: '30 1 * * *',
      timezone: 'America/New_York',
      start: '2026-11-01T06:10:00Z',
      next: '2026-11-02T06:30:00.000Z',
      later: '2026-11-02T06:40:00Z',
      runs: 1,
    },
    // Every half hour: the next after now, then each one after it.
    {
      cron: '*/30 * * * *',
      timezone: 'America/New_York',
      start: '2026-11-01T06:10:00Z',
      next: '2026-11-01T07:00:00.000Z',
      later: '2026-11-01T08:10:00Z',
      runs: 3,
    },
    // Every 10 seconds, and every second: the first pass's times, gone by, are many; the
    // next one named is after the repeated hour (croner's own runs skip it too).
    {
      cron: '*/10 * * * * *',
      timezone: 'America/New_York',
      start: '2026-11-01T06:40:00Z',
      next: '2026-11-01T07:00:10.000Z',
      later: '2026-11-01T07:01:00Z',
      runs: 6,
    },
    {
      cron: '* * * * * *',
      timezone: 'America/New_York',
      start: '2026-11-01T06:55:00Z',
      next: '2026-11-01T07:00:01.000Z',
      later: '2026-11-01T07:00:10.500Z',
      runs: 10,
    },
    // Zurich: 02:30 CET, in the repeated hour's second pass, is still to come.
    {
      cron: '30 2 * * *',
      timezone: 'Europe/Zurich',
      start: '2026-10-25T01:10:00Z',
      next: '2026-10-25T01:30:00.000Z',
      later: '2026-10-25T01:40:00Z',
      runs: 1,
    },
  ]) {
    it(`${cron} in ${timezone}: no run before the time it names, then one at each`, async () => {
      const dirs = await setupHarvest({ schedules: [{ instrument: 'sem-1', cron, timezone }] });
      const db = openStationDatabase(dirs.data);
      const instrument = db
        .prepare("SELECT id FROM instruments WHERE name = 'sem-1'")
        .pluck()
        .get() as number;
      // As one the server deployed: its next run is reported (runs.ts reportDeployments).
      db.prepare('UPDATE harvest_schedules SET from_server = 1').run();
      vi.useFakeTimers({ now: new Date(start), toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const crons = new ScheduleCrons(
        db,
        createLogger('silent'),
        () => new Date().toISOString(),
        // A run that ends at once (nothing to harvest), so that the next one may be queued.
        () =>
          db.prepare("UPDATE harvest_runs SET state = 'completed' WHERE state = 'queued'").run(),
      );
      const count = (): number =>
        db.prepare('SELECT count(*) FROM harvest_runs').pluck().get() as number;
      try {
        crons.start([instrument]);
        expect(db.prepare('SELECT next_run_at FROM harvest_schedules').pluck().get()).toBe(next);
        await vi.advanceTimersByTimeAsync(5_000);
        expect(count()).toBe(0);
        await vi.advanceTimersByTimeAsync(Date.parse(later) - Date.now());
        expect(count()).toBe(runs);
      } finally {
        crons.stop();
        db.close();
      }
    });
  }
});
