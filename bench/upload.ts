/**
 * npm run bench:upload — a station's harvest into a `server` storage location (an upload over
 * HTTP, verified on both sides) side by side with `curl` uploading the same data to a plain
 * static sink, on loopback, in one invocation.
 *
 * Datasets as in bench/transfer.ts (bench/common.ts): one file of BENCH_BIG_MB MiB (default
 * 2048) and BENCH_SMALL_FILES files of 100 KiB (default 10,000), 100 per folder, random bytes in
 * a temp dir removed at the end.
 *
 * Every run gets fresh data dirs and destination folders on the same file system as the source
 * (deleted after the run, then `sync`), and a fresh receiving process started before the run
 * (untimed), so that its peak RSS and CPU time belong to that run:
 * - Labstation: a real `labstation serve --data DIR --port 0` whose data dir was made with the
 *   real CLI (`import` of a bundle with a local location, `admin station create`), then the
 *   location made a `server` one and an instrument added for the station (bundles take local
 *   locations only), as test/integration/uploadFixture.ts does. The station's data dir is made
 *   with `labstation import`, its location then set to `server` and `sync.server` / `sync.key`
 *   set. Timed: `labstation harvest --data DIR --once`, from its start to its exit; when it
 *   exits every file is placed, fsynced and verified by the server.
 * - curl + sink: a minimal node:http server (this file, run as `upload.js sink DIR` in its own
 *   process) that streams each PUT body into a file under DIR, and nothing else. Timed:
 *   `curl -T FILE URL` for the big file, and for the tree one curl invocation whose config
 *   (`-K`) lists 10,000 `upload-file` / `url` pairs, reusing its connection; then `sync`.
 *   Also given: the same followed by `xxhsum -H128` over the source and the sink's files, the
 *   cost a sequential verification would add.
 * After every run, untimed: the destination must hold every file with the source's size and
 * XXH3-128 (hash-wasm, in this process), nothing else (no partial upload left on the server).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import { createWriteStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { createXXHash128 } from 'hash-wasm';
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
  median,
  peakOf,
  prepareDatasets,
  q,
  type Ran,
  readyMemory,
  run,
  RUNS,
  secs,
  sh,
  snapshotCli,
  sumOf,
  sync,
  TIME,
} from './common.js';

const SINK_ARG = 'sink';
const UPLOAD_FOLDER = '.labstation-uploads';
const CLK_TCK = 100;
let cli = '';
const cliEnv = { ...process.env, LABSTATION_LOG_LEVEL: 'warn' };

// ---- the plain static sink (its own process) ----

/** PUT /a/b.bin writes the body to DIR/a/b.bin; nothing else: no hash, no fsync. */
function runSink(dir: string): void {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://sink').pathname));
    const target = join(dir, path);
    if (req.method !== 'PUT' || !target.startsWith(dir + sep)) {
      res.writeHead(400).end();
      return;
    }
    mkdir(dirname(target), { recursive: true })
      .then(() => pipeline(req, createWriteStream(target)))
      .then(
        () => res.writeHead(201, { 'content-length': '0' }).end(),
        (error: Error) => res.writeHead(500).end(error.message),
      );
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    process.stdout.write(`sink ready at http://127.0.0.1:${port}/\n`);
  });
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

// ---- receiving processes: start, CPU time, peak RSS ----

interface Receiver {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/** Starts a process and waits for its line `... ready at URL`. */
function startReceiver(args: string[]): Promise<Receiver> {
  const child = spawn(process.execPath, args, { env: cliEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${args[1]} did not start: ${stderr}`)),
      30_000,
    );
    void exited.then((code) => reject(new Error(`${args[1]} exited ${code}: ${stderr}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /ready at (http:\/\/\S+\/)/.exec(line);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        child,
        url: match[1],
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

/** User + system CPU seconds of a live process (all its threads), from /proc. */
function cpuOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** VmHWM of a live process, MiB. */
function hwmOf(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmHWM for ${pid}`);
  return Number(match[1]) / 1024;
}

/** The machine's CPU ticks from /proc/stat: all, and stolen by the hypervisor. */
function cpuTicks(): { all: number; steal: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1);
  // user nice system idle iowait irq softirq steal (guest time is already in user)
  const values = fields.slice(0, 8).map(Number);
  return { all: values.reduce((a, v) => a + v, 0), steal: values[7] ?? 0 };
}

/** On a virtual machine, the share of CPU time the host gave to others: it slows every row. */
function stolenSince(before: { all: number; steal: number }): string {
  const now = cpuTicks();
  const share = (now.steal - before.steal) / Math.max(1, now.all - before.all);
  return `${(100 * share).toFixed(1)}%`;
}

// ---- checking what arrived ----

/** Size and XXH3-128 of every file under `dir`, by '/'-separated path relative to it. */
async function digestTree(dir: string): Promise<Map<string, string>> {
  const hasher = await createXXHash128();
  const buffer = Buffer.allocUnsafe(4 * 2 ** 20);
  const sums = new Map<string, string>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const fd = openSync(path, 'r');
    let size = 0;
    try {
      hasher.init();
      for (let n = readSync(fd, buffer); n > 0; n = readSync(fd, buffer)) {
        hasher.update(buffer.subarray(0, n));
        size += n;
      }
    } finally {
      closeSync(fd);
    }
    sums.set(relative(dir, path).split(sep).join('/'), `${size} ${hasher.digest('hex')}`);
  }
  return sums;
}

/** Throws unless `dest` holds exactly the source's files, with their sizes and hashes. */
async function checkArrived(what: string, source: Map<string, string>, dest: string) {
  const got = await digestTree(dest);
  const missing = [...source.keys()].filter((k) => got.get(k) !== source.get(k));
  const extra = [...got.keys()].filter((k) => !source.has(k));
  if (missing.length || extra.length) {
    throw new Error(
      `${what}: ${missing.length} file(s) missing or different (${missing.slice(0, 3).join(', ')}), ` +
        `${extra.length} unexpected (${extra.slice(0, 3).join(', ')})`,
    );
  }
}

// ---- contenders ----

interface Measure {
  seconds: number;
  clientPeak: number | null;
  clientCpu: number | null;
  serverPeak: number;
  serverCpu: number;
}

/** Times `work` with the receiver's CPU time and peak RSS over it. */
async function timed<R extends Ran>(
  receiver: Receiver,
  data: Dataset,
  dropped: boolean,
  work: () => Promise<R>,
) {
  if (dropped && !dropCaches()) throw new Error('drop_caches stopped working');
  if (!dropped) sync();
  readyMemory(2 * data.bytes + 2 ** 30);
  const pid = receiver.child.pid as number;
  const cpuBefore = cpuOf(pid);
  const ran = await work();
  const measure: Measure = {
    seconds: ran.seconds,
    clientPeak: ran.peakMiB,
    clientCpu: ran.cpuSeconds,
    serverPeak: hwmOf(pid),
    serverCpu: cpuOf(pid) - cpuBefore,
  };
  return { ran, measure };
}

function importBundle(dir: string, bundle: unknown): void {
  const file = `${dir}.bundle.json`;
  writeFileSync(file, JSON.stringify(bundle));
  execFileSync(process.execPath, [cli, 'import', '--data', dir, file], { env: cliEnv });
}

/** A server data dir whose `server` location `archive` (base_path `store`) takes the station. */
function makeServerData(dir: string, store: string): string {
  importBundle(dir, {
    tools: [{ name: 'BENCH' }],
    storage_locations: [{ name: 'archive', type: 'local', base_path: store }],
  });
  const made = execFileSync(
    process.execPath,
    [cli, 'admin', 'station', 'create', '--data', dir, '--name', 'bench', '--tool', 'BENCH'],
    { env: cliEnv, encoding: 'utf8' },
  );
  const key = made.trim().split('\n').pop() as string;
  const db = new Database(join(dir, 'labstation.db'));
  try {
    const now = new Date().toISOString();
    db.prepare("UPDATE storage_locations SET type = 'server' WHERE name = 'archive'").run();
    db.prepare(
      `INSERT INTO instruments (uuid, name, tool_id, station_id, storage_location_id,
         destination_template, created_at, updated_at)
       SELECT 'bench-instrument', 'bench', t.id, s.id, l.id, '{relative_path}', ?, ?
       FROM tools t, stations s, storage_locations l
       WHERE t.name = 'BENCH' AND s.name = 'bench' AND l.name = 'archive'`,
    ).run(now, now);
  } finally {
    db.close();
  }
  return key;
}

/** A station data dir whose instrument uploads `source` into the server's `archive`. */
function makeStationData(dir: string, source: string, server: string, key: string): void {
  const unused = `${dir}.local`;
  mkdirSync(unused);
  importBundle(dir, {
    tools: [{ name: 'BENCH' }],
    station: { tool: 'BENCH' },
    storage_locations: [{ name: 'archive', type: 'local', base_path: unused }],
    instruments: [
      {
        name: 'bench',
        tool: 'BENCH',
        watch: [{ path: source }],
        stability_seconds: 0,
        storage_location: 'archive',
        destination_template: '{relative_path}',
      },
    ],
  });
  const db = new Database(join(dir, 'labstation.db'));
  try {
    db.prepare("UPDATE storage_locations SET type = 'server' WHERE name = 'archive'").run();
    const set = db.prepare(
      `INSERT INTO settings (key, value) VALUES (?, ?)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    );
    set.run('sync.server', JSON.stringify(server));
    set.run('sync.key', JSON.stringify(key));
  } finally {
    db.close();
  }
}

async function harvestOnce(station: string): Promise<Ran & { completed: number }> {
  const ran = await run(process.execPath, [cli, 'harvest', '--data', station, '--once'], cliEnv);
  const match = /harvest: (\d+) completed, (\d+) skipped, (\d+) failed/.exec(ran.stdout);
  if (ran.code !== 0 || !match) {
    throw new Error(`labstation harvest exited ${ran.code}: ${ran.stdout}${ran.stderr}`);
  }
  return { ...ran, completed: Number(match[1]) };
}

/** A server and a station for `source`, the server running; the caller stops it. */
async function labstationWorld(runDir: string, source: string) {
  const store = join(runDir, 'store');
  mkdirSync(store);
  const key = makeServerData(join(runDir, 'server'), store);
  const server = await startReceiver([
    cli,
    'serve',
    '--data',
    join(runDir, 'server'),
    '--port',
    '0',
  ]);
  const station = join(runDir, 'station');
  makeStationData(station, source, server.url, key);
  return { store, server, station };
}

async function labstation(
  data: Dataset,
  runDir: string,
  sums: Map<string, string>,
  dropped: boolean,
) {
  const world = await labstationWorld(runDir, data.dir);
  let measure: Measure;
  try {
    const done = await timed(world.server, data, dropped, () => harvestOnce(world.station));
    if (done.ran.completed !== data.files) {
      throw new Error(`labstation completed ${done.ran.completed} of ${data.files} files`);
    }
    measure = done.measure;
  } finally {
    await world.server.stop();
  }
  const partials = join(world.store, UPLOAD_FOLDER);
  const left = existsSync(partials) ? readdirSync(partials).length : 0;
  if (left) throw new Error(`labstation: ${left} partial upload(s) left in ${partials}`);
  rmSync(partials, { recursive: true, force: true });
  await checkArrived('labstation', sums, world.store);
  return measure;
}

/** curl's config for the tree: one `upload-file` / `url` pair per file, in one connection. */
function curlConfig(data: Dataset, url: string, file: string): void {
  const quoted = (s: string): string => `"${s.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
  const lines: string[] = [];
  for (const entry of readdirSync(data.dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const name = relative(data.dir, path).split(sep).map(encodeURIComponent).join('/');
    lines.push(`upload-file = ${quoted(path)}`, `url = ${quoted(url + name)}`);
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
}

interface CurlMeasure extends Measure {
  /** The run split: curl alone, then the `sync` after it, s. */
  curlSeconds: number;
  syncSeconds: number;
  /** xxhsum -H128 over the source and the sink's files afterwards, s; null without xxhsum. */
  xxhSeconds: number | null;
  xxhCpu: number | null;
}

const haveXxhsum = commandExists('xxhsum');

async function curlSink(
  data: Dataset,
  runDir: string,
  sums: Map<string, string>,
  dropped: boolean,
) {
  const sinkDir = join(runDir, 'sink');
  mkdirSync(sinkDir);
  const sink = await startReceiver([fileURLToPath(import.meta.url), SINK_ARG, sinkDir]);
  let script: string;
  if (data.single) {
    script = `curl -sS --fail -T ${q(data.single)} ${q(`${sink.url}big.bin`)}`;
  } else {
    const config = join(runDir, 'curl.conf');
    curlConfig(data, sink.url, config);
    script = `curl -sS --fail --fail-early -K ${q(config)}`;
  }
  let measure: CurlMeasure;
  try {
    let split = { curlSeconds: 0, syncSeconds: 0 };
    const done = await timed(sink, data, dropped, async () => {
      const sent = await sh(script);
      const flushed = await sh('sync');
      split = { curlSeconds: sent.seconds, syncSeconds: flushed.seconds };
      return {
        ...sent,
        seconds: sent.seconds + flushed.seconds,
        cpuSeconds: sumOf(sent.cpuSeconds, flushed.cpuSeconds),
        peakMiB: peakOf(sent.peakMiB, flushed.peakMiB),
      };
    });
    measure = { ...done.measure, ...split, xxhSeconds: null, xxhCpu: null };
  } finally {
    await sink.stop();
  }
  if (haveXxhsum) {
    const all = (dir: string): string =>
      `(cd ${q(dir)} && find . -type f -print0 | xargs -0 xxhsum -H128)`;
    const ran = await sh(`${all(data.dir)} > /dev/null && ${all(sinkDir)} > /dev/null`);
    measure.xxhSeconds = ran.seconds;
    measure.xxhCpu = ran.cpuSeconds;
  }
  await checkArrived('curl + sink', sums, sinkDir);
  return measure;
}

// ---- the tables ----

interface Results {
  labstation: Measure[];
  curl: CurlMeasure[];
}

async function inRunDir<T>(root: string, work: (runDir: string) => Promise<T>): Promise<T> {
  const runDir = mkdtempSync(join(root, 'run-'));
  try {
    return await work(runDir);
  } finally {
    rmSync(runDir, { recursive: true, force: true });
    sync();
  }
}

/** BENCH_RUNS rounds, each running both contenders once: noise from outside spreads evenly. */
async function measure(data: Dataset, root: string, dropped: boolean): Promise<Results> {
  const sums = await digestTree(data.dir);
  if (sums.size !== data.files) throw new Error(`dataset: ${sums.size} files`);
  const results: Results = { labstation: [], curl: [] };
  const say = (what: string, m: Measure): void =>
    void process.stderr.write(
      `  ${data.label}: ${what}: ${secs(m.seconds)} s (load ${loadavg()[0].toFixed(2)})\n`,
    );
  for (let i = 0; i < RUNS; i++) {
    const l = await inRunDir(root, (dir) => labstation(data, dir, sums, dropped));
    results.labstation.push(l);
    say('labstation', l);
    const c = await inRunDir(root, (dir) => curlSink(data, dir, sums, dropped));
    results.curl.push(c);
    say('curl + sink', c);
  }
  return results;
}

const mib = (value: number | null): string => (value === null ? '—' : `${int(value)} MiB`);
const cpu = (values: (number | null)[]): string =>
  values.every((v): v is number => v !== null) ? secs(median(values)) : '—';

function table(data: Dataset, results: Results): string {
  const tree = data.single === null;
  const header = [
    'what',
    's',
    'MB/s',
    ...(tree ? ['files/s'] : []),
    'client CPU s',
    'receiver CPU s',
    'client peak RSS',
    'receiver peak RSS',
    'x curl + sink',
  ];
  const base = median(results.curl.map((r) => r.seconds));
  const row = (name: string, runs: Measure[]): string[] => {
    const s = median(runs.map((r) => r.seconds));
    return [
      name,
      secs(s),
      int(data.bytes / 1e6 / s),
      ...(tree ? [int(data.files / s)] : []),
      cpu(runs.map((r) => r.clientCpu)),
      cpu(runs.map((r) => r.serverCpu)),
      mib(peakOf(...runs.map((r) => r.clientPeak))),
      mib(peakOf(...runs.map((r) => r.serverPeak))),
      (s / base).toFixed(2),
    ];
  };
  const rows = [
    row('Labstation: `harvest --once` (station) to `serve` (receiver)', results.labstation),
    row('curl -T to the static sink, + sync', results.curl),
  ];
  if (results.curl.every((r) => r.xxhSeconds !== null)) {
    const verified = results.curl.map((r) => ({
      ...r,
      seconds: r.seconds + (r.xxhSeconds as number),
      clientCpu: r.clientCpu === null || r.xxhCpu === null ? null : r.clientCpu + r.xxhCpu,
    }));
    rows.push(row('the same, then xxhsum -H128 of source and sink files', verified));
  }
  return markdown(
    header,
    rows,
    header.map((_, i) => i > 0),
  );
}

// ---- main ----

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'labstation-bench-upload-'));
  try {
    cli = snapshotCli(root);
    console.log(machineLine());
    console.log(
      `temp dir: ${root} on ${fileSystemOf(root)}; sources, server store and sink on the same ` +
        'file system; client and receiver on the same machine, over 127.0.0.1',
    );
    console.log(
      `tools: ${firstLine('curl', ['--version'])}; ${firstLine('xxhsum', ['--version'])}`,
    );
    console.log(
      `client CPU s and peak RSS: ${haveTime ? `${TIME} -v (peak: the largest process)` : 'not known without /usr/bin/time'}; ` +
        'receiver: /proc of the receiving process (CPU over the run, VmHWM of a process started ' +
        `for the run); runs per contender: ${RUNS}${RUNS > 1 ? ' (median time and CPU, largest peak)' : ''}`,
    );
    console.log(`load average ${loadavg()[0].toFixed(2)} at the start`);
    const { datasets, dropped } = prepareDatasets(root);

    // The floor of the Labstation rows: the station on an empty folder, the server running.
    const floor = await inRunDir(root, async (dir) => {
      mkdirSync(join(dir, 'empty'));
      const world = await labstationWorld(dir, join(dir, 'empty'));
      try {
        if (dropped) dropCaches();
        const cold = await harvestOnce(world.station);
        const warm = await harvestOnce(world.station);
        return { cold, warm };
      } finally {
        await world.server.stop();
      }
    });

    const results: Results[] = [];
    const loads: string[] = [];
    for (const d of datasets) {
      const before = loadavg()[0].toFixed(2);
      const ticks = cpuTicks();
      results.push(await measure(d, root, dropped));
      loads.push(
        `load average ${before} before these runs, ${loadavg()[0].toFixed(2)} after; ` +
          `CPU time stolen by the hypervisor during them: ${stolenSince(ticks)}`,
      );
    }
    for (const [i, d] of datasets.entries()) {
      console.log(`\n${d.label}, ${int(d.bytes)} bytes (MB = 10^6 bytes of source):\n`);
      console.log(table(d, results[i]));
      console.log(`\n${loads[i]}`);
      const curl = results[i].curl;
      const mid = [...curl].sort((x, y) => x.seconds - y.seconds)[
        Math.floor((curl.length - 1) / 2)
      ];
      console.log(
        `curl + sink${RUNS > 1 ? ' (median run)' : ''}: curl ${secs(mid.curlSeconds)} s, then sync ` +
          `${secs(mid.syncSeconds)} s` +
          (mid.xxhSeconds === null
            ? ''
            : `; xxhsum of both sides afterwards ${secs(mid.xxhSeconds)} s`),
      );
    }
    console.log(
      '\nLabstation: the station hashes each file (XXH3-128), reads and hashes it again while ' +
        'sending it (PATCH, streamed); the server writes and hashes what arrives, fsyncs, re-reads ' +
        'and hashes the file, places it (link or rename, folder fsynced) and records it; the ' +
        'station records the outcome. curl + sink: the sink writes each body to a file, no hash, ' +
        'no fsync; `sync` afterwards makes it durable; nothing is verified.',
    );
    console.log(
      `Labstation floor, \`harvest --once\` on an empty folder (process start, database, walk): ` +
        `${secs(floor.cold.seconds)} s${dropped ? ' after dropping the caches' : ''}, ` +
        `${secs(floor.warm.seconds)} s warm; peak RSS ${mib(floor.warm.peakMiB)}`,
    );
    console.log(`load average ${loadavg()[0].toFixed(2)} at the end`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[2] === SINK_ARG) runSink(process.argv[3]);
else await main();
