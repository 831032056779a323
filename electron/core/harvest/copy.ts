/**
 * The byte-moving half of a transfer: copy a source into a partial file while hashing it, make
 * the copy durable, read it back and hash it again. Runs in a copy worker (copyWorker.ts) so
 * hashing never blocks the thread that serves the UI; the caller decides what the result means
 * and renames the partial into place (transfer.ts).
 *
 * The source is read once. Reads, hashing and writes overlap: while the JS thread hashes chunk
 * i, libuv's pool reads chunk i+1 and writes chunk i-1. The copy is flushed to disk in steps
 * while it is written, so the final fsync has little left to do.
 */
import { constants, existsSync } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { createXXHash128, type IHasher } from 'hash-wasm';
import { injected } from '../util/failpoint.js';

export const HASH_ALGORITHM = 'xxh3-128';
/**
 * 1 MiB: measured on a 1 GiB copy here, 4 MiB chunks took 6.2 s (5.3 s of it in the kernel),
 * 1 MiB 2.6 s, 256 KiB 3.8 s.
 */
const CHUNK = 1024 * 1024;

export interface CopyJob {
  source: string;
  partial: string;
  /** What the source looked like when it was found stable. */
  size: number;
  mtimeMs: number;
  /**
   * false: leave the flush to the caller, which makes many small copies durable at once
   * (durable.ts). Default true: the copy is fsynced before it is read back.
   */
  durable?: boolean;
}

export type CopyResult =
  | { outcome: 'copied'; sourceHash: string; destHash: string; bytes: number }
  /** The source is not what it was when found stable (or changed while being read). */
  | { outcome: 'source_changed'; detail: string };

export type Progress = (bytes: number) => void;

/**
 * Chunk buffers are reused: allocating megabytes per file would make 10,000 small files a
 * garbage-collection benchmark. A free list, since inline runs (tests) copy several at once.
 */
const freeBuffers: Buffer[] = [];
function takeBuffers(count: number): Buffer[] {
  return Array.from({ length: count }, () => freeBuffers.pop() ?? Buffer.allocUnsafe(CHUNK));
}
function giveBack(buffers: Buffer[]): void {
  freeBuffers.push(...buffers);
}

const freeHashers: IHasher[] = [];

/** Lends a fresh hasher and chunk buffers to `work`, and takes them back after. */
async function withTools<T>(
  buffers: number,
  work: (hasher: IHasher, buffers: Buffer[]) => Promise<T>,
): Promise<T> {
  const hasher = freeHashers.pop() ?? (await createXXHash128());
  hasher.init();
  const lent = takeBuffers(buffers);
  try {
    return await work(hasher, lent);
  } finally {
    freeHashers.push(hasher);
    giveBack(lent);
  }
}

async function readFull(handle: FileHandle, buffer: Buffer, position: number): Promise<number> {
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(
      buffer,
      filled,
      buffer.length - filled,
      position + filled,
    );
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled;
}

async function writeFull(handle: FileHandle, buffer: Buffer, length: number, position: number) {
  const flag = process.env.LABSTATION_INJECT_ENOSPC_WHILE;
  if (flag && existsSync(flag)) {
    // Test hook where no small file system can be mounted: the disk is full while flag exists.
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  }
  let written = 0;
  while (written < length) {
    const { bytesWritten } = await handle.write(
      buffer,
      written,
      length - written,
      position + written,
    );
    written += bytesWritten;
  }
}

/** XXH3-128 of a whole file, reading ahead while hashing. */
export async function hashFile(
  path: string,
  progress?: Progress,
): Promise<{ hash: string; bytes: number }> {
  const handle = await open(path, 'r');
  try {
    return await withTools(2, (h, buffers) => hashWith(handle, h, buffers, progress));
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
  let pending = readFull(handle, buffers[0], 0);
  for (;;) {
    const n = await pending;
    if (n === 0) break;
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

/**
 * Copies job.source to job.partial (created here, never overwritten), hashing the source on the
 * way, fsyncs it, then re-reads and hashes the partial. The partial is left in place for the
 * caller, whatever the outcome, except that a source change removes nothing either: the caller
 * owns the cleanup, since it recorded the partial's name before the copy started.
 */
export async function copyVerified(job: CopyJob, progress?: Progress): Promise<CopyResult> {
  // A source that became a symbolic link since it was found is not followed.
  const source = await open(job.source, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  let dest: FileHandle | null = null;
  try {
    const before = await source.stat();
    if (!unchanged(job, before.size, before.mtimeMs)) {
      return { outcome: 'source_changed', detail: 'the file changed after it was found stable' };
    }
    dest = await open(job.partial, 'wx+', 0o644);
    const copied = await withTools(3, (h, buffers) =>
      copyInto(source, dest as FileHandle, job, h, buffers, progress),
    );
    if (copied.outcome !== 'copied') return copied;
    await dest.close();
    dest = null;
    const verified = await hashFile(job.partial);
    return { ...copied, destHash: verified.hash, bytes: verified.bytes };
  } finally {
    await source.close();
    if (dest) await dest.close().catch(() => undefined);
  }
}

/**
 * The single pass over the source: read, hash and write overlapped, then one fsync. No flush
 * on the way: an fdatasync every 64 MiB (to overlap the writeback with the copy) made a 2 GiB
 * copy slower here, 3.8 to 4.1 s against 2.8 to 3.0 s for one fsync at the end (a Node loop of
 * 1 MiB reads and writes, memory touched first), and the kernel starts writing back dirty
 * pages on its own past its background threshold and holds writers at its limit, so the page
 * cache does not grow with the file. Memory use stays the three buffers whatever the size.
 */
async function copyInto(
  source: FileHandle,
  dest: FileHandle,
  job: CopyJob,
  h: IHasher,
  buffers: Buffer[],
  progress?: Progress,
): Promise<CopyResult> {
  let position = 0;
  let index = 0;
  let pendingRead = readFull(source, buffers[0], 0);
  let pendingWrite: Promise<void> = Promise.resolve();
  const slow = injected('harvest.slow-copy');
  try {
    for (;;) {
      const n = await pendingRead;
      if (n === 0) break;
      const current = buffers[index % 3];
      // The buffer read into next was last written two rounds ago; that write has finished.
      pendingRead = readFull(source, buffers[(index + 1) % 3], position + n);
      h.update(current.subarray(0, n));
      await pendingWrite;
      pendingWrite = writeFull(dest, current, n, position);
      position += n;
      index += 1;
      progress?.(position);
      // Test hook: a slow disk, so a test can act while a copy is surely under way.
      if (slow) await new Promise((resolve) => setTimeout(resolve, 12));
      if (position > job.size) {
        // Growing under us: no point copying the rest of this version.
        await pendingWrite;
        await pendingRead;
        return { outcome: 'source_changed', detail: 'the file grew while it was copied' };
      }
    }
    await pendingWrite;
  } catch (error) {
    // Whatever failed first is the reason; the other operations in flight must not be left
    // to reject unheard (that would take the worker down and lose the reason).
    await Promise.allSettled([pendingRead, pendingWrite]);
    throw error;
  }
  const sourceHash = h.digest('hex');
  const after = await stat(job.source);
  if (position !== job.size || !unchanged(job, after.size, after.mtimeMs)) {
    return {
      outcome: 'source_changed',
      detail: `the file changed while it was copied (${position} bytes read, ${after.size} now)`,
    };
  }
  if (injected('harvest.flip-bit') && position > 0) {
    // Test hook: corrupt the copy after it was written, as a bad disk or cable would.
    const byte = Buffer.alloc(1);
    await dest.read(byte, 0, 1, Math.floor(position / 2));
    byte[0] = byte[0] ^ 0x01;
    await dest.write(byte, 0, 1, Math.floor(position / 2));
  }
  if (job.durable !== false) await dest.sync();
  return { outcome: 'copied', sourceHash, destHash: '', bytes: position };
}
