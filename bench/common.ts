/**
 * What the file-moving benchmarks (bench/transfer.ts, bench/upload.ts) share: the datasets,
 * running a command with its wall-clock time, peak RSS and CPU time, the page-cache handling,
 * a snapshot of the build under test, and the markdown tables.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { cpus, release, totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

export const REPO = join(import.meta.dirname, '..', '..');
export const TIME = '/usr/bin/time';
export const MiB = 2 ** 20;
export const SMALL_SIZE = 100 * 1024;
export const PER_FOLDER = 100;

export function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

/** The dataset sizes and the number of rounds, from the environment. */
export const BIG_MB = positiveInt('BENCH_BIG_MB', 2048);
export const SMALL_FILES = positiveInt('BENCH_SMALL_FILES', 10_000);
export const RUNS = positiveInt('BENCH_RUNS', 1);

/** Single-quoted for sh. */
export const q = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;
export const int = (n: number): string => Math.round(n).toLocaleString('en-US');
export const secs = (s: number): string => (s < 10 ? s.toFixed(2) : s.toFixed(1));

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function commandExists(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${q(name)}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The first line a command prints (some print their version on stderr). */
export function firstLine(cmd: string, args: string[]): string {
  const out = spawnSync(cmd, args, { encoding: 'utf8' });
  return `${out.stdout ?? ''}${out.stderr ?? ''}`.trim().split('\n')[0]?.trim() || '?';
}

export const sync = (): void => void execFileSync('sync');

/**
 * Touches `bytes` of fresh memory in a child process that then exits, right before a timed run.
 * This VM hands memory that has been free for a few seconds back to its host (free page
 * reporting), and the first use of such memory costs the guest several seconds of system time
 * per GiB: measured here, `cp` + `sync` of 1 GiB took 4.9 s after 45 s idle and 1.7 s right
 * after another run. Without this, whichever contender ran first after a pause (data
 * generation, deleting the previous destination) paid for it; with it, each run starts with
 * memory the guest holds. Capped at half of the free memory.
 */
export function readyMemory(bytes: number): void {
  const free = Number(
    /MemAvailable:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0,
  );
  const mib = Math.min(Math.ceil(bytes / MiB), Math.floor(free / 1024 / 2));
  if (mib < 1) return;
  const script =
    'const b=[];for(let i=0;i<' +
    Math.max(1, Math.round(mib / 256)) +
    ';i++)b.push(Buffer.alloc(256*1048576,1));';
  execFileSync(process.execPath, ['-e', script], { stdio: 'ignore' });
}

/** sync, then drop the page cache; false where /proc/sys/vm/drop_caches is not writable. */
export function dropCaches(): boolean {
  sync();
  try {
    writeFileSync('/proc/sys/vm/drop_caches', '3');
    return true;
  } catch {
    return false;
  }
}

/**
 * CPU seconds the hypervisor has taken from this machine since boot, all cores (the `steal`
 * column of /proc/stat's `cpu` line, in USER_HZ of 100 a second); null where it is not there.
 * A run that lost some is slower for reasons outside it: on a shared host, a harvest's copy
 * loop on one core slows with it, while cp's copy in the kernel barely does (BENCHMARKS.md).
 */
export function stealSeconds(): number | null {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/);
    const steal = Number(cpu[8]);
    return cpu[0] === 'cpu' && Number.isFinite(steal) ? steal / 100 : null;
  } catch {
    return null;
  }
}

/** CPU, core count, memory, Node and kernel, on one line. */
export function machineLine(): string {
  return (
    `machine: ${cpus().length} x ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
    `Node ${process.version}, Linux ${release()}`
  );
}

/** The device, file system type and free GiB of the file system holding `dir`. */
export function fileSystemOf(dir: string): string {
  const df = firstLine('sh', ['-c', `df -T ${q(dir)} | tail -1`]).split(/\s+/);
  return `${df[0]} (${df[1]}, ${df[4] ? int(Number(df[4]) / MiB) : '?'} GiB free)`;
}

// ---- running commands: wall-clock time and peak RSS ----

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
  /** Peak resident set size of the command's largest process, MiB; null if unknown. */
  peakMiB: number | null;
  /** User + system CPU time of the command and its children, s; null if unknown. */
  cpuSeconds: number | null;
}

/** VmHWM (kB) of a process and its descendants, from /proc; 0 for what is gone. */
export function treeHwm(pid: number, seen: Map<number, number>): void {
  const stack = [pid];
  for (let p = stack.pop(); p !== undefined; p = stack.pop()) {
    try {
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (hwm) seen.set(p, Math.max(seen.get(p) ?? 0, Number(hwm[1])));
      for (const task of readdirSync(`/proc/${p}/task`)) {
        const kids = readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').trim();
        if (kids) stack.push(...kids.split(/\s+/).map(Number));
      }
    } catch {
      // exited between two reads
    }
  }
}

export const haveTime = existsSync(TIME);

export function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<Ran> {
  const timeFile = join(tmpdir(), `bench-time-${process.pid}.txt`);
  const [file, argv] = haveTime ? [TIME, ['-v', '-o', timeFile, cmd, ...args]] : [cmd, args];
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(file, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const sampled = new Map<number, number>();
    const sampler = haveTime
      ? undefined
      : setInterval(() => child.pid !== undefined && treeHwm(child.pid, sampled), 20);
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = (performance.now() - start) / 1000;
      clearInterval(sampler);
      let peakKiB: number | null = sampled.size ? Math.max(...sampled.values()) : null;
      let cpuSeconds: number | null = null;
      if (haveTime) {
        const report = existsSync(timeFile) ? readFileSync(timeFile, 'utf8') : '';
        rmSync(timeFile, { force: true });
        const match = /Maximum resident set size \(kbytes\): (\d+)/.exec(report);
        peakKiB = match ? Number(match[1]) : null;
        const user = /User time \(seconds\): ([\d.]+)/.exec(report);
        const system = /System time \(seconds\): ([\d.]+)/.exec(report);
        cpuSeconds = user && system ? Number(user[1]) + Number(system[1]) : null;
        // time -v reports a command's own failure in its file, not with its exit code.
        if (/Command exited with non-zero status/.test(report)) stderr += report;
      }
      const peakMiB = peakKiB === null ? null : peakKiB / 1024;
      resolve({ code, stdout, stderr, seconds, peakMiB, cpuSeconds });
    });
  });
}

export async function sh(script: string, env?: NodeJS.ProcessEnv): Promise<Ran> {
  const ran = await run('sh', ['-c', script], env);
  if (ran.code !== 0) throw new Error(`\`${script}\` exited ${ran.code}: ${ran.stderr}`);
  return ran;
}

/**
 * Copies the CLI and its build (with bench/copyAlone.ts, a contender of bench:transfer) into
 * `root`/app and returns the CLI's path there, so that a rebuild of dist/ during the run (the
 * checkout is shared) cannot change the code under test between two runs.
 */
export function snapshotCli(root: string): string {
  const app = join(root, 'app');
  const parts = [
    'dist/cli',
    'dist/electron',
    'dist/shared',
    'dist/bench/copyAlone.js',
    'bin/labstation.js',
    'package.json',
  ];
  for (const part of parts) {
    cpSync(join(REPO, part), join(app, part), { recursive: true });
  }
  for (const part of ['node_modules', 'resources']) {
    if (existsSync(join(REPO, part))) symlinkSync(join(REPO, part), join(app, part));
  }
  return join(app, 'bin', 'labstation.js');
}

// ---- datasets ----

export interface Dataset {
  label: string;
  /** The folder a station watches; holds the dataset and nothing else. */
  dir: string;
  /** The one file of a single-file dataset. */
  single: string | null;
  files: number;
  bytes: number;
}

export function writeRandomFile(path: string, bytes: number, buffer: Buffer): void {
  const fd = openSync(path, 'w');
  try {
    for (let left = bytes; left > 0;) {
      const n = Math.min(left, buffer.length);
      randomFillSync(buffer, 0, n);
      writeSync(fd, buffer, 0, n);
      left -= n;
    }
  } finally {
    closeSync(fd);
  }
}

/** One file of BENCH_BIG_MB MiB of random bytes, alone in `root`/big. */
export function makeBig(root: string): Dataset {
  const dir = join(root, 'big');
  mkdirSync(dir);
  const single = join(dir, 'big.bin');
  const bytes = BIG_MB * MiB;
  writeRandomFile(single, bytes, Buffer.allocUnsafe(16 * MiB));
  return { label: `one file of ${int(BIG_MB)} MiB`, dir, single, files: 1, bytes };
}

/** BENCH_SMALL_FILES files of 100 KiB of random bytes, 100 per folder, under `root`/tree. */
export function makeTree(root: string): Dataset {
  const dir = join(root, 'tree');
  const buffer = Buffer.allocUnsafe(SMALL_SIZE);
  for (let i = 0; i < SMALL_FILES; i++) {
    const folder = join(dir, `d${String(Math.floor(i / PER_FOLDER)).padStart(3, '0')}`);
    if (i % PER_FOLDER === 0) mkdirSync(folder, { recursive: true });
    writeRandomFile(
      join(folder, `f${String(i % PER_FOLDER).padStart(3, '0')}.bin`),
      SMALL_SIZE,
      buffer,
    );
  }
  const folders = Math.ceil(SMALL_FILES / PER_FOLDER);
  return {
    label: `${int(SMALL_FILES)} files of 100 KiB (${int(folders)} folders)`,
    dir,
    single: null,
    files: SMALL_FILES,
    bytes: SMALL_FILES * SMALL_SIZE,
  };
}

/**
 * Both datasets, generated into `root` and made durable, each described on stdout; then the
 * caches dropped where that is allowed (said too). Returns whether they were.
 */
export function prepareDatasets(root: string): { datasets: Dataset[]; dropped: boolean } {
  const t0 = performance.now();
  process.stderr.write('generating datasets...\n');
  const datasets = [makeBig(root), makeTree(root)];
  sync();
  process.stderr.write(`  ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  for (const d of datasets) {
    console.log(
      `dataset: ${d.label}: ${int(d.files)} file(s), ${int(d.bytes)} bytes (${(d.bytes / 1e6).toFixed(0)} MB), random`,
    );
  }
  const dropped = dropCaches();
  console.log(
    dropped
      ? 'caches: `sync; echo 3 > /proc/sys/vm/drop_caches` before each run: every run reads its source from disk'
      : 'caches: /proc/sys/vm/drop_caches is not writable: the source is in the page cache for every run',
  );
  return { datasets, dropped };
}

/** Files and bytes under a folder (the untimed check that a copy is complete). */
export function measureTree(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    files++;
    bytes += statSync(join(entry.parentPath, entry.name)).size;
  }
  return { files, bytes };
}

// ---- figures and tables ----

export const peakOf = (...values: (number | null)[]): number | null => {
  const known = values.filter((v): v is number => v !== null);
  return known.length ? Math.max(...known) : null;
};

export const sumOf = (...values: (number | null)[]): number | null =>
  values.some((v) => v === null) ? null : values.reduce<number>((a, v) => a + (v ?? 0), 0);

export function markdown(header: string[], rows: string[][], right: boolean[]): string {
  const widths = header.map((h, i) => Math.max(h.length, 3, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]): string =>
    `| ${cells.map((c, i) => (right[i] ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join(' | ')} |`;
  const rule = `| ${widths.map((w, i) => (right[i] ? '-'.repeat(w - 1) + ':' : '-'.repeat(w))).join(' | ')} |`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}
