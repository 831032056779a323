/**
 * A watched folder given a new path on the same station (its share mounted elsewhere, the
 * folder moved with its files): the records of its files follow it (harvest/folderMoves.ts),
 * whether the change comes from a bundle imported on the station or from the server (that one:
 * harvestApply.test.ts). Before,
 * every file there was recorded again under a new ARK, and the old folder's failed records
 * were tried for ever at paths that were no more (`harvest --once` exiting 1 at every run).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HarvestStatus } from '../../shared/api.js';
import { importBundle, startStation, waitFor } from './helpers.js';
import {
  copyHold,
  copyUnderWay,
  filesOf,
  harvestOnce,
  listTree,
  setupHarvest,
  transfersOf,
  withDb,
} from './harvestSetup.js';

/** A bundle that gives sem-1 (setupHarvest's instrument) the watched folder `path`. */
function moveBundle(path: string, stability = 0): unknown {
  return {
    instruments: [
      {
        name: 'sem-1',
        tool: 'SEM',
        watch: [{ path }],
        stability_seconds: stability,
        storage_location: 'archive',
        destination_template: '{instrument}/{relative_path}',
      },
    ],
  };
}

describe('a watched folder given a new path', () => {
  it('keeps its files recorded once, under their ARKs, when a bundle moves it', async () => {
    const dirs = await setupHarvest({ stability: 0 });
    mkdirSync(join(dirs.src, 'run0'));
    writeFileSync(join(dirs.src, 'run0', 'a.tif'), 'harvested before the move');
    const first = await harvestOnce(dirs.data);
    expect(first.code, first.stderr).toBe(0);
    // A second file fails: its copy finds a file where its folder must go. Its retry waits.
    const tuned = await importBundle(dirs.data, {
      station: { tool: 'SEM', retry_base_seconds: 3600, retry_max_seconds: 3600 },
    });
    expect(tuned.code, tuned.stderr).toBe(0);
    mkdirSync(join(dirs.src, 'run1'));
    writeFileSync(join(dirs.src, 'run1', 'img.tif'), 'an image');
    writeFileSync(join(dirs.dest, 'sem-1', 'run1'), 'in the way');
    const failed = await harvestOnce(dirs.data);
    expect(failed.code, failed.stderr).toBe(1);
    const before = await filesOf(dirs.data);
    expect(before.map((f) => [f.relative_path, f.state]).sort()).toEqual([
      ['run0/a.tif', 'done'],
      ['run1/img.tif', 'failed'],
    ]);

    // The folder moves, and the bundle names its new path; the destination is free again.
    const moved = join(dirs.root, 'moved-src');
    renameSync(dirs.src, moved);
    rmSync(join(dirs.dest, 'sem-1', 'run1'));
    const imported = await importBundle(dirs.data, moveBundle(moved));
    expect(imported.code, imported.stderr).toBe(0);
    // And a file written after the move is a new file.
    writeFileSync(join(moved, 'run1', 'new.tif'), 'written after the move');
    const after = await harvestOnce(dirs.data);
    expect(after.code, after.stderr).toBe(0);

    const files = await filesOf(dirs.data);
    expect(files).toHaveLength(3);
    const byPath = new Map(files.map((f) => [f.relative_path, f]));
    for (const old of before) {
      const now = byPath.get(old.relative_path);
      expect(now?.uuid).toBe(old.uuid);
      expect(now?.persistent_id).toBe(old.persistent_id);
      expect(now?.source_path).toBe(join(moved, ...old.relative_path.split('/')));
      expect(now?.state).toBe('done');
    }
    expect(byPath.get('run1/new.tif')?.state).toBe('done');
    // a.tif was not copied again; img.tif was, once, after its failure.
    const transfers = await transfersOf(dirs.data);
    const a = byPath.get('run0/a.tif');
    expect(transfers.filter((t) => t.file_id === a?.id)).toHaveLength(1);
    // The server is told where the records are now: the last version queued for it says so.
    withDb(dirs.data, (db) => {
      const payload = db
        .prepare('SELECT payload FROM outbox WHERE record_uuid = ? ORDER BY id DESC LIMIT 1')
        .pluck()
        .get(a?.uuid) as string | undefined;
      expect(payload, 'an outbox row for a.tif').toBeDefined();
      expect(JSON.parse(payload ?? '{}')).toMatchObject({
        watch_path: moved,
        source_path: join(moved, 'run0', 'a.tif'),
      });
    });
  });

  it("moves each version of a file, the failed latest one too, under that version's ARK", async () => {
    const dirs = await setupHarvest({ stability: 0 });
    mkdirSync(join(dirs.src, 'run0'));
    const source = join(dirs.src, 'run0', 'a.tif');
    writeFileSync(source, 'version one');
    expect((await harvestOnce(dirs.data)).code).toBe(0);
    // Written again with other bytes; its copy fails (a file where its version goes).
    const tuned = await importBundle(dirs.data, {
      station: { tool: 'SEM', retry_base_seconds: 3600, retry_max_seconds: 3600 },
    });
    expect(tuned.code, tuned.stderr).toBe(0);
    writeFileSync(source, 'version two, longer');
    utimesSync(source, new Date(), new Date(Date.now() + 60_000));
    renameSync(join(dirs.dest, 'sem-1', 'run0'), join(dirs.root, 'first-copies'));
    writeFileSync(join(dirs.dest, 'sem-1', 'run0'), 'in the way');
    expect((await harvestOnce(dirs.data)).code).toBe(1);
    const before = await filesOf(dirs.data);
    expect(before.map((f) => f.state).sort()).toEqual(['done', 'failed']);

    const moved = join(dirs.root, 'moved-src');
    renameSync(dirs.src, moved);
    rmSync(join(dirs.dest, 'sem-1', 'run0'));
    const imported = await importBundle(dirs.data, moveBundle(moved));
    expect(imported.code, imported.stderr).toBe(0);
    const after = await harvestOnce(dirs.data);
    expect(after.code, after.stderr).toBe(0);
    const files = await filesOf(dirs.data);
    // No third record, no new ARK: both versions are where the folder is now.
    expect(files.map((f) => [f.uuid, f.persistent_id]).sort()).toEqual(
      before.map((f) => [f.uuid, f.persistent_id]).sort(),
    );
    for (const f of files) expect(f.source_path).toBe(join(moved, 'run0', 'a.tif'));
    expect(files.map((f) => f.state)).toEqual(['done', 'done']);
  });

  it('copies a file given back by its copy at once, at the path its folder moved to', async () => {
    const dirs = await setupHarvest({ stability: 0.3 });
    const hold = copyHold();
    const station = await startStation(dirs.data, hold.env);
    try {
      writeFileSync(join(dirs.src, 'movie.mrc'), randomBytes(64 * 1024 * 1024));
      await copyUnderWay(join(dirs.dest, 'sem-1'), 'movie.mrc');
      const status = async (): Promise<HarvestStatus> =>
        (await station.rpc('harvest.status', {})).body as HarvestStatus;
      const scanned = (await status()).last_scan_at;
      // The folder moves while the copy reads it, and the bundle says so.
      const moved = join(dirs.root, 'moved-src');
      renameSync(dirs.src, moved);
      const imported = await importBundle(dirs.data, moveBundle(moved, 0.3));
      expect(imported.code, imported.stderr).toBe(0);
      // The station takes the bundle, and its walk of the new folder passes over the file
      // (its copy is under way).
      await waitFor(
        'the walk of the moved folder',
        async () => {
          const now = await status();
          return now.instruments[0]?.watch.includes(moved) && now.last_scan_at !== scanned
            ? true
            : undefined;
        },
        30_000,
      );
      // The copy finds its source gone from the old path and gives the file back: it is
      // looked at where its record is now, and copied, not left for the next walk (5 minutes).
      hold.release();
      await waitFor(
        'movie.mrc copied',
        async () => ((await filesOf(dirs.data))[0]?.state === 'done' ? true : undefined),
        30_000,
      );
      const [file] = await filesOf(dirs.data);
      expect(file?.source_path).toBe(join(moved, 'movie.mrc'));
      expect(listTree(dirs.dest)).toEqual(['sem-1/movie.mrc']);
    } finally {
      hold.release();
      await station.stop();
    }
  }, 90_000);
});
