/**
 * npm run bench:transfer — the station's harvest transfer (a verified, durable copy) side by side
 * with reference tools, on the same data, in one invocation.
 *
 * Datasets, generated once into a temp dir (random bytes, removed at the end): one big file
 * (BENCH_BIG_MB MiB, default 2048) and a tree of BENCH_SMALL_FILES files of 100 KiB (default
 * 10,000), 100 files per folder.
 *
 * Contenders, each timed wall-clock from its start to the data being durable, each run into a
 * fresh destination folder on the same filesystem (deleted after the run, then `sync`):
 * - Labstation: the real CLI, `labstation harvest --data DIR --once` on a data dir made with
 *   `labstation import` (untimed) whose instrument watches the dataset with stability_seconds 0.
 *   The time includes process start, opening the database, the folder walk, the file and
 *   transfer records, and the copy: read once, hashed (xxh3-128), written, fsynced, read back,
 *   hashed again, renamed into place. Its note splits the time, from the station's records: how
 *   long after the command's start the first transfer started, and how long the transfers took
 *   from the first start to the last completion.
 * - Labstation, running station: a `labstation harvest` already running (started untimed)
 *   watches an empty folder; the dataset is moved into it (a rename, no data read) and the time
 *   runs until its records show every transfer completed. What a burst of files costs a station
 *   that runs all day: no process start, no database open, the watcher finding the files.
 * - Labstation's copy alone: the harvest's copy functions without a station (bench/copyAlone.ts):
 *   what the verified copy costs without the database and the records.
 * - cp + sync: durable, unverified.
 * - cp + sync + xxhsum -H128 over every source and every destination file, digests compared: the
 *   durable, verified sequential baseline (same hash as Labstation's).
 * - rsync -a + sync, rclone copy + sync, where installed.
 * Before each run: `sync; echo 3 > /proc/sys/vm/drop_caches` when writable (root), so each run
 * reads its source from disk; otherwise the source is in the page cache. Peak RSS (the largest
 * process of the command) and CPU time (user + system of the command and its children; the
 * kernel's writeback threads, which do the writing that `sync` waits for, are counted for no
 * one) come from `/usr/bin/time -v`; without it, peak RSS is sampled from VmHWM in /proc and
 * CPU time is not reported.
 * With BENCH_RUNS > 1, the runs go in rounds (every contender once per round, each round
 * starting with the next contender) and the tables show the median time; every run is listed
 * after its table with its ratio to the same round's cp + sync and the CPU time the host took
 * from the machine meanwhile (/proc/stat's steal). The build under test is copied to the temp
 * dir first.
 *
 * Latency: a running station (`labstation harvest`, watching, stability_seconds 1) while 20
 * files of 100 KiB are written 2 s apart, each in two writes back to back, then (a new station)
 * each in eight writes 10 ms apart; latency is the transfer's completed_at (read from the
 * station's SQLite database, read-only) minus the time of the file's last write.
 * BENCH_ONLY=latency runs the latency part alone.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import {
  commandExists,
  type Dataset,
  dropCaches,
  fileSystemOf,
  firstLine,
  haveTime,
  int,
  machineLine,
  markdown,
  measureTree,
  median,
  peakOf,
  prepareDatasets,
  q,
  type Ran,
  readyMemory,
  REPO,
  run,
  RUNS,
  secs,
  sh,
  SMALL_SIZE,
  snapshotCli,
  stealSeconds,
  sumOf,
  sync,
  TIME,
  treeHwm,
} from './common.js';

/** The CLI under test: a copy of the build made at the start (see snapshotCli). */
let cli = join(REPO, 'bin', 'labstation.js');
const LATENCY_FILES = 20;
const LATENCY_GAP_MS = 2000;
const LATENCY_STABILITY_S = 1;
/**
 * How each file of the latency runs is written: in two writes back to back, and as an
 * instrument writing while it acquires, in eight writes 10 ms apart (chokidar reports one
 * change of a file per 50 ms, so the last writes of such a burst go unreported).
 */
const LATENCY_WRITES = [
  { writes: 2, gapMs: 0, label: 'in 2 writes back to back' },
  { writes: 8, gapMs: 10, label: 'in 8 writes 10 ms apart' },
];
/** BENCH_ONLY=latency: only the latency runs (no datasets, no copies). */
const ONLY_LATENCY = process.env.BENCH_ONLY === 'latency';

// ---- contenders ----

interface Measure {
  seconds: number;
  peakMiB: number | null;
  cpuSeconds: number | null;
  note?: string;
  /** CPU seconds the host took from this machine during the run (stealSeconds); set by runOnce. */
  stealSeconds?: number | null;
}

const measureOf = (ran: Ran): Measure => ({
  seconds: ran.seconds,
  peakMiB: ran.peakMiB,
  cpuSeconds: ran.cpuSeconds,
});

interface Contender {
  name: string;
  /** Why it cannot run here, or null. */
  missing: string | null;
  run(data: Dataset, dest: string, runDir: string): Promise<Measure>;
}

const copyScript = (data: Dataset, dest: string): string =>
  data.single ? `cp ${q(data.single)} ${q(dest)}/` : `cp -r ${q(data.dir)}/. ${q(dest)}/`;

function bundleFor(source: string, dest: string, stabilitySeconds: number): string {
  return JSON.stringify({
    tools: [{ name: 'BENCH' }],
    station: { tool: 'BENCH' },
    storage_locations: [{ name: 'out', type: 'local', base_path: dest }],
    instruments: [
      {
        name: 'bench',
        tool: 'BENCH',
        watch: [{ path: source }],
        stability_seconds: stabilitySeconds,
        storage_location: 'out',
        destination_template: '{relative_path}',
      },
    ],
  });
}

const cliEnv = { ...process.env, LABSTATION_LOG_LEVEL: 'warn' };

/** A station data dir made with the real `labstation import`. */
function makeStation(runDir: string, source: string, dest: string, stability: number): string {
  const data = join(runDir, 'station');
  const bundle = join(runDir, 'bundle.json');
  writeFileSync(bundle, bundleFor(source, dest, stability));
  execFileSync(process.execPath, [cli, 'import', '--data', data, bundle], {
    env: cliEnv,
    stdio: 'ignore',
  });
  return data;
}

async function labstationOnce(data: string): Promise<Ran & { completed: number }> {
  const ran = await run(process.execPath, [cli, 'harvest', '--data', data, '--once'], cliEnv);
  const match = /harvest: (\d+) completed, (\d+) skipped, (\d+) failed/.exec(ran.stdout);
  if (ran.code !== 0 || !match) {
    throw new Error(`labstation harvest exited ${ran.code}: ${ran.stdout}${ran.stderr}`);
  }
  return { ...ran, completed: Number(match[1]) };
}

const labstation: Contender = {
  name: 'Labstation `harvest --once`',
  missing: null,
  async run(data, dest, runDir) {
    const station = makeStation(runDir, data.dir, dest, 0);
    const startedMs = Date.now();
    const ran = await labstationOnce(station);
    if (ran.completed !== data.files) {
      throw new Error(`labstation completed ${ran.completed} of ${data.files} files`);
    }
    const span = transferSpan(station);
    return {
      ...measureOf(ran),
      note:
        `first transfer started ${secs((span.firstStartMs - startedMs) / 1000)} s after the ` +
        `command; transfers ${secs((span.lastEndMs - span.firstStartMs) / 1000)} s from the ` +
        `first start to the last completion`,
    };
  },
};

/**
 * When the harvest's transfers ran, from the station's own records (read-only): the first
 * started_at and the last completed_at. What comes before the first is the process start, the
 * database and the walk.
 */
function transferSpan(station: string): { firstStartMs: number; lastEndMs: number } {
  const db = new Database(join(station, 'labstation.db'), { readonly: true });
  try {
    const row = db
      .prepare(
        `SELECT min(started_at) AS first, max(completed_at) AS last FROM harvest_transfers
           WHERE status = 'completed'`,
      )
      .get() as { first: string | null; last: string | null };
    if (!row.first || !row.last) throw new Error('labstation recorded no completed transfer');
    return { firstStartMs: Date.parse(row.first), lastEndMs: Date.parse(row.last) };
  } finally {
    db.close();
  }
}

/**
 * The harvest's copy functions with no station around them (bench/copyAlone.ts): the same
 * verified, durable copy, without the walk's stability check, the database and the records.
 * Its time against the harvest's is what the records cost; against cp + sync, what verifying
 * costs.
 */
const copyAlone: Contender = {
  name: "Labstation's copy alone (no records)",
  missing: null,
  async run(data, dest) {
    const script = join(dirname(dirname(cli)), 'dist', 'bench', 'copyAlone.js');
    const ran = await run(process.execPath, [script, data.dir, dest]);
    if (ran.code !== 0) throw new Error(`copyAlone exited ${ran.code}: ${ran.stdout}${ran.stderr}`);
    return measureOf(ran);
  },
};

/** A `labstation harvest` process (watching, no --once) that has said it harvests. */
interface RunningHarvest {
  child: ChildProcess;
  stderr(): string;
  /** User + system CPU seconds so far, all its threads (/proc/PID/stat). */
  cpuSeconds(): number | null;
  /** Its peak RSS so far (VmHWM), in MiB. */
  peakMiB(): number | null;
  /** Stops it (SIGTERM) and says how it ended. */
  stop(): Promise<number | null>;
}

async function startHarvest(station: string): Promise<RunningHarvest> {
  const child = spawn(process.execPath, [cli, 'harvest', '--data', station], {
    env: cliEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const running: RunningHarvest = {
    child,
    stderr: () => stderr,
    cpuSeconds: () => {
      try {
        const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
        return (Number(fields[11]) + Number(fields[12])) / 100;
      } catch {
        return null;
      }
    },
    peakMiB: () => {
      const sampled = new Map<number, number>();
      if (child.pid !== undefined) treeHwm(child.pid, sampled);
      return sampled.size ? Math.max(...sampled.values()) / 1024 : null;
    },
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`station did not start: ${stderr}`)), 60_000);
      void exited.then(() => reject(new Error(`station exited: ${stderr}`)));
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (!line.includes('harvesting; stop with Ctrl+C')) return;
        clearTimeout(timer);
        resolve();
      });
    });
  } catch (error) {
    await running.stop();
    throw error;
  }
  return running;
}

/**
 * A station already running: `labstation harvest` (watching, stability_seconds 0) on an empty
 * folder is started and has said it harvests before the clock starts. The dataset is then
 * moved into the watched folder (a rename on the same file system: no data is read), and the
 * time runs until the station's records show every file's transfer completed (read-only,
 * every 20 ms). No process start, no database open, no walk: what each burst of files costs
 * a station that runs all day, the watcher finding them. CPU is the station's over that span.
 */
const runningStation: Contender = {
  name: 'Labstation, running station (watching)',
  missing: null,
  async run(data, dest, runDir) {
    const incoming = join(runDir, 'incoming');
    mkdirSync(incoming);
    const station = makeStation(runDir, incoming, dest, 0);
    const harvest = await startHarvest(station);
    const moved = join(incoming, basename(data.dir));
    let db: Database.Database | undefined;
    try {
      db = new Database(join(station, 'labstation.db'), { readonly: true, fileMustExist: true });
      const progress = db.prepare<[], { done: number; last: string | null }>(
        `SELECT count(*) AS done, max(completed_at) AS last FROM harvest_transfers
          WHERE status = 'completed'`,
      );
      const cpu0 = harvest.cpuSeconds();
      const started = performance.now();
      const startedMs = Date.now();
      renameSync(data.dir, moved);
      let row = progress.get() as { done: number; last: string | null };
      while (row.done < data.files) {
        if (performance.now() - started > 600_000) {
          throw new Error(`the station completed ${row.done} of ${data.files} files in 10 min`);
        }
        if (harvest.child.exitCode !== null) throw new Error(`station exited: ${harvest.stderr()}`);
        await sleep(20);
        row = progress.get() as { done: number; last: string | null };
      }
      const seconds = (performance.now() - started) / 1000;
      const cpu1 = harvest.cpuSeconds();
      return {
        seconds,
        peakMiB: harvest.peakMiB(),
        cpuSeconds: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0,
        note: `last transfer completed ${secs((Date.parse(row.last as string) - startedMs) / 1000)} s after the move`,
      };
    } finally {
      db?.close();
      const code = await harvest.stop();
      // Back where every other contender reads it, before the run's folder is deleted.
      if (existsSync(moved)) renameSync(moved, data.dir);
      if (code !== 0) process.stderr.write(`labstation harvest exited ${code} on SIGTERM\n`);
    }
  },
};

const copySync: Contender = {
  name: 'cp + sync',
  missing: null,
  async run(data, dest) {
    const ran = await sh(`${copyScript(data, dest)} && sync`);
    return measureOf(ran);
  },
};

/** `xxhsum -H128` of every file under a folder, by path relative to it. */
async function digests(dir: string): Promise<{ ran: Ran; sums: Map<string, string> }> {
  const ran = await sh(`cd ${q(dir)} && find . -type f -print0 | xargs -0 xxhsum -H128`);
  const sums = new Map<string, string>();
  for (const line of ran.stdout.split('\n')) {
    const match = /^([0-9a-f]{32}) {2}(.+)$/.exec(line);
    if (match) sums.set(match[2], match[1]);
  }
  return { ran, sums };
}

const cpSyncXxh: Contender = {
  name: 'cp + sync + xxhsum -H128 (source, destination)',
  missing: commandExists('xxhsum') ? null : 'not installed',
  async run(data, dest) {
    const copy = await sh(`${copyScript(data, dest)} && sync`);
    const source = await digests(data.dir);
    const copied = await digests(dest);
    if (source.sums.size !== data.files || copied.sums.size !== data.files) {
      throw new Error(`xxhsum: ${source.sums.size} source, ${copied.sums.size} copied digests`);
    }
    for (const [path, sum] of source.sums) {
      if (copied.sums.get(path) !== sum) {
        throw new Error(`DIGESTS DIFFER for ${path}: ${sum} vs ${copied.sums.get(path)}`);
      }
    }
    return {
      seconds: copy.seconds + source.ran.seconds + copied.ran.seconds,
      peakMiB: peakOf(copy.peakMiB, source.ran.peakMiB, copied.ran.peakMiB),
      cpuSeconds: sumOf(copy.cpuSeconds, source.ran.cpuSeconds, copied.ran.cpuSeconds),
      note: `cp + sync ${secs(copy.seconds)} s, xxhsum source ${secs(source.ran.seconds)} s, destination ${secs(copied.ran.seconds)} s`,
    };
  },
};

const rsync: Contender = {
  name: 'rsync -a + sync',
  missing: commandExists('rsync') ? null : 'not installed',
  async run(data, dest) {
    const from = data.single ? q(data.single) : `${q(data.dir)}/`;
    const ran = await sh(`rsync -a ${from} ${q(dest)}/ && sync`);
    return measureOf(ran);
  },
};

const rclone: Contender = {
  name: 'rclone copy + sync',
  missing: commandExists('rclone') ? null : 'not installed',
  async run(data, dest) {
    const ran = await sh(`rclone copy ${q(data.single ?? data.dir)} ${q(dest)} && sync`, {
      ...process.env,
      RCLONE_CONFIG: '/dev/null',
    });
    return measureOf(ran);
  },
};

const contenders = [labstation, runningStation, copyAlone, copySync, cpSyncXxh, rsync, rclone];

// ---- the tables ----

interface Row {
  contender: Contender;
  runs: Measure[];
}

async function runOnce(
  contender: Contender,
  data: Dataset,
  root: string,
  dropped: boolean,
): Promise<Measure> {
  const runDir = mkdtempSync(join(root, 'run-'));
  const dest = join(runDir, 'dest');
  mkdirSync(dest);
  if (dropped && !dropCaches()) throw new Error('drop_caches stopped working');
  if (!dropped) sync();
  readyMemory(2 * data.bytes + 2 ** 30);
  try {
    const stolenBefore = stealSeconds();
    const result = await contender.run(data, dest, runDir);
    const stolenAfter = stealSeconds();
    result.stealSeconds =
      stolenBefore === null || stolenAfter === null ? null : stolenAfter - stolenBefore;
    const copied = measureTree(dest);
    if (copied.files !== data.files || copied.bytes !== data.bytes) {
      throw new Error(
        `${contender.name}: destination has ${copied.files} files, ${copied.bytes} bytes`,
      );
    }
    process.stderr.write(
      `  ${data.label}: ${contender.name}: ${secs(result.seconds)} s` +
        (result.note ? ` (${result.note})` : '') +
        ` (load ${loadavg()[0].toFixed(2)}${stolen(result)})\n`,
    );
    return result;
  } finally {
    rmSync(runDir, { recursive: true, force: true });
    sync();
  }
}

/**
 * BENCH_RUNS rounds, each running every contender once: noise from outside spreads evenly.
 * Each round starts with the next contender: the first run of a dataset was often the slowest
 * here (the disk still busy with what came before), and no contender should always be it.
 */
async function measure(data: Dataset, root: string, dropped: boolean): Promise<Row[]> {
  const rows: Row[] = contenders.map((contender) => ({ contender, runs: [] }));
  for (let i = 0; i < RUNS; i++) {
    for (let k = 0; k < rows.length; k++) {
      const row = rows[(i + k) % rows.length];
      if (!row.contender.missing) row.runs.push(await runOnce(row.contender, data, root, dropped));
    }
  }
  return rows;
}

/** The run whose time is the median (the lower middle one for an even count). */
function medianRun(row: Row): Measure | undefined {
  const sorted = [...row.runs].sort((a, b) => a.seconds - b.seconds);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

const peakOfRow = (row: Row): number | null => peakOf(...row.runs.map((r) => r.peakMiB));

const stolen = (m: Measure): string =>
  m.stealSeconds ? `, ${m.stealSeconds.toFixed(2)} s stolen by the host` : '';

/**
 * Every run of every contender, round by round, over the same round's cp + sync: the same
 * build swings by ±15 % here between rounds, and the rounds show whether a median is a quiet
 * box's or a busy one's. Runs that the host took CPU time from say how much.
 */
function roundByRound(rows: Row[]): string {
  const baseline = rows.find((r) => r.contender === copySync)?.runs ?? [];
  const lines = rows
    .filter((row) => row.runs.length)
    .map((row) => {
      const runs = row.runs.map((m, i) => {
        const base = baseline[i]?.seconds;
        const ratio =
          base && row.contender !== copySync ? `, ${(m.seconds / base).toFixed(2)}` : '';
        return `${secs(m.seconds)} s${ratio}${stolen(m)}`;
      });
      return `- ${row.contender.name}: ${runs.join('; ')}`;
    });
  return `round by round (s, x the round's cp + sync):\n\n${lines.join('\n')}`;
}

function table(data: Dataset, rows: Row[]): string {
  const baseline = rows.find((r) => r.contender === copySync);
  const base = baseline?.runs.length ? median(baseline.runs.map((r) => r.seconds)) : NaN;
  const tree = data.single === null;
  const header = [
    'what',
    's',
    'MB/s',
    ...(tree ? ['files/s'] : []),
    'CPU s',
    'peak RSS',
    'x cp + sync',
  ];
  const body = rows.map((row) => {
    if (!row.runs.length) {
      const missing = row.contender.missing ?? 'not run';
      return [row.contender.name, missing, '—', ...(tree ? ['—'] : []), '—', '—', '—'];
    }
    const s = median(row.runs.map((r) => r.seconds));
    const peak = peakOfRow(row);
    const cpu = row.runs.map((r) => r.cpuSeconds);
    return [
      row.contender.name,
      secs(s),
      int(data.bytes / 1e6 / s),
      ...(tree ? [int(data.files / s)] : []),
      cpu.every((c): c is number => c !== null) ? secs(median(cpu)) : '—',
      peak === null ? '—' : `${int(peak)} MiB`,
      `${(s / base).toFixed(2)}`,
    ];
  });
  return markdown(
    header,
    body,
    header.map((_, i) => i > 0),
  );
}

// ---- latency in a running station ----

interface Latency {
  samples: number[];
  peakMiB: number | null;
}

async function latency(root: string, how: { writes: number; gapMs: number }): Promise<Latency> {
  const runDir = mkdtempSync(join(root, 'latency-'));
  const source = join(runDir, 'incoming');
  const dest = join(runDir, 'dest');
  mkdirSync(source);
  mkdirSync(dest);
  const station = makeStation(runDir, source, dest, LATENCY_STABILITY_S);
  const harvest = await startHarvest(station);
  let db: Database.Database | undefined;
  try {
    const lastWrite = new Map<string, number>();
    const buffer = Buffer.allocUnsafe(SMALL_SIZE);
    for (let i = 0; i < LATENCY_FILES; i++) {
      if (i > 0) await sleep(LATENCY_GAP_MS);
      const path = join(source, `f${String(i).padStart(2, '0')}.bin`);
      randomFillSync(buffer);
      const fd = openSync(path, 'w');
      const part = Math.ceil(SMALL_SIZE / how.writes);
      for (let at = 0; at < SMALL_SIZE; at += part) {
        if (at > 0 && how.gapMs > 0) await sleep(how.gapMs);
        writeSync(fd, buffer.subarray(at, Math.min(at + part, SMALL_SIZE)));
      }
      lastWrite.set(path, Date.now());
      closeSync(fd);
    }
    db = new Database(join(station, 'labstation.db'), { readonly: true, fileMustExist: true });
    const completed = db.prepare<[], { source_path: string; completed_at: string }>(
      `SELECT f.source_path, t.completed_at FROM harvest_transfers t
         JOIN harvest_files f ON f.id = t.file_id
        WHERE t.status = 'completed' AND t.completed_at IS NOT NULL`,
    );
    const deadline = Date.now() + 60_000;
    let rows = completed.all();
    while (rows.length < LATENCY_FILES && Date.now() < deadline) {
      await sleep(100);
      rows = completed.all();
    }
    if (rows.length < LATENCY_FILES) {
      throw new Error(
        `only ${rows.length} of ${LATENCY_FILES} files completed: ${harvest.stderr()}`,
      );
    }
    const samples = rows.map((r) => {
      const wrote = lastWrite.get(r.source_path);
      if (wrote === undefined) throw new Error(`unexpected transfer of ${r.source_path}`);
      return Date.parse(r.completed_at) - wrote;
    });
    return { samples, peakMiB: harvest.peakMiB() };
  } finally {
    db?.close();
    const code = await harvest.stop();
    rmSync(runDir, { recursive: true, force: true });
    if (code !== 0) process.stderr.write(`labstation harvest exited ${code} on SIGTERM\n`);
  }
}

// ---- main ----

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'labstation-bench-transfer-'));
  try {
    cli = snapshotCli(root);
    console.log(machineLine());
    console.log(
      `temp dir: ${root} on ${fileSystemOf(root)}; sources and destinations on the same filesystem`,
    );
    console.log(
      `tools: ${firstLine('cp', ['--version'])}; ${firstLine('xxhsum', ['--version'])}; ` +
        `${firstLine('rsync', ['--version'])}; ${firstLine('rclone', ['version'])}`,
    );
    console.log(
      `peak RSS and CPU s (user + system): ${haveTime ? `${TIME} -v (peak: the largest process of the command)` : 'VmHWM sampled every 20 ms, no CPU'}; ` +
        `runs per contender: ${RUNS}${RUNS > 1 ? ' (median time, largest peak)' : ''}`,
    );

    console.log(`load average ${loadavg()[0].toFixed(2)} at the start`);
    if (!ONLY_LATENCY) await datasetRuns(root);
    await latencyRuns(root);
    console.log(`load average ${loadavg()[0].toFixed(2)} at the end`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The datasets, each copied by every contender, and the tables of their runs. */
async function datasetRuns(root: string): Promise<void> {
  const { datasets, dropped } = prepareDatasets(root);
  console.log(
    'every run: a fresh destination folder, deleted after the run, then `sync`; ' +
      'Labstation times include process start, the database and the folder walk',
  );
  console.log(
    'read-backs (Labstation verifying its copy, xxhsum of source and copy after cp) find the ' +
      'data in the page cache: only the first read of each run is from disk',
  );

  // The floor of the Labstation rows: the same command on an empty folder, after dropping
  // the caches as before each run (Node and the code read from disk), then again at once.
  const floorDir = mkdtempSync(join(root, 'floor-'));
  mkdirSync(join(floorDir, 'empty'));
  mkdirSync(join(floorDir, 'dest'));
  const floorStation = makeStation(floorDir, join(floorDir, 'empty'), join(floorDir, 'dest'), 0);
  if (dropped) dropCaches();
  const floorCold = await labstationOnce(floorStation);
  const floorWarm = await labstationOnce(floorStation);
  rmSync(floorDir, { recursive: true, force: true });

  const results: Row[][] = [];
  const loads: string[] = [];
  for (const d of datasets) {
    const before = loadavg()[0].toFixed(2);
    results.push(await measure(d, root, dropped));
    loads.push(`load average ${before} before these runs, ${loadavg()[0].toFixed(2)} after`);
  }

  for (const [i, d] of datasets.entries()) {
    console.log(`\n${d.label}, ${int(d.bytes)} bytes (MB = 10^6 bytes of source):\n`);
    console.log(table(d, results[i]));
    console.log(`\n${roundByRound(results[i])}`);
    console.log(`\n${loads[i]}`);
    for (const row of results[i]) {
      const note = medianRun(row)?.note;
      if (note) console.log(`\n${row.contender.name}${RUNS > 1 ? ' (median run)' : ''}: ${note}`);
    }
  }
  console.log(
    `\nLabstation floor, \`harvest --once\` on an empty folder (process start, database, walk): ` +
      `${secs(floorCold.seconds)} s${dropped ? ' after dropping the caches (as in the tables)' : ''}, ` +
      `${secs(floorWarm.seconds)} s warm (CPU ${floorWarm.cpuSeconds === null ? '—' : secs(floorWarm.cpuSeconds)} s); peak RSS ${floorWarm.peakMiB === null ? '—' : `${int(floorWarm.peakMiB)} MiB`}`,
  );
  const peaks = datasets.map((d, i) => {
    const row = results[i].find((r) => r.contender === labstation);
    const p = row ? peakOfRow(row) : null;
    return `${d.label}: ${p === null ? '—' : `${int(p)} MiB`}`;
  });
  console.log(`Labstation peak RSS by dataset: ${peaks.join('; ')}`);
}

/** A running station's latency, for each way of writing a file (LATENCY_WRITES). */
async function latencyRuns(root: string): Promise<void> {
  const window = LATENCY_STABILITY_S * 1000;
  const rows: string[][] = [];
  const peaks: string[] = [];
  for (const how of LATENCY_WRITES) {
    process.stderr.write(`latency, files written ${how.label}...\n`);
    const lat = await latency(root, how);
    const med = median(lat.samples);
    const max = Math.max(...lat.samples);
    rows.push([how.label, `${int(med)} ms`, `${int(max)} ms`, `${int(max - window)} ms`]);
    peaks.push(`${how.label}: ${lat.peakMiB === null ? '—' : `${int(lat.peakMiB)} MiB`}`);
  }
  console.log(
    `\nlatency, last write to completed record, running \`labstation harvest\` (watching), ` +
      `stability window ${LATENCY_STABILITY_S} s, ${LATENCY_FILES} files of 100 KiB written ` +
      `${LATENCY_GAP_MS / 1000} s apart:\n`,
  );
  console.log(
    markdown(
      ['each file written', 'median', 'max', `max minus the ${LATENCY_STABILITY_S} s window`],
      rows,
      [false, true, true, true],
    ),
  );
  console.log(`\nrunning station peak RSS (VmHWM at the end): ${peaks.join('; ')}`);
}

await main();
