/**
 * Which sidecar the `sidecar_json` hook merges, through the real `labstation harvest --once`:
 * `<name>.json` beside the file, before `<stem>.json`, which is read only when there is no
 * `<name>.json`.
 */
import { linkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesOf, harvestOnce, setupHarvest } from './harvestSetup.js';

describe('the sidecar_json hook', () => {
  it('merges <name>.json beside the file, and <stem>.json only where there is none', async () => {
    const dirs = await setupHarvest({
      hooks: [{ name: 'sidecar', trigger: 'post_transfer', kind: 'sidecar_json' }],
    });
    writeFileSync(join(dirs.src, 'scan.tif'), 'image');
    writeFileSync(
      join(dirs.src, 'scan.tif.json'),
      JSON.stringify({ sample: 'from scan.tif.json' }),
    );
    writeFileSync(
      join(dirs.src, 'scan.json'),
      JSON.stringify({ sample: 'from scan.json', stem_only: true }),
    );
    writeFileSync(join(dirs.src, 'map.emd'), 'spectrum');
    writeFileSync(join(dirs.src, 'map.json'), JSON.stringify({ sample: 'from map.json' }));
    const run = await harvestOnce(dirs.data);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const byName = new Map((await filesOf(dirs.data)).map((f) => [f.filename, f.metadata_]));
    expect(byName.get('scan.tif')).toEqual({ sample: 'from scan.tif.json' });
    expect(byName.get('map.emd')).toEqual({ sample: 'from map.json' });
  });

  it('never reads a file as its own sidecar: data.json is data.JSON itself where case is ignored', async () => {
    // No file system that ignores case can be mounted here: a hard link is the same file under
    // the sidecar's name, as data.json is data.JSON on Windows and macOS.
    const dirs = await setupHarvest({
      hooks: [{ name: 'sidecar', trigger: 'post_transfer', kind: 'sidecar_json' }],
    });
    writeFileSync(join(dirs.src, 'data.JSON'), JSON.stringify({ kind: 'the data itself' }));
    linkSync(join(dirs.src, 'data.JSON'), join(dirs.src, 'data.json'));
    // A sidecar whose name differs only in case, but another file, is still read.
    writeFileSync(join(dirs.src, 'scan.TIF'), 'image');
    writeFileSync(join(dirs.src, 'scan.json'), JSON.stringify({ sample: 'S-1' }));
    const run = await harvestOnce(dirs.data);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const byName = new Map((await filesOf(dirs.data)).map((f) => [f.filename, f.metadata_]));
    expect(byName.get('data.JSON')).toEqual({});
    expect(byName.get('scan.TIF')).toEqual({ sample: 'S-1' });
  });
});
