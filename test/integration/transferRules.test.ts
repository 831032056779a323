/**
 * Rules of the harvest's transfer core that no other test held (a hand-mutation review found
 * each one left every test passing): the backoff between failed attempts; what a completed
 * transfer records; a small copy made durable on its own; how many copies run at once; a
 * destination folder that a symbolic link replaced once it was made; a big file's copy fsynced
 * before it gets its name, and one whose fsync fails failed and cleaned up.
 */
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  failingTransfer,
  filesOf,
  harvestOnce,
  listTree,
  setupHarvest,
  transfersOf,
  withDb,
} from './harvestSetup.js';
import { retryNow } from '../../electron/core/harvest/due.js';
import { waitFor } from './helpers.js';

describe('a failed transfer', () => {
  it('is tried again after a backoff that doubles with each failure, up to its cap', async () => {
    const dirs = await setupHarvest();
    // Every attempt fails.
    await failingTransfer(dirs, { base: 100, max: 350 });
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

    // Someone asks for a retry (Retry, Retry all): failing again, it waits the first step, not
    // the cap its earlier failures came to; the attempts shown are all of them.
    const [before] = await filesOf(dirs.data);
    withDb(dirs.data, (db) => expect(retryNow(db, before.id)).toBe(true));
    expect((await harvestOnce(dirs.data)).code).toBe(1);
    const [file] = await filesOf(dirs.data);
    const last = (await transfersOf(dirs.data)).at(-1);
    expect(file).toMatchObject({ state: 'failed', attempts: 5 });
    const delay = Date.parse(file?.next_attempt_at ?? '') - Date.parse(last?.completed_at ?? '');
    expect(Math.round(delay / 1000)).toBe(100);
    // ...and the next failure after it the second step.
    expect((await harvestOnce(dirs.data)).code).toBe(1);
    const [again] = await filesOf(dirs.data);
    const latest = (await transfersOf(dirs.data)).at(-1);
    const next = Date.parse(again?.next_attempt_at ?? '') - Date.parse(latest?.completed_at ?? '');
    expect(Math.round(next / 1000)).toBe(200);
  }, 60_000);
});

describe('a completed transfer', () => {
  it("records the bytes and the copy's checksum, a big file alone and a small one", async () => {
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

describe('a small file copied on its own, not in a batch', () => {
  it('whose flush fails is not completed, and its next attempt finishes it', async () => {
    const dirs = await setupHarvest({ stability: 0 });
    writeFileSync(join(dirs.src, 'a.txt'), 'small');
    // A first attempt fails (the storage folder is gone), and its record names a partial that
    // could not be removed then: the next attempt settles that first and copies the file on
    // its own (transferQueue.ts runTransfer), not in a batch, its flush still left to the
    // engine's batches of flushes (durable.ts), which the fault makes fail.
    rmSync(dirs.dest, { recursive: true });
    expect((await harvestOnce(dirs.data)).code).toBe(1);
    mkdirSync(dirs.dest);
    const partial = join(dirs.dest, 'sem-1', '.a.txt.0123456789ab.partial');
    withDb(dirs.data, (db) => db.prepare('UPDATE harvest_files SET partial_path = ?').run(partial));

    // The walk is held (6 s) while a tick takes the file, which the run's start made due: its
    // attempt ends before the walk does, and the walk's end queues the due files again.
    const flushFails = await harvestOnce(dirs.data, {
      LABSTATION_INJECT: 'harvest.flush-fails,harvest.slow-walk',
    });
    expect(flushFails.code, flushFails.stdout + flushFails.stderr).toBe(1);
    // The copy is at its name, but may not be on the disk: its transfer fails, its markers
    // kept for the next run to settle (recovery.ts flushes the copy itself). This run does not
    // take it again, so what it reports does not hang on whether a tick or a walk's end came
    // before the run was over.
    expect(flushFails.stdout).toMatch(/harvest: 0 completed, 0 skipped, 1 failed/);
    expect(listTree(dirs.dest)).toEqual(['sem-1/a.txt']);

    const run = await harvestOnce(dirs.data);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(listTree(dirs.dest)).toEqual(['sem-1/a.txt']);
    expect((await transfersOf(dirs.data)).at(-1)).toMatchObject({
      status: 'completed',
      checksum_verified: true,
      destination_path: join(dirs.dest, 'sem-1', 'a.txt'),
    });
  }, 60_000);
});

describe('copies at once', () => {
  it('are two by default: never more partials being written than that', async () => {
    const dirs = await setupHarvest({ stability: 0 });
    const size = 40 * 1024 * 1024;
    for (const name of ['a', 'b', 'c', 'd']) {
      writeFileSync(join(dirs.src, `${name}.raw`), Buffer.alloc(size, name));
    }
    const folder = join(dirs.dest, 'sem-1');
    // Partials still growing: a whole one may wait for its placement while the next copy starts.
    const growing = (): number =>
      existsSync(folder)
        ? readdirSync(folder).filter((name) => {
            if (!name.endsWith('.partial')) return false;
            const found = statSync(join(folder, name), { throwIfNoEntry: false });
            return found !== undefined && found.size < size;
          }).length
        : 0;
    let running = true;
    // A slow disk (24 ms per MiB): each copy takes about a second.
    const run = harvestOnce(dirs.data, { LABSTATION_INJECT: 'harvest.slow-copy' }).finally(() => {
      running = false;
    });
    let most = 0;
    while (running) {
      most = Math.max(most, growing());
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect((await run).code).toBe(0);
    expect(most).toBe(2);
    expect(listTree(dirs.dest)).toEqual([
      'sem-1/a.raw',
      'sem-1/b.raw',
      'sem-1/c.raw',
      'sem-1/d.raw',
    ]);
  }, 60_000);
});

describe('a destination folder', () => {
  it('swapped for a symbolic link out of the storage once made is refused: nothing is copied where it leads', async () => {
    const dirs = await setupHarvest({ stability: 0 });
    // One small file (copied in a batch) and one big one (alone), each into a folder of its own.
    mkdirSync(join(dirs.src, 'run1'));
    mkdirSync(join(dirs.src, 'run2'));
    writeFileSync(join(dirs.src, 'run1', 'small.txt'), 'small');
    writeFileSync(join(dirs.src, 'run2', 'big.raw'), randomBytes(5 * 1024 * 1024));
    // Each folder, once made, is replaced by a link to the storage's parent folder (the root
    // of this test) before it is checked again (place.ts makeFoldersInside).
    const run = await harvestOnce(dirs.data, { LABSTATION_INJECT: 'harvest.link-swapped-in' });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('harvest: 0 completed, 0 skipped, 2 failed');
    // Nothing where the links lead: no copy, no partial.
    expect(readdirSync(dirs.root).sort()).toEqual(['data', 'dest', 'src']);
    for (const folder of ['run1', 'run2']) {
      expect(lstatSync(join(dirs.dest, 'sem-1', folder)).isSymbolicLink()).toBe(true);
    }
    const files = await filesOf(dirs.data);
    expect(files).toHaveLength(2);
    for (const file of files) {
      // Not tried again by itself: the storage must be looked at first.
      expect(file).toMatchObject({ state: 'failed', attempts: 1, next_attempt_at: null });
      expect(file.last_transfer?.error).toMatch(
        /^destination folder .* leads outside the storage location \(to .*, through a symbolic link\)$/,
      );
    }
  }, 60_000);
});

/** The names that appeared in `folder` (inotify) while `work` ran, and what it returned. */
async function namesSeenDuring<T>(
  folder: string,
  work: () => Promise<T>,
): Promise<{ result: T; seen: Set<string> }> {
  const seen = new Set<string>();
  const watcher = watch(folder, (_event, name) => {
    if (name) seen.add(name);
  });
  try {
    const result = await work();
    // Reported after everything before it: once the watcher has it, it has all the rest.
    writeFileSync(join(folder, 'end.mark'), '');
    await waitFor('the watcher to catch up', () => (seen.has('end.mark') ? true : undefined));
    seen.delete('end.mark');
    return { result, seen };
  } finally {
    watcher.close();
  }
}

describe("a big file's copy (past the batches' bound, copied alone)", () => {
  it('is fsynced before it gets its name: a copy whose fsync fails never appears at its name', async () => {
    const dirs = await setupHarvest({ stability: 0 });
    const folder = join(dirs.dest, 'sem-1');
    mkdirSync(folder);
    writeFileSync(join(dirs.src, 'big.raw'), randomBytes(5 * 1024 * 1024));
    // Durability cannot be seen from here; the order can: the copy's own fsync is made to fail
    // (copy.ts), and a rename that did not wait for it would put the copy at its name anyway,
    // if only for a moment before a failure removed it.
    const { result: run, seen } = await namesSeenDuring(folder, () =>
      harvestOnce(dirs.data, { LABSTATION_INJECT: 'harvest.copy-flush-fails' }),
    );
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toContain('harvest: 0 completed, 0 skipped, 1 failed');
    // The copy was written under its partial's name...
    expect([...seen].filter((name) => /^\.big\.raw\.[0-9a-f]+\.partial$/.test(name))).toHaveLength(
      1,
    );
    // ...and never had its own.
    expect([...seen].filter((name) => !name.endsWith('.partial'))).toEqual([]);
  }, 60_000);

  it('whose fsync fails is failed with the reason, its partial removed, nothing at its name; then tried again', async () => {
    const dirs = await setupHarvest({ stability: 0 });
    const content = randomBytes(5 * 1024 * 1024);
    writeFileSync(join(dirs.src, 'big.raw'), content);
    const final = join(dirs.dest, 'sem-1', 'big.raw');
    const failed = await harvestOnce(dirs.data, { LABSTATION_INJECT: 'harvest.copy-flush-fails' });
    expect(failed.code, failed.stdout + failed.stderr).toBe(1);
    expect(failed.stdout).toContain('harvest: 0 completed, 0 skipped, 1 failed');
    // No partial, no copy at its name (nor anywhere in the storage).
    expect(listTree(dirs.dest)).toEqual([]);
    const [file] = await filesOf(dirs.data);
    expect(file).toMatchObject({ state: 'failed', attempts: 1 });
    // Tried again by itself, after the backoff.
    expect(file?.next_attempt_at).toEqual(expect.any(String));
    expect(file?.last_transfer).toMatchObject({
      status: 'failed',
      destination_path: final,
      checksum_verified: false,
    });
    expect(file?.last_transfer?.error).toMatch(
      /^input\/output error \(disk or share failing\): EIO: the flush of .*\/\.big\.raw\.[0-9a-f]+\.partial failed \(injected\)$/,
    );
    // The attempt's markers are cleared: nothing is left for a recovery to settle.
    const markers = withDb(dirs.data, (db) =>
      db
        .prepare('SELECT partial_path, verified_hash, pending_destination FROM harvest_files')
        .get(),
    );
    expect(markers).toEqual({ partial_path: null, verified_hash: null, pending_destination: null });

    const run = await harvestOnce(dirs.data);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('harvest: 1 completed, 0 skipped, 0 failed');
    expect(listTree(dirs.dest)).toEqual(['sem-1/big.raw']);
    expect(readFileSync(final).equals(content)).toBe(true);
    expect((await transfersOf(dirs.data)).map((t) => t.status)).toEqual(['failed', 'completed']);
  }, 60_000);
});
