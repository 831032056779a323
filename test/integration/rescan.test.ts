/**
 * The walk every few minutes (station setting harvest.rescanMinutes) catches what the watcher
 * missed, in a running station: a share mounted on a folder of the watched tree after its
 * watch was set up holds files of which the watch hears nothing.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HarvestFileView } from '../../shared/api.js';
import { importBundle, startStation, waitFor, type StationProcess } from './helpers.js';
import { setupHarvest, tryMountTmpfs, unmount } from './harvestSetup.js';

async function doneNames(st: StationProcess): Promise<string[]> {
  const res = await st.rpc('harvest.files', { limit: 1000 });
  return (res.body as { files: HarvestFileView[] }).files
    .filter((f) => f.state === 'done')
    .map((f) => f.relative_path)
    .sort();
}

describe('the walk between watcher events', () => {
  it('finds a file the watcher never reported: one on a share mounted in the watched tree', async (ctx) => {
    const dirs = await setupHarvest();
    // The shortest rescan a bundle may set: 0.1 minutes.
    const tuned = await importBundle(dirs.data, { station: { tool: 'SEM', rescan_minutes: 0.1 } });
    expect(tuned.code, tuned.stderr).toBe(0);
    const share = join(dirs.src, 'share');
    mkdirSync(share);
    const station = await startStation(dirs.data);
    let mounted = false;
    try {
      // The watch is up (the watcher reports a file written now) and the first walk is done.
      writeFileSync(join(dirs.src, 'first.dat'), 'seen by the watcher');
      await waitFor(
        'first.dat harvested',
        async () => ((await doneNames(station)).includes('first.dat') ? true : undefined),
        30_000,
      );
      mounted = tryMountTmpfs(share, '1m');
      if (!mounted) ctx.skip();
      // Written on the share: the watch on the folder beneath it hears nothing.
      writeFileSync(join(share, 'missed.dat'), 'no event for this one');
      const names = await waitFor(
        'missed.dat harvested',
        async () => {
          const done = await doneNames(station);
          return done.includes('share/missed.dat') ? done : undefined;
        },
        30_000,
      );
      expect(names).toEqual(['first.dat', 'share/missed.dat']);
    } finally {
      await station.stop();
      if (mounted) unmount(share);
    }
  }, 60_000);
});
