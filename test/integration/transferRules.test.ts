/**
 * Rules of the harvest's transfer core that no other test held (a hand-mutation review found
 * each one left every test passing): the backoff between failed attempts; what a completed
 * transfer records.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importBundle } from './helpers.js';
import { filesOf, harvestOnce, setupHarvest, transfersOf } from './harvestSetup.js';

describe('a failed transfer', () => {
  it('is tried again after a backoff that doubles with each failure, up to its cap', async () => {
    const dirs = await setupHarvest();
    const tuned = await importBundle(dirs.data, {
      station: { tool: 'SEM', retry_base_seconds: 100, retry_max_seconds: 350 },
    });
    expect(tuned.code, tuned.stderr).toBe(0);
    // A file stands where the copy needs a folder: every attempt fails.
    mkdirSync(join(dirs.src, 'run1'));
    writeFileSync(join(dirs.src, 'run1', 'img.tif'), 'an image');
    writeFileSync(join(dirs.dest, 'sem-1'), 'in the way');
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 4; attempt += 1) {
      // A run of --once tries every failed file at once, whatever its backoff.
      expect((await harvestOnce(dirs.data)).code).toBe(1);
      const [file] = await filesOf(dirs.data);
      const last = (await transfersOf(dirs.data)).at(-1);
      expect(file).toMatchObject({ state: 'failed', attempts: attempt });
      expect(last?.status).toBe('failed');
      const delay = Date.parse(file?.next_attempt_at ?? '') - Date.parse(last?.completed_at ?? '');
      delays.push(Math.round(delay / 1000));
    }
    // 100 s, 200 s, then 400 s capped at 350 s, and 350 s from then on.
    expect(delays).toEqual([100, 200, 350, 350]);
  }, 60_000);
});

describe('a completed transfer', () => {
  it("records the bytes copied and the copy's checksum, a big file alone and a small one", async () => {
    const dirs = await setupHarvest();
    // Past the batches' bound (4 MiB): copied on its own (localCopy.ts); the small one in a batch.
    const sizes: Record<string, number> = { 'big.tif': 5 * 1024 * 1024 + 3, 'small.txt': 17 };
    for (const [name, size] of Object.entries(sizes)) {
      writeFileSync(join(dirs.src, name), randomBytes(size));
    }
    expect((await harvestOnce(dirs.data)).code).toBe(0);
    const files = await filesOf(dirs.data);
    expect(files).toHaveLength(2);
    for (const file of files) {
      expect(file.last_transfer).toMatchObject({
        status: 'completed',
        checksum_verified: true,
        bytes_transferred: sizes[file.filename],
        dest_checksum: file.xxhash,
      });
    }
  }, 60_000);
});
