/**
 * What makes a file stable (stability.ts), on real files and the real probe (copyBatch.ts
 * probeFiles): its mtime as well as its size unchanged for the window, no watcher event during
 * its last read, and that it opens for reading. The checks' clock is moved on rather than
 * waited for.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Instrument, WatchFolder } from '../../electron/core/harvest/config.js';
import { probeFiles, type Probe } from '../../electron/core/harvest/copyBatch.js';
import {
  candidateKey,
  StabilityChecks,
  type Candidate,
} from '../../electron/core/harvest/stability.js';
import { tempDir } from './helpers.js';

/** Waits until `done` holds, checking every 10 ms. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 10));
}

const folder: WatchFolder = { path: '/src', include: [], exclude: [] };

/** An instrument with a 0.3 s window: too short for the quick re-read (stability.ts settles). */
const instrument = {
  id: 1,
  uuid: 'i1',
  name: 'sem-1',
  tool_id: 1,
  tool_name: 'SEM',
  watch: [folder],
  stability_seconds: 0.3,
  storage_location: null,
  destination_template: '{filename}',
  enabled: true,
} satisfies Instrument;

/**
 * Stability checks on a clock the test moves on (`clock.offsetMs`), that read the files with
 * `probe` (the real probe unless given) and collect the files they find stable in `taken`.
 */
function stabilityChecks(
  probe: (paths: string[]) => Promise<Probe[]> = (paths) => Promise.resolve(probeFiles(paths)),
): { checks: StabilityChecks; taken: Candidate[]; clock: { offsetMs: number } } {
  const taken: Candidate[] = [];
  const clock = { offsetMs: 0 };
  const checks = new StabilityChecks(
    {
      stopped: () => false,
      prober: () => ({ probe }),
      accept: (stable) => taken.push(...stable),
      onceRun: () => null,
      leftForNextRun: () => undefined,
      movedAway: () => undefined,
      queueDue: () => undefined,
      checkIdle: () => undefined,
      changed: () => undefined,
    },
    pino({ level: 'silent' }),
    () => Date.now() + clock.offsetMs,
  );
  return { checks, taken, clock };
}

describe('a stable file', () => {
  it('has its mtime unchanged for the window too: rewritten at the same size, it waits again', async () => {
    const { checks, taken, clock } = stabilityChecks();
    try {
      const path = join(tempDir('labstation-stable-'), 'scan.tif');
      writeFileSync(path, 'first take');
      const first = statSync(path);
      checks.add(
        candidateKey(instrument, path),
        instrument,
        folder,
        path,
        'scan.tif',
        first.size,
        first.mtimeMs,
        new Date().toISOString(),
        null,
      );
      // Written again in place, as long as before, while its window ran; no event said so.
      writeFileSync(path, 'other take');
      const later = (first.mtimeMs + 5000) / 1000;
      utimesSync(path, later, later);
      clock.offsetMs = 10_000;
      await checks.check();
      expect(taken).toEqual([]);
      expect(checks.size).toBe(1);
      // Unchanged for a window since that read: taken, with the mtime it has now.
      clock.offsetMs = 20_000;
      await checks.check();
      expect(taken.map((c) => [c.absolutePath, c.mtimeMs])).toEqual([
        [path, statSync(path).mtimeMs],
      ]);
    } finally {
      checks.stop();
    }
  });

  it('has no watcher event during its last read: one that came while it was read, it waits again', async () => {
    // The probe waits until `release`: the event comes while the check reads the file.
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let probes = 0;
    const { checks, taken, clock } = stabilityChecks(async (paths) => {
      probes += 1;
      if (probes === 1) await held;
      return probeFiles(paths);
    });
    try {
      const path = join(tempDir('labstation-stable-'), 'log.txt');
      writeFileSync(path, 'a line');
      const { size, mtimeMs } = statSync(path);
      const key = candidateKey(instrument, path);
      checks.add(key, instrument, folder, path, 'log.txt', size, mtimeMs, '', null);
      clock.offsetMs = 10_000;
      const check = checks.check();
      await until(() => probes === 1);
      // A write the read may have missed: the window starts again at its event.
      expect(checks.written(key, [])).toBe(true);
      release();
      await check;
      expect(taken).toEqual([]);
      expect(checks.size).toBe(1);
      clock.offsetMs = 20_000;
      await checks.check();
      expect(taken.map((c) => c.absolutePath)).toEqual([path]);
    } finally {
      checks.stop();
    }
  });

  it('opens for reading: one that does not stays a candidate, naming why, and is taken once it opens', () => {
    // Root opens any file, so as root the checks run as nobody, who owns a file of mode 000:
    // it cannot read it, but may make it readable. The folders above let nobody through.
    const asRoot = process.getuid?.() === 0;
    const dir = tempDir('labstation-unopened-');
    if (asRoot) {
      chmodSync(dir, 0o711);
      // The run's own temporary root (test/tempRoot.ts, mode 700); never a shared /tmp.
      if (basename(tmpdir()).startsWith('labstation-test-')) chmodSync(tmpdir(), 0o711);
    }
    const path = join(dir, 'held.tif');
    writeFileSync(path, 'written by the instrument');
    chmodSync(path, 0o000);
    if (asRoot) chownSync(path, 65534, 65534);
    const built = join(import.meta.dirname, '..', '..', 'dist', 'electron', 'core', 'harvest');
    const url = (name: string): string => JSON.stringify(pathToFileURL(join(built, name)).href);
    const script = `
      const { StabilityChecks, candidateKey } = await import(${url('stability.js')});
      const { probeFiles } = await import(${url('copyBatch.js')});
      const { chmodSync, statSync } = await import('node:fs');
      if (process.getuid() === 0) { process.setgid(65534); process.setuid(65534); }
      const instrument = ${JSON.stringify(instrument)};
      const folder = instrument.watch[0];
      const path = ${JSON.stringify(path)};
      const taken = [];
      const clock = { offsetMs: 0 };
      const log = { error: (what) => console.error(what), warn() {}, info() {}, debug() {} };
      const checks = new StabilityChecks({
        stopped: () => false,
        prober: () => ({ probe: (paths) => Promise.resolve(probeFiles(paths)) }),
        accept: (stable) => taken.push(...stable.map((c) => c.absolutePath)),
        onceRun: () => null,
        queueDue() {},
        checkIdle() {},
        changed() {},
      }, log, () => Date.now() + clock.offsetMs);
      const { size, mtimeMs } = statSync(path);
      checks.add(candidateKey(instrument, path), instrument, folder, path, 'held.tif', size,
        mtimeMs, new Date().toISOString(), null);
      clock.offsetMs = 10_000;
      await checks.check();
      const held = { taken: [...taken], settling: checks.settlingFiles().map((f) => f.open_error) };
      chmodSync(path, 0o644);
      // Its window starts again at the refused open: one window on, it opens.
      clock.offsetMs = 20_000;
      await checks.check();
      checks.stop();
      console.log(JSON.stringify({ held, opened: { taken, left: checks.size } }));`;
    const ran = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(ran.status, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual({
      held: { taken: [], settling: ['EACCES'] },
      opened: { taken: [path], left: 0 },
    });
  });
});
