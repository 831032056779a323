/**
 * What a station reports of the schedules the server deployed on it (runs.ts reportDeployments):
 * a schedule whose timer would not start stays failed, with why, whatever the other schedules
 * do; it is not taken for removed when another fires.
 */
import { expect, it } from 'vitest';
import { ScheduleCrons } from '../../electron/core/harvest/scheduleCrons.js';
import { openStationDatabase } from '../../electron/core/station/database.js';
import { createLogger } from '../../electron/core/util/log.js';
import { setupHarvest } from './harvestSetup.js';
import { waitFor } from './helpers.js';

it('a schedule whose timer would not start stays failed, with why, after another fires', async () => {
  const dirs = await setupHarvest({
    schedules: [
      { instrument: 'sem-1', cron: '* * * * * *' },
      { instrument: 'sem-1', cron: '0 2 * * *', timezone: 'Europe/Zurich' },
    ],
  });
  const db = openStationDatabase(dirs.data);
  // As the server sends them; the second in a time zone this station's runtime does not know
  // (an older one than the server's).
  db.prepare('UPDATE harvest_schedules SET from_server = 1').run();
  db.prepare(
    "UPDATE harvest_schedules SET timezone = 'Mars/Olympus' WHERE cron = '0 2 * * *'",
  ).run();
  const instrument = db
    .prepare("SELECT id FROM instruments WHERE name = 'sem-1'")
    .pluck()
    .get() as number;
  const states = () =>
    db
      .prepare('SELECT cron, deployment_state, deployment_error FROM harvest_schedules ORDER BY id')
      .all() as { cron: string; deployment_state: string; deployment_error: string }[];
  const crons = new ScheduleCrons(
    db,
    createLogger('silent'),
    () => new Date().toISOString(),
    () => undefined,
  );
  try {
    crons.start([instrument]);
    const failed = {
      cron: '0 2 * * *',
      deployment_state: 'failed',
      deployment_error: expect.stringMatching(/time ?zone/i) as unknown,
    };
    expect(states()).toEqual([
      { cron: '* * * * * *', deployment_state: 'deployed', deployment_error: '' },
      failed,
    ]);
    await waitFor(
      'the first schedule fired',
      () =>
        db.prepare('SELECT count(*) FROM harvest_runs').pluck().get() !== 0 ? true : undefined,
      10_000,
    );
    expect(states()[1]).toEqual(failed);
    const reported = (
      db
        .prepare("SELECT payload FROM outbox WHERE kind = 'harvest_deployment'")
        .pluck()
        .all() as string[]
    ).map((p) => (JSON.parse(p) as { state: string }).state);
    expect(reported).not.toContain('removed');
  } finally {
    crons.stop();
    db.close();
  }
}, 30_000);
