/**
 * The stability check (stability.ts) on real files: a candidate is taken only once its size and
 * mtime have not changed for its instrument's window, read by the copy workers' probe
 * (copyBatch.ts probeFiles, in this thread).
 */
import { appendFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Instrument, WatchFolder } from '../../electron/core/harvest/config.js';
import { probeFiles } from '../../electron/core/harvest/copyBatch.js';
import {
  candidateKey,
  StabilityChecks,
  type Candidate,
  type StabilityHost,
} from '../../electron/core/harvest/stability.js';
import { tempDir } from './helpers.js';

const folder: WatchFolder = { path: '/src', include: [], exclude: [] };

function instrument(stabilitySeconds: number): Instrument {
  return {
    id: 1,
    uuid: 'i1',
    name: 'sem-1',
    tool_id: 1,
    tool_name: 'SEM',
    watch: [folder],
    stability_seconds: stabilitySeconds,
    storage_location: null,
    destination_template: '{filename}',
    enabled: true,
  };
}

interface Taken {
  path: string;
  size: number;
  at: number;
}

/** The checks, with a host that notes what it is given; `offsetMs` moves their clock on. */
function setUp(options: { once?: boolean; acceptFails?: boolean } = {}) {
  const taken: Taken[] = [];
  const run = { unstable: [] as { path: string; openError: string | null }[] };
  const clock = { offsetMs: 0 };
  const state = { stopped: false, accepts: 0 };
  const host: StabilityHost = {
    stopped: () => state.stopped,
    prober: () => ({ probe: (paths) => Promise.resolve(probeFiles(paths)) }),
    accept: (stable: Candidate[]) => {
      state.accepts += 1;
      if (options.acceptFails) throw new Error('database or disk is full');
      for (const c of stable) taken.push({ path: c.absolutePath, size: c.size, at: Date.now() });
    },
    onceRun: () => (options.once ? run : null),
    queueDue: () => undefined,
    checkIdle: () => undefined,
    changed: () => undefined,
  };
  const log = pino({ level: 'silent' });
  const checks = new StabilityChecks(host, log, () => Date.now() + clock.offsetMs);
  stops.push(() => {
    state.stopped = true;
    checks.stop();
  });
  return { checks, taken, run, clock, state };
}

const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

/** Waits until `done` holds, checking every 10 ms, for at most `ms`. */
async function until(done: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A file of `size` bytes, made a candidate of an instrument with this window. */
function candidate(checks: StabilityChecks, inst: Instrument, name: string, size: number) {
  const path = join(tempDir('labstation-stability-'), name);
  writeFileSync(path, Buffer.alloc(size));
  const at = Date.now();
  const key = candidateKey(inst, path);
  const { mtimeMs } = statSync(path);
  checks.add(key, inst, folder, path, name, size, mtimeMs, new Date(at).toISOString(), null);
  return { path, key, at };
}

describe('StabilityChecks', () => {
  it('takes a file unchanged for its window, not before', async () => {
    const { checks, taken } = setUp();
    const inst = instrument(0.3);
    const { path, at } = candidate(checks, inst, 'a.tif', 10);
    expect(checks.size).toBe(1);
    // Checked at once: its window has not passed.
    await checks.check();
    expect(taken).toEqual([]);
    expect(checks.size).toBe(1);
    // Woken when the window ends, by itself (no tick).
    await until(() => taken.length === 1);
    expect(taken[0].path).toBe(path);
    expect(taken[0].size).toBe(10);
    expect(taken[0].at - at).toBeGreaterThanOrEqual(300);
    expect(checks.size).toBe(0);
  });

  it('does not take a file still growing; takes it with its last size once the writes stop', async () => {
    const { checks, taken } = setUp();
    const inst = instrument(0.5);
    const { path } = candidate(checks, inst, 'movie.avi', 10);
    // Written every 50 ms for 800 ms: each check finds another size.
    let lastWrite = Date.now();
    for (let i = 0; i < 16; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      appendFileSync(path, Buffer.alloc(10));
      lastWrite = Date.now();
      expect(taken).toEqual([]);
    }
    await until(() => taken.length === 1);
    expect(taken[0].size).toBe(170);
    expect(taken[0].at - lastWrite).toBeGreaterThanOrEqual(500);
  });

  it('starts the window again at a watcher event', async () => {
    const { checks, taken } = setUp();
    const inst = instrument(0.3);
    const { key } = candidate(checks, inst, 'b.tif', 10);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const growing: Candidate[] = [];
    const eventAt = Date.now();
    expect(checks.written(key, growing)).toBe(true);
    expect(checks.written(candidateKey(inst, '/src/other.tif'), growing)).toBe(false);
    await until(() => taken.length === 1);
    expect(taken[0].at - eventAt).toBeGreaterThanOrEqual(300);
  });

  it('drops a candidate whose file went away', async () => {
    const { checks, taken } = setUp();
    const inst = instrument(0.1);
    const { path } = candidate(checks, inst, 'c.tif', 10);
    rmSync(path);
    await until(() => checks.size === 0);
    expect(taken).toEqual([]);
  });

  it('keeps the stable files as candidates when they could not be recorded', async () => {
    const { checks, state } = setUp({ acceptFails: true });
    const inst = instrument(0.1);
    candidate(checks, inst, 'd.tif', 10);
    await until(() => state.accepts === 1);
    await until(() => !checks.checking);
    expect(checks.size).toBe(1);
  });

  it('found again with another size, the window starts again', async () => {
    const { checks, taken } = setUp();
    const inst = instrument(0.3);
    const { path, key } = candidate(checks, inst, 'e.tif', 10);
    await new Promise((resolve) => setTimeout(resolve, 200));
    appendFileSync(path, Buffer.alloc(5));
    const foundAt = Date.now();
    expect(checks.update(key, 15, statSync(path).mtimeMs)).toBe(true);
    expect(checks.update(candidateKey(inst, '/src/new.tif'), 1, 1)).toBe(false);
    await until(() => taken.length === 1);
    expect(taken[0].size).toBe(15);
    expect(taken[0].at - foundAt).toBeGreaterThanOrEqual(300);
  });

  it('a one-shot run that has walked gives up a file still changing past its patience', async () => {
    const { checks, taken, run, clock } = setUp({ once: true });
    const inst = instrument(0.1);
    const { path } = candidate(checks, inst, 'log.txt', 10);
    const walkedAt = Date.now() + clock.offsetMs;
    // Patience: six windows, at least 10 s since the walk.
    expect(checks.changingFor(1, walkedAt)).toBeNull();
    clock.offsetMs = 11_000;
    expect(checks.changingFor(1, walkedAt)).toEqual([path]);
    expect(checks.changingFor(2, walkedAt)).toEqual([]);
    await checks.check();
    expect(run.unstable).toEqual([{ path, openError: null }]);
    expect(taken).toEqual([]);
    expect(checks.size).toBe(0);
  });

  it('names the settling files that changed last, newest first', () => {
    const { checks, clock } = setUp();
    const inst = instrument(60);
    for (let i = 0; i < 7; i += 1) {
      clock.offsetMs = i * 1000;
      candidate(checks, inst, `f${i}.tif`, i);
    }
    expect(checks.settlingFiles().map((f) => f.relative_path)).toEqual([
      'f6.tif',
      'f5.tif',
      'f4.tif',
      'f3.tif',
      'f2.tif',
    ]);
  });
});
