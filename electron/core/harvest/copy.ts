/**
 * The byte-moving half of a transfer: copy a source into a partial file while hashing it, make
 * the copy durable, read it back and hash it again. Runs in a copy worker (copyWorker.ts) so
 * hashing never blocks the thread that serves the UI; the caller decides what the result means
 * and renames the partial into place (localCopy.ts).
 *
 * The source is read once. The copy loop is synchronous, read, hash, write, chunk by chunk on
 * the worker's own thread: measured on 2 GiB here (BENCHMARKS.md), an asynchronous loop that
 * read and wrote through libuv's pool while the worker hashed took 6.6 s (median of four
 * runs), the synchronous one 3.2 s, against 2.6 s for cp + sync: every chunk stays in one
 * core's cache. Progress is reported, and the event loop let run, every YIELD_EVERY bytes or
 * YIELD_AFTER_MS, whichever comes first: a copy run on the calling thread (copyPool.ts inline,
 * in tests) does not hold it for seconds. A copy worker gets no other request while it copies
 * (copyPool.ts sends those to its service worker).
 *
 * The flush and the read-back overlap: the fsync runs in libuv's pool while this thread reads
 * the copy back and hashes it, and the copy counts only once both are done. Both see the same
 * bytes, the kernel's cached pages of the file, which are what the fsync writes: reading them
 * before the flush ends proves what reading them after would, and the disk works while the
 * CPU hashes.
 */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsync,
  openSync,
  readSync,
  statSync,
  writeSync,
} from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { createXXHash128, type IHasher } from '../util/hasher.js';
import { injected, injectedError } from '../util/failpoint.js';
import { errorCode } from '../util/errors.js';
import { readFull } from '../util/readFull.js';

export const HASH_ALGORITHM = 'xxh3-128';
export const GONE_WHILE_COPIED = 'the file was moved or deleted while it was copied';
const GONE = 'the file was moved or deleted before it was copied';
/**
 * 128 KiB: the chunk, the hasher's copy of it and the kernel's pages it is copied from and to
 * stay in the core's cache. Larger chunks were slower here: dd of 2 GiB with fsync took 3.5 s
 * in 64 KiB blocks, 3.8 s in 128 KiB, 7.9 s in 1 MiB and 10.4 s in 4 MiB; this copy of 2 GiB
 * (four runs each, medians) 3.2 s in 128 KiB chunks, 4.4 s in 256 KiB and 4.5 s in 1 MiB.
 */
export const CHUNK = 128 * 1024;
/**
 * The copy and the read-back let the worker's event loop run after this many bytes or this
 * many milliseconds, whichever comes first (a slow share takes long for 16 MiB).
 */
const YIELD_EVERY = 16 * 1024 * 1024;
const YIELD_AFTER_MS = 20;
/** hashFile reads asynchronously: bigger reads, fewer round trips through libuv's pool. */
const ASYNC_CHUNK = 1024 * 1024;

export interface CopyJob {
  source: string;
  partial: string;
  /** What the source looked like when it was found stable. */
  size: number;
  mtimeMs: number;
  /**
   * false: leave the flush to the caller, which makes many small copies durable at once
   * (durable.ts). Default true: the copy is fsynced before it counts.
   */
  durable?: boolean;
}

export type CopyResult =
  | { outcome: 'copied'; sourceHash: string; destHash: string; bytes: number }
  /** The source is not what it was when found stable (or changed while being read). */
  | { outcome: 'source_changed'; detail: string };

export type Progress = (bytes: number) => void;

/**
 * Chunk buffers and hashers are reused: allocating per file would make 10,000 small files a
 * garbage-collection benchmark. Free lists, since inline runs (tests) copy several at once.
 */
const freeBuffers = new Map<number, Buffer[]>();
const freeHashers: IHasher[] = [];

/** Lends a fresh hasher and `count` buffers of `size` to `work`, and takes them back after. */
async function withTools<T>(
  count: number,
  size: number,
  work: (hasher: IHasher, buffers: Buffer[]) => Promise<T>,
): Promise<T> {
  const hasher = freeHashers.pop() ?? (await createXXHash128());
  hasher.init();
  let free = freeBuffers.get(size);
  if (!free) freeBuffers.set(size, (free = []));
  const lent = Array.from({ length: count }, () => free.pop() ?? Buffer.allocUnsafe(size));
  try {
    return await work(hasher, lent);
  } finally {
    freeHashers.push(hasher);
    free.push(...lent);
  }
}

/** Test hook where no small file system can be mounted: the disk is full while the flag exists. */
export function checkInjectedFull(): void {
  const flag = process.env.LABSTATION_INJECT_ENOSPC_WHILE;
  if (flag && existsSync(flag)) {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  }
}

/**
 * Test hook: while LABSTATION_HOLD_COPY_UNTIL names a path that does not exist, a copy waits
 * after its first span (up to YIELD_EVERY: its partial made and written to, the source not yet
 * looked at again), so that a test can change the world in the middle of a copy (move the
 * source, take the share away) and then let it go on, without racing a timer: on a busy
 * machine a test may get the CPU only after a slowed copy ended.
 * Waits two minutes at most, so a test that never lets go fails on its checks, not by hanging.
 */
export async function heldForTest(): Promise<void> {
  const release = process.env.LABSTATION_HOLD_COPY_UNTIL;
  if (!release) return;
  const until = performance.now() + 120_000;
  while (!existsSync(release) && performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Writes all of data[0, length) at position. */
export function writeAll(fd: number, data: Buffer, length: number, position: number): void {
  checkInjectedFull();
  for (let written = 0; written < length;) {
    written += writeSync(fd, data, written, length - written, position + written);
  }
}

/**
 * Test hook: a slow disk (24 ms per MiB: 1.5 s for a 64 MiB file), so a test can act while a
 * copy is surely under way, on a busy machine too.
 */
export function slowDownMs(bytes: number): number {
  return (24 * bytes) / (1024 * 1024);
}

/**
 * Reads the source from `position` in whole chunks, hashing each and writing it at the same
 * place in dest (null: a read-back, hashing only), until the source ends, `until` is reached
 * or passed, or the chunk that ends after `deadline` (performance.now()) is done. Returns the
 * position reached and whether the source ended there. Synchronous: callers copying a big file
 * call it span by span.
 */
export function copySpan(
  source: number,
  dest: number | null,
  h: IHasher,
  chunk: Buffer,
  position: number,
  until: number,
  deadline = Infinity,
): { position: number; ended: boolean } {
  while (position < until) {
    const n = readSync(source, chunk, 0, chunk.length, position);
    if (n === 0) return { position, ended: true };
    h.update(chunk.subarray(0, n));
    if (dest !== null) writeAll(dest, chunk, n, position);
    position += n;
    if (deadline !== Infinity && performance.now() >= deadline) break;
  }
  return { position, ended: false };
}

/** Lets the worker's event loop answer the messages that came in during a synchronous span. */
function yieldToEvents(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * XXH3-128 of a whole file, reading ahead while hashing. Asynchronous: the server hashes
 * uploads with it on the thread that serves requests.
 */
export async function hashFile(
  path: string,
  progress?: Progress,
): Promise<{ hash: string; bytes: number }> {
  const handle = await open(path, 'r');
  try {
    return await withTools(2, ASYNC_CHUNK, (h, buffers) => hashWith(handle, h, buffers, progress));
  } finally {
    await handle.close();
  }
}

async function hashWith(
  handle: FileHandle,
  h: IHasher,
  buffers: Buffer[],
  progress?: Progress,
): Promise<{ hash: string; bytes: number }> {
  let position = 0;
  let index = 0;
  // Test hook: a slow disk, as for copies, so a test can act while a file is surely hashed.
  const slow = injected('harvest.slow-hash');
  let pending = readFull(handle, buffers[0], 0);
  for (;;) {
    const n = await pending;
    if (n === 0) break;
    if (slow) await new Promise((resolve) => setTimeout(resolve, slowDownMs(n)));
    const current = buffers[index % 2];
    pending = readFull(handle, buffers[(index + 1) % 2], position + n);
    h.update(current.subarray(0, n));
    position += n;
    index += 1;
    progress?.(position);
  }
  return { hash: h.digest('hex'), bytes: position };
}

function unchanged(job: CopyJob, size: number, mtimeMs: number): boolean {
  return size === job.size && mtimeMs === job.mtimeMs;
}

/** Closes a descriptor on a path that is already ending: an error closing it changes nothing. */
export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // What failed before, if anything, is the reason.
  }
}

/**
 * Copies job.source to job.partial (created here, never overwritten), hashing the source on the
 * way, then reads the partial back and hashes it while it is flushed to disk. The partial is
 * left in place for the caller, whatever the outcome: the caller owns the cleanup, since it
 * recorded the partial's name before the copy started.
 */
export async function copyVerified(job: CopyJob, progress?: Progress): Promise<CopyResult> {
  // A source that became a symbolic link since it was found is not followed.
  let source: number;
  try {
    source = openSync(job.source, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    // Gone since it was found stable: as when it goes during the copy (see copyInto).
    if (errorCode(error) === 'ENOENT') return { outcome: 'source_changed', detail: GONE };
    throw error;
  }
  let dest: number | null = null;
  try {
    const before = fstatSync(source);
    if (!unchanged(job, before.size, before.mtimeMs)) {
      return { outcome: 'source_changed', detail: 'the file changed after it was found stable' };
    }
    dest = openSync(job.partial, 'wx+', 0o644);
    const destFd = dest;
    return await withTools(1, CHUNK, async (h, [chunk]) => {
      const copied = await copyInto(source, destFd, job, h, chunk, progress);
      if (copied.outcome !== 'copied') return copied;
      // The flush runs in libuv's pool while this thread reads the copy back (see the top).
      // Its error is a value, so it cannot go unheard while the read-back runs.
      const flushed: Promise<Error | null> =
        job.durable === false
          ? Promise.resolve(null)
          : new Promise((resolve) =>
              fsync(destFd, (error) => resolve(error ?? injectedFlushError(job.partial))),
            );
      let verified;
      try {
        verified = await readBack(job.partial, h, chunk);
      } catch (error) {
        // The descriptor must outlive the flush: it is closed only after it.
        await flushed;
        throw error;
      }
      const flushError = await flushed;
      if (flushError) throw flushError;
      return { ...copied, destHash: verified.hash, bytes: verified.bytes };
    });
  } finally {
    closeQuietly(source);
    if (dest !== null) closeQuietly(dest);
  }
}

/**
 * Test hook: the copy's own fsync fails (EIO), as a failing disk's would; no test machine has
 * one. Given by the fsync's callback: without the fsync, there is no fault to see.
 */
function injectedFlushError(partial: string): Error | null {
  if (!injected('harvest.copy-flush-fails')) return null;
  return injectedError('EIO', `the flush of ${partial} failed`);
}

/** Hashes the copy through a new descriptor, span by span. */
async function readBack(
  path: string,
  h: IHasher,
  chunk: Buffer,
): Promise<{ hash: string; bytes: number }> {
  const fd = openSync(path, 'r');
  try {
    h.init();
    let at = { position: 0, ended: false };
    while (!at.ended) {
      const deadline = performance.now() + YIELD_AFTER_MS;
      at = copySpan(fd, null, h, chunk, at.position, at.position + YIELD_EVERY, deadline);
      if (!at.ended) await yieldToEvents();
    }
    return { hash: h.digest('hex'), bytes: at.position };
  } finally {
    closeSync(fd);
  }
}

/**
 * The single pass over the source: read, hash and write, span by span, then the checks that
 * the source did not change meanwhile. No flush on the way: an fdatasync every 64 MiB made a
 * 2 GiB copy slower here, and the kernel starts writing back dirty pages on its own past its
 * background threshold and holds writers at its limit, so the page cache does not grow with
 * the file. Memory use stays one chunk whatever the size.
 */
async function copyInto(
  source: number,
  dest: number,
  job: CopyJob,
  h: IHasher,
  chunk: Buffer,
  progress?: Progress,
): Promise<CopyResult> {
  const slow = injected('harvest.slow-copy');
  // Slowed copies go a chunk per span, so the delay is spread as a slow disk's would be.
  const span = slow ? chunk.length : YIELD_EVERY;
  h.init();
  let at = { position: 0, ended: false };
  while (!at.ended) {
    const from = at.position;
    at = copySpan(source, dest, h, chunk, from, from + span, performance.now() + YIELD_AFTER_MS);
    progress?.(at.position);
    if (from === 0) await heldForTest();
    if (slow) await new Promise((resolve) => setTimeout(resolve, slowDownMs(at.position - from)));
    else if (!at.ended) await yieldToEvents();
    if (at.position > job.size) {
      // Growing under us: no point copying the rest of this version.
      return { outcome: 'source_changed', detail: 'the file grew while it was copied' };
    }
  }
  const sourceHash = h.digest('hex');
  // Moved or deleted while it was copied: the attempt is dropped like any other change, and
  // the file's next look finds it gone (or finds it under its new name), not a failure.
  const after = statSync(job.source, { throwIfNoEntry: false });
  if (!after) return { outcome: 'source_changed', detail: GONE_WHILE_COPIED };
  if (at.position !== job.size || !unchanged(job, after.size, after.mtimeMs)) {
    return {
      outcome: 'source_changed',
      detail: `the file changed while it was copied (${at.position} bytes read, ${after.size} now)`,
    };
  }
  if (injected('harvest.flip-bit') && at.position > 0) flipBit(dest, at.position);
  return { outcome: 'copied', sourceHash, destHash: '', bytes: at.position };
}

/** Test hook: corrupt the copy after it was written, as a bad disk or cable would. */
export function flipBit(fd: number, size: number): void {
  const byte = Buffer.alloc(1);
  readSync(fd, byte, 0, 1, Math.floor(size / 2));
  byte[0] = byte[0] ^ 0x01;
  writeSync(fd, byte, 0, 1, Math.floor(size / 2));
}
