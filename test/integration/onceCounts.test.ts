/**
 * What `labstation harvest --once` reports and exits with counts files, each by how it ended
 * in the run: a file that failed and then, retried in the same run, completed is completed,
 * and the run exits 0 (issue 4: 0 when every file is completed or skipped).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importBundle, waitFor } from './helpers.js';
import { copyHold, harvestOnce, setupHarvest, transfersOf, withDb } from './harvestSetup.js';

describe('a --once run', () => {
  // Mutation: each transfer's end counted in the run, as it was: "2 completed, 0 skipped,
  // 1 failed" and exit 1, for two files that both ended completed.
  it('counts a file that failed and then completed in the run as completed, and exits 0', async () => {
    const dirs = await setupHarvest({ stability: 0, template: '{relative_path}' });
    const tuned = await importBundle(dirs.data, {
      station: { tool: 'SEM', retry_base_seconds: 1, retry_max_seconds: 1 },
    });
    expect(tuned.code, tuned.stderr).toBe(0);
    mkdirSync(join(dirs.src, 'run1'));
    writeFileSync(join(dirs.src, 'run1', 'img.tif'), 'an image');
    // A file stands where img.tif's copy needs its folder: its first attempt fails.
    writeFileSync(join(dirs.dest, 'run1'), 'in the way');
    // The movie's copy, held after its first span until the way is cleared, then slowed to
    // 24 ms per MiB (about 4.6 s), keeps the run going past the image's backoff (1 s), so the
    // image is tried again within the run.
    writeFileSync(join(dirs.src, 'movie.mrc'), randomBytes(192 * 1024 * 1024));
    const hold = copyHold();
    const run = harvestOnce(dirs.data, { LABSTATION_INJECT: 'harvest.slow-copy', ...hold.env });
    await waitFor(
      'the first attempt at the image failed',
      () =>
        withDb(dirs.data, (db) =>
          db.prepare(`SELECT 1 FROM harvest_transfers WHERE status = 'failed'`).get(),
        ) ?? undefined,
      30_000,
    );
    rmSync(join(dirs.dest, 'run1'));
    hold.release();
    const out = await run;
    expect(out.stdout).toContain('harvest: 2 completed, 0 skipped, 0 failed');
    expect(out.code).toBe(0);
    const transfers = await transfersOf(dirs.data);
    expect(transfers.map((t) => t.status).sort()).toEqual(['completed', 'completed', 'failed']);
  }, 90_000);
});
