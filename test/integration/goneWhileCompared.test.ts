/**
 * A source moved or deleted while it is compared with a copy of the same size already at its
 * destination (localCopy.ts skipIfAlreadyThere): gone, as one that goes during its copy, not a
 * failure to retry.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from './helpers.js';
import { filesOf, harvestOnce, setupHarvest, transfersOf, withDb } from './harvestSetup.js';

describe('a source gone while compared with the copy already there', () => {
  // Mutation: the comparison's errors thrown, as they were: the file was recorded failed
  // ("not found: ENOENT ... stat") and the run exited 1.
  it('is gone, and the run exits 0', async () => {
    const dirs = await setupHarvest({ stability: 0, template: '{relative_path}' });
    const data = randomBytes(64 * 1024 * 1024);
    writeFileSync(join(dirs.src, 'movie.mrc'), data);
    mkdirSync(dirs.dest, { recursive: true });
    writeFileSync(join(dirs.dest, 'movie.mrc'), data);
    // Hashing slowed to 24 ms per MiB: each side of the comparison takes about 1.5 s.
    const run = harvestOnce(dirs.data, { LABSTATION_INJECT: 'harvest.slow-hash' });
    await waitFor(
      'the file recorded',
      () => withDb(dirs.data, (db) => db.prepare('SELECT 1 FROM harvest_files').get()) ?? undefined,
      30_000,
    );
    rmSync(join(dirs.src, 'movie.mrc'));
    const out = await run;
    expect(out.stdout).toContain('harvest: 0 completed, 0 skipped, 0 failed');
    expect(out.code).toBe(0);
    expect((await filesOf(dirs.data)).map((f) => f.state)).toEqual(['gone']);
    expect(await transfersOf(dirs.data)).toEqual([]);
    expect(readFileSync(join(dirs.dest, 'movie.mrc')).equals(data)).toBe(true);
  }, 60_000);
});
