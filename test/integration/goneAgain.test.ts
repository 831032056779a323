/**
 * A file whose record is gone (its source went away during its copy): when it comes back as it
 * was, with the size and mtime recorded, it is taken again by the next harvest, not passed over
 * as recorded already (intake.ts alreadyRecorded); other bytes at its path are a new file; and
 * renamed in its folder, a one-shot run takes it under its new name before it ends.
 */
import { randomBytes } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HarvestFileView } from '../../shared/api.js';
import { runCli, tempDir } from './helpers.js';
import {
  copyHold,
  copyUnderWay,
  filesOf,
  harvestOnce,
  listTree,
  setupHarvest,
} from './harvestSetup.js';

/** Starts `harvest --once` on a 64 MiB movie.mrc, and moves it to `to` mid-copy. */
async function movedMidCopy(
  dirs: Awaited<ReturnType<typeof setupHarvest>>,
  to: string,
): Promise<Awaited<ReturnType<typeof harvestOnce>>> {
  const source = join(dirs.src, 'movie.mrc');
  writeFileSync(source, randomBytes(64 * 1024 * 1024));
  // Held after its first span until the move is made.
  const hold = copyHold();
  const run = harvestOnce(dirs.data, hold.env);
  await copyUnderWay(join(dirs.dest, 'sem-1'), 'movie.mrc');
  // Moved on the same disk: it keeps its size and mtime.
  renameSync(source, to);
  hold.release();
  return run;
}

describe('a file gone during its copy', () => {
  it('is taken again when it comes back with the size and mtime it had', async () => {
    const dirs = await setupHarvest({ stability: 0 });
    const source = join(dirs.src, 'movie.mrc');
    const aside = join(tempDir(), 'movie.mrc');
    expect((await movedMidCopy(dirs, aside)).code).toBe(0);
    expect((await filesOf(dirs.data)).map((f) => f.state)).toEqual(['gone']);

    renameSync(aside, source);
    const again = await harvestOnce(dirs.data);
    expect(again.stdout).toContain('harvest: 1 completed, 0 skipped, 0 failed');
    const [file] = await filesOf(dirs.data);
    expect(file?.state).toBe('done');
    expect(listTree(dirs.dest)).toEqual(['sem-1/movie.mrc']);
  }, 60_000);

  // Mutation: Intake.accept re-queuing every record not done (a gone one too) under its old ARK.
  it('is a new file with an ARK of its own when other bytes come back at its path', async () => {
    const dirs = await setupHarvest({ stability: 0 });
    expect((await movedMidCopy(dirs, join(tempDir(), 'movie.mrc'))).code).toBe(0);
    const [gone] = await filesOf(dirs.data);
    expect(gone?.state).toBe('gone');

    writeFileSync(join(dirs.src, 'movie.mrc'), randomBytes(1024));
    const again = await harvestOnce(dirs.data);
    expect(again.stdout).toContain('harvest: 1 completed, 0 skipped, 0 failed');
    const files = await filesOf(dirs.data);
    expect(files.map((f) => [f.persistent_id === gone?.persistent_id, f.state, f.size])).toEqual([
      [true, 'gone', 64 * 1024 * 1024],
      [false, 'done', 1024],
    ]);
    expect(listTree(dirs.dest)).toEqual(['sem-1/movie.mrc']);
    // The command line lists the files in one state; a state it does not know is named.
    const goneOnly = await runCli(['files', '--data', dirs.data, '--json', '--state', 'gone']);
    expect(goneOnly.code).toBe(0);
    expect((JSON.parse(goneOnly.stdout) as HarvestFileView[]).map((f) => f.id)).toEqual([gone?.id]);
    expect(await runCli(['files', '--data', dirs.data, '--state', 'lost'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        '--state must be one of waiting, failed, done, gone',
      ) as string,
    });
  }, 60_000);

  // Mutation: runOnce walking once only (the renamed file waited for the next run, exit 0).
  it('renamed in its folder during a one-shot run is taken under its new name in that run', async () => {
    const dirs = await setupHarvest({ stability: 0 });
    const run = await movedMidCopy(dirs, join(dirs.src, 'movie-final.mrc'));
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
    expect(run.stdout).toContain('harvest: 1 completed, 0 skipped, 0 failed');
    const files = await filesOf(dirs.data);
    expect(files.map((f) => [f.filename, f.state])).toEqual([
      ['movie.mrc', 'gone'],
      ['movie-final.mrc', 'done'],
    ]);
    expect(listTree(dirs.dest)).toEqual(['sem-1/movie-final.mrc']);
  }, 60_000);

  // Mutation: StabilityChecks.check dropping a candidate that went away without a word (the
  // run walked once, and ended without the file's new name).
  it('renamed while it settles in a one-shot run is taken under its new name in that run', async () => {
    // A window long enough that a busy machine still renames it well within it.
    const dirs = await setupHarvest({ stability: 6 });
    writeFileSync(join(dirs.src, 'scan.raw'), randomBytes(4096));
    const run = harvestOnce(dirs.data);
    // Found by the run's walk (well within the first second), then renamed in its window.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    renameSync(join(dirs.src, 'scan.raw'), join(dirs.src, 'scan-final.raw'));
    const ended = await run;
    expect(ended.code).toBe(0);
    expect(ended.stdout).toContain('harvest: 1 completed, 0 skipped, 0 failed');
    expect(listTree(dirs.dest)).toEqual(['sem-1/scan-final.raw']);
  }, 60_000);
});
