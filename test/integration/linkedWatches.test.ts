/**
 * One instrument watching a folder twice, once through a symbolic link (the folder itself, or
 * a folder inside it): each file was found at two paths and recorded twice, under two ARKs.
 * The folder that is another one through a link is not walked nor watched (harvested.ts
 * linkedFolders); the status says so, and a one-shot run does not fail for it.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HarvestStatus } from '../../shared/api.js';
import { importBundle, startStation, waitFor } from './helpers.js';
import { filesOf, harvestOnce, setupHarvest } from './harvestSetup.js';

function watching(...paths: string[]): unknown {
  return {
    instruments: [
      {
        name: 'sem-1',
        tool: 'SEM',
        watch: paths.map((path) => ({ path })),
        stability_seconds: 0,
        storage_location: 'archive',
        destination_template: '{instrument}/{relative_path}',
      },
    ],
  };
}

describe('a folder watched twice through a link', () => {
  it('records each file once, under the folder named first', async () => {
    const dirs = await setupHarvest({ stability: 0 });
    mkdirSync(join(dirs.src, 'eds'));
    writeFileSync(join(dirs.src, 'a.tif'), 'an image');
    writeFileSync(join(dirs.src, 'eds', 'b.emd'), 'a spectrum');
    // The same folder, and a folder inside it, each through a link.
    const same = join(dirs.root, 'same-src');
    const inner = join(dirs.root, 'eds-link');
    symlinkSync(dirs.src, same);
    symlinkSync(join(dirs.src, 'eds'), inner);
    const imported = await importBundle(dirs.data, watching(dirs.src, same, inner));
    expect(imported.code, imported.stderr).toBe(0);
    const run = await harvestOnce(dirs.data);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('harvest: 2 completed, 0 skipped, 0 failed');
    const files = await filesOf(dirs.data);
    expect(files.map((f) => f.source_path).sort()).toEqual([
      join(dirs.src, 'a.tif'),
      join(dirs.src, 'eds', 'b.emd'),
    ]);
  });

  it('says so in the status of a running station', async () => {
    const dirs = await setupHarvest({ stability: 0 });
    const same = join(dirs.root, 'same-src');
    symlinkSync(dirs.src, same);
    const imported = await importBundle(dirs.data, watching(dirs.src, same));
    expect(imported.code, imported.stderr).toBe(0);
    const station = await startStation(dirs.data);
    try {
      const problem = await waitFor(
        'the walk to say so',
        async () =>
          ((await station.rpc('harvest.status', {})).body as HarvestStatus).instruments[0]
            ?.problem ?? undefined,
        30_000,
      );
      expect(problem).toBe(
        `${same}: not harvested: through a link, it holds files of ${dirs.src} (or that ` +
          'folder holds its), which are harvested there',
      );
      writeFileSync(join(dirs.src, 'c.tif'), 'written while it runs');
      await waitFor(
        'c.tif harvested',
        async () => ((await filesOf(dirs.data))[0]?.state === 'done' ? true : undefined),
        30_000,
      );
      expect((await filesOf(dirs.data)).map((f) => f.source_path)).toEqual([
        join(dirs.src, 'c.tif'),
      ]);
    } finally {
      await station.stop();
    }
  }, 60_000);
});
