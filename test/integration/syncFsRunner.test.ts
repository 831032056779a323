/**
 * durable.ts SyncFsRunner in a process of its own: its idle shell must not keep a process
 * alive (the harvest CLI ends when its work does), and a request under way must. Needs
 * `npm run build` first (npm test does it).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { isRunning } from '../../electron/core/util/pid.js';
import { runNodeScript, tempDir, type CliResult } from './helpers.js';

const MODULE = pathToFileURL(
  join(import.meta.dirname, '..', '..', 'dist', 'electron', 'core', 'harvest', 'durable.js'),
).href;

describe.runIf(process.platform === 'linux')('SyncFsRunner in a process of its own', () => {
  const dir = tempDir('labstation-syncfs-proc-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs an ES module script in Node, written to a file; still running after 20 s, killed. */
  let scripts = 0;
  function runModule(code: string): Promise<CliResult> {
    const script = join(dir, `script-${++scripts}.mjs`);
    writeFileSync(script, code);
    return runNodeScript(script, [], {}, 20_000);
  }

  it('lets the process end with the shell idle, and holds it for a request under way', async () => {
    const started = Date.now();
    const result = await runModule(`
      const { SyncFsRunner } = await import(${JSON.stringify(MODULE)});
      const runner = new SyncFsRunner();
      await runner.run([${JSON.stringify(dir)}]);
      console.log('first', runner.shellPid);
      // Nothing else keeps this process alive: only the request can make it print.
      void runner.run([${JSON.stringify(dir)}]).then(() => console.log('second', runner.shellPid));
    `);
    expect(result.code).toBe(0);
    const [first, second] = result.stdout.trim().split('\n');
    expect(first).toMatch(/^first \d+$/);
    // The same shell answered both, and the process ended without close().
    expect(second).toBe(first.replace('first', 'second'));
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('returns from close() once the shell has ended, with nothing else holding the process', async () => {
    const result = await runModule(`
      const { SyncFsRunner } = await import(${JSON.stringify(MODULE)});
      const runner = new SyncFsRunner();
      await runner.run([${JSON.stringify(dir)}]);
      const pid = runner.shellPid;
      await runner.close();
      console.log('closed', pid, runner.shellPid);
    `);
    expect(result.code).toBe(0);
    const [, pid, after] = result.stdout.trim().split(' ');
    expect(after).toBe('undefined');
    expect(isRunning(Number(pid))).toBe(false);
  });
});
