/**
 * The transfer queue (transferQueue.ts) on a real station: real records, real files, a real
 * copy pool. It hands the pool a bounded number of transfers at once, small files in batches
 * and big ones alone, stores their outcomes and counts them in the run.
 */
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { TransferStatus } from '../../shared/harvest/management.js';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { instrumentsOfTool, type Instrument } from '../../electron/core/harvest/config.js';
import { CopyPool } from '../../electron/core/harvest/copyPool.js';
import { BATCH_DURABILITY_BELOW } from '../../electron/core/harvest/durable.js';
import { fileById, recordFile } from '../../electron/core/harvest/records.js';
import { IN_FLIGHT_PER_COPY, TransferQueue } from '../../electron/core/harvest/transferQueue.js';
import { setupHarvest, type HarvestDirs } from './harvestSetup.js';

interface Station {
  dirs: HarvestDirs;
  db: Db;
  instrument: Instrument;
  pool: CopyPool;
  queue: TransferQueue;
  ends: Map<number, TransferStatus>;
  /** The files given back to be found again (TransferHost.consider). */
  considered: { path: string; size: number }[];
  /** The paths held back (settling anew, or given up by a run): TransferHost.heldBack. */
  settling: Set<string>;
  stop(): Promise<void>;
}

async function station(): Promise<Station> {
  const dirs = await setupHarvest();
  const db = openDatabase(join(dirs.data, 'labstation.db'));
  const instrument = instrumentsOfTool(db, 'SEM')[0];
  const pool = new CopyPool(1);
  const ends = new Map<number, TransferStatus>();
  const considered: { path: string; size: number }[] = [];
  const settling = new Set<string>();
  let stopped = false;
  const queue = new TransferQueue(db, pino({ level: 'silent' }), Date.now, {
    stopped: () => stopped,
    stopSignal: () => new AbortController().signal,
    pool: () => pool,
    instrument: (id) => (id === instrument.id ? instrument : undefined),
    watchedIn: () => [],
    runEnds: () => ends,
    runCrashed: () => null,
    movedAway: () => undefined,
    consider: (_instrument, _folder, path, size) => considered.push({ path, size }),
    heldBack: (_instrument, file) => settling.has(file.source_path),
    changed: () => undefined,
    checkIdle: () => undefined,
  });
  const stop = async (): Promise<void> => {
    stopped = true;
    await queue.flushPlaced();
    await pool.close();
    queue.poolClosed();
    db.close();
  };
  return { dirs, db, instrument, pool, queue, ends, considered, settling, stop };
}

/** The run's counts, as runOnce makes them: each file by its last end. */
function tally(ends: Map<number, TransferStatus>): Record<TransferStatus, number> {
  const counts = { completed: 0, skipped: 0, failed: 0 };
  for (const status of ends.values()) counts[status] += 1;
  return counts;
}

/** Writes `count` files of `size` bytes in the watched folder and records them (ids). */
function recorded(
  s: Station,
  prefix: string,
  count: number,
  size: number,
  mtimeMs?: number,
): number[] {
  return Array.from({ length: count }, (_, i) => {
    const name = `${prefix}${i}.bin`;
    const path = join(s.dirs.src, name);
    writeFileSync(path, Buffer.alloc(size, i % 251));
    return recordFile(s.db, {
      instrumentId: s.instrument.id,
      watchPath: s.dirs.src,
      relativePath: name,
      sourcePath: path,
      filename: name,
      size,
      mtimeMs: mtimeMs ?? statSync(path).mtimeMs,
      firstDiscoveredAt: new Date().toISOString(),
      usageEventId: null,
    });
  });
}

async function untilIdle(queue: TransferQueue, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (queue.busy) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('TransferQueue', () => {
  it('starts nothing before start (the recovery of what a crash interrupted)', async () => {
    const s = await station();
    try {
      for (const id of recorded(s, 's', 3, 100)) s.queue.enqueue(id);
      s.queue.enqueue(1);
      s.queue.pump();
      expect(s.queue.queuedFiles).toBe(3);
      expect(s.queue.underWay).toBe(0);
      s.queue.start();
      s.queue.pump();
      expect(s.queue.queuedFiles).toBe(0);
      expect(s.queue.underWay).toBe(1);
      await untilIdle(s.queue);
      expect(tally(s.ends)).toEqual({ completed: 3, skipped: 0, failed: 0 });
    } finally {
      await s.stop();
    }
  });

  it('leaves a file written anew and settling to the intake: not copied, not kept queued', async () => {
    const s = await station();
    try {
      const [anew, other] = recorded(s, 'anew', 2, 100);
      s.settling.add(join(s.dirs.src, 'anew0.bin'));
      s.queue.start();
      s.queue.enqueue(anew);
      s.queue.enqueue(other);
      s.queue.pump();
      expect(s.queue.queuedFiles).toBe(0);
      expect(s.queue.ids()).toEqual([other]);
      await untilIdle(s.queue);
      expect([...s.ends]).toEqual([[other, 'completed']]);
      expect(fileById(s.db, anew)?.state).toBe('waiting');
      expect(existsSync(join(s.dirs.dest, 'sem-1', 'anew0.bin'))).toBe(false);
      // Settled, and queued again by the intake: copied.
      s.settling.clear();
      s.queue.enqueue(anew);
      s.queue.pump();
      await untilIdle(s.queue);
      expect(fileById(s.db, anew)?.state).toBe('done');
    } finally {
      await s.stop();
    }
  });

  it('bounds the transfers under way, small files going in batches', async () => {
    const s = await station();
    try {
      // 600 small files, one copy worker: four transfers in flight, batches of 128.
      const ids = recorded(s, 'small', 600, 100);
      s.queue.start();
      for (const id of ids) s.queue.enqueue(id);
      s.queue.pump();
      expect(s.queue.underWay).toBe(s.pool.size * IN_FLIGHT_PER_COPY);
      expect(s.queue.queuedFiles).toBe(600 - 4 * 128);
      await untilIdle(s.queue);
      expect(s.queue.underWay).toBe(0);
      expect(tally(s.ends)).toEqual({ completed: 600, skipped: 0, failed: 0 });
      expect(ids.every((id) => fileById(s.db, id)?.state === 'done')).toBe(true);
      expect(existsSync(join(s.dirs.dest, 'sem-1', 'small599.bin'))).toBe(true);
    } finally {
      await s.stop();
    }
  });

  it('sends a big file alone, and the small ones together', async () => {
    const s = await station();
    try {
      const big = recorded(s, 'big', 2, BATCH_DURABILITY_BELOW);
      const small = recorded(s, 'small', 20, 100);
      s.queue.start();
      for (const id of [...big, ...small]) s.queue.enqueue(id);
      s.queue.pump();
      expect(s.queue.underWay).toBe(3);
      expect(s.queue.queuedFiles).toBe(0);
      await untilIdle(s.queue);
      expect(tally(s.ends)).toEqual({ completed: 22, skipped: 0, failed: 0 });
    } finally {
      await s.stop();
    }
  });

  it('gives back a file whose source is not what was recorded, to be found again', async () => {
    const s = await station();
    try {
      // Recorded with another mtime: changed since, as far as its copy can tell.
      recorded(s, 'changed', 1, 100, 0).forEach((id) => s.queue.enqueue(id));
      s.queue.start();
      s.queue.pump();
      await untilIdle(s.queue);
      expect(s.considered).toEqual([{ path: join(s.dirs.src, 'changed0.bin'), size: 100 }]);
      expect(tally(s.ends)).toEqual({ completed: 0, skipped: 0, failed: 0 });
    } finally {
      await s.stop();
    }
  });
});
