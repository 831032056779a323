/**
 * A station whose PC's time is set back while it runs (an NTP correction, a person fixing the
 * clock): its wall clock jumps, its monotonic clock does not. The station runs with its Date
 * skewed from a file (test/fixtures/skewedClock.js, loaded with `node --import`), as a real
 * process sees such a jump.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { HarvestFileView, HarvestStatus } from '../../shared/api.js';
import { failingTransfer, harvestOnce, setupHarvest, withDb } from './harvestSetup.js';
import { startStation, tempDir, waitFor, type StationProcess } from './helpers.js';

const SKEWED_CLOCK = fileURLToPath(new URL('../fixtures/skewedClock.js', import.meta.url));
const HOUR = 3_600_000;

let station: StationProcess | null = null;
afterEach(async () => {
  await station?.stop();
  station = null;
});

async function filesNamed(st: StationProcess): Promise<Map<string, HarvestFileView>> {
  const res = await st.rpc('harvest.files', { limit: 100 });
  return new Map((res.body as { files: HarvestFileView[] }).files.map((f) => [f.filename, f]));
}

describe('a PC clock set back an hour while the station runs', () => {
  // Mutations: the engine measuring stability windows on the wall clock (elapsed = clock):
  // early.dat, seen before the jump, waited out the hour; Intake.consider finding the usage by
  // the time seen (usageOnToolAt at now): late.dat, seen after the jump, "before" the usage
  // began, belonged to none.
  it('takes a file settling then within its window, and gives files the usage in progress', async () => {
    const dirs = await setupHarvest({
      stability: 1,
      users: [{ username: 'ada', pin: '1234', projects: ['Cathodes'], qualified_tools: ['SEM'] }],
      projects: [{ name: 'Cathodes' }],
    });
    const skew = join(tempDir(), 'skew');
    writeFileSync(skew, String(HOUR));
    station = await startStation(dirs.data, {
      NODE_OPTIONS: `--import=${SKEWED_CLOCK}`,
      LABSTATION_TEST_CLOCK_SKEW_FILE: skew,
    });
    const st = station;
    expect((await st.rpc('session.logon', { login: 'ada', pin: '1234' })).status).toBe(200);
    const enabled = await st.rpc('toolControl.enable', {
      tool: 'SEM',
      project: 'Cathodes',
      answers: {},
    });
    expect(enabled.status, JSON.stringify(enabled.body)).toBe(200);
    const usage = (enabled.body as { usage: { uuid: string } }).usage.uuid;

    writeFileSync(join(dirs.src, 'early.dat'), 'seen before the clock was set back');
    await waitFor('early.dat settling', async () => {
      const status = (await st.rpc('harvest.status', {})).body as HarvestStatus;
      return status.settling_files.some((f) => f.relative_path === 'early.dat') ? true : undefined;
    });
    writeFileSync(skew, '0');
    // The skew file is read again every 20 ms.
    await new Promise((resolve) => setTimeout(resolve, 100));
    writeFileSync(join(dirs.src, 'late.dat'), 'seen after');

    const files = await waitFor(
      'both files harvested',
      async () => {
        const byName = await filesNamed(st);
        return ['early.dat', 'late.dat'].every((name) => byName.get(name)?.state === 'done')
          ? byName
          : undefined;
      },
      30_000,
    );
    expect(files.get('early.dat')?.usage_event).toBe(usage);
    expect(files.get('late.dat')?.usage_event).toBe(usage);
  }, 60_000);

  // Mutation: dueFileIds without its second query (setBack): the file waited out the day its
  // retry time was set ahead by.
  it('retries a failed file whose retry time the clock, set back since, left in the future', async () => {
    const dirs = await setupHarvest({ stability: 0 });
    await failingTransfer(dirs, { base: 30, max: 60 });
    expect((await harvestOnce(dirs.data)).code).toBe(1);
    // Its retry time as a clock a day ahead set it, the clock then set back.
    const dayAhead = new Date(Date.now() + 24 * HOUR).toISOString();
    withDb(dirs.data, (db) =>
      db
        .prepare("UPDATE harvest_files SET next_attempt_at = ? WHERE state = 'failed'")
        .run(dayAhead),
    );
    rmSync(join(dirs.dest, 'sem-1'));
    station = await startStation(dirs.data);
    const st = station;
    await waitFor(
      'img.tif retried and harvested',
      async () => ((await filesNamed(st)).get('img.tif')?.state === 'done' ? true : undefined),
      30_000,
    );
  }, 60_000);
});
