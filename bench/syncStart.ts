/**
 * What one batch flush costs the harvest's process to start: `sync -f` spawned from the
 * process itself (durable.ts runSyncF), against the same request through the shell that
 * SyncFsRunner keeps. A spawn forks the calling process, page tables and all, so its cost grows
 * with what the process has mapped; the bench measures both ways with the process holding
 * about 50 MiB (Node alone) and with BALLAST_MIB more (default 200, about what a harvest of
 * 10,000 small files holds).
 *
 *   npm run bench:syncfs            (or: node dist/bench/syncStart.js [FLUSHES] [BALLAST_MIB])
 *
 * Each way runs FLUSHES (default 80) flushes of a temp folder, one after another, the two ways
 * in turns of ten; CPU is this process's user and system time (process.cpuUsage), the fork's
 * and the waiting's, not the `sync` children's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSyncF, SyncFsRunner } from '../electron/core/harvest/durable.js';

interface Tally {
  wallMs: number;
  cpuMs: number;
}

async function timed(tally: Tally, work: () => Promise<void>): Promise<void> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await work();
  tally.wallMs += performance.now() - start;
  const used = process.cpuUsage(cpu);
  tally.cpuMs += (used.user + used.system) / 1000;
}

async function measure(folder: string, flushes: number): Promise<{ direct: Tally; shell: Tally }> {
  const direct = { wallMs: 0, cpuMs: 0 };
  const shell = { wallMs: 0, cpuMs: 0 };
  const runner = new SyncFsRunner();
  // Both ways warm: the shell started, `sync` in the page cache.
  await runner.run([folder]);
  await runSyncF([folder]);
  try {
    for (let done = 0; done < flushes; done += 10) {
      const turn = Math.min(10, flushes - done);
      await timed(direct, async () => {
        for (let i = 0; i < turn; i++) await runSyncF([folder]);
      });
      await timed(shell, async () => {
        for (let i = 0; i < turn; i++) await runner.run([folder]);
      });
    }
  } finally {
    await runner.close();
  }
  return { direct, shell };
}

function row(label: string, rssMiB: number, tally: Tally, flushes: number): string {
  const perWall = (tally.wallMs / flushes).toFixed(2);
  const perCpu = (tally.cpuMs / flushes).toFixed(2);
  return `| ${label} | ${rssMiB} MiB | ${perWall} ms | ${perCpu} ms |`;
}

async function main(): Promise<number> {
  const flushes = Number(process.argv[2] ?? 80);
  const ballastMiB = Number(process.argv[3] ?? 200);
  if (!Number.isInteger(flushes) || flushes < 1 || !Number.isInteger(ballastMiB)) {
    process.stderr.write('usage: syncStart.js [FLUSHES] [BALLAST_MIB]\n');
    return 2;
  }
  const folder = mkdtempSync(join(tmpdir(), 'labstation-syncstart-'));
  try {
    const lines = [
      '| way | process RSS | wall per flush | CPU per flush |',
      '|---|---:|---:|---:|',
    ];
    const rss = (): number => Math.round(process.memoryUsage().rss / 1048576);
    const small = await measure(folder, flushes);
    const smallRss = rss();
    // Touched, so that it is mapped and resident as a harvest's heap and caches are.
    const ballast = Array.from({ length: ballastMiB }, () => Buffer.alloc(1048576, 1));
    const big = await measure(folder, flushes);
    const bigRss = rss();
    lines.push(row('`sync -f` spawned', smallRss, small.direct, flushes));
    lines.push(row('through the shell', smallRss, small.shell, flushes));
    lines.push(row('`sync -f` spawned', bigRss, big.direct, flushes));
    lines.push(row('through the shell', bigRss, big.shell, flushes));
    process.stdout.write(`${flushes} flushes each way, in turns of ten:\n\n${lines.join('\n')}\n`);
    // Kept alive until here, so that the second measurement had it mapped.
    if (ballast.length !== ballastMiB) throw new Error('ballast lost');
    return 0;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

process.exitCode = await main();
