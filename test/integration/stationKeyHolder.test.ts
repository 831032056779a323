/**
 * A station key is held by the one Labstation that uses it (server/sync/stationAuth.ts,
 * sync/identity.ts): another data dir or host with the same key is refused with 409 while the
 * holder is in use, takes the key over once the holder has been silent for the takeover time,
 * and a new key frees it. A real `labstation serve` (takeover after 3 s) and real stations on
 * loopback.
 */
import { randomUUID } from 'node:crypto';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { facilityBundle, goodPreAnswers } from '../fixtures/facility.js';
import {
  createStationKey,
  loginJwt,
  runCli,
  startServer,
  startStation,
  tempDir,
  waitFor,
  writeJson,
  type ServerProcess,
  type StationProcess,
} from './helpers.js';

const TAKEOVER_SECONDS = 3;
const ADMIN = { email: 'root@example.org', password: 'root password 1' };
const FAST = { LABSTATION_SYNC_BACKOFF_CAP_MS: '1000' };

let serverDir: string;
let server: ServerProcess;
let serverDb: Database.Database;
const running = new Set<StationProcess>();

interface Caller {
  install: string;
  host: string;
}

/** A pull as a Labstation makes it: the key, and who it is when `caller` is given. */
async function pull(key: string, caller?: Caller): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${server.url}sync/changes?cursor=0`, {
    headers: {
      authorization: `Station ${key}`,
      ...(caller
        ? {
            'x-labstation-install': caller.install,
            'x-labstation-host': encodeURIComponent(caller.host),
          }
        : {}),
    },
  });
  return { status: res.status, body: await res.json() };
}

function holder(name: string): { install_id: string | null; install_host: string | null } {
  return serverDb
    .prepare('SELECT install_id, install_host FROM stations WHERE name = ?')
    .get(name) as { install_id: string | null; install_host: string | null };
}

async function launch(dir: string, args: string[] = []): Promise<StationProcess> {
  const st = await startStation(dir, FAST, args);
  running.add(st);
  return st;
}

async function stop(st: StationProcess): Promise<void> {
  await st.stop();
  running.delete(st);
}

async function ok(st: StationProcess, name: string, args: unknown): Promise<unknown> {
  const res = await st.rpc(name, args);
  expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

/** A data dir's `sync.install` setting (sync/identity.ts). */
function installOf(dir: string): { id: string; host: string; previous?: string | null } {
  const db = new Database(join(dir, 'labstation.db'), { readonly: true });
  try {
    const value = db
      .prepare("SELECT value FROM settings WHERE key = 'sync.install'")
      .pluck()
      .get() as string;
    return JSON.parse(value) as { id: string; host: string; previous?: string | null };
  } finally {
    db.close();
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  serverDir = join(tempDir(), 'server');
  const bundle = facilityBundle();
  delete bundle.station;
  const imported = await runCli([
    'import',
    '--data',
    serverDir,
    writeJson(tempDir(), 'b.json', bundle),
  ]);
  expect(imported.code, imported.stderr).toBe(0);
  server = await startServer(serverDir, {
    LABSTATION_STATION_TAKEOVER_SECONDS: String(TAKEOVER_SECONDS),
    LABSTATION_ADMIN_EMAIL: ADMIN.email,
    LABSTATION_ADMIN_PASSWORD: ADMIN.password,
  });
  serverDb = new Database(join(serverDir, 'labstation.db'), { readonly: true });
});

afterAll(async () => {
  await Promise.allSettled([...running].map((st) => st.stop()));
  serverDb?.close();
  await server?.stop();
});

describe('a station key and the Labstation that holds it', () => {
  it('holds the key to the first Labstation that names itself; another is refused with 409 while the holder is in use, and takes over once it is silent', async () => {
    const key = await createStationKey(serverDir, 'sem-1', 'SEM');
    const a: Caller = { install: randomUUID(), host: 'PC-Ä' };
    const b: Caller = { install: randomUUID(), host: 'pc-b' };

    // A caller that names no Labstation (a script with the key) is let in and holds nothing.
    expect((await pull(key)).status).toBe(200);
    expect(holder('sem-1')).toEqual({ install_id: null, install_host: null });

    expect((await pull(key, a)).status).toBe(200);
    expect(holder('sem-1')).toEqual({ install_id: a.install, install_host: 'PC-Ä' });
    const refused = await pull(key, b);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'station_key_in_use' });
    const detail = (refused.body as { detail: string }).detail;
    expect(detail).toContain('"PC-Ä"');
    expect(detail).toContain(a.install);
    expect(detail).toContain(`silent for ${TAKEOVER_SECONDS} s`);
    // The data dir decides: its machine renamed (a laptop on another network) still holds it.
    expect((await pull(key, { install: a.install, host: 'pc-a-renamed' })).status).toBe(200);
    expect(holder('sem-1')).toEqual({ install_id: a.install, install_host: 'pc-a-renamed' });
    expect((await pull(key, a)).status).toBe(200);
    // What names itself wrongly is refused for that, and holds nothing.
    const bad = await pull(key, { install: 'not-a-uuid', host: 'pc-c' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      detail: 'x-labstation-install: must be a UUID',
      code: 'bad_station_identity',
    });
    // A refusal is not a use: the holder stays, as long as it is in use, past the takeover time.
    const until = Date.now() + (TAKEOVER_SECONDS + 1) * 1000;
    while (Date.now() < until) {
      expect((await pull(key, a)).status).toBe(200);
      expect((await pull(key, b)).status).toBe(409);
      await sleep(500);
    }
    expect(holder('sem-1').install_id).toBe(a.install);

    // The holder falls silent: after the takeover time, b takes the key, and a is refused.
    await waitFor('b to take the key over', async () =>
      (await pull(key, b)).status === 200 ? true : undefined,
    );
    expect(holder('sem-1')).toEqual({ install_id: b.install, install_host: 'pc-b' });
    expect((await pull(key, a)).status).toBe(409);
  }, 60_000);

  it('a new key frees the station: the next Labstation to use it holds it', async () => {
    const key = await createStationKey(serverDir, 'sem-2', 'SEM');
    const a: Caller = { install: randomUUID(), host: 'pc-a' };
    const b: Caller = { install: randomUUID(), host: 'pc-b' };
    expect((await pull(key, a)).status).toBe(200);
    expect((await pull(key, b)).status).toBe(409);

    const jwt = await loginJwt(server.url, ADMIN);
    const rpc = async (name: string, args: unknown): Promise<Record<string, unknown>> => {
      const res = await fetch(`${server.url}rpc/${name}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
        body: JSON.stringify(args),
      });
      expect(res.status, name).toBe(200);
      return (await res.json()) as Record<string, unknown>;
    };
    const stations = (await rpc('admin.stations.list', {})).stations as {
      id: number;
      name: string;
      host: string | null;
    }[];
    const listed = stations.find((s) => s.name === 'sem-2')!;
    // The admin's list says which machine holds the key.
    expect(listed.host).toBe('pc-a');
    const renewed = (await rpc('admin.stations.newKey', { id: listed.id })) as {
      key: string;
      station: { host: string | null };
    };
    expect(renewed.station.host).toBeNull();
    expect((await pull(key, a)).status).toBe(401);
    expect((await pull(renewed.key, b)).status).toBe(200);
    expect((await pull(renewed.key, a)).status).toBe(409);
  });

  it('stations on one key: the second is not set up, a running one that lost the key keeps its records and sends them, once, when it gets the key back', async () => {
    const key = await createStationKey(serverDir, 'sem-3', 'SEM');
    const dirOne = join(tempDir(), 'one');
    const dirTwo = join(tempDir(), 'two');
    const one = await launch(dirOne, ['--server', server.url, '--key', key]);

    // Set up with the key while the first uses it: refused, with the server's reason.
    // (One that starts after all is stopped at once, not left running behind the test.)
    const refused = await startStation(dirTwo, FAST, ['--server', server.url, '--key', key]).then(
      async (started) => {
        await started.stop();
        return null;
      },
      (error: Error) => error,
    );
    expect(refused?.message).toMatch(/key: This station key is in use by another Labstation/);

    // The first stops; once it has been silent long enough, the second takes the key.
    await stop(one);
    const two = await waitFor(
      'the second station to take the key',
      async () => {
        try {
          return await launch(dirTwo, ['--server', server.url, '--key', key]);
        } catch {
          return undefined;
        }
      },
      (TAKEOVER_SECONDS + 10) * 1000,
    );

    // The first starts again with the key it keeps: the server refuses it, and it says so.
    const again = await launch(dirOne);
    const status = (await waitFor('the refusal to show', async () => {
      const s = (await again.rpc('sync.status', {})).body as {
        online: boolean;
        lastError: string | null;
        keyRefused: string | null;
      };
      return s.lastError?.includes('in use by another Labstation') ? s : undefined;
    })) as { online: boolean; lastError: string; keyRefused: string | null };
    expect(status.online).toBe(false);
    expect(status.lastError).toContain('server answered 409');
    // The status line's reason: the server's own words, without the status code.
    expect(status.keyRefused).toContain('in use by another Labstation');
    expect(status.keyRefused).not.toContain('409');

    // What it records meanwhile waits in its outbox.
    await ok(again, 'session.logon', { login: 'alice', pin: '1234' });
    const enabled = (await ok(again, 'toolControl.enable', {
      tool: 'SEM',
      project: 'Cathodes',
      answers: goodPreAnswers,
    })) as { usage: { uuid: string } };
    const uuid = enabled.usage.uuid;
    await sleep(1500);
    const onServer = (): number =>
      serverDb
        .prepare('SELECT count(*) FROM usage_events WHERE uuid = ?')
        .pluck()
        .get(uuid) as number;
    expect(onServer()).toBe(0);
    const local = new Database(join(dirOne, 'labstation.db'), { readonly: true });
    expect(
      local.prepare('SELECT count(*) FROM outbox WHERE record_uuid = ?').pluck().get(uuid),
    ).toBeGreaterThan(0);
    local.close();

    // The second stops for good: the first takes the key back and sends its records, once.
    await stop(two);
    await waitFor(
      'the usage to reach the server',
      () => (onServer() === 1 ? true : undefined),
      30_000,
    );
    await waitFor('the refusal to clear', async () => {
      const s = (await again.rpc('sync.status', {})).body as { online: boolean; waiting: number };
      return s.online && s.waiting === 0 ? true : undefined;
    });
    expect(onServer()).toBe(1);
    expect(holder('sem-3').install_id).toBe(installOf(dirOne).id);
    await stop(again);

    // A PC image cloned with the first's data dir: on its own machine the data dir finds it was
    // made on another (here: its record says so) and makes itself a new id naming the one
    // before, as a data dir restored onto a new PC does. It takes the key at once; the first,
    // still running, is then refused: the two are found out.
    const dirClone = join(tempDir(), 'clone');
    cpSync(dirOne, dirClone, { recursive: true });
    const original = installOf(dirOne);
    const cloned = new Database(join(dirClone, 'labstation.db'));
    cloned
      .prepare("UPDATE settings SET value = ? WHERE key = 'sync.install'")
      .run(JSON.stringify({ ...original, host: 'the-imaged-pc' }));
    cloned.close();
    const first = await launch(dirOne);
    await waitFor('the first to hold the key again', async () => {
      const s = (await first.rpc('sync.status', {})).body as { online: boolean };
      return s.online ? true : undefined;
    });
    const clone = await launch(dirClone);
    await waitFor('the clone to hold the key', async () => {
      const s = (await clone.rpc('sync.status', {})).body as { online: boolean };
      return s.online ? true : undefined;
    });
    const made = installOf(dirClone);
    expect(made.id).not.toBe(original.id);
    expect(made.previous).toBe(original.id);
    expect(holder('sem-3').install_id).toBe(made.id);
    // At its next request: the pull it holds open ends within 25 s.
    await waitFor(
      'the first to be refused',
      async () => {
        const s = (await first.rpc('sync.status', {})).body as { lastError: string | null };
        return s.lastError?.includes('in use by another Labstation') ? true : undefined;
      },
      45_000,
    );
    expect(installOf(dirOne)).toEqual(original);
  }, 120_000);
});
