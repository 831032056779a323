/**
 * A source rewritten in place while it is copied, its size unchanged: only its mtime tells.
 * The copy read part of the old bytes and part of the new, hashed what it read and wrote the
 * same, so the read-back matches; the check of the source after the copy is what keeps such a
 * mix from being recorded completed (copy.ts copyInto, copyBatch.ts copyOne).
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { copyVerified } from '../../../electron/core/harvest/copy.js';
import { copySmallFiles } from '../../../electron/core/harvest/copyBatch.js';

const root = mkdtempSync(join(tmpdir(), 'labstation-rewritten-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const inject = process.env.LABSTATION_INJECT;
afterEach(() => {
  if (inject === undefined) delete process.env.LABSTATION_INJECT;
  else process.env.LABSTATION_INJECT = inject;
});

let n = 0;
function source(size: number): { path: string; partial: string; destination: string } {
  const name = `f${n++}.dat`;
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(join(root, 'dest'), { recursive: true });
  const path = join(root, 'src', name);
  writeFileSync(path, randomBytes(size));
  return {
    path,
    partial: join(root, 'dest', `.${name}.x.partial`),
    destination: join(root, 'dest', name),
  };
}

/** Overwrites the first bytes of `path` in place: same size, a new mtime. */
function rewriteStart(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, randomBytes(4096), 0, 4096, 0);
  } finally {
    closeSync(fd);
  }
}

describe('a source rewritten in place, same size, while it is copied', () => {
  it('copyVerified: source_changed, not a copy of old and new bytes mixed', async () => {
    const size = 40 * 1024 * 1024;
    const file = source(size);
    const found = statSync(file.path);
    let rewritten = false;
    const result = await copyVerified(
      { source: file.path, partial: file.partial, size, mtimeMs: found.mtimeMs },
      (bytes) => {
        // Past its first bytes and not yet at its end: the copy holds the old ones.
        if (!rewritten && bytes > 0 && bytes < size) {
          rewriteStart(file.path);
          rewritten = true;
        }
      },
    );
    expect(rewritten).toBe(true);
    expect(statSync(file.path).size).toBe(size);
    expect(result.outcome).toBe('source_changed');
    rmSync(file.partial, { force: true });
  });

  it('copySmallFiles: source_changed, its partial removed', async () => {
    const size = 24 * 1024 * 1024;
    const file = source(size);
    const found = statSync(file.path);
    // The copy runs on this thread and holds it (a slowed disk sleeps after the copy, before
    // the source is looked at again): the rewrite comes from another thread.
    process.env.LABSTATION_INJECT = 'harvest.slow-copy';
    const writer = new Worker(
      `const { closeSync, openSync, statSync, writeSync } = require('node:fs');
       const { workerData } = require('node:worker_threads');
       const { partial, path, size } = workerData;
       const until = Date.now() + 20000;
       for (;;) {
         const s = statSync(partial, { throwIfNoEntry: false });
         if (s && s.size === size) break;
         if (Date.now() > until) throw new Error('the copy never got written');
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
       }
       const fd = openSync(path, 'r+');
       writeSync(fd, Buffer.alloc(4096, 1), 0, 4096, 0);
       closeSync(fd);`,
      { eval: true, workerData: { partial: file.partial, path: file.path, size } },
    );
    const ended = new Promise<void>((resolve, reject) => {
      writer.once('error', reject);
      writer.once('exit', () => resolve());
    });
    const [result] = await copySmallFiles([
      {
        source: file.path,
        partial: file.partial,
        destination: file.destination,
        size,
        mtimeMs: found.mtimeMs,
      },
    ]);
    await ended;
    expect(statSync(file.path).size).toBe(size);
    expect(result).toMatchObject({ outcome: 'source_changed', removed: true });
    expect(existsSync(file.partial)).toBe(false);
  });
});
