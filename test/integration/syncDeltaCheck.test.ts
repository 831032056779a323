/**
 * The station checks the server's facility delta before it applies any of it
 * (sync/deltaSchema.ts). A real server app on a real SQLite file, listening on loopback: its
 * deltas, full and since a cursor, with every section filled, parse to exactly what it sent
 * (the schema knows every field it sends). A station run in the test process pulls through an
 * HTTP proxy that spoils the server's answers: it applies nothing of a spoiled one, keeps its
 * cursor, retries, names the field in its error, and takes the next good delta as usual.
 */
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { createStationAccount } from '../../electron/core/server/accounts.js';
import { createServerApp } from '../../electron/core/server/app.js';
import { Station } from '../../electron/core/station/station.js';
import { syncCursor } from '../../electron/core/sync/apply.js';
import { SyncClient } from '../../electron/core/sync/client.js';
import { parseFacilityDelta } from '../../electron/core/sync/deltaSchema.js';
import type { FacilityDelta } from '../../electron/core/sync/protocol.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { createLogger } from '../../electron/core/util/log.js';
import { tempDir, waitFor } from './helpers.js';
import { forwardTo, passOn, startHttpProxy, type HttpProxy } from './httpForward.js';

const T0 = '2026-01-01T00:00:00.000Z';
const FUTURE = new Date(Date.now() + 86_400_000).toISOString();
const LATER = new Date(Date.now() + 90_000_000).toISOString();
const SEM = 1;
const AFM = 2;
const id = {
  alice: newUuid(),
  bob: newUuid(),
  carol: newUuid(),
  project: newUuid(),
  sem: newUuid(),
  afm: newUuid(),
  location: newUuid(),
  instrument: newUuid(),
  hookSem: newUuid(),
  hookAll: newUuid(),
  schedule: newUuid(),
  run: newUuid(),
  usage: newUuid(),
  area: newUuid(),
  toolBooking: newUuid(),
  areaBooking: newUuid(),
};
let db: Db;
let app: FastifyInstance;
let serverUrl: URL;
let semKey = '';
let afmKey = '';

beforeAll(async () => {
  db = openDatabase(join(tempDir('labstation-sync-delta-check-'), 'server.db'));
  db.exec(`INSERT INTO settings (key, value) VALUES ('mode', '"server"');
    INSERT INTO users (id, uuid, username, email, first_name, last_name, badge_number, pin_hash,
        is_staff, created_at, updated_at)
      VALUES (1, '${id.alice}', 'alice', 'alice@example.org', 'Alice', 'Liddell', '100200',
                'pin-a', 0, '${T0}', '${T0}'),
             (2, '${id.bob}', 'bob', '', '', '', NULL, NULL, 1, '${T0}', '${T0}'),
             (3, '${id.carol}', 'carol', '', '', '', NULL, 'pin-c', 0, '${T0}', '${T0}');
    INSERT INTO projects (id, uuid, name, application_identifier, created_at, updated_at)
      VALUES (1, '${id.project}', 'Cathodes', 'PRJ-1', '${T0}', '${T0}');
    INSERT INTO tools (id, uuid, name, pre_usage_questions, post_usage_questions, category,
        created_at, updated_at)
      VALUES (${SEM}, '${id.sem}', 'SEM', '[{"type":"textbox","name":"sample"}]',
                '[{"type":"textarea","name":"notes"}]', 'Microscopy', '${T0}', '${T0}'),
             (${AFM}, '${id.afm}', 'AFM', '[]', '[{"type":"textarea","name":"notes"}]', '',
                '${T0}', '${T0}');
    INSERT INTO qualifications (user_id, tool_id) VALUES (1, ${SEM}), (1, ${AFM}), (2, ${AFM});
    INSERT INTO user_projects (user_id, project_id) VALUES (1, 1), (2, 1);
    INSERT INTO areas (id, uuid, name, created_at, updated_at)
      VALUES (1, '${id.area}', 'Bay', '${T0}', '${T0}');
    INSERT INTO area_tools (area_id, tool_id) VALUES (1, ${SEM});
    INSERT INTO reservations (uuid, user_id, creator_id, project_id, tool_id, area_id, start,
        "end", question_data, created_at, updated_at)
      VALUES ('${id.toolBooking}', 1, 2, 1, ${SEM}, NULL, '${FUTURE}', '${LATER}', '{}', '${T0}',
                '${T0}'),
             ('${id.areaBooking}', 1, 1, NULL, NULL, 1, '${FUTURE}', '${LATER}', '', '${T0}',
                '${T0}');`);
  const sem = createStationAccount(db, { name: 'sem-pc', tool: SEM });
  const afm = createStationAccount(db, { name: 'afm-pc', tool: AFM });
  semKey = sem.key;
  afmKey = afm.key;
  // The SEM station runs an instrument with its own hook, a hook for every instrument, a
  // schedule and a queued run, and has an event whose answers were given on the server.
  db.exec(`
    INSERT INTO storage_locations (id, uuid, name, type, base_path, created_at, updated_at)
      VALUES (1, '${id.location}', 'sem-store', 'local', '/sem', '${T0}', '${T0}');
    INSERT INTO instruments (id, uuid, name, description, tool_id, station_id, watch,
        storage_location_id, destination_template, created_at, updated_at)
      VALUES (1, '${id.instrument}', 'sem-camera', 'The camera', ${SEM}, ${sem.id},
        '[{"path":"/in","include":["*.tif"],"exclude":[]}]', 1, '{filename}', '${T0}', '${T0}');
    INSERT INTO harvest_hooks (id, uuid, name, "trigger", kind, config, instrument_id,
        created_at, updated_at)
      VALUES (1, '${id.hookSem}', 'sem-hook', 'pre_transfer', 'metadata',
                '{"fields":{"beam":"kV"}}', 1, '${T0}', '${T0}'),
             (2, '${id.hookAll}', 'all-hook', 'post_transfer', 'metadata', '{}', NULL, '${T0}',
                '${T0}');
    INSERT INTO harvest_schedules (id, uuid, instrument_id, station_id, cron, timezone,
        created_at, updated_at)
      VALUES (1, '${id.schedule}', 1, ${sem.id}, '0 3 * * *', 'Europe/Paris', '${T0}', '${T0}');
    INSERT INTO harvest_runs (uuid, instrument_id, station_id, schedule_id, "trigger",
        requested_at)
      VALUES ('${id.run}', 1, ${sem.id}, 1, 'manual', '${T0}');
    INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, start, "end",
        run_data, answered_on_server_at, answered_on_server_by_id, answer_acked, station_id,
        station_version, updated_at)
      VALUES ('${id.usage}', 1, 1, 1, ${SEM}, '${T0}', '${T0}', '{"notes":"ok"}', '${T0}', 2, 0,
        ${sem.id}, 1, '${T0}');`);
  app = await createServerApp({
    db,
    log: createLogger('silent'),
    jwtSecret: 'sync-delta-check-secret-0123456789',
    timeZone: () => 'UTC',
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  serverUrl = new URL(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/`);
});

afterAll(async () => {
  await app.close();
  db.close();
});

/** GET /sync/changes as the SEM station, the body as it came over the wire. */
async function pull(cursor: number): Promise<Record<string, unknown>> {
  const res = await app.inject({
    method: 'GET',
    url: `/sync/changes?cursor=${cursor}`,
    headers: { authorization: `Station ${semKey}` },
  });
  expect(res.statusCode).toBe(200);
  return res.json<Record<string, unknown>>();
}

describe("the server's deltas", () => {
  it('parse to exactly what the server sent, full and since a cursor, every section filled', async () => {
    const full = await pull(0);
    const parsed = parseFacilityDelta(full);
    // Nothing dropped: the schema knows every field the server sends.
    expect(parsed).toEqual(full);
    expect(parsed.full).toBe(true);
    expect(parsed.users.map((u) => u.badge_number)).toEqual(['100200', null, null]);
    expect(parsed.tools).toHaveLength(2);
    expect(parsed.answers).toMatchObject([{ usage_uuid: id.usage, answered_by_uuid: id.bob }]);
    expect(parsed.runs).toMatchObject([{ uuid: id.run, schedule_uuid: id.schedule }]);
    expect(parsed.reservations?.map((r) => r.uuid)).toEqual([id.toolBooking, id.areaBooking]);
    const harvest = parsed.harvest!;
    expect(harvest.storage_locations).toHaveLength(1);
    expect(harvest.instruments).toHaveLength(1);
    expect(harvest.hooks.map((h) => h.instrument_uuid)).toEqual([id.instrument, null]);
    expect(harvest.schedules).toHaveLength(1);

    db.prepare('DELETE FROM users WHERE id = 3').run();
    db.prepare("UPDATE tools SET category = 'Imaging' WHERE id = ?").run(SEM);
    const since = await pull(parsed.cursor);
    const next = parseFacilityDelta(since);
    expect(next).toEqual(since);
    expect(next.full).toBe(false);
    expect(next.deleted.users).toEqual([id.carol]);
    expect(next.tools).toMatchObject([{ uuid: id.sem, category: 'Imaging' }]);
  });
});

describe('a station fed a delta that does not parse', () => {
  let proxy: HttpProxy | undefined;
  let station: Station | undefined;
  let client: SyncClient | undefined;

  afterAll(async () => {
    await client?.stop();
    station?.close();
    await proxy?.close();
  });

  it('applies nothing, keeps its cursor, says which field, and takes the next good delta', async () => {
    /** What the proxy does to each delta on its way; null: passed on as it came. */
    let spoil: ((delta: FacilityDelta) => void) | null = (delta) => {
      delete (delta.tools[0] as Partial<FacilityDelta['tools'][number]>).post_usage_questions;
    };
    let spoiled = 0;
    proxy = await startHttpProxy(
      forwardTo(serverUrl, (answer, response, request) => {
        const change = spoil;
        if (change === null || !request.url?.startsWith('/sync/changes')) {
          passOn(answer, response, request);
          return;
        }
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const delta = JSON.parse(Buffer.concat(chunks).toString()) as FacilityDelta;
          if (answer.statusCode === 200) {
            change(delta);
            spoiled += 1;
          }
          const body = JSON.stringify(delta);
          response.writeHead(answer.statusCode ?? 502, {
            ...answer.headers,
            'content-length': String(Buffer.byteLength(body)),
          });
          response.end(body);
        });
      }),
    );
    const warnings: { msg: string; problems?: string[] }[] = [];
    const log = pino(
      { level: 'warn', base: undefined },
      { write: (line: string) => warnings.push(JSON.parse(line) as (typeof warnings)[number]) },
    );
    const st = Station.open({ dataDir: tempDir(), log });
    station = st;
    client = new SyncClient({
      station: st,
      server: proxy.url,
      key: afmKey,
      waitSeconds: 1,
      backoffBaseMs: 50,
      backoffCapMs: 200,
    });
    const sync = client;
    const count = (sql: string): number => st.db.prepare(sql).pluck().get() as number;
    sync.start();

    // The first pull, spoiled: nothing of the facility here, no cursor, retried.
    await waitFor('three spoiled pulls', () => (spoiled >= 3 ? true : undefined));
    expect(count('SELECT count(*) FROM tools')).toBe(0);
    expect(count('SELECT count(*) FROM users')).toBe(0);
    expect(syncCursor(st.db)).toBe(0);
    expect(st.stationTool).toBeNull();
    expect(sync.state.lastError).toContain(
      'tools[0].post_usage_questions: Invalid input: expected string, received undefined',
    );
    // Said once, not at each retry.
    expect(
      warnings.filter((w) => /facility delta does not parse/.test(w.msg)).map((w) => w.problems),
    ).toEqual([
      ['tools[0].post_usage_questions: Invalid input: expected string, received undefined'],
    ]);

    // Passed on as it came: the whole facility arrives, forms included.
    spoil = null;
    await waitFor('the facility', () => (syncCursor(st.db) > 0 ? true : undefined));
    expect(sync.state.lastError).toBeNull();
    expect(st.stationTool).toBe('AFM');
    expect(
      st.db.prepare('SELECT post_usage_questions FROM tools WHERE uuid = ?').pluck().get(id.afm),
    ).toBe('[{"type":"textarea","name":"notes"}]');
    const active = (uuid: string): unknown =>
      st.db.prepare('SELECT is_active FROM users WHERE uuid = ?').pluck().get(uuid);
    expect(active(id.alice)).toBe(1);
    const cursor = syncCursor(st.db);

    // A delta since the cursor, spoiled: alice deactivated on the server arrives with her flag
    // as a string (which, taken as it came, would read as true) and her new e-mail address.
    spoil = (delta) => {
      for (const user of delta.users) Object.assign(user, { is_active: String(user.is_active) });
    };
    const before = spoiled;
    db.prepare(
      "UPDATE users SET is_active = 0, email = 'alice@new.example.org' WHERE id = 1",
    ).run();
    await waitFor('two more spoiled pulls', () => (spoiled >= before + 2 ? true : undefined));
    expect(syncCursor(st.db)).toBe(cursor);
    expect(active(id.alice)).toBe(1);
    expect(st.db.prepare('SELECT email FROM users WHERE uuid = ?').pluck().get(id.alice)).toBe(
      'alice@example.org',
    );
    expect(sync.state.lastError).toContain(
      'users[0].is_active: Invalid input: expected boolean, received string',
    );

    // Good again: the same change arrives from the cursor kept.
    spoil = null;
    await waitFor('the change', () => (syncCursor(st.db) > cursor ? true : undefined));
    expect(active(id.alice)).toBe(0);
    expect(st.db.prepare('SELECT email FROM users WHERE uuid = ?').pluck().get(id.alice)).toBe(
      'alice@new.example.org',
    );
    expect(sync.state.lastError).toBeNull();
  });
});
