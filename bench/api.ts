/**
 * npm run bench:api — the read API and the sync push of a real `labstation serve` process with
 * 1,000,000 usage events in its database (issue 3, "Tests and figures").
 *
 * Read API, with autocannon on loopback: a NexusLIMS-style filtered page, the first and a deep
 * page of the unfiltered list, a deep filtered page; side by side with GET /health (the HTTP
 * floor of the same server) and one usage event by id (the floor with token authentication).
 * Each case runs with 1 connection (latency of one request alone) and 10 connections (the
 * server saturated: requests/s). The same list queries also run in this process straight on
 * SQLite, with their query plans, to split the time between SQLite and HTTP + JSON.
 *
 * Sync: 100,000 usage events pushed through POST /sync/push in batches of 100 by one client in
 * sequence, as a station pushes; side by side with the bulk insert rate of the fixture and
 * with plain inserts in 100-row transactions (the same durability: one fsync per batch).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { openDatabase } from '../electron/core/db/open.js';
import { listQueryOf } from '../electron/core/server/nemo/routes.js';
import { countRows, listSql, pageIds, rowsByIds } from '../electron/core/server/nemo/queries.js';
import { usageEvents } from '../electron/core/server/nemo/resources.js';
import { pageNumberOf } from '../electron/core/server/nemo/params.js';
import { newUuid } from '../electron/core/util/ids.js';
import { SYNC_PUSH_PATH } from '../electron/core/sync/protocol.js';
import { buildFixture, stationUsages, type Fixture, type UsagePayload } from './apiFixture.js';

const CLI = join(import.meta.dirname, '..', '..', 'bin', 'labstation.js');
const WARMUP_S = 2;
const LATENCY_S = 5;
const LOAD_S = 10;
const LOAD_CONNECTIONS = 10;
const PUSH_EVENTS = 100_000;
const PUSH_BATCH = 100;
const BENCH_EMAIL = 'bench@example.org';
const BENCH_PASSWORD = 'bench-password-1';

interface Stats {
  p50: number;
  p95: number;
  p97_5: number;
  p99: number;
  runs: number;
}

function stats(samples: number[]): Stats {
  const sorted = Float64Array.from(samples).sort();
  const at = (q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p95: at(0.95), p97_5: at(0.975), p99: at(0.99), runs: sorted.length };
}

const ms = (value: number): string => (value < 10 ? value.toFixed(2) : value.toFixed(1));

function runCli(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, LABSTATION_LOG_LEVEL: 'warn' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(stdout.trim().split('\n').at(-1) ?? '')
        : reject(new Error(`labstation ${args.join(' ')} exited ${code}: ${stderr}`)),
    );
  });
}

interface Server {
  url: string;
  stop(): Promise<void>;
}

/** `labstation serve --port 0` on loopback; resolves at its ready line. */
function startServer(dataDir: string): Promise<Server> {
  const child: ChildProcess = spawn(
    process.execPath,
    [CLI, 'serve', '--data', dataDir, '--port', '0'],
    {
      env: { ...process.env, LABSTATION_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 60_000);
    void exited.then(() => reject(new Error(`server exited: ${stderr}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /server ready at (http:\/\/\S+\/)/.exec(line);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        url: match[1],
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

interface Cannon {
  latency: Stats;
  requestsPerSecond: number;
  non2xx: number;
  errors: number;
}

/** One autocannon run; latencies from its per-response times (fractional ms, not its histogram). */
function cannon(
  url: string,
  headers: Record<string, string>,
  connections: number,
  seconds: number,
): Promise<Cannon> {
  return new Promise((resolve, reject) => {
    const samples: number[] = [];
    const instance = autocannon(
      { url, headers, connections, duration: seconds },
      (error: Error | null, result: autocannon.Result) => {
        if (error) {
          reject(error);
          return;
        }
        resolve({
          latency: stats(samples),
          requestsPerSecond: result.requests.total / result.duration,
          non2xx: result.non2xx,
          errors: result.errors,
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      samples.push(responseTime);
    });
  });
}

interface Case {
  label: string;
  path: string;
  auth: 'none' | 'token' | 'jwt';
  /** The list query string run in-process on SQLite too. */
  list?: string;
}

interface CaseResult {
  label: string;
  alone: Cannon;
  loaded: Cannon;
  bytes: number;
  count: number | null;
  sql?: { median: number; plan: string[] };
}

/** count + page ids + rows, exactly as the list route runs them, timed in this process. */
function sqlAlone(db: Database.Database, query: string): { median: number; plan: string[] } {
  const params = new URLSearchParams(query);
  const list = listQueryOf(usageEvents, params, 'UTC');
  if (!list.ok) throw new Error(`bad list query ${query}`);
  const { clauses, orderBy, pageSize } = list;
  const run = (): number => {
    const count = countRows(db, usageEvents.table, clauses);
    const page = pageNumberOf(params, Math.max(1, Math.ceil(count / pageSize)));
    if (page === null) throw new Error(`no page in ${query}`);
    const ids = pageIds(db, {
      table: usageEvents.table,
      clauses,
      orderBy,
      limit: pageSize,
      offset: (page - 1) * pageSize,
      count,
    });
    return rowsByIds(db, usageEvents.table, usageEvents.columns, ids).length;
  };
  for (let i = 0; i < 5; i++) run();
  const samples: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t0 = process.hrtime.bigint();
    db.transaction(run)();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const sql = listSql(usageEvents.table, clauses, orderBy, pageSize, 0);
  const plan = [sql.count, sql.ids].flatMap(({ sql: text, args }) =>
    (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...args) as { detail: string }[]).map(
      (row) => row.detail,
    ),
  );
  return { median: stats(samples).p50, plan };
}

/** Median of 30 timed runs of `run` after 5 untimed ones (ms). */
function medianMs(run: () => unknown): number {
  for (let i = 0; i < 5; i++) run();
  const samples: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t0 = process.hrtime.bigint();
    run();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return stats(samples).p50;
}

/**
 * The ids step of (c), deep in one tool's events in id order, with the index on tool_id alone
 * (migration 5: SQLite keeps it in (tool_id, id) order) and, side by side on the same file, forced
 * onto the index the route had before it, (tool_id, start, end), which must sort the tool's rows.
 */
function toolPageSideBySide(db: Database.Database, toolId: number): void {
  const sql = (index: string): string =>
    `SELECT id FROM usage_events INDEXED BY ${index} WHERE tool_id = ? ORDER BY id DESC LIMIT 100 OFFSET 39900`;
  const now = medianMs(() => db.prepare(sql('usage_events_tool')).pluck().all(toolId));
  const before = medianMs(() => db.prepare(sql('usage_events_tool_start')).pluck().all(toolId));
  console.log(
    `(c) ids step alone: index (tool_id) ${ms(now)} ms | before migration 5, index (tool_id, start, end) ${ms(before)} ms`,
  );
}

async function readApi(
  fixture: Fixture,
  server: Server,
  token: string,
  jwt: string,
  toolId: number,
): Promise<CaseResult[]> {
  const window = 'start__gte=2024-03-01T00:00:00Z&end__lte=2024-05-30T00:00:00Z';
  const cases: Case[] = [
    { label: 'reference: GET /health (no auth, tiny JSON)', path: 'health', auth: 'none' },
    {
      label: 'reference: one usage event by id (token auth)',
      path: 'api/usage_events/500000/',
      auth: 'token',
    },
    {
      label: 'reference: one usage event by id (JWT auth)',
      path: 'api/usage_events/500000/',
      auth: 'jwt',
    },
    {
      label: '(a) tool_id + start__gte + end__lte (90 days), 100 rows',
      path: `api/usage_events/?tool_id=${toolId}&${window}&page_size=100`,
      auth: 'token',
      list: `tool_id=${toolId}&${window}&page_size=100`,
    },
    {
      label: '(b0) unfiltered, first page, 100 rows',
      path: 'api/usage_events/?page_size=100',
      auth: 'token',
      list: 'page_size=100',
    },
    {
      label: '(b) unfiltered, page 9000 (offset 899,900), 100 rows',
      path: 'api/usage_events/?page=9000&page_size=100',
      auth: 'token',
      list: 'page=9000&page_size=100',
    },
    {
      label: '(c) tool_id, page 400 (offset 39,900), 100 rows',
      path: `api/usage_events/?tool_id=${toolId}&page=400&page_size=100`,
      auth: 'token',
      list: `tool_id=${toolId}&page=400&page_size=100`,
    },
  ];
  const db = new Database(fixture.dbFile, { readonly: true });
  const results: CaseResult[] = [];
  try {
    for (const c of cases) {
      const url = `${server.url}${c.path}`;
      const headers: Record<string, string> =
        c.auth === 'token'
          ? { authorization: `Token ${token}` }
          : c.auth === 'jwt'
            ? { authorization: `Bearer ${jwt}` }
            : {};
      const probe = await fetch(url, { headers });
      const body = await probe.text();
      if (probe.status !== 200) throw new Error(`${c.path}: ${probe.status} ${body}`);
      const parsed = JSON.parse(body) as { count?: number };
      await cannon(url, headers, LOAD_CONNECTIONS, WARMUP_S);
      const alone = await cannon(url, headers, 1, LATENCY_S);
      const loaded = await cannon(url, headers, LOAD_CONNECTIONS, LOAD_S);
      for (const run of [alone, loaded]) {
        if (run.non2xx || run.errors) {
          throw new Error(`${c.path}: ${run.non2xx} non-2xx answers, ${run.errors} errors`);
        }
      }
      const result: CaseResult = {
        label: c.label,
        alone,
        loaded,
        bytes: Buffer.byteLength(body),
        count: typeof parsed.count === 'number' ? parsed.count : null,
        ...(c.list === undefined ? {} : { sql: sqlAlone(db, c.list) }),
      };
      results.push(result);
      console.log(
        `${c.label.padEnd(56)} 1 conn: p50 ${ms(alone.latency.p50)} ms, p95 ${ms(alone.latency.p95)}, ` +
          `p99 ${ms(alone.latency.p99)}, ${alone.requestsPerSecond.toFixed(0)} req/s | ` +
          `${LOAD_CONNECTIONS} conn: p50 ${ms(loaded.latency.p50)} ms, p95 ${ms(loaded.latency.p95)}, ` +
          `p97.5 ${ms(loaded.latency.p97_5)}, p99 ${ms(loaded.latency.p99)}, ` +
          `${loaded.requestsPerSecond.toFixed(0)} req/s | ${(result.bytes / 1024).toFixed(1)} KiB` +
          (result.count === null ? '' : `, count ${result.count}`) +
          (result.sql ? ` | SQL alone ${ms(result.sql.median)} ms` : ''),
      );
      if (result.sql) console.log(`    plan: ${result.sql.plan.join(' / ')}`);
    }
    toolPageSideBySide(db, toolId);
  } finally {
    db.close();
  }
  return results;
}

/** A JWT from POST /auth/jwt/login (its requests write nothing; a token's write its last use once a minute). */
async function login(server: Server): Promise<string> {
  const response = await fetch(`${server.url}auth/jwt/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: BENCH_EMAIL, password: BENCH_PASSWORD }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`login refused: ${JSON.stringify(body)}`);
  return body.access_token;
}

interface PushFigures {
  events: number;
  seconds: number;
  eventsPerSecond: number;
  request: Stats;
}

/** One client pushing batches in sequence, each answered before the next, as a station does. */
async function pushUsages(
  server: Server,
  key: string,
  usages: UsagePayload[],
): Promise<PushFigures> {
  const bodies: string[] = [];
  for (let from = 0; from < usages.length; from += PUSH_BATCH) {
    const records = usages.slice(from, from + PUSH_BATCH).map((payload, i) => ({
      id: from + i + 1,
      kind: 'usage_event',
      uuid: payload.uuid,
      payload,
    }));
    bodies.push(JSON.stringify({ records }));
  }
  const url = `${server.url}${SYNC_PUSH_PATH.slice(1)}`;
  const headers = { authorization: `Station ${key}`, 'content-type': 'application/json' };
  const samples: number[] = [];
  let stored = 0;
  const t0 = process.hrtime.bigint();
  for (const body of bodies) {
    const r0 = process.hrtime.bigint();
    const response = await fetch(url, { method: 'POST', headers, body });
    const result = (await response.json()) as { acked?: number[]; error?: unknown };
    samples.push(Number(process.hrtime.bigint() - r0) / 1e6);
    if (response.status !== 200 || result.error || !result.acked) {
      throw new Error(`push refused: ${response.status} ${JSON.stringify(result)}`);
    }
    stored += result.acked.length;
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (stored !== usages.length) throw new Error(`pushed ${usages.length}, acked ${stored}`);
  return { events: stored, seconds, eventsPerSecond: stored / seconds, request: stats(samples) };
}

/** Reference: the same rows as plain INSERTs, one transaction per 100, real pragmas. */
function plainBatchInserts(dbFile: string, stationToolId: number, usages: UsagePayload[]): number {
  const db = openDatabase(dbFile);
  try {
    const ids = (table: string): Map<string, number> =>
      new Map(
        (db.prepare(`SELECT uuid, id FROM ${table}`).all() as { uuid: string; id: number }[]).map(
          (row) => [row.uuid, row.id],
        ),
      );
    const users = ids('users');
    const projects = ids('projects');
    const insert = db.prepare(
      `INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, start, "end",
         validated, remote_work, pre_run_data, run_data, post_usage_pending, reminder_due,
         version, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const batch = db.transaction((rows: UsagePayload[]) => {
      for (const p of rows) {
        insert.run(
          newUuid(),
          users.get(p.user_uuid) ?? 1,
          users.get(p.operator_uuid) ?? 1,
          projects.get(p.project_uuid) ?? 1,
          stationToolId,
          p.start,
          p.end,
          p.validated,
          p.remote_work,
          p.pre_run_data,
          p.run_data,
          p.post_usage_pending,
          p.reminder_due,
          p.version,
          p.end ?? p.start,
        );
      }
    });
    const t0 = process.hrtime.bigint();
    for (let from = 0; from < usages.length; from += PUSH_BATCH) {
      batch(usages.slice(from, from + PUSH_BATCH));
    }
    return usages.length / (Number(process.hrtime.bigint() - t0) / 1e9);
  } finally {
    db.close();
  }
}

async function main(): Promise<void> {
  console.log(
    `machine: ${cpus().length} x ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}` +
      `; load average ${loadavg()[0].toFixed(2)} at start`,
  );
  const dataDir = mkdtempSync(join(tmpdir(), 'labstation-bench-api-'));
  let server: Server | undefined;
  try {
    const fixture = buildFixture(join(dataDir, 'server'));
    const { insert } = fixture;
    console.log(
      `fixture: ${insert.rows.toLocaleString('en-US')} usage events (${fixture.tools.length} tools, ` +
        `${fixture.users.length} users, ${fixture.projects.length} projects, 3 years) in ` +
        `${insert.seconds.toFixed(1)} s, ${Math.round(insert.rowsPerSecond).toLocaleString('en-US')} rows/s ` +
        `in 50,000-row transactions; database ${(insert.bytes / 2 ** 20).toFixed(0)} MiB`,
    );
    const data = fixture.dataDir;
    await runCli([
      'admin',
      'user',
      'create',
      '--data',
      data,
      '--email',
      BENCH_EMAIL,
      '--password',
      BENCH_PASSWORD,
      '--role',
      'staff',
    ]);
    const token = await runCli(['admin', 'token', 'create', '--data', data, '--user', BENCH_EMAIL]);
    const stationTool = fixture.tools[6];
    const key = await runCli([
      'admin',
      'station',
      'create',
      '--data',
      data,
      '--name',
      'bench',
      '--tool',
      stationTool.name,
    ]);
    server = await startServer(data);
    console.log(`server: ${server.url} (labstation serve)`);

    console.log(
      `\nread API: autocannon, warm-up ${WARMUP_S} s, then 1 connection ${LATENCY_S} s and ` +
        `${LOAD_CONNECTIONS} connections ${LOAD_S} s per case`,
    );
    await readApi(fixture, server, token, await login(server), stationTool.id);

    console.log(
      `\nsync push: ${PUSH_EVENTS.toLocaleString('en-US')} usage events, batches of ${PUSH_BATCH}, one client in sequence`,
    );
    const usages = stationUsages(fixture, 6, PUSH_EVENTS);
    const push = await pushUsages(server, key, usages);
    console.log(
      `POST /sync/push                                    ${Math.round(push.eventsPerSecond).toLocaleString('en-US')} events/s ` +
        `(${push.seconds.toFixed(1)} s); per batch p50 ${ms(push.request.p50)} ms, ` +
        `p95 ${ms(push.request.p95)}, p99 ${ms(push.request.p99)} (${push.request.runs} batches)`,
    );
    await server.stop();
    server = undefined;
    const plain = plainBatchInserts(
      fixture.dbFile,
      stationTool.id,
      stationUsages(fixture, 6, PUSH_EVENTS),
    );
    console.log(
      `reference: plain INSERT, 100-row transactions     ${Math.round(plain).toLocaleString('en-US')} rows/s (same pragmas, one fsync per batch)`,
    );
    console.log(
      `reference: plain INSERT, 50,000-row transactions  ${Math.round(insert.rowsPerSecond).toLocaleString('en-US')} rows/s (the fixture above)`,
    );
    console.log(`load average ${loadavg()[0].toFixed(2)} at the end`);
  } finally {
    if (server) await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
