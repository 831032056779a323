/**
 * One instrument watching a folder and a folder inside it, with filters that overlap: a file
 * both would take is the inner folder's, whichever walk or watch reports it first, so its
 * relative path (and its destination) does not depend on the order (intake.ts
 * deeperFolderTakes). A file only the outer folder takes stays the outer one's.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importBundle } from './helpers.js';
import { filesOf, harvestOnce, listTree, setupHarvest } from './harvestSetup.js';

describe('overlapping watched folders of one instrument', () => {
  // Mutation: Intake.consider taking a file for the first folder that reports it.
  it('files a file both take under the inner folder, in a walk of both', async () => {
    const dirs = await setupHarvest({ stability: 0 });
    const eds = join(dirs.src, 'eds');
    mkdirSync(join(eds, 'run-7', 'skipped'), { recursive: true });
    const imported = await importBundle(dirs.data, {
      instruments: [
        {
          name: 'sem-1',
          tool: 'SEM',
          // The outer folder first: its walk reaches eds/ before the inner folder's walk.
          watch: [
            { path: dirs.src, include: ['*'] },
            { path: eds, include: ['*.emd'], exclude: ['skipped'] },
          ],
          stability_seconds: 0,
          storage_location: 'archive',
          destination_template: '{instrument}/{relative_path}',
        },
      ],
    });
    expect(imported.code).toBe(0);
    writeFileSync(join(eds, 'run-7', 'spectrum.emd'), 'a spectrum');
    writeFileSync(join(eds, 'run-7', 'image.tif'), 'an image');
    // In a folder the inner watch skips: the outer one's.
    writeFileSync(join(eds, 'run-7', 'skipped', 'old.emd'), 'an old spectrum');
    const run = await harvestOnce(dirs.data);
    expect(run.stdout).toContain('harvest: 3 completed, 0 skipped, 0 failed');
    expect(listTree(join(dirs.dest, 'sem-1')).sort()).toEqual([
      'eds/run-7/image.tif',
      'eds/run-7/skipped/old.emd',
      'run-7/spectrum.emd',
    ]);
    const files = await filesOf(dirs.data);
    expect(files.find((f) => f.filename === 'spectrum.emd')?.relative_path).toBe(
      'run-7/spectrum.emd',
    );
  });
});
