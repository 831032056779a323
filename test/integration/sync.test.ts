/**
 * Station <-> server sync with real processes on loopback: a `labstation serve`, stations
 * started with `--server URL --key KEY` on empty data dirs, a TCP proxy that cuts connections
 * mid-request, and a station killed between the server's answer and its own acknowledgement.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeArk } from '../../shared/ark.js';
import type { PushResult } from '../../electron/core/sync/protocol.js';
import { facilityBundle, goodPreAnswers } from '../fixtures/facility.js';
import { startFaultProxy, type FaultProxy } from './faultProxy.js';
import { forwardTo, passOn, startHttpProxy } from './httpForward.js';
import { startTcpCable } from './tcpCable.js';
import {
  runCli,
  startServer,
  startStation,
  tempDir,
  writeJson,
  type ServerProcess,
  type StationProcess,
  waitFor,
  createStationKey,
} from './helpers.js';
import { usagePayload, type UsageRefs } from './usagePushFixtures.js';

const FAST = { LABSTATION_SYNC_BACKOFF_CAP_MS: '1500' };

let serverDir: string;
let server: ServerProcess;
let serverDb: Database.Database;
const running = new Set<StationProcess>();
const proxies = new Set<FaultProxy>();

function lastLine(text: string): string {
  return text.trim().split('\n').pop()!;
}

function serverBundle(): Record<string, unknown> {
  const bundle = facilityBundle();
  delete bundle.station;
  const users = bundle.users as Record<string, unknown>[];
  users[2] = { ...users[2], email: 'sam@example.org', password: 'staff password 1', role: 'staff' };
  return bundle;
}

async function importIntoServer(bundle: Record<string, unknown>): Promise<void> {
  const result = await runCli([
    'import',
    '--data',
    serverDir,
    writeJson(tempDir(), 'b.json', bundle),
  ]);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
}

/** The station's pull cursor. */
function syncedCursor(dir: string): number {
  const local = openReadonly(dir);
  try {
    return Number(
      local.prepare("SELECT value FROM sync_state WHERE key = 'pull.cursor'").pluck().get(),
    );
  } finally {
    local.close();
  }
}

/** The station's projects by name: all, or the active ones only. */
function stationProjects(dir: string, activeOnly = false): string[] {
  const local = openReadonly(dir);
  try {
    return local
      .prepare(`SELECT name FROM projects ${activeOnly ? 'WHERE active = 1' : ''} ORDER BY name`)
      .pluck()
      .all() as string[];
  } finally {
    local.close();
  }
}

async function registerStation(name: string, tool = 'SEM'): Promise<string> {
  return createStationKey(serverDir, name, tool);
}

async function launch(
  dir: string,
  url: string,
  key: string,
  env: NodeJS.ProcessEnv = {},
): Promise<StationProcess> {
  const st = await startStation(dir, { ...FAST, ...env }, ['--server', url, '--key', key]);
  running.add(st);
  return st;
}

async function stop(st: StationProcess): Promise<void> {
  await st.stop();
  running.delete(st);
}

function openReadonly(dir: string): Database.Database {
  return new Database(join(dir, 'labstation.db'), { readonly: true, fileMustExist: true });
}

interface EventRow {
  uuid: string;
  start: string;
  end: string | null;
  pre_run_data: string;
  run_data: string;
  version: number;
}

const EVENT_COLUMNS = 'uuid, start, "end", pre_run_data, run_data, version';
/** The server keeps the station's own version apart from its own count of changes. */
const SERVER_EVENT_COLUMNS =
  'uuid, start, "end", pre_run_data, run_data, station_version AS version';

function serverEvent(uuid: string): (EventRow & { station_id: number }) | undefined {
  return serverDb
    .prepare(`SELECT ${SERVER_EVENT_COLUMNS}, station_id FROM usage_events WHERE uuid = ?`)
    .get(uuid) as (EventRow & { station_id: number }) | undefined;
}

function outboxCount(dir: string): number {
  const db = openReadonly(dir);
  try {
    return db.prepare('SELECT count(*) FROM outbox').pluck().get() as number;
  } finally {
    db.close();
  }
}

function stationEvents(dir: string): EventRow[] {
  const db = openReadonly(dir);
  try {
    return db
      .prepare(`SELECT ${EVENT_COLUMNS} FROM usage_events ORDER BY uuid`)
      .all() as EventRow[];
  } finally {
    db.close();
  }
}

async function ok(
  st: StationProcess,
  name: string,
  args: unknown,
): Promise<Record<string, unknown>> {
  const res = await st.rpc(name, args);
  expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body as Record<string, unknown>;
}

async function enable(st: StationProcess): Promise<string> {
  const body = await ok(st, 'toolControl.enable', {
    tool: 'SEM',
    project: 'Cathodes',
    answers: goodPreAnswers,
  });
  return (body.usage as { uuid: string }).uuid;
}

async function disable(st: StationProcess, notes?: string): Promise<void> {
  await ok(st, 'toolControl.disable', {
    tool: 'SEM',
    answers: notes === undefined ? { problem: 'No' } : { problem: 'No', notes },
  });
}

async function push(key: string, records: unknown[]): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${server.url}sync/push`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Station ${key}` },
    body: JSON.stringify({ records }),
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  serverDir = join(tempDir(), 'server');
  await importIntoServer(serverBundle());
  server = await startServer(serverDir);
  serverDb = openReadonly(serverDir);
});

afterAll(async () => {
  await Promise.allSettled([...running].map((st) => st.stop()));
  await Promise.allSettled([...proxies].map((p) => p.close()));
  serverDb?.close();
  await server?.stop();
});

describe('station sync', () => {
  let keyA: string;

  it('refuses a missing or wrong station key with 401 and a detail', async () => {
    keyA = await registerStation('sem-a');
    for (const authorization of [undefined, 'Station not-a-key', `Token ${keyA}`]) {
      const res = await fetch(`${server.url}sync/changes?cursor=0`, {
        headers: authorization ? { authorization } : {},
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ detail: expect.any(String) as string });
    }
    const good = await fetch(`${server.url}sync/changes?cursor=0`, {
      headers: { authorization: `Station ${keyA}` },
    });
    expect(good.status).toBe(200);
    expect(await good.json()).toMatchObject({
      full: true,
      station: { name: 'sem-a', tool: 'SEM' },
    });
    const seen = serverDb
      .prepare("SELECT last_seen_at FROM stations WHERE name = 'sem-a'")
      .pluck()
      .get();
    expect(seen).toEqual(expect.any(String));
  });

  it('an empty station gets its facility from the server; usage shows there while active, then ends', async () => {
    const dir = join(tempDir(), 'station-a');
    const st = await launch(dir, server.url, keyA);
    const info = await ok(st, 'station.info', {});
    expect(info.tool).toBe('SEM');
    const status = await ok(st, 'toolControl.status', { tool: 'SEM' });
    expect(status).toMatchObject({ state: 'idle', tool: { name: 'SEM' } });
    // The station holds the server's uuids for what it received.
    const local = openReadonly(dir);
    const serverUuids = serverDb.prepare('SELECT uuid FROM users ORDER BY uuid').pluck().all();
    expect(local.prepare('SELECT uuid FROM users ORDER BY uuid').pluck().all()).toEqual(
      serverUuids,
    );
    local.close();

    // The PIN hash came from the server: alice logs on with her PIN.
    await ok(st, 'session.logon', { login: 'alice', pin: '1234' });
    expect((await st.rpc('session.logon', { login: 'alice', pin: '0000' })).status).not.toBe(200);
    await ok(st, 'session.logon', { login: '100200', pin: '1234' });
    const uuid = await enable(st);
    const active = await waitFor('the active usage on the server', () => serverEvent(uuid));
    expect(active.end).toBeNull();
    expect(active.pre_run_data).toBe(stationEvents(dir).find((e) => e.uuid === uuid)!.pre_run_data);

    await disable(st, 'all good');
    const ended = await waitFor('the end of the usage on the server', () =>
      serverEvent(uuid)?.end ? serverEvent(uuid) : undefined,
    );
    const mine = stationEvents(dir).find((e) => e.uuid === uuid)!;
    expect(ended).toMatchObject({ ...mine });
    const withdrawals = serverDb
      .prepare(
        `SELECT w.consumable, w.quantity FROM consumable_withdrawals w
         JOIN usage_events e ON e.id = w.usage_event_id WHERE e.uuid = ? ORDER BY w.quantity`,
      )
      .all(uuid);
    expect(withdrawals).toEqual([
      { consumable: 'SEM stub', quantity: 2 },
      { consumable: 'SEM stub', quantity: 3 },
    ]);
    await waitFor('an empty outbox', () => (outboxCount(dir) === 0 ? true : undefined));
    // What the station's screen shows about its link to the server.
    const sync = await waitFor('sync status with nothing waiting', async () => {
      const s = (await ok(st, 'sync.status', {})) as { waiting: number; online: boolean };
      return s.online && s.waiting === 0 ? s : undefined;
    });
    expect(sync).toMatchObject({ configured: true, online: true, waiting: 0, lastError: null });
    expect(Date.parse((sync as unknown as { lastSyncAt: string }).lastSyncAt)).not.toBeNaN();
    // One machine, one clock: measured from the server's Date header, within its second.
    expect(
      Math.abs((sync as unknown as { clockSkewSeconds: number }).clockSkewSeconds),
    ).toBeLessThanOrEqual(2);
    await stop(st);
  });

  it('push is idempotent, rejects stale versions, and stops a batch at an unknown reference', async () => {
    const row = serverDb
      .prepare(
        `SELECT e.uuid, e.station_version AS version, e.start, e."end", e.pre_run_data, e.run_data, u.uuid AS user_uuid,
           p.uuid AS project_uuid, t.uuid AS tool_uuid
         FROM usage_events e JOIN users u ON u.id = e.user_id JOIN projects p ON p.id = e.project_id
         JOIN tools t ON t.id = e.tool_id ORDER BY e.id LIMIT 1`,
      )
      .get() as EventRow & { user_uuid: string; project_uuid: string; tool_uuid: string };
    const payload = {
      uuid: row.uuid,
      user_uuid: row.user_uuid,
      operator_uuid: row.user_uuid,
      project_uuid: row.project_uuid,
      tool_uuid: row.tool_uuid,
      start: row.start,
      end: row.end,
      validated: 0,
      remote_work: 0,
      pre_run_data: row.pre_run_data,
      run_data: row.run_data,
      post_usage_pending: 0,
      reminder_due: 0,
      version: row.version,
    };
    const before = serverEvent(row.uuid);
    const same = await push(keyA, [{ id: 1, kind: 'usage_event', uuid: row.uuid, payload }]);
    expect(same).toEqual({ status: 200, body: { acked: [1], stale: [], error: null } });
    const stale = await push(keyA, [
      {
        id: 2,
        kind: 'usage_event',
        uuid: row.uuid,
        payload: { ...payload, version: 1, end: null, run_data: '' },
      },
    ]);
    expect(stale.body).toEqual({ acked: [2], stale: [2], error: null });
    expect(serverEvent(row.uuid)).toEqual(before);
    // The same version saying otherwise (a station restored from a backup that ended the
    // event anew) is refused by name, and the server keeps what it had.
    const other = await push(keyA, [
      {
        id: 6,
        kind: 'usage_event',
        uuid: row.uuid,
        payload: { ...payload, end: '2099-01-01T00:00:00.000Z' },
      },
    ]);
    expect(other.body).toMatchObject({
      acked: [],
      error: {
        id: 6,
        code: 'conflict',
        detail: expect.stringContaining('was this station restored from a backup?') as string,
      },
    });
    expect(serverEvent(row.uuid)).toEqual(before);

    const stranger = '01900000-0000-7000-8000-000000000000';
    const fresh = '01900000-0000-7000-8000-000000000001';
    const blocked = await push(keyA, [
      { id: 3, kind: 'usage_event', uuid: row.uuid, payload },
      {
        id: 4,
        kind: 'usage_event',
        uuid: fresh,
        payload: { ...payload, uuid: fresh, user_uuid: stranger },
      },
      { id: 5, kind: 'usage_event', uuid: fresh, payload: { ...payload, uuid: fresh } },
    ]);
    expect(blocked.status).toBe(200);
    expect(blocked.body).toMatchObject({
      acked: [3],
      error: {
        id: 4,
        code: 'unknown_reference',
        detail: expect.stringContaining(stranger) as string,
      },
    });
    expect(serverEvent(fresh)).toBeUndefined();

    const otherKey = await registerStation('sem-other');
    const foreign = await push(otherKey, [
      { id: 1, kind: 'usage_event', uuid: row.uuid, payload: { ...payload, version: 99 } },
    ]);
    expect(foreign.body).toMatchObject({ acked: [], error: { code: 'forbidden' } });
  });

  let dirB: string;
  let keyB: string;

  it('through a proxy that cuts connections mid-request, the server ends with exactly the station events', async () => {
    keyB = await registerStation('sem-b');
    dirB = join(tempDir(), 'station-b');
    const target = new URL(server.url);
    const proxy = await startFaultProxy({
      host: target.hostname,
      port: Number(target.port),
      maxCuts: 30,
      probability: 0.3,
    });
    proxies.add(proxy);
    const st = await launch(dirB, proxy.url, keyB);
    await ok(st, 'session.logon', { login: 'alice', pin: '1234' });
    // At least 10 cycles, and more (bounded) until connections were cut both ways.
    let cycles = 0;
    while (cycles < 10 || ((proxy.cutsUp === 0 || proxy.cutsDown === 0) && cycles < 60)) {
      await enable(st);
      await disable(st, `cycle ${cycles}: ✓ µm "quoted" \\ ${'x'.repeat(cycles * 50)}`);
      cycles += 1;
    }
    await waitFor(
      'the station outbox to drain through the proxy',
      () => (outboxCount(dirB) === 0 ? true : undefined),
      60_000,
    );
    // Cuts on the way in (request lost or half-sent) and on the way back (stored, answer lost).
    expect(proxy.cutsUp).toBeGreaterThan(0);
    expect(proxy.cutsDown).toBeGreaterThan(0);
    const mine = stationEvents(dirB);
    expect(mine).toHaveLength(cycles);
    const stationId = serverDb
      .prepare("SELECT id FROM stations WHERE name = 'sem-b'")
      .pluck()
      .get();
    const theirs = serverDb
      .prepare(
        `SELECT ${SERVER_EVENT_COLUMNS} FROM usage_events WHERE station_id = ? ORDER BY uuid`,
      )
      .all(stationId) as EventRow[];
    expect(theirs).toEqual(mine);
    const withdrawals = serverDb
      .prepare(`SELECT count(*) FROM consumable_withdrawals WHERE station_id = ?`)
      .pluck()
      .get(stationId);
    expect(withdrawals).toBe(cycles * 2);
    await stop(st);
    await proxy.close();
    proxies.delete(proxy);
  }, 120_000);

  it('a station killed between the server storing a push and its acknowledgement loses and duplicates nothing', async () => {
    const doomed = await launch(dirB, server.url, keyB, {
      LABSTATION_FAILPOINT: 'sync.push.before-ack',
    });
    await ok(doomed, 'session.logon', { login: 'alice', pin: '1234' });
    const uuid = await enable(doomed);
    const exit = await doomed.exited;
    running.delete(doomed);
    expect(exit.signal).toBe('SIGKILL');
    // The server stored the batch; the station never learned it, so its rows are still queued.
    expect(serverEvent(uuid)?.end).toBeNull();
    expect(outboxCount(dirB)).toBe(3);

    const st = await launch(dirB, server.url, keyB);
    await waitFor('the resend to be acknowledged', () =>
      outboxCount(dirB) === 0 ? true : undefined,
    );
    expect(
      serverDb.prepare('SELECT count(*) FROM usage_events WHERE uuid = ?').pluck().get(uuid),
    ).toBe(1);
    expect(
      serverDb
        .prepare(
          `SELECT count(*) FROM consumable_withdrawals w JOIN usage_events e ON e.id = w.usage_event_id
           WHERE e.uuid = ?`,
        )
        .pluck()
        .get(uuid),
    ).toBe(2);
    await ok(st, 'session.logon', { login: 'alice', pin: '1234' });
    await disable(st);
    await waitFor('the end on the server', () => (serverEvent(uuid)?.end ? true : undefined));
    const theirs = serverDb
      .prepare(
        `SELECT ${SERVER_EVENT_COLUMNS} FROM usage_events WHERE station_id = (SELECT id FROM stations WHERE name = 'sem-b') ORDER BY uuid`,
      )
      .all();
    expect(theirs).toEqual(stationEvents(dirB));

    // Config changes made on the server reach the online station within seconds (long-poll).
    const bundle = serverBundle();
    const tools = bundle.tools as {
      name: string;
      pre_usage_questions: Record<string, unknown>[];
    }[];
    tools[0].pre_usage_questions[0] = {
      ...tools[0].pre_usage_questions[0],
      title: 'Consent, v2',
    };
    (bundle.users as Record<string, unknown>[]).push({
      username: 'dora',
      pin: '4321',
      projects: ['Cathodes'],
      qualified_tools: ['SEM'],
    });
    const changedAt = Date.now();
    await importIntoServer(bundle);
    await waitFor(
      'the new question title on the station',
      async () => {
        const status = (await st.rpc('toolControl.status', { tool: 'SEM' })).body as {
          tool: { pre_usage_questions: { title?: string }[] };
        };
        return status.tool.pre_usage_questions[0]?.title === 'Consent, v2' ? true : undefined;
      },
      10_000,
    );
    expect(Date.now() - changedAt).toBeLessThan(10_000);
    await ok(st, 'session.logon', { login: 'dora', pin: '4321' });
    await stop(st);
  }, 60_000);
});

describe('a short outage', () => {
  it('shows the station online again as soon as the server answers', async () => {
    const key = await registerStation('sem-outage');
    // A forwarder that can be taken away and put back on the same port.
    const cable = await startTcpCable(Number(new URL(server.url).port));
    try {
      const st = await launch(join(tempDir(), 'station-outage'), cable.url, key);
      const status = async () => (await ok(st, 'sync.status', {})) as { online: boolean };
      await waitFor('online', async () => ((await status()).online ? true : undefined));
      await cable.unplug();
      await waitFor('offline', async () => ((await status()).online ? undefined : true), 15_000);
      await cable.plugIn();
      // Its next pull answers at once; a held one (25 s) kept it "offline" meanwhile.
      await waitFor(
        'online again',
        async () => ((await status()).online ? true : undefined),
        8_000,
      );
      await stop(st);
    } finally {
      cable.close();
    }
  });

  it('waits longer after each failed attempt while the server is unreachable, then catches up', async () => {
    const key = await registerStation('sem-backoff');
    // A cable that can refuse: each connection made while it does is counted and cut at once.
    const cable = await startTcpCable(Number(new URL(server.url).port));
    const dir = join(tempDir(), 'station-backoff');
    try {
      const st = await launch(dir, cable.url, key);
      const status = async () => (await ok(st, 'sync.status', {})) as { online: boolean };
      await waitFor('online', async () => ((await status()).online ? true : undefined));
      cable.refuse();
      await ok(st, 'session.logon', { login: 'alice', pin: '1234' });
      const uuid = await enable(st);
      expect(outboxCount(dir)).toBeGreaterThan(0);
      // Pushes and pulls both fail for 4 s. With the backoff (500 ms doubling, capped at 1.5 s
      // here) that is about five attempts each; retrying at once would be hundreds.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      expect(cable.refused).toBeGreaterThan(2);
      expect(cable.refused).toBeLessThan(30);
      expect((await status()).online).toBe(false);
      cable.accept();
      await waitFor(
        'the usage on the server',
        () => (outboxCount(dir) === 0 && serverEvent(uuid) ? true : undefined),
        10_000,
      );
      await stop(st);
    } finally {
      cable.close();
    }
  });
});

describe('a push that goes through after failures', () => {
  it('starts the backoff over, the outbox not yet empty: the next failure waits the shortest delay again', async () => {
    // Pushes are answered 503 by the proxy while it refuses, except those it is told to let
    // through; pulls go through. The station logs the delay it chose before each next push (at
    // debug): read there, with the time it logged it; nothing is timed.
    let refusing = false;
    let letThrough = 0;
    let passedAt = Infinity;
    const forward = forwardTo(new URL(server.url));
    const proxy = await startHttpProxy((request, response) => {
      if (refusing && request.url === '/sync/push') {
        if (letThrough === 0) {
          request.resume();
          response.writeHead(503, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ detail: 'pushes refused by the test' }));
          return;
        }
        letThrough -= 1;
        passedAt = Date.now();
      }
      forward(request, response);
    });
    const dir = join(tempDir(), 'station-backoff-reset');
    try {
      const key = await registerStation('sem-backoff-reset');
      const st = await launch(dir, proxy.url, key, { LABSTATION_LOG_LEVEL: 'debug' });
      const failures = (): { time: number; retryInMs: number }[] =>
        st
          .stderr()
          .split('\n')
          .filter((line) => line.includes('"sync: push failed"'))
          .map((line) => JSON.parse(line) as { time: number; retryInMs: number });
      await waitFor('online', async () =>
        ((await ok(st, 'sync.status', {})) as { online: boolean }).online ? true : undefined,
      );
      refusing = true;
      await ok(st, 'session.logon', { login: 'alice', pin: '1234' });
      // More than a batch (100 records) queued, every push failing meanwhile.
      let uuid = '';
      for (let cycle = 0; outboxCount(dir) <= 100; cycle += 1) {
        expect(cycle).toBeLessThan(80);
        uuid = await enable(st);
        await disable(st);
      }
      // The ceiling doubled from 500 ms to the cap (1.5 s here); each delay is half of it or more.
      const before = await waitFor('four failed pushes', () =>
        failures().length >= 4 ? failures() : undefined,
      );
      expect(before[before.length - 1]?.retryInMs).toBeGreaterThanOrEqual(750);

      // One push goes through (the first 100 records); the next, of the rest, fails.
      letThrough = 1;
      const next = await waitFor('a push failed after one went through', () =>
        failures().find((failure) => failure.time > passedAt),
      );
      // Within the base ceiling (500 ms), not 750 ms or more as the failures before would give.
      expect(next.retryInMs).toBeLessThanOrEqual(500);
      refusing = false;
      await waitFor(
        'every usage on the server',
        () => (outboxCount(dir) === 0 && serverEvent(uuid)?.end ? true : undefined),
        30_000,
      );
      await stop(st);
    } finally {
      await proxy.close();
    }
  });
});

describe("a station whose clock is off the server's", () => {
  it('measures the difference from every answer and says so past a minute', async () => {
    // An HTTP proxy to the server whose answers say the server's clock is 10 minutes ahead.
    let ahead = 10 * 60_000;
    const proxy = await startHttpProxy(
      forwardTo(new URL(server.url), (answer, response) => {
        response.writeHead(answer.statusCode ?? 502, {
          ...answer.headers,
          date: new Date(Date.now() + ahead).toUTCString(),
        });
        answer.pipe(response);
      }),
    );
    const url = proxy.url;
    try {
      const st = await launch(join(tempDir(), 'skewed'), url, await registerStation('sem-skew'));
      const skewOf = async (): Promise<number | null> =>
        ((await ok(st, 'sync.status', {})) as { clockSkewSeconds: number | null }).clockSkewSeconds;
      const behind = await waitFor('a measured skew', async () => {
        const skew = await skewOf();
        return skew !== null && skew < -60 ? skew : undefined;
      });
      expect(behind).toBeGreaterThanOrEqual(-602);
      expect(behind).toBeLessThanOrEqual(-598);
      await waitFor('the warning in the log', () =>
        st.stderr().includes("this station's clock is 10 min behind the server's")
          ? true
          : undefined,
      );
      // Set right: the next answer measures it again, and the log says so.
      ahead = 0;
      await ok(st, 'session.logon', { login: 'alice', pin: '1234' });
      await enable(st);
      await waitFor('the skew measured again', async () => {
        const skew = await skewOf();
        return skew !== null && Math.abs(skew) <= 2 ? true : undefined;
      });
      await stop(st);
    } finally {
      await proxy.close();
    }
  });

  it('deletes only the rows it sent when an answer acknowledges more', async () => {
    // An HTTP proxy that holds the first push answer while the station queues more, then
    // acknowledges ids past those it was sent: rows it never sent must stay queued.
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let pushAtProxy: () => void = () => undefined;
    const pushed = new Promise<void>((resolve) => (pushAtProxy = resolve));
    let held = false;
    const proxy = await startHttpProxy(
      // The station sends one push at a time: the first answer to one is the first push's.
      forwardTo(new URL(server.url), (answer, response, request) => {
        if (request.url !== '/sync/push' || held) {
          passOn(answer, response, request);
          return;
        }
        held = true;
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          pushAtProxy();
          void released.then(() => {
            const body = JSON.parse(Buffer.concat(chunks).toString()) as PushResult;
            const top = Math.max(...body.acked);
            body.acked = [...body.acked, ...Array.from({ length: 20 }, (_, i) => top + 1 + i)];
            const text = JSON.stringify(body);
            response.writeHead(answer.statusCode ?? 502, {
              ...answer.headers,
              'content-length': Buffer.byteLength(text),
            });
            response.end(text);
          });
        });
      }),
    );
    const url = proxy.url;
    const dir = join(tempDir(), 'over-acked');
    try {
      const st = await launch(dir, url, await registerStation('sem-over-acked'));
      await waitFor('online', async () =>
        ((await ok(st, 'sync.status', {})) as { online: boolean }).online ? true : undefined,
      );
      await ok(st, 'session.logon', { login: 'alice', pin: '1234' });
      const uuid = await enable(st);
      await pushed;
      await disable(st);
      const queued = outboxCount(dir);
      release();
      await waitFor(
        'the end of the usage on the server',
        () => (outboxCount(dir) === 0 && serverEvent(uuid)?.end ? true : undefined),
        10_000,
      );
      expect(queued).toBeGreaterThan(3);
      expect(stationEvents(dir)).toEqual([
        expect.objectContaining({ uuid, end: serverEvent(uuid)?.end }),
      ]);
      await stop(st);
    } finally {
      release();
      await proxy.close();
    }
  });
});

describe('a server restored from a backup', () => {
  it('gives a station whose cursor it numbered anew the whole facility, not a gap', async () => {
    const key = await registerStation('sem-restore');
    const dir = join(tempDir(), 'station-restore');
    const project = (name: string) =>
      writable
        .prepare(
          `INSERT INTO projects (uuid, name, created_at, updated_at)
         VALUES (lower(hex(randomblob(16))), ?, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`,
        )
        .run(name);
    const writable = new Database(join(serverDir, 'labstation.db'));
    writable.pragma('busy_timeout = 5000');
    try {
      let st = await launch(dir, server.url, key);
      await ok(st, 'station.info', {});
      await stop(st);
      // The backup is taken here, at change `backup`; then six projects, which the station pulls.
      const backup = writable.prepare('SELECT max(seq) FROM sync_changes').pluck().get() as number;
      for (const n of [1, 2, 3, 4, 5, 6]) project(`BK${n}`);
      st = await launch(dir, server.url, key);
      await waitFor('BK6 at the station', () =>
        stationProjects(dir).includes('BK6') ? true : undefined,
      );
      await stop(st);
      // The backup is put back (its changes end at `backup`, its numbers go on from there)...
      writable.exec(`DELETE FROM projects WHERE name LIKE 'BK%'`);
      writable.prepare('DELETE FROM sync_changes WHERE seq > ?').run(backup);
      writable
        .prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'sync_changes'")
        .run(backup);
      // ...and eight projects are made: the station's cursor is one of their numbers now.
      for (const n of [1, 2, 3, 4, 5, 6, 7, 8]) project(`R${n}`);
      st = await launch(dir, server.url, key);
      await waitFor('R1 to R8 at the station', () =>
        ['R1', 'R2', 'R3', 'R4', 'R5', 'R6', 'R7', 'R8'].every((n) =>
          stationProjects(dir, true).includes(n),
        )
          ? true
          : undefined,
      );
      // What the restored server no longer has is no longer offered.
      expect(stationProjects(dir, true).filter((n) => n.startsWith('BK'))).toEqual([]);
      await stop(st);

      // Harder: the same record changed at the same numbers before and after the restore (an
      // edit lost with the backup, made again otherwise). Only the change's nonce differs.
      const firstName = () => {
        const local = openReadonly(dir);
        try {
          return local
            .prepare("SELECT first_name FROM users WHERE username = 'alice'")
            .pluck()
            .get() as string;
        } finally {
          local.close();
        }
      };
      const rename = (name: string) =>
        writable.prepare("UPDATE users SET first_name = ? WHERE username = 'alice'").run(name);
      const before = writable.prepare('SELECT max(seq) FROM sync_changes').pluck().get() as number;
      rename('Lost');
      st = await launch(dir, server.url, key);
      await waitFor('the lost edit at the station', () =>
        firstName() === 'Lost' ? true : undefined,
      );
      await stop(st);
      writable.prepare('DELETE FROM sync_changes WHERE seq > ?').run(before);
      writable
        .prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'sync_changes'")
        .run(before);
      rename('Redone');
      expect(writable.prepare('SELECT max(seq) FROM sync_changes').pluck().get()).toBe(
        syncedCursor(dir),
      );
      st = await launch(dir, server.url, key);
      await waitFor('the edit made again at the station', () =>
        firstName() === 'Redone' ? true : undefined,
      );
      await stop(st);
    } finally {
      writable.close();
    }
  });
});

/**
 * A station that runs on its own (no server yet) with a person only it knows, in the
 * facility's Cathodes project and qualified on SEM, logged on.
 */
async function stationWithOwnPerson(
  name: string,
  username: string,
  pin: string,
): Promise<{ dir: string; alone: StationProcess }> {
  const dir = join(tempDir(), name);
  const bundle = facilityBundle();
  (bundle.users as Record<string, unknown>[]).push({
    username,
    pin,
    projects: ['Cathodes'],
    qualified_tools: ['SEM'],
  });
  const file = writeJson(tempDir(), `${name}.json`, bundle);
  const imported = await runCli(['import', '--data', dir, file]);
  expect(imported.code, imported.stderr).toBe(0);
  const alone = await startStation(dir, FAST);
  running.add(alone);
  await ok(alone, 'session.logon', { login: username, pin });
  return { dir, alone };
}

/**
 * The server loses a usage event and its withdrawals, as a restore from a backup taken before
 * it came would; `also` changes what else that backup held.
 */
function loseOnServer(usage: string, also?: (writable: Database.Database) => void): void {
  const writable = new Database(join(serverDir, 'labstation.db'));
  try {
    writable.pragma('busy_timeout = 5000');
    writable.pragma('foreign_keys = OFF');
    writable
      .prepare(
        'DELETE FROM consumable_withdrawals WHERE usage_event_id IN (SELECT id FROM usage_events WHERE uuid = ?)',
      )
      .run(usage);
    writable.prepare('DELETE FROM usage_events WHERE uuid = ?').run(usage);
    also?.(writable);
  } finally {
    writable.close();
  }
}

describe('records the server refuses', () => {
  it('sets a refused record aside so the rest still goes, and sends it once the server has what it names', async () => {
    // A station that ran on its own, with a person the server does not know (dave).
    const { dir, alone } = await stationWithOwnPerson('station-own', 'dave', '4444');
    const daves = await enable(alone);
    await disable(alone);
    await ok(alone, 'session.logon', { login: 'alice', pin: '1234' });
    // A notebook field named __proto__ is a field like any other (spec 001 leaves names free).
    const made = await ok(alone, 'notebook.create', {
      kind: 'experiment',
      title: 'Odd field name',
      metadata: '{"extra_fields": {"__proto__": {"type": "text", "value": "kept"}}}',
    });
    const entryUuid = (made.entry as { uuid: string }).uuid;
    const alices = await enable(alone);
    await disable(alone);
    await stop(alone);

    const key = await registerStation('sem-own');
    const st = await launch(dir, server.url, key);
    await waitFor(
      "alice's usage on the server",
      () => serverEvent(alices)?.end ?? undefined,
      15_000,
    );
    const entry = await waitFor('the notebook entry on the server', () =>
      serverDb
        .prepare('SELECT metadata FROM notebook_entries WHERE uuid = ?')
        .pluck()
        .get(entryUuid),
    );
    expect(JSON.parse(entry as string)).toEqual({
      extra_fields: JSON.parse('{"__proto__": {"type": "text", "value": "kept"}}') as unknown,
    });
    expect(serverEvent(daves)).toBeUndefined();
    // Why is for staff: it names people and their usage.
    await ok(st, 'session.logon', { login: 'sam', pin: '9999' });
    const held = await waitFor('the refused records set aside', async () => {
      const s = (await ok(st, 'sync.status', {})) as {
        waiting: number;
        refused: number;
        refusedReason: string | null;
        lastError: string | null;
      };
      // (Records pushed before the first pull named this station's own uuid of the SEM; the
      // pull gives them the server's, and they go again.)
      return s.refused > 0 && s.waiting === s.refused && /user_uuid/.test(s.refusedReason ?? '')
        ? s
        : undefined;
    });
    // The reason names the person, not only the uuid the server knows.
    expect(held.refusedReason).toMatch(
      /refused: user_uuid: no record \S+ \(person "dave"\) on the server/,
    );
    expect(held.lastError).toMatch(
      /^\d+ records? refused by the server \(set aside, offered again later; the rest still goes\)$/,
    );
    await ok(st, 'session.logon', { login: 'alice', pin: '1234' });
    expect(await ok(st, 'sync.status', {})).toMatchObject({
      refused: held.refused,
      refusedReason: null,
    });
    // Set aside for ten minutes after a first refusal, each record once.
    const local = openReadonly(dir);
    try {
      const rows = local
        .prepare('SELECT held_until, refusals, refusal_code FROM outbox WHERE refusal IS NOT NULL')
        .all() as { held_until: string; refusals: number; refusal_code: string }[];
      expect(rows.length).toBe(held.refused);
      for (const row of rows) {
        expect(row.refusal_code).toBe('unknown_reference');
        expect(Date.parse(row.held_until) - Date.now()).toBeGreaterThan(5 * 60_000);
      }
    } finally {
      local.close();
    }

    // An admin adds dave on the server: the station hears of it and sends his records.
    const withDave = serverBundle();
    (withDave.users as Record<string, unknown>[]).push({
      username: 'dave',
      pin: '4444',
      projects: ['Cathodes'],
      qualified_tools: ['SEM'],
    });
    await importIntoServer(withDave);
    await waitFor("dave's usage on the server", () => serverEvent(daves)?.end ?? undefined, 20_000);
    const done = await waitFor('nothing waiting', async () => {
      const s = (await ok(st, 'sync.status', {})) as { waiting: number; refused: number };
      return s.waiting === 0 ? s : undefined;
    });
    expect(done).toMatchObject({ waiting: 0, refused: 0, refusedReason: null, lastError: null });
    await stop(st);
  }, 90_000);

  it('sends again a usage the server lost (a new or restored server), then what names it', async () => {
    const dir = join(tempDir(), 'station-lost');
    const key = await registerStation('sem-lost');
    const st = await launch(dir, server.url, key);
    await ok(st, 'session.logon', { login: 'alice', pin: '1234' });
    const usage = await enable(st);
    await disable(st);
    await waitFor('the usage on the server', () => serverEvent(usage)?.end ?? undefined);
    await waitFor('the outbox empty', () => (outboxCount(dir) === 0 ? true : undefined));
    // The server loses it, as one restored from a backup taken before it would (or a new
    // install): the station has it, and no longer queued.
    loseOnServer(usage);
    expect(serverEvent(usage)).toBeUndefined();
    // alice links an experiment to that usage afterwards: the entry names it.
    const made = await ok(st, 'notebook.create', { kind: 'experiment', title: 'Linked later' });
    const entry = made.entry as { id: number; uuid: string };
    await ok(st, 'notebook.attachUsage', { id: entry.id, usage });
    await waitFor('the usage on the server again', () => serverEvent(usage)?.end ?? undefined);
    const linked = await waitFor('the entry on the server, linked to the usage', () =>
      serverDb
        .prepare(
          `SELECT e.uuid FROM notebook_entries n JOIN usage_events e ON e.id = n.usage_event_id
           WHERE n.uuid = ?`,
        )
        .pluck()
        .get(entry.uuid),
    );
    expect(linked).toBe(usage);
    expect(serverEvent(usage)).toMatchObject(stationEvents(dir).find((e) => e.uuid === usage)!);
    await waitFor('the outbox empty again', () => (outboxCount(dir) === 0 ? true : undefined));
    await stop(st);
  }, 60_000);

  it('sends again records taken late (set aside, then taken after rows of higher ids) that a restored server lost', async () => {
    // fred is known to this station only: his usage is set aside while alice's goes.
    const { dir, alone } = await stationWithOwnPerson('station-late', 'fred', '6666');
    const freds = await enable(alone);
    await disable(alone);
    await ok(alone, 'session.logon', { login: 'alice', pin: '1234' });
    const alices = await enable(alone);
    await disable(alone);
    await stop(alone);
    const st = await launch(dir, server.url, await registerStation('sem-late'));
    await waitFor("alice's usage on the server", () => serverEvent(alices)?.end ?? undefined);
    await waitFor("fred's usage set aside", async () => {
      const s = (await ok(st, 'sync.status', {})) as { waiting: number; refused: number };
      return s.refused > 0 && s.waiting === s.refused ? true : undefined;
    });
    const counts = () =>
      serverDb
        .prepare(
          "SELECT install_acked_through, install_ack_seq FROM stations WHERE name = 'sem-late'",
        )
        .get() as { install_acked_through: number; install_ack_seq: number };
    // A backup of the server would hold these counts, and not fred's usage.
    const atBackup = counts();
    const people = (): Record<string, unknown> => {
      const bundle = serverBundle();
      for (const [username, pin] of [
        ['dave', '4444'],
        ['fred', '6666'],
      ]) {
        (bundle.users as Record<string, unknown>[]).push({
          username,
          pin,
          projects: ['Cathodes'],
          qualified_tools: ['SEM'],
        });
      }
      return bundle;
    };
    await importIntoServer(people());
    await waitFor("fred's usage on the server", () => serverEvent(freds)?.end ?? undefined, 20_000);
    await waitFor('the outbox empty', () => (outboxCount(dir) === 0 ? true : undefined));
    // Taken late, below the highest id taken: that id did not move, the push count did.
    const after = counts();
    expect(after.install_acked_through).toBe(atBackup.install_acked_through);
    expect(after.install_ack_seq).toBeGreaterThan(atBackup.install_ack_seq);

    // The server is restored from that backup: fred's usage and the push that took it are lost.
    loseOnServer(freds, (writable) =>
      writable
        .prepare("UPDATE stations SET install_ack_seq = ? WHERE name = 'sem-late'")
        .run(atBackup.install_ack_seq),
    );
    expect(serverEvent(freds)).toBeUndefined();
    // The station's next push (of a notebook entry) hears the count.
    await ok(st, 'session.logon', { login: 'alice', pin: '1234' });
    await ok(st, 'notebook.create', { kind: 'experiment', title: 'After the restore' });
    await waitFor('fred’s usage on the server again', () => serverEvent(freds)?.end ?? undefined);
    expect(st.stderr()).toMatch(/the server no longer has records it took from this station/);
    expect(serverEvent(freds)).toMatchObject(stationEvents(dir).find((e) => e.uuid === freds)!);
    await waitFor('the outbox empty again', () => (outboxCount(dir) === 0 ? true : undefined));

    // Restored once more, from a backup made before the server numbered pushes at all (before
    // its upgrade): no number beside its count of ids. Every numbered push is lost to it.
    loseOnServer(freds, (writable) =>
      writable.prepare("UPDATE stations SET install_ack_seq = NULL WHERE name = 'sem-late'").run(),
    );
    await ok(st, 'notebook.create', { kind: 'experiment', title: 'After the second restore' });
    await waitFor(
      'fred’s usage on the server a third time',
      () => serverEvent(freds)?.end ?? undefined,
    );
    await stop(st);
  }, 90_000);

  it('sends again all it kept to a server restored from a backup made before its first push', async () => {
    const dir = join(tempDir(), 'station-first');
    const st = await launch(dir, server.url, await registerStation('sem-first'));
    await ok(st, 'session.logon', { login: 'alice', pin: '1234' });
    const usage = await enable(st);
    await disable(st);
    await waitFor('the usage on the server', () => serverEvent(usage)?.end ?? undefined);
    await waitFor('the outbox empty', () => (outboxCount(dir) === 0 ? true : undefined));
    // The backup knew the station (its key) but no push from this data dir: no count for it.
    loseOnServer(usage, (writable) =>
      writable
        .prepare(
          `UPDATE stations SET install_id = NULL, install_acked_through = NULL,
             install_ack_seq = NULL WHERE name = 'sem-first'`,
        )
        .run(),
    );
    expect(serverEvent(usage)).toBeUndefined();
    // The next push (of a notebook entry) hears there is no count: all kept goes again.
    await ok(st, 'notebook.create', { kind: 'experiment', title: 'After the restore' });
    await waitFor('the usage on the server again', () => serverEvent(usage)?.end ?? undefined);
    expect(st.stderr()).toMatch(/the server has no count of what it took from this station/);
    expect(serverEvent(usage)).toMatchObject(stationEvents(dir).find((e) => e.uuid === usage)!);
    await waitFor('the outbox empty again', () => (outboxCount(dir) === 0 ? true : undefined));
    await stop(st);
  }, 60_000);

  it('ends a hold set while the clock was ahead once the clock is right', async () => {
    // erin is known to this station only: her usage is refused, and set aside.
    const { dir, alone } = await stationWithOwnPerson('station-ahead', 'erin', '5555');
    const usage = await enable(alone);
    await stop(alone);
    const key = await registerStation('sem-ahead');
    const st = await launch(dir, server.url, key);
    type Held = { id: number; held_until: string; refusals: number };
    const held = (): Held | undefined => {
      const local = openReadonly(dir);
      try {
        return local
          .prepare(
            `SELECT id, held_until, refusals FROM outbox
             WHERE record_uuid = ? AND held_until IS NOT NULL`,
          )
          .get(usage) as Held | undefined;
      } finally {
        local.close();
      }
    };
    const first = await waitFor('her usage set aside', held);
    // As if set while the station's clock was 7 hours ahead (the longest hold is 6 hours).
    const local = new Database(join(dir, 'labstation.db'));
    try {
      local.pragma('busy_timeout = 5000');
      local
        .prepare('UPDATE outbox SET held_until = ? WHERE id = ?')
        .run(new Date(Date.now() + 7 * 3_600_000).toISOString(), first.id);
    } finally {
      local.close();
    }
    // Offered again at the next push, refused again, and held from now by the right clock.
    const again = await waitFor('her usage offered again', () => {
      const row = held();
      return row && row.refusals > first.refusals ? row : undefined;
    });
    expect(Date.parse(again.held_until) - Date.now()).toBeLessThan(6 * 3_600_000);
    await stop(st);
  }, 60_000);

  it('finds the record in a batch the server cannot read at all, and sets it aside alone', async () => {
    const dir = join(tempDir(), 'station-bad-row');
    const key = await registerStation('sem-bad-row');
    let st = await launch(dir, server.url, key);
    await ok(st, 'session.logon', { login: 'alice', pin: '1234' });
    await stop(st);
    // A row no server can take (its payload is not an object), between two good ones.
    const first = join(dir, 'labstation.db');
    const db = new Database(first);
    db.prepare(
      "INSERT INTO outbox (kind, record_uuid, payload, created_at) VALUES ('usage_event', '01900000-0000-7000-8000-00000000dead', '[1]', '2024-01-05T09:00:00Z')",
    ).run();
    db.close();
    st = await launch(dir, server.url, key);
    await ok(st, 'session.logon', { login: 'alice', pin: '1234' });
    const uuid = await enable(st);
    await disable(st);
    await waitFor(
      'the good usage on the server',
      () => serverEvent(uuid)?.end ?? undefined,
      15_000,
    );
    await ok(st, 'session.logon', { login: 'sam', pin: '9999' });
    const s = (await waitFor('the bad row set aside', async () => {
      const status = (await ok(st, 'sync.status', {})) as { waiting: number; refused: number };
      return status.waiting === 1 && status.refused === 1 ? status : undefined;
    })) as unknown as { refusedReason: string };
    expect(s.refusedReason).toMatch(/^server answered 400: records\.0\.payload: /);
    await stop(st);
  }, 60_000);
});

describe('what the server keeps of pushed usage events', () => {
  let key: string;
  let refs: UsageRefs;
  let n = 0;

  /** A usage event as a station pushes it, on the SEM, by alice for Cathodes. */
  function event(over: Record<string, unknown> = {}): Record<string, unknown> {
    n += 1;
    const uuid = `01900000-0000-7000-8000-${String(100_000 + n).padStart(12, '0')}`;
    return usagePayload(refs, uuid, '2024-01-05T09:00:00.000Z', over);
  }
  const record = (id: number, payload: Record<string, unknown>) => ({
    id,
    kind: 'usage_event',
    uuid: payload.uuid as string,
    payload,
  });

  beforeAll(async () => {
    key = await registerStation('sem-raw');
    refs = serverDb
      .prepare(
        `SELECT (SELECT uuid FROM users WHERE username = 'alice') AS user_uuid,
           (SELECT uuid FROM projects WHERE name = 'Cathodes') AS project_uuid,
           (SELECT uuid FROM tools WHERE name = 'SEM') AS tool_uuid`,
      )
      .get() as typeof refs;
  });

  it('stores times in UTC to the millisecond, so the API filters find them', async () => {
    const payload = event({
      start: '2024-01-05T12:00:00+02:00',
      end: '2024-01-05T13:30:00.5+02:00',
    });
    expect((await push(key, [record(1, payload)])).body).toEqual({
      acked: [1],
      stale: [],
      error: null,
    });
    expect(serverEvent(payload.uuid as string)).toMatchObject({
      start: '2024-01-05T10:00:00.000Z',
      end: '2024-01-05T11:30:00.500Z',
    });
    const token = lastLine(
      (await runCli(['admin', 'token', 'create', '--data', serverDir, '--user', 'sam@example.org']))
        .stdout,
    );
    const res = await fetch(
      `${server.url}api/usage_events/?start__gte=2024-01-05T10:00:00Z&start__lte=2024-01-05T10:00:00Z&end__lte=2024-01-05T11:30:00.5Z`,
      { headers: { authorization: `Token ${token}` } },
    );
    const page = (await res.json()) as { results: { start: string }[] };
    expect(page.results).toHaveLength(1);
  });

  it('refuses a time outside the years 0001 to 9999, which would not sort as text', async () => {
    const far = event({ start: '9999-12-31T23:00:00-05:00', end: '9999-12-31T23:30:00-05:00' });
    const res = (await push(key, [record(2, far)])).body as PushResult;
    expect(res.acked).toEqual([]);
    expect(res.error).toMatchObject({ id: 2, code: 'invalid' });
    expect(res.error?.detail).toBe(
      `usage_event ${far.uuid as string}: start: must fall within the years 0001 to 9999 (UTC)`,
    );
    expect(serverEvent(far.uuid as string)).toBeUndefined();
  });

  it('takes an active event of each of two stations on one tool', async () => {
    const other = await registerStation('sem-raw-2');
    const mine = event();
    const theirs = event();
    expect((await push(key, [record(1, mine)])).body).toMatchObject({ acked: [1], error: null });
    expect((await push(other, [record(1, theirs)])).body).toMatchObject({
      acked: [1],
      error: null,
    });
    expect(serverEvent(mine.uuid as string)?.end).toBeNull();
    expect(serverEvent(theirs.uuid as string)?.end).toBeNull();
  });

  it('refuses records for a tool the station does not run', async () => {
    const afm = await registerStation('afm-raw', 'AFM');
    const payload = event();
    const res = await push(afm, [record(7, payload)]);
    expect(res.body).toMatchObject({
      acked: [],
      error: {
        id: 7,
        code: 'forbidden',
        detail: expect.stringMatching(/does not run that tool/) as string,
      },
    });
    expect(serverEvent(payload.uuid as string)).toBeUndefined();

    // Nor can it move one of its own events to that tool, and then write for it.
    const mine = event();
    expect((await push(key, [record(8, mine)])).body).toMatchObject({ acked: [8], error: null });
    const afmUuid = serverDb.prepare("SELECT uuid FROM tools WHERE name = 'AFM'").pluck().get();
    const moved = await push(key, [record(9, { ...mine, tool_uuid: afmUuid, version: 2 })]);
    expect(moved.body).toMatchObject({
      acked: [],
      error: {
        id: 9,
        code: 'forbidden',
        detail: expect.stringMatching(/tool cannot change/) as string,
      },
    });
    expect(
      serverDb
        .prepare(
          'SELECT t.name FROM usage_events e JOIN tools t ON t.id = e.tool_id WHERE e.uuid = ?',
        )
        .pluck()
        .get(mine.uuid),
    ).toBe('SEM');
  });

  it('refuses a withdrawal, a problem report or a file hung on another tool’s usage', async () => {
    // A SEM usage; the AFM's station tries to hang its records on it (to bill it, or to read
    // the usage's person and answers back through its files' usage_context).
    const sem = event();
    expect((await push(key, [record(1, sem)])).body).toMatchObject({ acked: [1], error: null });
    const afm = await registerStation('afm-hang', 'AFM');
    const afmUuid = serverDb.prepare("SELECT uuid FROM tools WHERE name = 'AFM'").pluck().get();
    const id = (n: number) => `01900000-0000-7000-8000-${String(900_000 + n).padStart(12, '0')}`;
    const hung = [
      {
        kind: 'consumable_withdrawal',
        payload: {
          uuid: id(1),
          consumable: 'tips',
          quantity: 1,
          user_uuid: refs.user_uuid,
          project_uuid: refs.project_uuid,
          tool_uuid: afmUuid,
          usage_event_uuid: sem.uuid,
          question: 'tips',
          created_at: '2024-01-05T10:00:00.000Z',
        },
      },
      {
        kind: 'problem_report',
        payload: {
          uuid: id(2),
          tool_uuid: afmUuid,
          usage_event_uuid: sem.uuid,
          user_uuid: refs.user_uuid,
          question: 'problem',
          description: 'x',
          force_shutdown: 0,
          safety_hazard: 0,
          created_at: '2024-01-05T10:00:00.000Z',
        },
      },
      {
        kind: 'harvest_file',
        payload: {
          uuid: id(3),
          instrument_uuid: id(4),
          instrument: 'afm-cam',
          persistent_id: makeArk({ naan: '99999', shoulder: 'fk4' }, 'x7x7x7x7x7'),
          persistent_id_type: 'ark',
          source_path: '/d/a.tif',
          relative_path: 'a.tif',
          filename: 'a.tif',
          size: 1,
          mtime_ms: 0,
          xxhash: null,
          hash_algorithm: 'xxh3-128',
          first_discovered_at: '2024-01-05T10:00:00.000Z',
          usage_event_uuid: sem.uuid,
          metadata_: {},
          state: 'waiting',
          updated_at: '2024-01-05T10:00:00.000Z',
        },
      },
    ];
    for (const [i, { kind, payload }] of hung.entries()) {
      const res = await push(afm, [{ id: 20 + i, kind, uuid: payload.uuid, payload }]);
      expect(res.body, kind).toMatchObject({
        acked: [],
        error: {
          id: 20 + i,
          code: 'forbidden',
          detail: expect.stringMatching(
            kind === 'harvest_file'
              ? /usage_event_uuid: that usage is of a tool this station does not run$/
              : /usage_event_uuid: that usage was recorded by another station$/,
          ) as string,
        },
      });
    }
    // A second station on SEM itself: the usage is not one it recorded, so it may not bill it,
    // shut the tool down in its name or link an experiment to it (mutation: the tool alone was
    // checked, and all three were taken).
    const semUuid = serverDb.prepare("SELECT uuid FROM tools WHERE name = 'SEM'").pluck().get();
    const second = await registerStation('sem-second', 'SEM');
    const entryUuid = id(6);
    const onSem = [
      ...hung.slice(0, 2).map(({ kind, payload }) => ({
        kind,
        payload: { ...payload, tool_uuid: semUuid },
      })),
      {
        kind: 'notebook_entry',
        payload: {
          uuid: entryUuid,
          kind: 'experiment',
          title: 'Stub run',
          body: '',
          tags: [],
          metadata: {},
          owner_uuid: refs.user_uuid,
          template_uuid: null,
          usage_event_uuid: sem.uuid,
          created_at: '2024-01-05T10:00:00.000Z',
          updated_at: '2024-01-05T10:00:00.000Z',
          version: 1,
          previous_updated_at: null,
          deleted_at: null,
        },
      },
    ];
    for (const [i, { kind, payload }] of onSem.entries()) {
      const res = await push(second, [{ id: 40 + i, kind, uuid: payload.uuid, payload }]);
      expect(res.body, kind).toMatchObject({
        acked: [],
        error: {
          id: 40 + i,
          code: 'forbidden',
          detail: expect.stringMatching(
            /usage_event_uuid: that usage was recorded by another station$/,
          ) as string,
        },
      });
    }
    expect(
      serverDb
        .prepare('SELECT count(*) FROM notebook_entries WHERE uuid = ?')
        .pluck()
        .get(entryUuid),
    ).toBe(0);
    expect(serverDb.prepare('SELECT shutdown FROM tools WHERE name = ?').pluck().get('SEM')).toBe(
      0,
    );
    // The station that recorded the usage may.
    const [withdrawal, report] = onSem;
    expect(
      (
        await push(key, [
          {
            id: 50,
            kind: withdrawal.kind,
            uuid: withdrawal.payload.uuid,
            payload: withdrawal.payload,
          },
        ])
      ).body,
    ).toMatchObject({ acked: [50], error: null });
    expect(
      (
        await push(key, [
          { id: 51, kind: report.kind, uuid: report.payload.uuid, payload: report.payload },
        ])
      ).body,
    ).toMatchObject({ acked: [51], error: null });
    for (const table of ['consumable_withdrawals', 'problem_reports']) {
      expect(
        serverDb
          .prepare(`SELECT station_id FROM ${table} WHERE uuid = ?`)
          .pluck()
          .get(hung[table === 'problem_reports' ? 1 : 0].payload.uuid),
        table,
      ).toBe(serverDb.prepare("SELECT id FROM stations WHERE name = 'sem-raw'").pluck().get());
    }
    for (const table of ['harvest_files']) {
      const uuids = hung.map((h) => h.payload.uuid);
      const stored = serverDb
        .prepare(`SELECT count(*) FROM ${table} WHERE uuid IN (?, ?, ?)`)
        .pluck()
        .get(...uuids);
      expect(stored, table).toBe(0);
    }
    // Without the usage, the file goes; a second file with its ARK is refused in words.
    const file = hung[2].payload;
    const own = { ...file, usage_event_uuid: null };
    expect(
      (await push(afm, [{ id: 30, kind: 'harvest_file', uuid: file.uuid, payload: own }])).body,
    ).toMatchObject({ acked: [30], error: null });
    const twin = { ...own, uuid: id(5) };
    expect(
      (await push(afm, [{ id: 31, kind: 'harvest_file', uuid: twin.uuid, payload: twin }])).body,
    ).toEqual({
      acked: [],
      stale: [],
      error: {
        id: 31,
        kind: 'harvest_file',
        uuid: twin.uuid,
        code: 'conflict',
        detail: `harvest_file ${twin.uuid}: persistent_id: another record has that value`,
      },
    });
  });

  it("refuses the later versions of a history that differed from the server's, keeping its own", async () => {
    // Mutation: no diverged_version (as before migration 52): version 3 below was taken and
    // replaced the server's end with the restored history's.
    const ended = event({ end: '2024-01-05T10:00:00.000Z', version: 2 });
    expect((await push(key, [record(1, ended)])).body).toMatchObject({ acked: [1] });
    // The station's data dir is restored from a backup made while the usage was in progress,
    // and the usage is ended anew, at another time: another version 2.
    const again = { ...ended, end: '2024-01-05T11:00:00.000Z' };
    expect((await push(key, [record(2, again)])).body).toMatchObject({
      acked: [],
      error: { id: 2, code: 'conflict' },
    });
    // Its next version (validated at the station, say) continues that history: refused too.
    const later = { ...again, validated: 1, version: 3 };
    expect((await push(key, [record(3, later)])).body).toMatchObject({
      acked: [],
      error: {
        id: 3,
        code: 'conflict',
        detail: expect.stringMatching(/version 3 continues this station's version 2/) as unknown,
      },
    });
    expect(serverEvent(ended.uuid as string)).toMatchObject({
      end: '2024-01-05T10:00:00.000Z',
      version: 2,
    });
    // A resend of what the server holds is still answered as taken.
    expect((await push(key, [record(4, ended)])).body).toMatchObject({ acked: [4], error: null });
  });

  it('takes the records a station made for the tool it ran before it was moved', async () => {
    const moverKey = await createStationKey(serverDir, 'mover', 'SEM');
    // The admin moves the station to the AFM while a SEM event still waits in its outbox.
    const admin = new Database(join(serverDir, 'labstation.db'));
    try {
      admin
        .prepare(
          "UPDATE stations SET tool_id = (SELECT id FROM tools WHERE name = 'AFM') WHERE name = 'mover'",
        )
        .run();
    } finally {
      admin.close();
    }
    expect((await push(moverKey, [record(1, event())])).body).toMatchObject({
      acked: [1],
      error: null,
    });
  });

  it('keeps the first answers of a pending form and sends them until the station pushes them back', async () => {
    const forced = event({
      end: '2024-01-05T10:00:00.000Z',
      post_usage_pending: 1,
      version: 2,
    });
    expect((await push(key, [record(1, forced)])).body).toMatchObject({ acked: [1] });
    const uuid = forced.uuid as string;
    const login = await fetch(`${server.url}auth/jwt/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'sam@example.org', password: 'staff password 1' }),
    });
    const jwt = ((await login.json()) as { access_token: string }).access_token;
    const version = serverDb
      .prepare('SELECT form_version FROM usage_events WHERE uuid = ?')
      .pluck()
      .get(uuid) as number;
    const answered = await fetch(`${server.url}rpc/usage.completePendingServer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
      body: JSON.stringify({ usage: uuid, answers: { problem: 'No', notes: 'server' }, version }),
    });
    expect(answered.status).toBe(200);
    const serverAnswers = serverEvent(uuid)!.run_data;

    const owed = async (): Promise<string[]> => {
      const res = await fetch(`${server.url}sync/changes?cursor=0`, {
        headers: { authorization: `Station ${key}` },
      });
      const delta = (await res.json()) as { answers: { usage_uuid: string; run_data: string }[] };
      return delta.answers.filter((a) => a.usage_uuid === uuid).map((a) => a.run_data);
    };
    expect(await owed()).toEqual([serverAnswers]);

    // The station had answered too, before it heard of the server's answers: the server keeps
    // the first it got, and keeps sending them.
    const own = JSON.stringify({ problem: 'No', notes: 'station' });
    await push(key, [record(2, { ...forced, post_usage_pending: 0, run_data: own, version: 3 })]);
    expect(serverEvent(uuid)!.run_data).toBe(serverAnswers);
    expect(await owed()).toEqual([serverAnswers]);
    // The station's answers are not lost: the server keeps them beside its own, for staff
    // (mutation: ingest without station_answers_not_kept; "station" was in no row anywhere).
    const notKept = () =>
      serverDb
        .prepare('SELECT station_answers_not_kept FROM usage_events WHERE uuid = ?')
        .pluck()
        .get(uuid);
    expect(notKept()).toBe(own);

    // A later change of the station's (staff validate) is taken; the answers stay.
    await push(key, [
      record(3, {
        ...forced,
        post_usage_pending: 0,
        run_data: own,
        validated: 1,
        validated_by_uuid: refs.user_uuid,
        version: 4,
      }),
    ]);
    expect(
      serverDb.prepare('SELECT validated FROM usage_events WHERE uuid = ?').pluck().get(uuid),
    ).toBe(1);
    expect(serverEvent(uuid)!.run_data).toBe(serverAnswers);

    // The station takes them and pushes them back: nothing is owed any more.
    await push(key, [
      record(4, {
        ...forced,
        post_usage_pending: 0,
        run_data: serverAnswers,
        validated: 1,
        validated_by_uuid: refs.user_uuid,
        version: 5,
      }),
    ]);
    expect(await owed()).toEqual([]);
    // Still kept once the station holds the server's answers, and shown to staff.
    expect(notKept()).toBe(own);
    // (All of this file's events on the server, not the newest 50: this one started early.)
    const recent = await fetch(`${server.url}rpc/usage.recent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
      body: JSON.stringify({ limit: 500 }),
    });
    const { events } = (await recent.json()) as {
      events: { uuid: string; station_answers_not_kept?: string }[];
    };
    expect(events.find((e) => e.uuid === uuid)?.station_answers_not_kept).toBe(own);
  });
});
