import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../integration/helpers.js';
import { runSyncF, SyncFsRunner } from '../../../electron/core/harvest/durable.js';
import { isRunning } from '../../../electron/core/util/pid.js';

// The real `sync -f` that flushes batches of small copies on Linux; elsewhere it is not used.
describe.runIf(process.platform === 'linux')('runSyncF', () => {
  const dir = mkdtempSync(join(tmpdir(), 'labstation-syncf-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('flushes the file systems of existing folders', async () => {
    await expect(runSyncF([dir, tmpdir()])).resolves.toBeUndefined();
  });

  it("fails with sync's own reason when a folder is missing", async () => {
    await expect(runSyncF([join(dir, 'gone')])).rejects.toThrow(
      /^sync -f failed: .*gone.*No such file or directory/,
    );
  });
});

function commandOf(pid: number): string {
  return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
}

describe.runIf(process.platform === 'linux')('SyncFsRunner', () => {
  const dir = mkdtempSync(join(tmpdir(), 'labstation-syncfs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs every request through one shell, which ends at close', async () => {
    const runner = new SyncFsRunner();
    await runner.run([dir]);
    const pid = runner.shellPid as number;
    expect(pid).toBeGreaterThan(0);
    expect(commandOf(pid)).toBe('sh');
    await runner.run([dir, tmpdir()]);
    await runner.run([tmpdir()]);
    expect(runner.shellPid).toBe(pid);
    await runner.close();
    expect(runner.shellPid).toBeUndefined();
    expect(isRunning(pid)).toBe(false);
    // A run after close starts a new shell.
    await runner.run([dir]);
    expect(runner.shellPid).toBeGreaterThan(0);
    expect(runner.shellPid).not.toBe(pid);
    await runner.close();
  });

  it("fails a request with sync's own reason, and answers the next one", async () => {
    const runner = new SyncFsRunner();
    try {
      await expect(runner.run([dir, join(dir, 'gone')])).rejects.toThrow(
        /^sync -f failed: .*gone.*No such file or directory/,
      );
      const pid = runner.shellPid;
      await expect(runner.run([dir])).resolves.toBeUndefined();
      expect(runner.shellPid).toBe(pid);
    } finally {
      await runner.close();
    }
  });

  it('answers requests made at once each with its own outcome, in turn', async () => {
    const runner = new SyncFsRunner();
    try {
      const outcomes = await Promise.allSettled([
        runner.run([dir]),
        runner.run([join(dir, 'missing-1')]),
        runner.run([tmpdir(), dir]),
        runner.run([join(dir, 'missing-2')]),
        runner.run([dir]),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual([
        'fulfilled',
        'rejected',
        'fulfilled',
        'rejected',
        'fulfilled',
      ]);
      expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/missing-1/);
      expect(String((outcomes[3] as PromiseRejectedResult).reason)).toMatch(/missing-2/);
    } finally {
      await runner.close();
    }
  });

  it('takes folder names with spaces, quotes, $ and * as they are', async () => {
    const odd = join(dir, `-n "it's" $HOME *`);
    mkdirSync(odd);
    const runner = new SyncFsRunner();
    try {
      await expect(runner.run([odd])).resolves.toBeUndefined();
      await expect(runner.run([join(odd, 'gone')])).rejects.toThrow(/\$HOME \*\/gone/);
    } finally {
      await runner.close();
    }
  });

  it('flushes a folder whose name has a line break without the shell', async () => {
    const broken = join(dir, 'line\nbreak');
    mkdirSync(broken);
    const runner = new SyncFsRunner();
    await expect(runner.run([broken])).resolves.toBeUndefined();
    expect(runner.shellPid).toBeUndefined();
    await expect(runner.run([join(broken, 'gone')])).rejects.toThrow(/^sync -f failed: /);
    await runner.close();
  });

  it('replaces a shell that died, and finishes a request whose shell died under it', async () => {
    const runner = new SyncFsRunner();
    try {
      await runner.run([dir]);
      const first = runner.shellPid as number;
      process.kill(first, 'SIGKILL');
      await waitFor(
        'the runner to see its shell end',
        () => runner.shellPid === undefined || undefined,
        10_000,
      );
      await expect(runner.run([dir])).resolves.toBeUndefined();
      const second = runner.shellPid as number;
      expect(second).toBeGreaterThan(0);
      expect(second).not.toBe(first);

      // Killed before the shell could read the request (its end is noticed only after the
      // request is written): the request is flushed by a `sync` of its own, whose reason
      // shows it ran, and no new shell is started for it.
      process.kill(second, 'SIGKILL');
      await expect(runner.run([join(dir, 'gone')])).rejects.toThrow(
        /^sync -f failed: sync: .*gone.*No such file or directory/,
      );
      expect(runner.shellPid).toBeUndefined();
      await expect(runner.run([dir])).resolves.toBeUndefined();
      expect(runner.shellPid).toBeGreaterThan(0);
    } finally {
      await runner.close();
    }
  });

  it('fails a request whose sync does not answer in time, and starts a new shell after', async () => {
    // A `sync` that hangs, first on the PATH of the shell started while it is set.
    const bin = mkdtempSync(join(tmpdir(), 'labstation-hung-sync-'));
    writeFileSync(join(bin, 'sync'), '#!/bin/sh\nexec sleep 3\n', { mode: 0o755 });
    const path = process.env.PATH;
    const runner = new SyncFsRunner(300);
    try {
      process.env.PATH = `${bin}:${path ?? ''}`;
      const started = Date.now();
      await expect(runner.run([dir])).rejects.toThrow(/^sync -f failed: no answer in 0.3 s$/);
      expect(Date.now() - started).toBeLessThan(2500);
      expect(runner.shellPid).toBeUndefined();
      // The next request gets a new shell, whose `sync` answers at once: the real one, which
      // flushes the whole file system, can take more than 0.3 s while another test writes.
      writeFileSync(join(bin, 'sync'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      await expect(runner.run([dir])).resolves.toBeUndefined();
      expect(runner.shellPid).toBeGreaterThan(0);
    } finally {
      process.env.PATH = path;
      await runner.close();
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
