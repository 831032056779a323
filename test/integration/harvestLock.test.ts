/**
 * One harvest per data dir (electron/core/harvest/lock.ts): the lock is the system's file lock
 * on `harvest.lock`, held by a process of its own here (built code; `npm run build` first, as
 * npm test does). It refuses a second harvest while its owner lives, and leaves nothing behind
 * when the owner is killed: no pid in a file can name some other program later, and no
 * journal is left beside it. Of harvests that start at once, exactly one takes it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { takeHarvestLock } from '../../electron/core/harvest/lock.js';
import { tempDir } from './helpers.js';

const MODULE = pathToFileURL(
  join(import.meta.dirname, '..', '..', 'dist', 'electron', 'core', 'harvest', 'lock.js'),
).href;

/** Processes started here; they hold what they took until they are killed. */
const others: ChildProcess[] = [];
afterEach(() => {
  for (const child of others.splice(0)) child.kill('SIGKILL');
});

/**
 * A process that tries to take the lock and answers 'took' (then holds it until it is killed)
 * or 'refused'; anything else it says is the error it met.
 */
function tryInAnotherProcess(file: string): Promise<{ answer: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [
    '--input-type=module',
    '-e',
    `const { takeHarvestLock } = await import(${JSON.stringify(MODULE)});
     try {
       takeHarvestLock(${JSON.stringify(file)});
       console.log('took');
       setInterval(() => undefined, 1000);
     } catch (error) {
       console.log(/another harvest runs/.test(error.message) ? 'refused' : error.message);
     }`,
  ]);
  others.push(child);
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const answer = (): void => resolve({ answer: stdout.trim() || stderr.trim(), child });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (stdout.includes('\n')) answer();
    });
    child.on('error', reject);
    child.on('exit', answer);
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
    const { answer, child } = await tryInAnotherProcess(file);
    expect(answer).toBe('took');
    expect(() => takeHarvestLock(file)).toThrow(
      'another harvest runs on this data dir; stop it first (a running station harvests by itself)',
    );
    child.kill('SIGKILL');
    await ended(child);
    // Nothing to clean up or to wait for: the system dropped the lock with its owner, and no
    // journal or other file was left beside it.
    expect(readdirSync(dirname(file))).toEqual(['harvest.lock']);
    const lock = takeHarvestLock(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    lock.release();
  });

  it('lets exactly one of three harvests that start at once take it', async () => {
    for (let round = 0; round < 3; round += 1) {
      const file = join(tempDir(), 'harvest.lock');
      // Odd rounds start from a pid lock of an earlier version, whose owner is gone.
      if (round % 2 === 1) writeFileSync(file, '99999999\n');
      const tries = await Promise.all([1, 2, 3].map(() => tryInAnotherProcess(file)));
      expect(tries.map((t) => t.answer).sort()).toEqual(['refused', 'refused', 'took']);
    }
  });

  it('keeps the lock through a garbage collection in a holder that kept no reference to it', async () => {
    const file = join(tempDir(), 'harvest.lock');
    // The connection that holds the lock is closed when collected (better-sqlite3), and its
    // lock with it: the lock module must keep it.
    const child = spawn(process.execPath, [
      '--expose-gc',
      '--input-type=module',
      '-e',
      `const { takeHarvestLock } = await import(${JSON.stringify(MODULE)});
       takeHarvestLock(${JSON.stringify(file)});
       globalThis.gc();
       console.log('collected');
       setInterval(() => undefined, 1000);`,
    ]);
    others.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        if (d.toString().includes('collected')) resolve();
      });
      child.on('error', reject);
      child.on('exit', () => reject(new Error('the holder ended')));
    });
    expect(() => takeHarvestLock(file)).toThrow(/another harvest runs on this data dir/);
  });

  it('names the file and the reason when the lock cannot be opened', () => {
    const file = join(tempDir(), 'harvest.lock');
    mkdirSync(file);
    expect(() => takeHarvestLock(file)).toThrow(
      `cannot take the harvest lock ${file}: unable to open database file`,
    );
  });

  it('takes over a pid lock left by an earlier version once its process is gone', () => {
    const file = join(tempDir(), 'harvest.lock');
    // Above the largest pid Linux hands out (4,194,304).
    writeFileSync(file, '99999999\n');
    const inode = statSync(file).ino;
    const lock = takeHarvestLock(file);
    expect(() => takeHarvestLock(file)).toThrow(/another harvest runs/);
    lock.release();
    // Emptied in place, not replaced by a new file (see lock.ts).
    expect(statSync(file).ino).toBe(inode);
    expect(readFileSync(file, 'utf8')).not.toContain('99999999');
  });

  it('refuses a pid lock left by an earlier version while its process runs', () => {
    const file = join(tempDir(), 'harvest.lock');
    const child = spawn(process.execPath, ['-e', 'setInterval(() => undefined, 1000)']);
    others.push(child);
    writeFileSync(file, `${child.pid}\n`);
    expect(() => takeHarvestLock(file)).toThrow(
      `another harvest runs on this data dir (process ${child.pid})`,
    );
  });
});
