/**
 * A file whose record is gone (its source went away during its copy) and that comes back as it
 * was, with the size and mtime recorded: taken again by the next harvest, not passed over as
 * recorded already (intake.ts alreadyRecorded).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, waitFor } from './helpers.js';
import { filesOf, harvestOnce, listTree, setupHarvest } from './harvestSetup.js';

describe('a file gone during its copy', () => {
  it('is taken again when it comes back with the size and mtime it had', async () => {
    const dirs = await setupHarvest({ stability: 0 });
    const source = join(dirs.src, 'movie.mrc');
    const aside = join(tempDir(), 'movie.mrc');
    writeFileSync(source, randomBytes(64 * 1024 * 1024));
    // Slowed to 24 ms per MiB: the 64 MiB copy takes about 1.5 s.
    const run = harvestOnce(dirs.data, { LABSTATION_INJECT: 'harvest.slow-copy' });
    await waitFor(
      'the copy under way',
      () =>
        existsSync(join(dirs.dest, 'sem-1')) &&
        listTree(join(dirs.dest, 'sem-1')).some((p) => p.startsWith('.movie.mrc.'))
          ? true
          : undefined,
      30_000,
    );
    // Moved away on the same disk: it keeps its size and mtime.
    renameSync(source, aside);
    expect((await run).code).toBe(0);
    expect((await filesOf(dirs.data)).map((f) => f.state)).toEqual(['gone']);

    renameSync(aside, source);
    const again = await harvestOnce(dirs.data);
    expect(again.stdout).toContain('harvest: 1 completed, 0 skipped, 0 failed');
    const [file] = await filesOf(dirs.data);
    expect(file?.state).toBe('done');
    expect(listTree(dirs.dest)).toEqual(['sem-1/movie.mrc']);
  }, 60_000);
});
