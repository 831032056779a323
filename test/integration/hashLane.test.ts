/**
 * Big files are hashed on a hash lane, a thread beside the copy worker (harvest/hashLane.ts),
 * while the copy worker reads and writes. The copies here run as in a harvest, in a worker
 * thread with the built code (dist/; `npm run build:core` first, npm test does it): the lane's
 * hashes must be those of the bytes (hashFile on this thread gives the expected ones; the copy
 * is compared with its source by SHA-256), a copy with a bit flipped must be caught, a copy
 * stopped midway must not spoil the next one, and a lane that dies must fail its copy, not
 * hang it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { hashFile, LANE_MIN_BYTES } from '../../electron/core/harvest/copy.js';
import { tempDir } from './helpers.js';

const DIST = join(import.meta.dirname, '..', '..', 'dist', 'electron', 'core', 'harvest');

interface Copied {
  outcome: string;
  sourceHash?: string;
  destHash?: string;
  bytes?: number;
  detail?: string;
  error?: string;
  /** Whether the worker had a working hash lane after this copy. */
  lane: boolean;
  /** The process's open descriptors after this copy. */
  fds: number;
}

/**
 * Runs copyVerified on each file in turn, in one worker thread (so one lane for them all), with
 * `env` as the worker's environment; `during` runs on this thread while the copies run.
 */
async function copyInWorker(
  files: { source: string; partial: string }[],
  env: Record<string, string> = {},
  during?: () => Promise<void>,
): Promise<Copied[]> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { readdirSync, statSync } = require('node:fs');
    (async () => {
      const { copyVerified } = await import(workerData.copy);
      const { hasLane } = await import(workerData.lane);
      const out = [];
      for (const file of workerData.files) {
        try {
          const st = statSync(file.source);
          const r = await copyVerified({
            source: file.source, partial: file.partial, size: st.size, mtimeMs: st.mtimeMs,
          });
          out.push({ ...r, lane: hasLane(), fds: readdirSync('/proc/self/fd').length });
        } catch (error) {
          out.push({
            outcome: 'error', error: error.message, lane: hasLane(),
            fds: readdirSync('/proc/self/fd').length,
          });
        }
      }
      parentPort.postMessage(out);
    })();`;
  const worker = new Worker(code, {
    eval: true,
    env: { ...process.env, ...env },
    workerData: {
      copy: pathToFileURL(join(DIST, 'copy.js')).href,
      lane: pathToFileURL(join(DIST, 'hashLane.js')).href,
      files,
    },
  });
  try {
    const done = new Promise<Copied[]>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await during?.();
    return await done;
  } finally {
    await worker.terminate();
  }
}

const sha256 = (path: string): string =>
  createHash('sha256').update(readFileSync(path)).digest('hex');

function bigFile(dir: string, name: string, bytes = LANE_MIN_BYTES + 3 * 1024 * 1024 + 17) {
  const source = join(dir, 'src', name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  mkdirSync(join(dir, 'dest'), { recursive: true });
  writeFileSync(source, randomBytes(bytes));
  return { source, partial: join(dir, 'dest', `.${name}.lane.partial`) };
}

describe('hash lane (big files hashed beside the copy)', () => {
  it('hashes the source and the copy as one thread would, file after file', async () => {
    const dir = tempDir('labstation-lane-');
    const files = [bigFile(dir, 'a.bin'), bigFile(dir, 'b.bin', LANE_MIN_BYTES)];
    const copied = await copyInWorker(files);
    for (const [i, file] of files.entries()) {
      const expected = await hashFile(file.source);
      expect(copied[i]).toMatchObject({
        outcome: 'copied',
        sourceHash: expected.hash,
        destHash: expected.hash,
        bytes: statSync(file.source).size,
        lane: true,
      });
      expect(sha256(file.partial)).toBe(sha256(file.source));
    }
  });

  it('catches a bit flipped in the copy after it was written', async () => {
    const dir = tempDir('labstation-lane-');
    const file = bigFile(dir, 'flip.bin');
    const [copied] = await copyInWorker([file], { LABSTATION_INJECT: 'harvest.flip-bit' });
    expect(copied.outcome).toBe('copied');
    expect(copied.sourceHash).toBe((await hashFile(file.source)).hash);
    expect(copied.destHash).toBe((await hashFile(file.partial)).hash);
    expect(copied.destHash).not.toBe(copied.sourceHash);
  });

  it('a copy stopped midway (the source grew) is dropped: the next copy is hashed right, nothing left open', async () => {
    const dir = tempDir('labstation-lane-');
    const first = bigFile(dir, 'first.bin');
    const growing = bigFile(dir, 'growing.bin');
    const next = bigFile(dir, 'next.bin');
    const copied = await copyInWorker(
      [first, growing, next],
      // 12 ms per MiB: each copy takes about a quarter of a second.
      { LABSTATION_INJECT: 'harvest.slow-copy' },
      async () => {
        // Grows once its copy has begun (its partial holds bytes).
        for (;;) {
          const size = statSync(growing.partial, { throwIfNoEntry: false })?.size ?? 0;
          if (size > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        appendFileSync(growing.source, randomBytes(4096));
      },
    );
    expect(copied[0]).toMatchObject({ outcome: 'copied', lane: true });
    expect(copied[1]).toMatchObject({ outcome: 'source_changed', lane: true });
    const expected = (await hashFile(next.source)).hash;
    expect(copied[2]).toMatchObject({
      outcome: 'copied',
      sourceHash: expected,
      destHash: expected,
      lane: true,
    });
    // The lane let go of the dropped copy: no descriptor of it is left open.
    expect(copied[1].fds).toBe(copied[0].fds);
    expect(copied[2].fds).toBe(copied[0].fds);
  });

  it('a lane that dies fails its copy with the reason, and does not hang it', async () => {
    const dir = tempDir('labstation-lane-');
    const [copied] = await copyInWorker([bigFile(dir, 'dies.bin')], {
      LABSTATION_INJECT: 'harvest.hash-lane-dies',
    });
    expect(copied).toMatchObject({
      outcome: 'error',
      error: 'the hashing thread of the copy failed: the hash lane died (injected)',
      lane: false,
    });
  });

  it('leaves files under LANE_MIN_BYTES to the copy worker’s own thread', async () => {
    const dir = tempDir('labstation-lane-');
    const file = bigFile(dir, 'small.bin', LANE_MIN_BYTES - 1);
    const [copied] = await copyInWorker([file]);
    const expected = (await hashFile(file.source)).hash;
    expect(copied).toMatchObject({ outcome: 'copied', destHash: expected, lane: false });
  });
});
