/**
 * Durability for many small copies at once. A verified copy must be on disk, data and name,
 * before its transfer is recorded completed. Doing that file by file costs two flushes each
 * (the file, then its folder): for 10,000 files of 100 KiB, the flushes were most of the time
 * (BENCHMARKS.md). Small copies are instead placed unflushed and wait here; one flush of each
 * file system they are on (syncfs, through coreutils `sync -f`) then makes a whole batch
 * durable, data and folder entries, and only then are their transfers recorded.
 *
 * A crash before the flush leaves each file's markers (verified hash, final name) in the
 * database, and recovery re-hashes what is at the name: a copy the crash damaged is deleted
 * and transferred again, never recorded (transfer.ts recoverInterrupted).
 *
 * Where `sync -f` is not available (Windows, macOS), the batch is flushed file by file and each
 * folder once.
 */
import { execFile } from 'node:child_process';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncFolder } from './place.js';

/** Copies smaller than this are made durable in batches; larger ones flush as they go. */
export const BATCH_DURABILITY_BELOW = 4 * 1024 * 1024;

type SyncFs = (folders: string[]) => Promise<void>;

function runSyncF(folders: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('sync', ['-f', ...folders], { timeout: 600_000 }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`sync -f failed: ${stderr.trim() || error.message}`));
      else resolve();
    });
  });
}

async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

let syncFsSupport: Promise<boolean> | null = null;

/** Whether this machine has `sync -f` (coreutils 8.24+ on Linux): tried once, on a folder. */
function hasSyncFs(probe: string): Promise<boolean> {
  if (process.platform !== 'linux') return Promise.resolve(false);
  syncFsSupport ??= runSyncF([probe]).then(
    () => true,
    () => false,
  );
  return syncFsSupport;
}

interface Waiting {
  path: string;
  resolve(): void;
  reject(error: unknown): void;
}

export interface DurabilityOptions {
  /** Flush when this many files wait. */
  maxFiles?: number;
  /** Flush at the latest this long after the first file began to wait. */
  maxWaitMs?: number;
  /** Test seam: how a batch's file systems are flushed. */
  syncFs?: SyncFs;
}

export class DurabilityBatch {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private readonly maxFiles: number;
  private readonly maxWaitMs: number;

  constructor(private readonly options: DurabilityOptions = {}) {
    this.maxFiles = options.maxFiles ?? 512;
    this.maxWaitMs = options.maxWaitMs ?? 25;
  }

  /** Resolves once the file at `path` and its folder entry are on disk. */
  settle(path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ path, resolve, reject });
      if (this.waiting.length >= this.maxFiles) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.maxWaitMs);
    });
  }

  /** Nothing more is coming soon: flush what waits now. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.waiting.splice(0);
    if (!batch.length) return;
    this.chain = this.chain.then(async () => {
      try {
        await this.flushBatch(batch.map((w) => w.path));
        for (const w of batch) w.resolve();
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    });
  }

  private async flushBatch(paths: string[]): Promise<void> {
    const folders = [...new Set(paths.map((p) => dirname(p)))];
    if (this.options.syncFs) return this.options.syncFs(folders);
    if (await hasSyncFs(folders[0])) {
      // One syncfs per folder named; after the first, a folder on the same file system has
      // nothing left to write.
      return runSyncF(folders);
    }
    for (const path of paths) await fsyncPath(path);
    for (const folder of folders) await syncFolder(folder);
  }
}
