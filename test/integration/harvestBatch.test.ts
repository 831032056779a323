/**
 * Small files go through the harvest in batches (electron/core/harvest/batch.ts): one worker
 * message copies many, one commit records their partials, one their verified markers. These
 * tests kill the real CLI (a failpoint, SIGKILL) in the middle of a batch and check what is left:
 * every file at a final name has a completed record or a verified marker that recovery
 * finishes; after a restart, every file is completed exactly once, verified, with no partial
 * left behind.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  filesOf,
  harvestOnce,
  listTree,
  setupHarvest,
  transfersOf,
  withDb,
} from './harvestSetup.js';

const FILES = 70;

/** Sources in three folders: more than two batches of small files, of differing sizes. */
function writeSources(src: string): Map<string, Buffer> {
  const written = new Map<string, Buffer>();
  for (let i = 0; i < FILES; i += 1) {
    const folder = `run-${i % 3}`;
    mkdirSync(join(src, folder), { recursive: true });
    const content = randomBytes(1 + ((i * 7919) % (64 * 1024)));
    const path = `${folder}/f${String(i).padStart(3, '0')}.dat`;
    writeFileSync(join(src, path), content);
    written.set(path, content);
  }
  return written;
}

/** Files at a final name (not a partial) that have neither a completed record nor a marker. */
function unaccounted(data: string, dest: string): string[] {
  const finals = listTree(dest)
    .filter((p) => !p.endsWith('.partial'))
    .map((p) => join(dest, p));
  return withDb(data, (db) => {
    const completed = new Set(
      db
        .prepare(`SELECT destination_path FROM harvest_transfers WHERE status = 'completed'`)
        .pluck()
        .all() as string[],
    );
    const marked = new Set(
      db
        .prepare(
          `SELECT pending_destination FROM harvest_files
             WHERE verified_hash IS NOT NULL AND pending_destination IS NOT NULL`,
        )
        .pluck()
        .all() as string[],
    );
    return finals.filter((p) => !completed.has(p) && !marked.has(p));
  });
}

describe('a crash in the middle of a batch of small files', () => {
  for (const point of [
    'harvest.batch.mid-copy',
    'harvest.batch.mid-place',
    'harvest.batch.placed',
  ]) {
    it(`${point}: no unrecorded final file; after a restart each file completed once, no partial`, async () => {
      const dirs = await setupHarvest({ stability: 0, template: '{instrument}/{relative_path}' });
      const sources = writeSources(dirs.src);

      const killed = await harvestOnce(dirs.data, { LABSTATION_FAILPOINT: point });
      expect(killed.code, killed.stdout + killed.stderr).not.toBe(0);
      expect(unaccounted(dirs.data, dirs.dest)).toEqual([]);
      // It died in the middle of a batch: files with their attempt's markers are left.
      const interrupted = withDb(dirs.data, (db) =>
        db
          .prepare('SELECT count(*) FROM harvest_files WHERE partial_path IS NOT NULL')
          .pluck()
          .get(),
      );
      expect(interrupted).toBeGreaterThan(0);
      if (point !== 'harvest.batch.mid-copy') {
        // Some copies reached their final names with no completed record yet.
        const placedOnly = withDb(dirs.data, (db) =>
          db
            .prepare(
              `SELECT pending_destination FROM harvest_files
                 WHERE verified_hash IS NOT NULL AND pending_destination IS NOT NULL`,
            )
            .pluck()
            .all(),
        ) as string[];
        expect(placedOnly.some((p) => listTree(dirs.dest).includes(relative(dirs.dest, p)))).toBe(
          true,
        );
      }

      const run = await harvestOnce(dirs.data);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const tree = listTree(dirs.dest);
      expect(tree.filter((p) => p.endsWith('.partial'))).toEqual([]);
      expect(tree).toEqual([...sources.keys()].map((p) => `sem-1/${p}`).sort());
      for (const [path, content] of sources) {
        expect(readFileSync(join(dirs.dest, 'sem-1', path)).equals(content)).toBe(true);
      }
      const files = await filesOf(dirs.data);
      expect(files).toHaveLength(FILES);
      expect(files.every((f) => f.state === 'done')).toBe(true);
      const transfers = await transfersOf(dirs.data);
      const completed = transfers.filter((t) => t.status === 'completed');
      // Exactly once per file, each verified, each at its own name.
      expect(completed).toHaveLength(FILES);
      expect(completed.every((t) => t.checksum_verified && t.dest_checksum)).toBe(true);
      expect(new Set(completed.map((t) => t.file_id)).size).toBe(FILES);
      expect(
        completed.map((t) => relative(join(dirs.dest, 'sem-1'), t.destination_path ?? '')).sort(),
      ).toEqual([...sources.keys()].sort());
      withDb(dirs.data, (db) => {
        const marked = db
          .prepare('SELECT count(*) FROM harvest_files WHERE partial_path IS NOT NULL')
          .pluck()
          .get();
        expect(marked).toBe(0);
        // Each file's recorded hash is the one its transfer verified.
        const mismatched = db
          .prepare(
            `SELECT count(*) FROM harvest_files f JOIN harvest_transfers t ON t.file_id = f.id
               WHERE t.status = 'completed' AND t.dest_checksum IS NOT f.xxhash`,
          )
          .pluck()
          .get();
        expect(mismatched).toBe(0);
      });
    }, 120_000);
  }
});

describe('batches of small files', () => {
  for (const links of [true, false]) {
    const where = links ? '' : ', where the storage has no hard links (a share)';
    it(`take a taken name and content already at the destination file by file${where}`, async () => {
      const dirs = await setupHarvest({ stability: 0 });
      const sources = writeSources(dirs.src);
      // Copied alone, its name taken too.
      const big = Buffer.alloc(5 << 20, 4);
      writeFileSync(join(dirs.src, 'big.raw'), big);
      mkdirSync(join(dirs.dest, 'sem-1'), { recursive: true });
      writeFileSync(join(dirs.dest, 'sem-1', 'big.raw'), 'theirs');
      const same = 'run-0/f000.dat';
      const other = 'run-1/f001.dat';
      mkdirSync(join(dirs.dest, 'sem-1', 'run-0'), { recursive: true });
      mkdirSync(join(dirs.dest, 'sem-1', 'run-1'), { recursive: true });
      writeFileSync(join(dirs.dest, 'sem-1', same), sources.get(same) as Buffer);
      // Same size, other content: never overwritten, the copy takes the next free name.
      const older = Buffer.from(sources.get(other) as Buffer).fill(1);
      writeFileSync(join(dirs.dest, 'sem-1', other), older);

      const run = await harvestOnce(
        dirs.data,
        links ? {} : { LABSTATION_INJECT: 'harvest.no-hard-links' },
      );
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`harvest: ${FILES} completed, 1 skipped, 0 failed`));
      expect(readFileSync(join(dirs.dest, 'sem-1', other)).equals(older)).toBe(true);
      expect(readFileSync(join(dirs.dest, 'sem-1', 'big.raw'), 'utf8')).toBe('theirs');
      expect(readFileSync(join(dirs.dest, 'sem-1', 'big (1).raw')).equals(big)).toBe(true);
      expect(
        readFileSync(join(dirs.dest, 'sem-1', 'run-1', 'f001 (1).dat')).equals(
          sources.get(other) as Buffer,
        ),
      ).toBe(true);
      expect(listTree(dirs.dest).filter((p) => p.endsWith('.partial'))).toEqual([]);
      const transfers = await transfersOf(dirs.data);
      expect(transfers.filter((t) => t.status === 'skipped')).toEqual([
        expect.objectContaining({ checksum_verified: true }),
      ]);
    }, 120_000);
  }
  it('store the other outcomes of a group when one is refused, and the refused one later', async () => {
    const dirs = await setupHarvest({ stability: 0 });
    const sources = writeSources(dirs.src);
    // One file's transfer record is refused, as a failing constraint would refuse it.
    withDb(dirs.data, (db) =>
      db.exec(`CREATE TRIGGER refuse_one BEFORE INSERT ON harvest_transfers
               WHEN (SELECT filename FROM harvest_files WHERE id = NEW.file_id) = 'f010.dat'
               BEGIN SELECT RAISE(ABORT, 'refused for the test'); END`),
    );
    const refused = await harvestOnce(dirs.data);
    expect(refused.code, refused.stdout + refused.stderr).not.toBe(0);
    const first = await transfersOf(dirs.data);
    // Every other file is recorded completed once; the refused one has no record.
    expect(first.filter((t) => t.status === 'completed')).toHaveLength(FILES - 1);
    const files = await filesOf(dirs.data);
    const loner = files.find((f) => f.filename === 'f010.dat');
    expect(first.some((t) => t.file_id === loner?.id)).toBe(false);

    withDb(dirs.data, (db) => db.exec('DROP TRIGGER refuse_one'));
    const run = await harvestOnce(dirs.data);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const completed = (await transfersOf(dirs.data)).filter((t) => t.status === 'completed');
    expect(completed).toHaveLength(FILES);
    expect(new Set(completed.map((t) => t.file_id)).size).toBe(FILES);
    expect(listTree(dirs.dest).filter((p) => p.endsWith('.partial'))).toEqual([]);
    expect(
      readFileSync(join(dirs.dest, 'sem-1', 'run-1', 'f010.dat')).equals(
        sources.get('run-1/f010.dat') as Buffer,
      ),
    ).toBe(true);
  }, 120_000);
});
