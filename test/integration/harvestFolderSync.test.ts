/**
 * A copy's rename survives a power cut once its folder is flushed; a folder made for it (the
 * template's `{yyyy}/{mm}/{dd}/...`) survives once the folder above it is flushed too, or the
 * copy could be gone with its folder while its record says completed. No test can cut the power,
 * so this one reads the system calls of a real `harvest --once` (strace, where it is installed)
 * and checks which folders it fsynced.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { harvestOnce, listTree, setupHarvest, withDb } from './harvestSetup.js';
import { CLI } from './helpers.js';
import { fsyncedPaths, hasStrace, traceFsyncs } from './strace.js';

/**
 * Runs the CLI under strace, tracing the fsyncs of every thread and child into `trace`, each
 * descriptor with the path it names in its own process (`-y`).
 */
function tracedCli(args: string[], trace: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const [strace, ...options] = traceFsyncs(trace);
    const child = spawn(strace, [...options, process.execPath, CLI, ...args], {
      stdio: 'ignore',
      timeout: 120_000,
      killSignal: 'SIGKILL',
    });
    child.on('error', reject);
    child.on('close', resolve);
  });
}

describe.runIf(hasStrace)('folders made for a copy are made durable with it', () => {
  it('a big copy into three folders it made fsyncs each of them and the folder above the first', async () => {
    const dirs = await setupHarvest({ stability: 0, template: '{instrument}/{relative_path}' });
    mkdirSync(join(dirs.src, 'run', 'deep'), { recursive: true });
    // Over the size copied in batches (whose syncfs covers the whole file system): alone.
    writeFileSync(join(dirs.src, 'run', 'deep', 'big.raw'), Buffer.alloc(5 << 20, 3));
    const trace = join(dirs.root, 'trace');
    expect(await tracedCli(['harvest', '--data', dirs.data, '--once'], trace)).toBe(0);
    expect(listTree(dirs.dest)).toEqual(['sem-1/run/deep/big.raw']);
    expect(
      withDb(dirs.data, (db) => db.prepare('SELECT state FROM harvest_files').pluck().all()),
    ).toEqual(['done']);

    const synced = new Set(fsyncedPaths(readFileSync(trace, 'utf8')));
    const folder = join(dirs.dest, 'sem-1', 'run', 'deep');
    // The copy itself, before its rename.
    expect([...synced].some((p) => /\/\.big\.raw\.[^/]*\.partial$/.test(p))).toBe(true);
    for (const at of [folder, join(dirs.dest, 'sem-1', 'run'), join(dirs.dest, 'sem-1')]) {
      expect(synced, at).toContain(at);
    }
    // The storage folder holds the entry of the first folder made.
    expect(synced).toContain(dirs.dest);
  }, 120_000);

  it('a copy killed right after its link: the restart fsyncs the folders its attempt made', async () => {
    const dirs = await setupHarvest({ stability: 0, template: '{instrument}/{relative_path}' });
    mkdirSync(join(dirs.src, 'run'));
    writeFileSync(join(dirs.src, 'run', 'big.raw'), Buffer.alloc(5 << 20, 4));
    const killed = await harvestOnce(dirs.data, { LABSTATION_FAILPOINT: 'harvest.linked' });
    expect(killed.code, killed.stdout + killed.stderr).not.toBe(0);

    const trace = join(dirs.root, 'trace');
    expect(await tracedCli(['harvest', '--data', dirs.data, '--once'], trace)).toBe(0);
    expect(listTree(dirs.dest)).toEqual(['sem-1/run/big.raw']);
    const synced = new Set(fsyncedPaths(readFileSync(trace, 'utf8')));
    for (const at of [join(dirs.dest, 'sem-1', 'run'), join(dirs.dest, 'sem-1'), dirs.dest]) {
      expect(synced, at).toContain(at);
    }
  }, 120_000);
});
