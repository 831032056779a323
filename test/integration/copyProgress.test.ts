/**
 * How often a copy under way reports its bytes (copyPool.ts runCopyMessage): every 16 MiB, and
 * on a slow disk at least every PROGRESS_EVERY_MS, so the Data tab's rate and time left follow
 * a slow copy instead of jumping in steps of 16 MiB.
 */
import { randomBytes } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  PROGRESS_EVERY_MS,
  runCopyMessage,
  type WorkerMessage,
} from '../../electron/core/harvest/copyPool.js';
import { tempDir } from './helpers.js';

afterEach(() => {
  delete process.env.LABSTATION_INJECT;
});

describe('a copy under way', () => {
  // Mutation: a message per 16 MiB only, as it was: this 12 MiB copy said nothing between its
  // start and its end.
  it('reports its bytes at least every PROGRESS_EVERY_MS on a slow disk, not at every chunk', async () => {
    const dir = tempDir();
    const source = join(dir, 'movie.mrc');
    const size = 12 * 1024 * 1024;
    writeFileSync(source, randomBytes(size));
    const { mtimeMs } = statSync(source);
    // Slowed to 24 ms per MiB, chunk by chunk: the copy takes about 0.3 s.
    process.env.LABSTATION_INJECT = 'harvest.slow-copy';
    const messages: { at: number; message: WorkerMessage }[] = [];
    const started = performance.now();
    await runCopyMessage(
      {
        id: 1,
        type: 'copy',
        job: { source, partial: join(dir, '.movie.mrc.x.partial'), size, mtimeMs },
      },
      (message) => messages.push({ at: performance.now(), message }),
    );
    const took = performance.now() - started;
    expect(messages.at(-1)?.message.type).toBe('done');
    const between = messages
      .map((m) => m.message)
      .filter((m) => m.type === 'progress' && m.bytes > 0 && m.bytes < size);
    expect(between.length).toBeGreaterThan(0);
    // Not one per 128 KiB chunk (96 of them): one per PROGRESS_EVERY_MS at most.
    expect(between.length).toBeLessThanOrEqual(Math.ceil(took / PROGRESS_EVERY_MS));
    // The whole file written is said, however soon after the one before: the Data tab then
    // says the copy is being checked (the read-back reports nothing).
    const progress = messages.map((m) => m.message).filter((m) => m.type === 'progress');
    expect(progress.at(-1)).toMatchObject({ bytes: size });
  });

  // Mutation: only a copy saying when it starts (an upload's hash waited for a worker unseen,
  // then showed as under way only from its first byte sent).
  it('says when a hash starts, and nothing more of it', async () => {
    const dir = tempDir();
    const source = join(dir, 'movie.mrc');
    writeFileSync(source, randomBytes(3 * 1024 * 1024));
    const messages: WorkerMessage[] = [];
    await runCopyMessage({ id: 2, type: 'hash', path: source }, (m) => messages.push(m));
    expect(messages.map((m) => m.type)).toEqual(['progress', 'done']);
    expect(messages[0]).toMatchObject({ bytes: 0 });
  });
});
