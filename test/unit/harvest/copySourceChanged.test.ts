/**
 * A source rewritten in place while it is copied, its size unchanged: only its mtime tells.
 * And a source deleted while it is copied: the attempt is dropped, as for any other change.
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
import { copySmallFiles, type SmallCopyResult } from '../../../electron/core/harvest/copyBatch.js';

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

/** Big enough that a slowed copy (24 ms per MiB, after the copy) leaves time to act. */
const SLOW_SIZE = 24 * 1024 * 1024;

/**
 * Copies `file` with copySmallFiles, slowed, while another thread rewrites its start or
 * deletes it once the copy is written whole. The copy runs on this thread and holds it (a
 * slowed disk sleeps after the copy, before the source is looked at again).
 */
async function copyWhileAnotherThread(
  file: { path: string; partial: string; destination: string },
  act: 'rewrite' | 'delete',
): Promise<SmallCopyResult> {
  const found = statSync(file.path);
  process.env.LABSTATION_INJECT = 'harvest.slow-copy';
  const other = new Worker(
    `const { closeSync, openSync, statSync, unlinkSync, writeSync } = require('node:fs');
     const { workerData } = require('node:worker_threads');
     const { partial, path, size, act } = workerData;
     const until = Date.now() + 20000;
     for (;;) {
       const s = statSync(partial, { throwIfNoEntry: false });
       if (s && s.size === size) break;
       if (Date.now() > until) throw new Error('the copy never got written');
       Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
     }
     if (act === 'delete') {
       unlinkSync(path);
     } else {
       const fd = openSync(path, 'r+');
       writeSync(fd, Buffer.alloc(4096, 1), 0, 4096, 0);
       closeSync(fd);
     }`,
    { eval: true, workerData: { ...file, size: found.size, act } },
  );
  const ended = new Promise<void>((resolve, reject) => {
    other.once('error', reject);
    other.once('exit', () => resolve());
  });
  const [result] = await copySmallFiles([
    { ...file, source: file.path, size: found.size, mtimeMs: found.mtimeMs },
  ]);
  await ended;
  return result;
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
    const file = source(SLOW_SIZE);
    const result = await copyWhileAnotherThread(file, 'rewrite');
    expect(statSync(file.path).size).toBe(SLOW_SIZE);
    expect(result).toMatchObject({ outcome: 'source_changed', removed: true });
    expect(existsSync(file.partial)).toBe(false);
  });
});

describe('a source deleted while it is copied', () => {
  it('copySmallFiles: source_changed (gone), not a copy of a file no longer there', async () => {
    const file = source(SLOW_SIZE);
    const result = await copyWhileAnotherThread(file, 'delete');
    expect(result).toMatchObject({ outcome: 'source_changed', removed: true });
    expect(existsSync(file.partial)).toBe(false);
  });
});

describe('a copy held for a test (LABSTATION_HOLD_COPY_UNTIL)', () => {
  // Mutation: heldForTest returning at once (the tests that act mid-copy race a timer again).
  it('waits after its first span until the named file exists, then copies the rest', async () => {
    // Longer than a span (16 MiB at most), so the hold comes before the end.
    const size = 40 * 1024 * 1024;
    const file = source(size);
    const found = statSync(file.path);
    const gate = join(root, `release-${n}`);
    process.env.LABSTATION_HOLD_COPY_UNTIL = gate;
    try {
      let written = 0;
      let ended = false;
      const copy = copyVerified(
        { source: file.path, partial: file.partial, size, mtimeMs: found.mtimeMs },
        (bytes) => (written = bytes),
      ).finally(() => (ended = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(ended).toBe(false);
      expect(written).toBeGreaterThan(0);
      expect(written).toBeLessThan(size);
      writeFileSync(gate, '');
      const result = await copy;
      expect(result.outcome).toBe('copied');
      expect(written).toBe(size);
    } finally {
      delete process.env.LABSTATION_HOLD_COPY_UNTIL;
      rmSync(file.partial, { force: true });
    }
  });
});
