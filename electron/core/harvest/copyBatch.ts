/**
 * The copy worker's half of a batch of small files (batch.ts): copy, verify and, once the main
 * thread has recorded them verified, place many small files per message. A worker message
 * costs the main thread about as much as the copy of a 100 KiB file; one per file made the
 * main thread, not the disk, the limit of a harvest of many small files (BENCHMARKS.md).
 *
 * Small files are written and read back with copy.ts's synchronous spans: the source read once
 * and hashed on the way, the copy re-read and hashed again. Only the first read of the next
 * few sources goes through libuv's pool, ahead of their copy (copySmallFiles): a disk
 * answers several reads at once faster than one by one. The engine's stability check of many
 * files (probeFiles) and the walk's stat calls (statFiles) run in the service worker, off the
 * engine's thread; the batch flush runs in a shell started once (durable.ts SyncFsRunner).
 */
import {
  closeSync,
  constants,
  fstatSync,
  read,
  readSync,
  linkSync,
  lstatSync,
  openSync,
  readdirSync,
  renameSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { createXXHash128, type IHasher } from '../util/hasher.js';
import {
  CHUNK,
  GONE_WHILE_COPIED,
  closeQuietly,
  copySpan,
  flipBit,
  slowDownMs,
  writeAll,
} from './copy.js';
import { errorCode } from '../util/errors.js';
import { failpoint, injected } from '../util/failpoint.js';
import { noHardLinks, refuseLinkInTests } from './hardLinks.js';

export interface SmallCopyJob {
  source: string;
  /** Recorded by the caller before this job is sent (attemptMarkers.ts beginAttempts). */
  partial: string;
  /** Where the copy will go: a file of the same size there is checked by the caller first. */
  destination: string;
  /** What the source looked like when it was found stable. */
  size: number;
  mtimeMs: number;
}

/**
 * removed: true, the partial this job created is deleted again (or was never created); false
 * when deleting it failed and its recorded name must stay for a later cleanup; null when it was
 * not found, which the caller trusts only where the storage folder can be seen (a share gone
 * answers "not found" too: attempt.ts dropPartial).
 */
export type SmallCopyResult =
  | { outcome: 'copied'; sourceHash: string; destHash: string; bytes: number }
  | { outcome: 'mismatch'; sourceHash: string; destHash: string; removed: boolean | null }
  | { outcome: 'source_changed'; detail: string; removed: boolean | null }
  /** The source is not there (ENOENT), or a file of the same size is at the destination. */
  | { outcome: 'missing' }
  | { outcome: 'exists' }
  | { outcome: 'error'; message: string; code: string | null; removed: boolean | null };

export interface PlaceJob {
  partial: string;
  destination: string;
}

export type PlaceResult =
  /** partialLeft: linked, but the partial's name could not be removed. */
  | { outcome: 'placed'; partialLeft: boolean }
  /** The name is taken; the partial is untouched. */
  | { outcome: 'taken' }
  | { outcome: 'error'; message: string; code: string | null };

/**
 * Sources of a batch opened and read ahead of the one being copied, where the sources are on
 * a local disk (batch.ts): in libuv's pool, which the whole process shares, so a share that
 * hangs must not hold its threads.
 */
export const READ_AHEAD = 4;

/**
 * How a source is opened: a source that became a symbolic link since it was found is not
 * followed.
 */
const SOURCE_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

let hasher: IHasher | null = null;

/** Deletes `path`: true when deleted, null when not found, false when the delete failed. */
function removeSync(path: string): boolean | null {
  try {
    unlinkSync(path);
    return true;
  } catch (error) {
    return errorCode(error) === 'ENOENT' ? null : false;
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * A source opened, and its first chunk read in libuv's pool while the worker copies the files
 * before it (copySmallFiles). `error`: the open failed; `readError`: the first read did.
 */
type ReadAhead =
  | { error: NodeJS.ErrnoException }
  | { fd: number; chunk: Buffer; bytes: number; readError: NodeJS.ErrnoException | null };

function openSource(path: string): number | { error: NodeJS.ErrnoException } {
  try {
    return openSync(path, SOURCE_FLAGS);
  } catch (error) {
    return { error: error as NodeJS.ErrnoException };
  }
}

/** The same, on this thread: a source not read ahead. */
function openAndRead(path: string, chunk: Buffer): ReadAhead {
  const fd = openSource(path);
  if (typeof fd !== 'number') return fd;
  try {
    return { fd, chunk, bytes: readSync(fd, chunk, 0, chunk.length, 0), readError: null };
  } catch (error) {
    return { fd, chunk, bytes: 0, readError: error as NodeJS.ErrnoException };
  }
}

/**
 * The source is opened here, on the worker's thread, and only its read goes to the pool. The
 * walk has just looked the file up, so the open finds it in the kernel's caches. Opening in the
 * pool as well made two steps, and the read could only start once the worker's event loop ran
 * the open's callback: while the worker copied, which is synchronous, the reads ahead waited
 * behind it. Each copy worker now waits about half as long for its sources (0.9-1.0 s against
 * 1.7-2.0 s on 10,000 files of 100 KiB, BENCHMARKS.md).
 */
function readAhead(path: string, chunk: Buffer): Promise<ReadAhead> {
  const fd = openSource(path);
  if (typeof fd !== 'number') return Promise.resolve(fd);
  return new Promise((resolve) => {
    read(fd, chunk, 0, chunk.length, 0, (readError, bytes) =>
      resolve({ fd, chunk, bytes: readError ? 0 : bytes, readError }),
    );
  });
}

function copyOne(job: SmallCopyJob, h: IHasher, ahead: ReadAhead): SmallCopyResult {
  if ('error' in ahead) {
    if (ahead.error.code === 'ENOENT') return { outcome: 'missing' };
    return {
      outcome: 'error',
      message: ahead.error.message,
      code: errorCode(ahead.error),
      removed: true,
    };
  }
  const { fd: source, chunk } = ahead;
  let dest: number | null = null;
  let created = false;
  const fail = (error: unknown): SmallCopyResult => ({
    outcome: 'error',
    message: (error as Error).message,
    code: errorCode(error),
    removed: created ? removeSync(job.partial) : true,
  });
  try {
    if (ahead.readError) throw ahead.readError;
    // Checked after the first chunk was read: a write since the file was found stable, before
    // or during that read, has moved its mtime by now.
    const before = fstatSync(source);
    if (before.size !== job.size || before.mtimeMs !== job.mtimeMs) {
      return {
        outcome: 'source_changed',
        detail: 'the file changed after it was found stable',
        removed: true,
      };
    }
    const existing = lstatSync(job.destination, { throwIfNoEntry: false });
    if (existing?.isFile() && existing.size === job.size) return { outcome: 'exists' };
    dest = openSync(job.partial, 'wx+', 0o644);
    created = true;
    h.init();
    let position = ahead.bytes;
    if (position > 0) {
      h.update(chunk.subarray(0, position));
      writeAll(dest, chunk, position, 0);
      // Up to one byte past the size it had: a file that grew is not copied further.
      if (position <= job.size) {
        position = copySpan(source, dest, h, chunk, position, job.size + 1).position;
      }
    }
    if (injected('harvest.slow-copy')) sleepSync(slowDownMs(position));
    const sourceHash = h.digest('hex');
    const after = statSync(job.source, { throwIfNoEntry: false });
    if (
      !after ||
      position !== job.size ||
      after.size !== job.size ||
      after.mtimeMs !== job.mtimeMs
    ) {
      closeSync(dest);
      dest = null;
      return {
        outcome: 'source_changed',
        detail: after
          ? `the file changed while it was copied (${position} bytes read, ${after.size} now)`
          : GONE_WHILE_COPIED,
        removed: removeSync(job.partial),
      };
    }
    if (injected('harvest.flip-bit') && position > 0) flipBit(dest, position);
    // Read back from the start through the descriptor that wrote it: any descriptor reads the
    // same pages of the file, and this one costs no second open. Durability is the caller's:
    // the batch is flushed at once after placing (durable.ts).
    h.init();
    const read = copySpan(dest, null, h, chunk, 0, Infinity);
    const verified = { hash: h.digest('hex'), bytes: read.position };
    closeSync(dest);
    dest = null;
    if (verified.hash !== sourceHash) {
      return {
        outcome: 'mismatch',
        sourceHash,
        destHash: verified.hash,
        removed: removeSync(job.partial),
      };
    }
    return { outcome: 'copied', sourceHash, destHash: verified.hash, bytes: verified.bytes };
  } catch (error) {
    if (dest !== null) {
      try {
        closeSync(dest);
      } catch {
        // The write error is the reason.
      }
      dest = null;
    }
    return fail(error);
  } finally {
    closeSync(source);
  }
}

/**
 * Copies and verifies each job in turn; one file's failure is its own result. With `ahead` >
 * 0, the next `ahead` sources are opened, and their first chunks read in libuv's pool
 * meanwhile: a disk answers several reads at once much faster than one after the other
 * (BENCHMARKS.md), and a small file is mostly its first chunk.
 */
export async function copySmallFiles(jobs: SmallCopyJob[], ahead = 0): Promise<SmallCopyResult[]> {
  hasher ??= await createXXHash128();
  const h = hasher;
  // This call's own buffers: calls on the calling thread (copyPool.ts inline) may interleave.
  // Job i reads into buffer i % (ahead + 1). The read for job i + ahead starts before job i is
  // copied, and job i copies through its own buffer to the end: while it does, the `ahead`
  // jobs after it hold the other buffers.
  const buffers = Array.from({ length: ahead + 1 }, () => Buffer.allocUnsafe(CHUNK));
  const start = (i: number): Promise<ReadAhead> =>
    readAhead(jobs[i].source, buffers[i % (ahead + 1)]);
  const pending: Promise<ReadAhead>[] = [];
  for (let i = 0; i < Math.min(ahead, jobs.length); i++) pending.push(start(i));
  const results: SmallCopyResult[] = [];
  // Read-aheads from here on were not handed to copyOne, which closes the source it is given.
  let handed = 0;
  try {
    for (let i = 0; i < jobs.length; i++) {
      let opened: ReadAhead;
      if (ahead > 0) {
        opened = await pending[i];
        if (i + ahead < jobs.length) pending.push(start(i + ahead));
      } else {
        opened = openAndRead(jobs[i].source, buffers[0]);
      }
      handed = i + 1;
      results.push(copyOne(jobs[i], h, opened));
      // Crash test: the process dies with one copy written and the others not begun (their
      // sources opened and read at most).
      if (results.length === 1) failpoint('harvest.batch.mid-copy');
    }
  } finally {
    // Only if the loop threw: the reads still under way end before this returns, and the
    // sources they opened are closed.
    for (const left of await Promise.allSettled(pending.slice(handed))) {
      if (left.status === 'fulfilled' && 'fd' in left.value) closeQuietly(left.value.fd);
    }
  }
  return results;
}

/**
 * place.ts placeWithoutClobber, synchronous: a hard link that refuses a taken name, then the
 * partial's name goes; where there are no hard links, check then rename (the caller holds the
 * folder, place.ts inFolder).
 */
function placeOne(job: PlaceJob): PlaceResult {
  try {
    refuseLinkInTests(job.partial, job.destination);
    linkSync(job.partial, job.destination);
  } catch (error) {
    const code = errorCode(error) ?? '';
    if (code === 'EEXIST') return { outcome: 'taken' };
    if (!noHardLinks(code)) {
      return { outcome: 'error', message: (error as Error).message, code: errorCode(error) };
    }
    try {
      if (lstatSync(job.destination, { throwIfNoEntry: false })) return { outcome: 'taken' };
      renameSync(job.partial, job.destination);
      return { outcome: 'placed', partialLeft: false };
    } catch (fallback) {
      return { outcome: 'error', message: (fallback as Error).message, code: errorCode(fallback) };
    }
  }
  return { outcome: 'placed', partialLeft: removeSync(job.partial) === false };
}

export function placeFiles(jobs: PlaceJob[]): PlaceResult[] {
  const results: PlaceResult[] = [];
  for (const job of jobs) {
    results.push(placeOne(job));
    // Crash test: the process dies with one copy at its name and the others still partials.
    if (results.length === 1) failpoint('harvest.batch.mid-place');
  }
  return results;
}

/** What the stability check (stability.ts check) needs to know of a file, without following links. */
export type Probe =
  | { kind: 'file'; size: number; mtimeMs: number; openError: string | null }
  | { kind: 'gone' }
  | { kind: 'other' };

/**
 * lstat, and why the file does not open for reading, if it does not (a writer may hold it
 * exclusively on Windows; no permission).
 */
export function probeFiles(paths: string[]): Probe[] {
  return paths.map((path): Probe => {
    const s = lstatSync(path, { throwIfNoEntry: false });
    if (!s) return { kind: 'gone' };
    if (!s.isFile()) return { kind: 'other' };
    let openError: string | null = null;
    try {
      closeSync(openSync(path, 'r'));
    } catch (error) {
      openError = (error as NodeJS.ErrnoException).code ?? String(error);
    }
    return { kind: 'file', size: s.size, mtimeMs: s.mtimeMs, openError };
  });
}

/** A walked file's size and mtime (discover.ts); null: not a regular file now, or gone. */
export type FileStat = { size: number; mtimeMs: number } | null;

/**
 * lstat of each path, for the walk (discover.ts), in small parallel groups: a share answers
 * many at once faster than one by one. The engine has its service worker run it, off its own
 * thread, and the worker answers other requests between the groups.
 */
export async function statFiles(paths: string[]): Promise<FileStat[]> {
  const stats: FileStat[] = [];
  for (let i = 0; i < paths.length; i += 32) {
    const group = await Promise.all(
      paths.slice(i, i + 32).map((path) =>
        lstat(path).then(
          (s): FileStat => (s.isFile() ? { size: s.size, mtimeMs: s.mtimeMs } : null),
          () => null,
        ),
      ),
    );
    stats.push(...group);
  }
  return stats;
}

/** A regular file found in a folder, with its lstat size, mtime and inode. */
export interface ListedFile {
  path: string;
  size: number;
  mtimeMs: number;
  /** Tells a file put back in its place (with its size and mtime) from the one listed before. */
  ino: number;
}

/**
 * The regular files directly in each folder (not in its subfolders), for the folders the
 * watcher reports (sightings.ts folderSighted); none for a folder that cannot be read. Synchronous,
 * on the service worker's thread: when a tree is moved in, the process's libuv pool can be
 * queued full (the watch's look at each new folder, the walk's reads), and an asynchronous read
 * here waited behind all of that (0.4 to 0.5 s before the first file of 10,000, when chokidar
 * still watched and lstat'ed every entry).
 */
export function listFiles(dirs: string[]): ListedFile[][] {
  return dirs.map((dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return [];
    }
    const files: ListedFile[] = [];
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const path = join(dir, entry.name);
      const s = lstatSync(path, { throwIfNoEntry: false });
      if (s?.isFile()) files.push({ path, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino });
    }
    return files;
  });
}
