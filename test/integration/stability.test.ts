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
import { probeFiles, statFiles } from '../../electron/core/harvest/copyBatch.js';
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
  /** The candidate as accept got it (the engine keeps it, e.g. for a comparison: putBack). */
  candidate: Candidate;
}

/**
 * The checks, with a host that notes what it is given; `offsetMs` moves their clock on. The
 * host's probe is the real one (probeFiles), noted in `probed`; with `holdFirstProbe` the first
 * probe waits for `release()`, so a test can act while a check is under way.
 */
function setUp(options: { once?: boolean; acceptFails?: boolean; holdFirstProbe?: boolean } = {}) {
  const taken: Taken[] = [];
  const probed: string[][] = [];
  const run = { unstable: [] as { path: string; openError: string | null }[] };
  /** What the run was told it gave up, by candidateKey (StabilityHost.leftForNextRun). */
  const left: string[] = [];
  const clock = { offsetMs: 0 };
  const state = { stopped: false, accepts: 0 };
  let hold = options.holdFirstProbe ?? false;
  const held: (() => void)[] = [];
  const release = () => {
    for (const resume of held.splice(0)) resume();
  };
  const host: StabilityHost = {
    stopped: () => state.stopped,
    prober: () => ({
      probe: async (paths) => {
        probed.push(paths);
        if (hold) {
          hold = false;
          await new Promise<void>((resume) => held.push(resume));
        }
        return probeFiles(paths);
      },
    }),
    accept: (stable: Candidate[]) => {
      state.accepts += 1;
      if (options.acceptFails) throw new Error('database or disk is full');
      for (const c of stable) {
        taken.push({ path: c.absolutePath, size: c.size, at: Date.now(), candidate: c });
      }
    },
    onceRun: () => (options.once ? run : null),
    leftForNextRun: (path) => left.push(path),
    movedAway: () => undefined,
    queueDue: () => undefined,
    checkIdle: () => undefined,
    changed: () => undefined,
  };
  const log = pino({ level: 'silent' });
  const now = () => Date.now() + clock.offsetMs;
  const checks = new StabilityChecks(host, log, now, now);
  stops.push(() => {
    state.stopped = true;
    checks.stop();
    release();
  });
  return { checks, taken, probed, release, run, left, clock, state };
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

/**
 * A file of `size` bytes, made a candidate of an instrument with this window; found with
 * `foundSize` (a watcher's stat that came between two writes), by default its size.
 */
function candidate(
  checks: StabilityChecks,
  inst: Instrument,
  name: string,
  size: number,
  foundSize = size,
) {
  const path = join(tempDir('labstation-stability-'), name);
  writeFileSync(path, Buffer.alloc(size));
  const at = Date.now();
  const key = candidateKey(inst, path);
  const { mtimeMs } = statSync(path);
  checks.add(key, inst, folder, path, name, foundSize, mtimeMs, new Date(at).toISOString(), null);
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
    const { checks, taken, run, left, clock } = setUp({ once: true });
    const inst = instrument(0.1);
    const { path, key } = candidate(checks, inst, 'log.txt', 10);
    const walkedAt = Date.now() + clock.offsetMs;
    // Patience: six windows, at least 10 s since the walk.
    expect(checks.changingFor(1, walkedAt)).toBeNull();
    clock.offsetMs = 11_000;
    // Seen changing within its window: still changing.
    appendFileSync(path, Buffer.alloc(5));
    expect(checks.update(key, 15, statSync(path).mtimeMs)).toBe(true);
    expect(checks.changingFor(1, walkedAt)).toEqual([path]);
    expect(checks.changingFor(2, walkedAt)).toEqual([]);
    // Its window ends, then it changes again before the check reads it: given up at that read.
    clock.offsetMs = 11_200;
    expect(checks.changingFor(1, walkedAt)).toBeNull();
    appendFileSync(path, Buffer.alloc(5));
    await checks.check();
    expect(run.unstable).toEqual([{ path, openError: null }]);
    expect(left).toEqual([key]);
    expect(taken).toEqual([]);
    expect(checks.size).toBe(0);
  });

  it('a one-shot run past its patience still takes a file found unchanged for its window', async () => {
    const { checks, taken, run, clock } = setUp({ once: true });
    const inst = instrument(0.1);
    const { path } = candidate(checks, inst, 'done.tif', 10);
    const walkedAt = Date.now() + clock.offsetMs;
    clock.offsetMs = 11_000;
    // Its window has ended: the run waits for the check's last read, which finds it stable.
    expect(checks.changingFor(1, walkedAt)).toBeNull();
    await checks.check();
    expect(taken.map((t) => t.path)).toEqual([path]);
    expect(run.unstable).toEqual([]);
    expect(checks.changingFor(1, walkedAt)).toEqual([]);
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

  describe('the quick re-read (SETTLE_MS) and the window', () => {
    it('a file unchanged at its quick re-read after it is first seen still waits its whole window', async () => {
      const { checks, taken } = setUp();
      // A window of 0.4 s or more: the file is read again SETTLE_MS after it is found.
      const inst = instrument(0.5);
      const { path, at } = candidate(checks, inst, 'g.tif', 10);
      await until(() => taken.length === 1);
      expect(taken[0].path).toBe(path);
      expect(taken[0].at - at).toBeGreaterThanOrEqual(500);
    });

    it('a file unchanged at its quick re-read after a watcher event still waits its whole window from the event', async () => {
      const { checks, taken, probed } = setUp();
      const inst = instrument(1);
      // Found with a size it had before its last write: its quick re-read finds the change,
      // and its window starts again from that read (settled, with no window's end involved).
      const { key } = candidate(checks, inst, 'h.tif', 10, 5);
      await until(() => probed.length === 1 && !checks.checking);
      expect(checks.settlingFiles()[0].size).toBe(10);
      const eventAt = Date.now();
      expect(checks.written(key, [])).toBe(true);
      // Read again SETTLE_MS after the event (settleSoon), unchanged: the window runs on.
      await until(() => probed.length === 2);
      await until(() => taken.length === 1);
      expect(taken[0].at - eventAt).toBeGreaterThanOrEqual(1000);
    });

    it('a check (an engine tick) inside a window reads no file but the one quick re-read', async () => {
      const { checks, probed, clock } = setUp();
      const inst = instrument(60);
      candidate(checks, inst, 'i.tif', 10);
      await until(() => probed.length === 1 && !checks.checking);
      // Ticks come every quarter of the smallest window; a file is not read at each of them
      // (three file-system calls, in a copy worker) before its window ends.
      for (let i = 0; i < 5; i += 1) {
        clock.offsetMs += 1000;
        await checks.check();
      }
      expect(probed.length).toBe(1);
      expect(checks.size).toBe(1);
    });

    it('a watcher event wakes the quick re-read, which finds the size the event did not carry', async () => {
      const { checks, probed } = setUp();
      const inst = instrument(60);
      const { path, key } = candidate(checks, inst, 'j.tif', 10);
      await until(() => probed.length === 1 && !checks.checking);
      // Settled, and woken next at the window's end, a minute on: only settleSoon reads it now.
      appendFileSync(path, Buffer.alloc(5));
      expect(checks.written(key, [])).toBe(true);
      await until(() => checks.settlingFiles()[0].size === 15);
      expect(probed.length).toBe(2);
      expect(checks.size).toBe(1);
    });
  });

  describe('a check under way', () => {
    it('a wake while a check runs runs the check again once it ends', async () => {
      const { checks, taken, probed, release } = setUp({ holdFirstProbe: true });
      const inst = instrument(0);
      const first = candidate(checks, inst, 'k.tif', 10);
      // Woken at once (a window of 0); its probe is held.
      await until(() => probed.length === 1);
      expect(checks.checking).toBe(true);
      // Due at once too: its wake comes while the check runs (the wake's 1 ms timer fires
      // before this 50 ms one), after the running check looked at the candidates.
      const second = candidate(checks, inst, 'l.tif', 20);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(probed.length).toBe(1);
      release();
      // No tick here: only the check run again takes the second file.
      await until(() => taken.length === 2);
      expect(taken.map((t) => t.path)).toEqual([first.path, second.path]);
      expect(probed).toEqual([[first.path], [second.path]]);
    });

    it('a run does not count a file as still changing while a check may be taking it', async () => {
      const { checks, taken, probed, release, clock } = setUp({ holdFirstProbe: true });
      const inst = instrument(0.1);
      const { path } = candidate(checks, inst, 'm.tif', 10);
      const walkedAt = Date.now() + clock.offsetMs;
      // Past its patience (six windows, at least 10 s) since the walk.
      clock.offsetMs = 11_000;
      await until(() => probed.length === 1);
      expect(checks.checking).toBe(true);
      // Its window has ended and the check is reading it: the run waits for the check.
      expect(checks.changingFor(1, walkedAt)).toBeNull();
      release();
      await until(() => taken.length === 1 && !checks.checking);
      expect(taken[0].path).toBe(path);
      expect(checks.changingFor(1, walkedAt)).toEqual([]);
    });
  });

  describe('readSizes', () => {
    /** A candidate of a minute's window, read once since it was found, its size due to be read. */
    async function growing(name: string) {
      const set = setUp();
      const inst = instrument(60);
      const file = candidate(set.checks, inst, name, 10);
      await until(() => set.probed.length === 1 && !set.checks.checking);
      set.clock.offsetMs = 1000;
      return { ...set, inst, ...file };
    }

    it('reads the size so far of a file still being written, a change: its window starts again', async () => {
      const { checks, inst, path, key, clock } = await growing('n.avi');
      appendFileSync(path, Buffer.alloc(5));
      const due: Candidate[] = [];
      expect(checks.written(key, due)).toBe(true);
      expect(due.map((c) => c.absolutePath)).toEqual([path]);
      // Not again within SIZE_READ_MS of this read.
      const again: Candidate[] = [];
      checks.written(key, again);
      expect(again).toEqual([]);
      clock.offsetMs = 1500;
      const readAt = Date.now() + clock.offsetMs;
      await checks.readSizes(inst, due, statFiles);
      const [settling] = checks.settlingFiles();
      expect(settling.size).toBe(15);
      expect(Date.parse(settling.changed_at)).toBeGreaterThanOrEqual(readAt);
    });

    it('a size and mtime read unchanged are no change', async () => {
      const { checks, inst, key, clock } = await growing('o.avi');
      const due: Candidate[] = [];
      checks.written(key, due);
      expect(due).toHaveLength(1);
      const { changed_at } = checks.settlingFiles()[0];
      clock.offsetMs = 1500;
      await checks.readSizes(inst, due, statFiles);
      expect(checks.settlingFiles()[0]).toMatchObject({ size: 10, changed_at });
    });

    it('a size read that comes back after its file was taken changes nothing of what was taken', async () => {
      const { checks, taken, inst, path, key, clock } = await growing('p.avi');
      const due: Candidate[] = [];
      checks.written(key, due);
      // Its window ends (the clock moves a minute on) and a check takes it.
      clock.offsetMs = 62_000;
      await checks.check();
      expect(taken.map((t) => t.path)).toEqual([path]);
      const accepted = { ...taken[0].candidate };
      appendFileSync(path, Buffer.alloc(5));
      await checks.readSizes(inst, due, statFiles);
      expect(taken[0].candidate).toEqual(accepted);
      expect(checks.size).toBe(0);
    });
  });

  describe('putBack', () => {
    it('a file taken and put back is a candidate again, with its open error, its window starting again', async () => {
      const { checks, taken } = setUp();
      const inst = instrument(0.3);
      const { path, key } = candidate(checks, inst, 'q.tif', 10);
      await until(() => taken.length === 1);
      expect(checks.has(key)).toBe(false);
      // As the engine's comparison with the record does for a file held by a writer.
      const { mtimeMs } = statSync(path);
      const putAt = Date.now();
      checks.putBack(key, taken[0].candidate, 10, mtimeMs, 'EBUSY', 0);
      expect(checks.has(key)).toBe(true);
      expect(checks.settlingFiles()).toMatchObject([{ size: 10, open_error: 'EBUSY' }]);
      await until(() => taken.length === 2);
      expect(taken[1].path).toBe(path);
      expect(taken[1].at - putAt).toBeGreaterThanOrEqual(300);
    });

    it('a file put back was read: no quick re-read', async () => {
      const { checks, taken, probed, clock } = setUp();
      const inst = instrument(60);
      const { path, key } = candidate(checks, inst, 'r.tif', 10);
      await until(() => probed.length === 1 && !checks.checking);
      clock.offsetMs = 61_000;
      await checks.check();
      expect(taken).toHaveLength(1);
      const { mtimeMs } = statSync(path);
      checks.putBack(key, taken[0].candidate, 10, mtimeMs, null, 0);
      // Past SETTLE_MS, inside its window: a file not read since its last change would be.
      clock.offsetMs += 1000;
      await checks.check();
      expect(probed).toHaveLength(2);
      expect(checks.size).toBe(1);
    });

    it('a file put back is woken no sooner than asked, even with a window of 0', async () => {
      const { checks, taken } = setUp();
      const inst = instrument(0);
      const { path, key } = candidate(checks, inst, 's.tif', 10);
      await until(() => taken.length === 1);
      const { mtimeMs } = statSync(path);
      const putAt = Date.now();
      checks.putBack(key, taken[0].candidate, 10, mtimeMs, 'EBUSY', 300);
      await until(() => taken.length === 2);
      expect(taken[1].at - putAt).toBeGreaterThanOrEqual(300);
    });
  });
});
