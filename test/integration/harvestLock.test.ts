/**
 * One harvest per data dir (electron/core/harvest/lock.ts): the lock is the system's file lock
 * on `harvest.lock`, held by a process of its own here (built code; `npm run build` first, as
 * npm test does). It refuses a second harvest while its owner lives, and leaves nothing behind
 * when the owner is killed: no pid in a file can name some other program later.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { takeHarvestLock } from '../../electron/core/harvest/lock.js';
import { tempDir } from './helpers.js';

const MODULE = pathToFileURL(
  join(import.meta.dirname, '..', '..', 'dist', 'electron', 'core', 'harvest', 'lock.js'),
).href;

let holder: ChildProcess | null = null;
afterEach(() => {
  holder?.kill('SIGKILL');
  holder = null;
});

/** A process that takes the lock, says so, and keeps it until it is killed. */
function holdInAnotherProcess(file: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [
    '--input-type=module',
    '-e',
    `const { takeHarvestLock } = await import(${JSON.stringify(MODULE)});
     takeHarvestLock(${JSON.stringify(file)});
     console.log('held');
     setInterval(() => undefined, 1000);`,
  ]);
  holder = child;
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('held')) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`the holder ended (${code}): ${stderr}`)));
  });
}

function ended(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

describe('the harvest lock', () => {
  it('refuses a second harvest in the same process until the first releases it', () => {
    const file = join(tempDir(), 'harvest.lock');
    const first = takeHarvestLock(file);
    expect(() => takeHarvestLock(file)).toThrow(/another harvest runs on this data dir/);
    first.release();
    takeHarvestLock(file).release();
  });

  it('refuses while another process holds it, and is free the moment that process is killed', async () => {
    const file = join(tempDir(), 'harvest.lock');
    const child = await holdInAnotherProcess(file);
    expect(() => takeHarvestLock(file)).toThrow(
      'another harvest runs on this data dir; stop it first (a running station harvests by itself)',
    );
    child.kill('SIGKILL');
    await ended(child);
    // Nothing to clean up or to wait for: the system dropped the lock with its owner.
    const lock = takeHarvestLock(file);
    lock.release();
  });

  it('takes over a pid lock left by an earlier version once its process is gone', () => {
    const file = join(tempDir(), 'harvest.lock');
    // Above the largest pid Linux hands out (4,194,304).
    writeFileSync(file, '99999999\n');
    const lock = takeHarvestLock(file);
    expect(() => takeHarvestLock(file)).toThrow(/another harvest runs/);
    lock.release();
    expect(readFileSync(file).subarray(0, 6).toString()).not.toBe('999999');
  });

  it('refuses a pid lock left by an earlier version while its process runs', async () => {
    const file = join(tempDir(), 'harvest.lock');
    const child = spawn(process.execPath, ['-e', 'setInterval(() => undefined, 1000)']);
    holder = child;
    writeFileSync(file, `${child.pid}\n`);
    expect(() => takeHarvestLock(file)).toThrow(
      `another harvest runs on this data dir (process ${child.pid})`,
    );
    child.kill('SIGKILL');
    await ended(child);
    takeHarvestLock(file).release();
  });
});
