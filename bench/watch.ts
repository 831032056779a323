/**
 * `npm run bench:watch`: what watching a large acquisition tree costs a station, side by side
 * in one run on the same tree. The tree: one folder of BENCH_WATCH_BIG files (default 50,000;
 * instruments that write every frame of every run into one folder) and BENCH_WATCH_FOLDERS
 * folders (default 300) of 500 files beside it, each file 256 bytes. Each contender runs in a
 * process of its own (bench/watchChild.ts):
 * - Labstation, folder by folder (`LABSTATION_WATCH=folders`, the default on Linux and macOS);
 * - chokidar 5 as the harvest used it before 2026-12-07 (folders watched, files ignored);
 * - Labstation, the whole tree in one recursive watch (`LABSTATION_WATCH=whole`, the default
 *   on Windows; on Linux Node builds it in JavaScript).
 * For each: the time and CPU until the watch is up, then, after 2 s, BENCH_WATCH_WRITES files
 * (default 60) written into the big folder 0.5 s apart, the CPU the watcher took from the first
 * write until 2 s after the last, and the delay from each write to the watcher's report of it
 * (the bench fails if one is never reported); the peak RSS over the whole run. BENCH_RUNS rounds
 * (default 1), each contender once per round; the table gives medians.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileSystemOf, int, machineLine, median, positiveInt } from './common.js';

const BIG = positiveInt('BENCH_WATCH_BIG', 50_000);
const FOLDERS = positiveInt('BENCH_WATCH_FOLDERS', 300);
const PER_FOLDER = 500;
const WRITES = positiveInt('BENCH_WATCH_WRITES', 60);
const RUNS = positiveInt('BENCH_RUNS', 1);
const WRITE_GAP_MS = 500;
const child = join(import.meta.dirname, 'watchChild.js');

interface Contender {
  name: string;
  mode: 'labstation' | 'chokidar';
  env: Record<string, string>;
}

const contenders: Contender[] = [
  {
    name: 'Labstation, folder by folder',
    mode: 'labstation',
    env: { LABSTATION_WATCH: 'folders' },
  },
  { name: 'chokidar 5, folders (before)', mode: 'chokidar', env: {} },
  { name: 'Labstation, whole tree (Node)', mode: 'labstation', env: { LABSTATION_WATCH: 'whole' } },
];

interface Result {
  /** The watch's first error, and how many there were; none: null. */
  error: string | null;
  readyMs: number;
  readyCpuS: number;
  writesCpuS: number;
  delays: number[];
  peakRssMiB: number;
}

function makeTree(root: string): void {
  const bytes = Buffer.alloc(256, 7);
  mkdirSync(join(root, 'big'));
  for (let i = 0; i < BIG; i++) writeFileSync(join(root, 'big', `f${i}.dat`), bytes);
  for (let d = 0; d < FOLDERS; d++) {
    const dir = join(root, `run${String(d).padStart(4, '0')}`);
    mkdirSync(dir);
    for (let i = 0; i < PER_FOLDER; i++) writeFileSync(join(dir, `f${i}.dat`), bytes);
  }
}

async function runOne(contender: Contender, root: string, tag: string): Promise<Result> {
  const proc = spawn(process.execPath, [child, contender.mode, root], {
    env: { ...process.env, ...contender.env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const line = await lines.next();
    if (line.done) throw new Error(`${contender.name}: the watcher ended early`);
    return line.value;
  };
  const [word, ms, cpuUs] = (await next()).split(' ');
  if (word !== 'ready') throw new Error(`${contender.name}: ${word}`);
  await sleep(2000);
  const written = new Map<string, number>();
  for (let i = 0; i < WRITES; i++) {
    const name = `new-${tag}-${i}.dat`;
    writeFileSync(join(root, 'big', name), Buffer.alloc(4096, i));
    written.set(name, Date.now());
    await sleep(WRITE_GAP_MS);
  }
  await sleep(2000);
  proc.stdin.write('report\n');
  const report = JSON.parse(await next()) as {
    cpuAfterReadyUs: number;
    seen: Record<string, number>;
    peakRssKiB: number;
    errors: string[];
  };
  for (const name of written.keys()) rmSync(join(root, 'big', name));
  const error = report.errors.length
    ? `${report.errors[0]} (${report.errors.length} error(s))`
    : null;
  const delays = [...written].map(([name, at]) => {
    const seenAt = report.seen[name];
    // A watch that said it failed may miss files (the walks find them); one that did not, may not.
    if (seenAt === undefined && !error) {
      throw new Error(`${contender.name}: ${name} was never reported`);
    }
    return seenAt === undefined ? Infinity : seenAt - at;
  });
  return {
    error,
    readyMs: Number(ms),
    readyCpuS: Number(cpuUs) / 1e6,
    // From ready: the 2 s before the first write are idle for each (checked by hand: 0.01 s).
    writesCpuS: report.cpuAfterReadyUs / 1e6,
    delays,
    peakRssMiB: report.peakRssKiB / 1024,
  };
}

/** A delay in ms; a file never reported is `missed`. */
const delay = (ms: number): string => (ms === Infinity ? 'missed' : int(ms));

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'labstation-bench-watch-'));
  try {
    const files = BIG + FOLDERS * PER_FOLDER;
    console.log(
      `making ${int(files)} files: one folder of ${int(BIG)}, ${FOLDERS} of ${PER_FOLDER} ...`,
    );
    makeTree(root);
    console.log(machineLine());
    console.log(`tree on ${fileSystemOf(root)}`);
    const results = new Map<string, Result[]>(contenders.map((c) => [c.name, []]));
    for (let round = 0; round < RUNS; round++) {
      for (let k = 0; k < contenders.length; k++) {
        // Each round starts with the next contender.
        const contender = contenders[(k + round) % contenders.length];
        const result = await runOne(contender, root, `${round}-${k}`);
        results.get(contender.name)?.push(result);
        const missed = result.delays.filter((d) => d === Infinity).length;
        console.log(
          `round ${round + 1}, ${contender.name}: up in ${int(result.readyMs)} ms ` +
            `(${result.readyCpuS.toFixed(2)} CPU s); ${WRITES} writes: ` +
            `${result.writesCpuS.toFixed(2)} CPU s, delay median ${delay(median(result.delays))}` +
            (missed ? `, ${missed} never reported` : '') +
            (result.error ? `; error: ${result.error}` : ''),
        );
      }
    }
    console.log(
      `\n${int(files)} files (one folder of ${int(BIG)}); ${WRITES} files written into that ` +
        `folder ${WRITE_GAP_MS} ms apart; medians of ${RUNS} run(s)\n`,
    );
    console.log(
      '| watch | up in ms | CPU s to be up | CPU s for the writes | delay median ms | delay max ms | peak RSS MiB | errors |',
    );
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
    for (const [name, runs] of results) {
      const m = (pick: (r: Result) => number): number => median(runs.map(pick));
      console.log(
        `| ${name} | ${int(m((r) => r.readyMs))} | ${m((r) => r.readyCpuS).toFixed(2)} | ` +
          `${m((r) => r.writesCpuS).toFixed(2)} | ${delay(m((r) => median(r.delays)))} | ` +
          `${delay(m((r) => Math.max(...r.delays)))} | ${int(m((r) => r.peakRssMiB))} | ` +
          `${runs.find((r) => r.error)?.error ?? ''} |`,
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
