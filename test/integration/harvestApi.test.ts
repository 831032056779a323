/**
 * The harvest management API (spec 002) on a real SQLite file and the real server app
 * (app.inject): the five operations of every resource, their validation (422 with each
 * problem's loc), 404 and 409, access grants, file and transfer records pushed by a station
 * through the sync API and read within the user's grants, schedules with their deployment and
 * triggered runs as the station reports them, and the role matrix over every route.
 */
/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment,
   @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call --
   API bodies are JSON, checked here by value. */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { createApiToken } from '../../electron/core/server/auth.js';
import { createServerApp } from '../../electron/core/server/app.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { createLogger } from '../../electron/core/util/log.js';
import type { FacilityDelta, PushResult } from '../../electron/core/sync/protocol.js';
import { harvestFilePayload } from './harvestPushFixtures.js';
import { tempDir } from './helpers.js';

const T0 = '2026-01-01T00:00:00.000Z';

interface Reply {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON, checked by value
}

let db: Db;
let app: FastifyInstance;
const tokens: Record<'admin' | 'alice' | 'bob' | 'sam', string> = {
  admin: '',
  alice: '',
  bob: '',
  sam: '',
};
const TOOL_UUID = newUuid();
const OTHER_TOOL_UUID = newUuid();

function seed(): void {
  const user = db.prepare(
    `INSERT INTO users (id, uuid, username, email, first_name, last_name, role, is_staff,
       is_active, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
  );
  user.run(1, newUuid(), 'admin', 'admin@example.org', 'Ada', 'Min', 'admin', 1, T0, T0);
  user.run(2, newUuid(), 'alice', 'alice@example.org', 'Alice', 'L', 'user', 0, T0, T0);
  user.run(3, newUuid(), 'bob', 'bob@example.org', 'Bob', 'B', 'user', 0, T0, T0);
  user.run(4, newUuid(), 'sam', 'sam@example.org', 'Sam', 'S', 'staff', 1, T0, T0);
  const tool = db.prepare(
    `INSERT INTO tools (id, uuid, name, category, operational, visible, shutdown, created_at,
       updated_at) VALUES (?, ?, ?, 'Microscopy', 1, 1, 0, ?, ?)`,
  );
  tool.run(1, TOOL_UUID, 'TEM', T0, T0);
  tool.run(2, OTHER_TOOL_UUID, 'SEM', T0, T0);
  tokens.admin = createApiToken(db, 1).token;
  tokens.alice = createApiToken(db, 2).token;
  tokens.bob = createApiToken(db, 3).token;
  tokens.sam = createApiToken(db, 4).token;
}

async function call(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  who: keyof typeof tokens | null = 'admin',
  body?: unknown,
): Promise<Reply> {
  const res = await app.inject({
    method,
    url,
    headers: who ? { authorization: `Token ${tokens[who]}` } : {},
    ...(body === undefined ? {} : { payload: body as object }),
  });
  return { status: res.statusCode, body: res.body ? res.json() : null };
}

async function made(url: string, body: unknown): Promise<Reply['body']> {
  const res = await call('POST', url, 'admin', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function station(
  method: 'GET' | 'POST',
  url: string,
  key: string,
  body?: unknown,
): Promise<Reply> {
  const res = await app.inject({
    method,
    url,
    headers: { authorization: `Station ${key}` },
    ...(body === undefined ? {} : { payload: body as object }),
  });
  return { status: res.statusCode, body: res.json() };
}

beforeAll(async () => {
  db = openDatabase(join(tempDir('labstation-harvest-api-'), 'server.db'));
  db.prepare("INSERT INTO settings (key, value) VALUES ('mode', '\"server\"')").run();
  seed();
  app = await createServerApp({
    db,
    log: createLogger('silent'),
    jwtSecret: 'harvest-api-test-secret-0123456789',
    timeZone: () => 'UTC',
  });
  await app.ready();
});

afterAll(async () => {
  await app.close();
  db.close();
});

describe('management resources', () => {
  it('creates, reads, lists, updates and deletes a storage location', async () => {
    const created = await made('/api/storage-locations', {
      name: 'archive',
      type: 'local',
      base_path: 'D:\\archive',
    });
    expect(created).toEqual({
      id: expect.any(Number),
      name: 'archive',
      type: 'local',
      base_path: 'D:\\archive',
      enabled: true,
    });
    expect((await call('GET', `/api/storage-locations/${created.id}`)).body).toEqual(created);
    const list = await call('GET', '/api/storage-locations?page=1&size=10');
    expect(list.body).toEqual({ items: [created], total: 1, page: 1, size: 10 });
    // Read-only fields sent back as they came are ignored.
    const patched = await call('PATCH', `/api/storage-locations/${created.id}`, 'admin', {
      id: 999,
      enabled: false,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ ...created, enabled: false });
    expect((await call('DELETE', `/api/storage-locations/${created.id}`)).status).toBe(204);
    expect((await call('GET', `/api/storage-locations/${created.id}`)).status).toBe(404);
  });

  it('answers 422 naming each problem: unknown field, wrong type, bad path', async () => {
    const res = await call('POST', '/api/storage-locations', 'admin', {
      name: 'x',
      type: 'cloud',
      base_path: 5,
      colour: 'red',
    });
    expect(res.status).toBe(422);
    const byLoc = Object.fromEntries(
      (res.body.detail as { loc: unknown[]; msg: string; type: string }[]).map((d) => [
        d.loc.join('.'),
        d,
      ]),
    );
    expect(Object.keys(byLoc)).toEqual(
      expect.arrayContaining(['body.type', 'body.base_path', 'body.colour']),
    );
    // A field that is there with the wrong type says so; only an absent one is "required".
    expect(byLoc['body.base_path']).toMatchObject({ type: 'string_type' });
    expect(byLoc['body.base_path']?.msg).toMatch(/expected string/);
    // An id's wrong type is an int's, as pydantic names it (not a float's).
    const ids = await call('POST', '/api/instruments', 'admin', {
      name: 'n',
      tool_id: 'x',
      storage_location_id: 1.5,
      stability_seconds: 'soon',
    });
    expect(ids.status).toBe(422);
    expect(
      (ids.body.detail as { loc: string[]; type: string }[]).map((d) => [d.loc.join('.'), d.type]),
    ).toEqual([
      ['body.tool_id', 'int_parsing'],
      ['body.stability_seconds', 'float_parsing'],
      ['body.storage_location_id', 'int_from_float'],
    ]);
    const relative = await call('POST', '/api/storage-locations', 'admin', {
      name: 'rel',
      type: 'server',
      base_path: 'relative/path',
    });
    expect(relative.status).toBe(422);
    expect(relative.body.detail[0]).toMatchObject({
      loc: ['body', 'base_path'],
      msg: 'must be an absolute path on this server',
    });
    // Stations write under a server location: never among the server's own files.
    const dataDir = dirname(db.name);
    for (const [basePath, msg] of [
      ['/', /^must not be the server's data folder \(.+\), inside it, or a folder holding it$/],
      [join(dataDir, 'uploads'), /^must not be the server's data folder/],
      [dataDir, /^must not be the server's data folder/],
      ['/srv/records/../../etc', /^must not hold "\." or "\.\." parts/],
    ] as const) {
      const refused = await call('POST', '/api/storage-locations', 'admin', {
        name: 'inside',
        type: 'server',
        base_path: basePath,
      });
      expect(refused.status, basePath).toBe(422);
      expect(refused.body.detail[0].loc).toEqual(['body', 'base_path']);
      expect(refused.body.detail[0].msg).toMatch(msg);
    }
    // Two server locations on one folder, or one inside the other: an instrument owns its
    // folder in its location, and an upload naming the other location would get around that.
    const outer = join(tempDir('labstation-outer-'), 'parent', 'outer');
    mkdirSync(outer, { recursive: true });
    const first = await made('/api/storage-locations', {
      name: 'outer',
      type: 'server',
      base_path: outer,
    });
    for (const basePath of [outer, join(outer, 'inner'), dirname(outer)]) {
      const refused = await call('POST', '/api/storage-locations', 'admin', {
        name: 'overlapping',
        type: 'server',
        base_path: basePath,
      });
      expect(refused.status, basePath).toBe(422);
      expect(refused.body.detail[0]).toMatchObject({
        loc: ['body', 'base_path'],
        msg:
          `must not be the folder of the server storage location outer (${outer}), inside ` +
          'it, or a folder holding it',
      });
    }
    // Moved there later, or made a server one there, as well; a local one (a station's folder)
    // is not the server's.
    const apart = await made('/api/storage-locations', {
      name: 'apart',
      type: 'local',
      base_path: join(outer, 'inner'),
    });
    const moved = await call('PATCH', `/api/storage-locations/${apart.id}`, 'admin', {
      type: 'server',
    });
    expect(moved.status).toBe(422);
    expect(moved.body.detail[0].msg).toMatch(
      /^must not be the folder of the server storage location outer/,
    );
    // Saving a location again where it is is not an overlap with itself.
    expect(
      (await call('PATCH', `/api/storage-locations/${first.id}`, 'admin', { base_path: outer }))
        .status,
    ).toBe(200);
    for (const id of [apart.id, first.id]) {
      expect((await call('DELETE', `/api/storage-locations/${id}`, 'admin')).status).toBe(204);
    }
    const missing = await call('POST', '/api/storage-locations', 'admin', { type: 'local' });
    expect(missing.body.detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ['body', 'name'], msg: 'Field required' }),
      ]),
    );
    // Every field left out is "required", an enum's too (it was its list of values).
    const none = await call('POST', '/api/storage-locations', 'admin', {});
    expect(none.body.detail).toEqual([
      { loc: ['body', 'name'], msg: 'Field required', type: 'missing' },
      { loc: ['body', 'type'], msg: 'Field required', type: 'missing' },
      { loc: ['body', 'base_path'], msg: 'Field required', type: 'missing' },
    ]);
    const noCommand = await call('POST', '/api/hooks', 'admin', {
      name: 'cmd',
      trigger: 'post_transfer',
      kind: 'command',
      config: {},
    });
    expect(noCommand.status).toBe(422);
    // A setting left out of a hook's config, as a field left out of the body.
    expect(noCommand.body.detail[0]).toEqual({
      loc: ['body', 'config', 'command'],
      msg: 'Field required',
      type: 'missing',
    });
    // Control characters in a name (they end up in paths and one-line output).
    const nul = await call('POST', '/api/service-accounts', 'admin', { name: 'a\u0000b' });
    expect(nul.status).toBe(422);
    expect(nul.body.detail[0]).toMatchObject({
      loc: ['body', 'name'],
      msg: 'must not hold control characters (NUL, tab, line break)',
    });
    // A name stored before the rule still saves back unchanged (the admin pages send it).
    const legacy = await made('/api/service-accounts', { name: 'legacy-pc' });
    db.prepare('UPDATE stations SET name = ? WHERE id = ?').run('legacy\tpc', legacy.id);
    const kept = await call('PATCH', `/api/service-accounts/${legacy.id}`, 'admin', {
      name: 'legacy\tpc',
      description: 'still here',
    });
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    const renamed = await call('PATCH', `/api/service-accounts/${legacy.id}`, 'admin', {
      name: 'legacy\npc',
    });
    expect(renamed.status).toBe(422);
    expect((await call('DELETE', `/api/service-accounts/${legacy.id}`)).status).toBe(204);
  });

  it('validates instruments: globs, templates, references, the station tool', async () => {
    const res = await call('POST', '/api/instruments', 'admin', {
      name: 'Camera',
      tool_id: 99,
      storage_location_id: 98,
      watch: [{ path: 'relative', include: ['[abc'] }],
      destination_template: '{instrument}/{colour}/{filename}',
    });
    expect(res.status).toBe(422);
    const byLoc = Object.fromEntries(
      (res.body.detail as { loc: unknown[]; msg: string }[]).map((d) => [d.loc.join('.'), d.msg]),
    );
    expect(byLoc['body.tool_id']).toBe('no tool with id 99');
    expect(byLoc['body.storage_location_id']).toBe('no storage location with id 98');
    expect(byLoc['body.watch.0.path']).toMatch(/absolute path/);
    expect(byLoc['body.watch.0.include.0']).toBeDefined();
    expect(byLoc['body.destination_template']).toMatch(/colour/);
    // Patterns that compile and can match nothing are named too.
    const nothing = await call('POST', '/api/instruments', 'admin', {
      name: 'Camera',
      tool_id: 99,
      watch: [{ path: '/data', include: ['./raw/*.tif', 'raw/'], exclude: ['tmp/'] }],
    });
    expect(nothing.status).toBe(422);
    const nothingAt = Object.fromEntries(
      (nothing.body.detail as { loc: unknown[]; msg: string }[]).map((d) => [
        d.loc.join('.'),
        d.msg,
      ]),
    );
    expect(nothingAt['body.watch.0.include.0']).toBe(
      'paths are matched as they lie below the watched folder, with no . or .. in them (give raw/*.tif)',
    );
    expect(nothingAt['body.watch.0.include.1']).toMatch(/^ends with \/, so it names folders/);
    expect(nothingAt['body.watch.0.exclude.0']).toBeUndefined();

    const account = await made('/api/service-accounts', { name: 'tem-pc' });
    expect(account.key).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    const listed = (await call('GET', `/api/service-accounts/${account.id}`)).body;
    expect(listed.key).toBeUndefined();
    const store = await made('/api/storage-locations', {
      name: 'tem-store',
      type: 'local',
      base_path: '/mnt/tem',
    });
    const first = await made('/api/instruments', {
      name: 'TEM camera',
      tool_id: 1,
      service_account_id: account.id,
      watch: [{ path: '/data/tem' }],
      storage_location_id: store.id,
    });
    expect(first.watch[0].exclude).toContain('*.tmp');
    expect(first.destination_template).toBe('{instrument}/{yyyy}/{mm}/{dd}/{relative_path}');
    // The station now runs TEM: an SEM instrument cannot be given to it.
    const wrongTool = await call('POST', '/api/instruments', 'admin', {
      name: 'SEM detector',
      tool_id: 2,
      service_account_id: account.id,
    });
    expect(wrongTool.status).toBe(422);
    expect(wrongTool.body.detail[0].loc).toEqual(['body', 'service_account_id']);
    // Only the tool changed: the problem is on the field that was sent.
    const retooled = await call('PATCH', `/api/instruments/${first.id}`, 'admin', { tool_id: 2 });
    expect(retooled.status).toBe(422);
    expect(retooled.body.detail[0]).toMatchObject({
      loc: ['body', 'tool_id'],
      type: 'tool_mismatch',
    });
    const dup = await call('POST', '/api/instruments', 'admin', { name: 'TEM camera', tool_id: 1 });
    expect(dup.body.detail[0]).toMatchObject({ loc: ['body', 'name'] });
  });

  it('gives a service account only an instrument its station can run: folders and storage', async () => {
    const account = await made('/api/service-accounts', { name: 'nostore-pc' });
    const store = await made('/api/storage-locations', {
      name: 'nostore-store',
      type: 'local',
      base_path: '/mnt/nostore',
    });
    const typesOf = (reply: Reply): string[] =>
      (reply.body.detail as { loc: string[]; type: string }[]).map(
        (d) => `${d.loc.join('.')} ${d.type}`,
      );
    const bare = await call('POST', '/api/instruments', 'admin', {
      name: 'nostore',
      tool_id: 1,
      service_account_id: account.id,
    });
    expect(bare.status).toBe(422);
    expect(typesOf(bare)).toEqual([
      'body.watch needed_by_station',
      'body.storage_location_id needed_by_station',
    ]);
    expect(bare.body.detail[1].msg).toBe(
      'an enabled instrument with a service account needs a storage location, or every file ' +
        'its station finds fails there',
    );
    const noStore = await call('POST', '/api/instruments', 'admin', {
      name: 'nostore',
      tool_id: 1,
      service_account_id: account.id,
      watch: [{ path: '/data2' }],
    });
    expect(noStore.status).toBe(422);
    expect(typesOf(noStore)).toEqual(['body.storage_location_id needed_by_station']);
    // Disabled, or without a station, it may wait for them.
    const waiting = await made('/api/instruments', {
      name: 'nostore',
      tool_id: 1,
      service_account_id: account.id,
      enabled: false,
    });
    const enabled = await call('PATCH', `/api/instruments/${waiting.id}`, 'admin', {
      enabled: true,
    });
    expect(typesOf(enabled)).toEqual([
      'body.watch needed_by_station',
      'body.storage_location_id needed_by_station',
    ]);
    const running = await call('PATCH', `/api/instruments/${waiting.id}`, 'admin', {
      enabled: true,
      watch: [{ path: '/data2' }],
      storage_location_id: store.id,
    });
    expect(running.status, JSON.stringify(running.body)).toBe(200);
    // Running, it keeps them.
    const unstored = await call('PATCH', `/api/instruments/${waiting.id}`, 'admin', {
      storage_location_id: null,
    });
    expect(unstored.status).toBe(422);
    expect(typesOf(unstored)).toEqual(['body.storage_location_id needed_by_station']);
    const unwatched = await call('PATCH', `/api/instruments/${waiting.id}`, 'admin', {
      watch: [],
    });
    expect(typesOf(unwatched)).toEqual(['body.watch needed_by_station']);
    expect((await call('GET', `/api/instruments/${waiting.id}`)).body).toMatchObject({
      watch: [{ path: '/data2' }],
      storage_location_id: store.id,
    });
    // Taken off its station first, it may go without them.
    const loose = await call('PATCH', `/api/instruments/${waiting.id}`, 'admin', {
      service_account_id: null,
      storage_location_id: null,
    });
    expect(loose.status, JSON.stringify(loose.body)).toBe(200);
    expect((await call('DELETE', `/api/instruments/${waiting.id}`)).status).toBe(204);
  });

  it('refuses a destination template that would give every file the same name', async () => {
    const rule =
      'template must use at least one of {relative_path}, {filename} or {ark_blade}, or every ' +
      'file is given the same name (numbered (1), (2), ...), losing its own name and extension';
    const flat = await call('POST', '/api/instruments', 'admin', {
      name: 'Flat camera',
      tool_id: 2,
      destination_template: '{instrument}/{yyyy}',
    });
    expect(flat.status).toBe(422);
    expect(flat.body.detail).toEqual([
      { loc: ['body', 'destination_template'], msg: rule, type: 'template' },
    ]);
    const inst = await made('/api/instruments', { name: 'Flat camera', tool_id: 2 });
    const patched = await call('PATCH', `/api/instruments/${inst.id}`, 'admin', {
      destination_template: 'flat/{yyyy}',
    });
    expect(patched.status).toBe(422);
    expect(patched.body.detail).toEqual([
      { loc: ['body', 'destination_template'], msg: rule, type: 'template' },
    ]);
    expect((await call('GET', `/api/instruments/${inst.id}`)).body.destination_template).toBe(
      '{instrument}/{yyyy}/{mm}/{dd}/{relative_path}',
    );
    // Any one field that differs per file will do, and a redirect hook's template follows it too.
    for (const template of ['flat/{yyyy}/{filename}', 'flat/{ark_blade}', '{relative_path}']) {
      const ok = await call('PATCH', `/api/instruments/${inst.id}`, 'admin', {
        destination_template: template,
      });
      expect(ok.status, template).toBe(200);
    }
    const redirect = await call('POST', '/api/hooks', 'admin', {
      name: 'flat-raw',
      trigger: 'pre_transfer',
      kind: 'redirect',
      config: { glob: '*.raw', destination_template: 'raw/{user}' },
    });
    expect(redirect.status).toBe(422);
    expect(redirect.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'config', 'destination_template'], msg: rule }),
    ]);
    expect((await call('DELETE', `/api/instruments/${inst.id}`)).status).toBe(204);
  });

  it('validates schedules (cron, time zone) and hooks (kind, trigger, config)', async () => {
    const inst = await made('/api/instruments', { name: 'Sched inst', tool_id: 2 });
    const badCron = await call('POST', '/api/schedules', 'admin', {
      instrument_id: inst.id,
      cron: '61 * * * *',
    });
    expect(badCron.status).toBe(422);
    expect(badCron.body.detail[0].loc).toEqual(['body', 'cron']);
    const badZone = await call('POST', '/api/schedules', 'admin', {
      instrument_id: inst.id,
      cron: '0 * * * *',
      timezone: 'Mars/Olympus',
    });
    expect(badZone.body.detail[0].loc).toEqual(['body', 'timezone']);
    // Every problem at once: a bad zone does not hide a cron that never comes round.
    const both = await call('POST', '/api/schedules', 'admin', {
      instrument_id: inst.id,
      cron: '0 0 31 2 *',
      timezone: 'Mars/Olympus',
    });
    expect(both.status).toBe(422);
    expect((both.body.detail as { loc: string[] }[]).map((d) => d.loc.join('.'))).toEqual([
      'body.timezone',
      'body.cron',
    ]);
    // The same instrument at the same times twice would start each run twice; another time
    // zone, or another cron, is another schedule.
    const nightly = await made('/api/schedules', { instrument_id: inst.id, cron: '0 2 * * *' });
    const again = await call('POST', '/api/schedules', 'admin', {
      instrument_id: inst.id,
      cron: '0 2 * * *',
    });
    expect(again.status).toBe(422);
    expect(again.body.detail).toEqual([
      {
        loc: ['body', 'cron'],
        msg:
          `schedule ${nightly.id} already runs instrument ${inst.id} at these times ` +
          '(the same cron and time zone)',
        type: 'unique',
      },
    ]);
    // The same cron written another way: its seconds given, a space more.
    const respelled = await call('POST', '/api/schedules', 'admin', {
      instrument_id: inst.id,
      cron: '0  0 2 * * *',
    });
    expect(respelled.status).toBe(422);
    expect(respelled.body.detail[0].type).toBe('unique');
    const zurich = await made('/api/schedules', {
      instrument_id: inst.id,
      cron: '0 2 * * *',
      timezone: 'Europe/Zurich',
    });
    // A zone is one zone however it is written: kept as written, compared as a zone.
    // Mutation: zones compared as written: "europe/ZURICH" was a second schedule at these times.
    const zurichAgain = await call('POST', '/api/schedules', 'admin', {
      instrument_id: inst.id,
      cron: '0 2 * * *',
      timezone: 'europe/ZURICH',
    });
    expect(zurichAgain.status).toBe(422);
    expect(zurichAgain.body.detail[0].msg).toMatch(new RegExp(`^schedule ${zurich.id} already`));
    const utc = await made('/api/schedules', {
      instrument_id: inst.id,
      cron: '0 3 * * *',
      timezone: 'etc/utc',
    });
    expect(utc.timezone).toBe('etc/utc');
    const inUtc = await call('POST', '/api/schedules', 'admin', {
      instrument_id: inst.id,
      cron: '0 3 * * *',
      timezone: 'UTC',
    });
    expect(inUtc.status).toBe(422);
    const eastern = await made('/api/schedules', {
      instrument_id: inst.id,
      cron: '0 4 * * *',
      timezone: 'US/Eastern',
    });
    const newYork = await call('POST', '/api/schedules', 'admin', {
      instrument_id: inst.id,
      cron: '0 4 * * *',
      timezone: 'America/New_York',
    });
    expect(newYork.status).toBe(422);
    for (const s of [utc, eastern]) {
      expect((await call('DELETE', `/api/schedules/${s.id}`)).status).toBe(204);
    }
    const moved = await call('PATCH', `/api/schedules/${zurich.id}`, 'admin', { timezone: null });
    expect(moved.status).toBe(422);
    expect(moved.body.detail[0].type).toBe('unique');
    // Saved back as it is: not a duplicate of itself.
    const same = await call('PATCH', `/api/schedules/${nightly.id}`, 'admin', {
      cron: '0 2 * * *',
    });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    // A disabled schedule starts nothing: it blocks no other, and two that repeat each other
    // (made before this rule) can still be disabled.
    expect(
      (await call('PATCH', `/api/schedules/${nightly.id}`, 'admin', { enabled: false })).status,
    ).toBe(200);
    const twin = await made('/api/schedules', { instrument_id: inst.id, cron: '0 2 * * *' });
    const enableAgain = await call('PATCH', `/api/schedules/${nightly.id}`, 'admin', {
      enabled: true,
    });
    expect(enableAgain.status).toBe(422);
    expect(enableAgain.body.detail[0].msg).toMatch(new RegExp(`^schedule ${twin.id} already runs`));
    db.prepare('UPDATE harvest_schedules SET enabled = 1 WHERE id = ?').run(nightly.id);
    expect(
      (await call('PATCH', `/api/schedules/${twin.id}`, 'admin', { enabled: false })).status,
    ).toBe(200);
    for (const s of [nightly, zurich, twin]) {
      expect((await call('DELETE', `/api/schedules/${s.id}`)).status).toBe(204);
    }
    const badHook = await call('POST', '/api/hooks', 'admin', {
      name: 'bad',
      trigger: 'pre_transfer',
      kind: 'sidecar_json',
      config: { suffixes: [] },
    });
    expect(badHook.status).toBe(422);
    const locs = (badHook.body.detail as { loc: unknown[] }[]).map((d) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.trigger', 'body.config.suffixes']));
    // A glob of the wrong type is told what a glob is.
    for (const glob of [5, { a: 1 }, ['*.tmp', 5]]) {
      const badGlob = await call('POST', '/api/hooks', 'admin', {
        name: 'bad-glob',
        trigger: 'pre_transfer',
        kind: 'skip',
        config: { glob },
      });
      expect(badGlob.status).toBe(422);
      expect(badGlob.body.detail).toEqual([
        expect.objectContaining({
          loc: ['body', 'config', 'glob'],
          msg: 'must be a glob or a list of globs (text), such as "*.tmp" or ["*.tmp", "*.bak"]',
        }),
      ]);
    }
    // A skip hook without a rule would keep out every file for good (config left out is {}).
    for (const config of [undefined, {}, { glob: undefined }]) {
      const everything = await call('POST', '/api/hooks', 'admin', {
        name: 'everything',
        trigger: 'pre_transfer',
        kind: 'skip',
        ...(config === undefined ? {} : { config }),
      });
      expect(everything.status).toBe(422);
      expect(everything.body.detail).toEqual([
        expect.objectContaining({
          loc: ['body', 'config'],
          msg: 'give glob, min_size or max_size: without one a skip hook skips every file',
        }),
      ]);
    }
    // Each problem of a config at its key, indexes as numbers, with FastAPI's type, as every
    // body's (they were a string index, and "value_error" for all).
    const badCommand = await call('POST', '/api/hooks', 'admin', {
      name: 'bad-command',
      trigger: 'post_transfer',
      kind: 'command',
      config: { command: 'x', args: [1], timeout_seconds: 0, bogus: 1 },
    });
    expect(badCommand.status).toBe(422);
    expect(
      (badCommand.body.detail as { loc: unknown[]; type: string }[])
        .map((d) => [d.loc, d.type])
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    ).toEqual([
      [['body', 'config', 'args', 0], 'string_type'],
      [['body', 'config', 'bogus'], 'extra_forbidden'],
      [['body', 'config', 'timeout_seconds'], 'greater_than'],
    ]);
    const unknownKind = await call('POST', '/api/hooks', 'admin', {
      name: 'bad2',
      trigger: 'post_transfer',
      kind: 'teleport',
    });
    expect(unknownKind.body.detail[0]).toMatchObject({ loc: ['body', 'kind'] });
    const redirect = await call('POST', '/api/hooks', 'admin', {
      name: 'bad3',
      trigger: 'pre_transfer',
      kind: 'redirect',
      config: { storage_location: 'nowhere' },
    });
    expect(redirect.body.detail[0]).toMatchObject({
      loc: ['body', 'config', 'storage_location'],
    });
    const hook = await made('/api/hooks', {
      name: 'info',
      trigger: 'post_transfer',
      kind: 'file_info',
      instrument_id: inst.id,
    });
    expect(hook).toMatchObject({ priority: 100, config: {}, enabled: true });
    // Still referenced: 409 naming what.
    const blocked = await call('DELETE', `/api/instruments/${inst.id}`);
    expect(blocked.status).toBe(409);
    expect(blocked.body.detail).toMatch(/hook info/);
    expect((await call('DELETE', `/api/hooks/${hook.id}`)).status).toBe(204);
    expect((await call('DELETE', `/api/instruments/${inst.id}`)).status).toBe(204);
  });

  it('refuses to rename a storage location a redirect hook names (409)', async () => {
    const location = await made('/api/storage-locations', {
      name: 'raw-store',
      type: 'local',
      base_path: '/mnt/raw',
    });
    const hook = await made('/api/hooks', {
      name: 'raw-aside',
      trigger: 'pre_transfer',
      kind: 'redirect',
      config: { glob: '*.raw', storage_location: 'raw-store' },
    });
    const renamed = await call('PATCH', `/api/storage-locations/${location.id}`, 'admin', {
      name: 'raw-2026',
    });
    expect(renamed.status).toBe(409);
    expect(renamed.body.detail).toMatch(/hook raw-aside/);
    expect((await call('DELETE', `/api/storage-locations/${location.id}`)).status).toBe(409);
    expect((await call('DELETE', `/api/hooks/${hook.id}`)).status).toBe(204);
    expect((await call('DELETE', `/api/storage-locations/${location.id}`)).status).toBe(204);
  });

  it('keeps an enabled redirect hook and the location it sends files to from being off together', async () => {
    const location = await made('/api/storage-locations', {
      name: 'cold-store',
      type: 'local',
      base_path: '/mnt/cold',
    });
    const hook = await made('/api/hooks', {
      name: 'cold-aside',
      trigger: 'pre_transfer',
      kind: 'redirect',
      config: { glob: '*.raw', storage_location: 'cold-store' },
    });
    const off = await call('PATCH', `/api/storage-locations/${location.id}`, 'admin', {
      enabled: false,
    });
    expect(off.status).toBe(409);
    expect(off.body.detail).toMatch(/enabled redirect hook cold-aside sends files/);
    // The hook off first, then the location; an enabled redirect to it is refused at its field.
    expect((await call('PATCH', `/api/hooks/${hook.id}`, 'admin', { enabled: false })).status).toBe(
      200,
    );
    expect(
      (await call('PATCH', `/api/storage-locations/${location.id}`, 'admin', { enabled: false }))
        .status,
    ).toBe(200);
    const again = await call('PATCH', `/api/hooks/${hook.id}`, 'admin', { enabled: true });
    expect(again.status).toBe(422);
    expect(again.body.detail[0]).toMatchObject({
      loc: ['body', 'config', 'storage_location'],
      type: 'needed_by_station',
    });
    expect(again.body.detail[0].msg).toMatch(/"cold-store" is disabled/);
    expect((await call('DELETE', `/api/hooks/${hook.id}`)).status).toBe(204);
    expect((await call('DELETE', `/api/storage-locations/${location.id}`)).status).toBe(204);
  });

  it('never gives the id of a deleted record to a new one', async () => {
    const bodies = (n: number): [string, Record<string, unknown>][] => [
      ['service-accounts', { name: `ids-pc-${n}` }],
      ['storage-locations', { name: `ids-store-${n}`, type: 'local', base_path: `/mnt/ids${n}` }],
      ['instruments', { name: `ids-inst-${n}`, tool_id: 2 }],
      ['hooks', { name: `ids-hook-${n}`, trigger: 'post_transfer', kind: 'file_info' }],
    ];
    for (let n = 0; n < 2; n++) {
      for (const [resource, body] of bodies(n)) {
        const gone = await made(`/api/${resource}`, body);
        expect((await call('DELETE', `/api/${resource}/${gone.id}`)).status).toBe(204);
        const next = await made(`/api/${resource}`, body);
        expect(next.id, resource).toBeGreaterThan(gone.id as number);
        // A client still holding the old id is told it is gone, not shown the new record.
        expect((await call('GET', `/api/${resource}/${gone.id}`)).status, resource).toBe(404);
        expect((await call('DELETE', `/api/${resource}/${next.id}`)).status).toBe(204);
      }
    }
    const inst = await made('/api/instruments', { name: 'ids-sched', tool_id: 2 });
    const gone = await made('/api/schedules', { instrument_id: inst.id, cron: '0 3 * * *' });
    expect((await call('DELETE', `/api/schedules/${gone.id}`)).status).toBe(204);
    const next = await made('/api/schedules', { instrument_id: inst.id, cron: '0 3 * * *' });
    expect(next.id).toBeGreaterThan(gone.id as number);
    expect((await call('DELETE', `/api/schedules/${next.id}`)).status).toBe(204);
    expect((await call('DELETE', `/api/instruments/${inst.id}`)).status).toBe(204);
  });

  it('answers 404 for missing ids and 422 for ids that are not numbers', async () => {
    for (const resource of [
      'instruments',
      'storage-locations',
      'service-accounts',
      'schedules',
      'hooks',
    ]) {
      expect((await call('GET', `/api/${resource}/424242`)).status, resource).toBe(404);
      expect((await call('PATCH', `/api/${resource}/424242`, 'admin', {})).status).toBe(404);
      expect((await call('DELETE', `/api/${resource}/424242`)).status).toBe(404);
      expect((await call('GET', `/api/${resource}/abc`)).status).toBe(422);
    }
    // 404 before any check of the body.
    expect((await call('PATCH', '/api/instruments/424242', 'admin', { bogus: 1 })).status).toBe(
      404,
    );
    const paging = await call('GET', '/api/instruments?size=5000');
    expect(paging.status).toBe(422);
    expect(paging.body.detail).toEqual([
      { loc: ['query', 'size'], msg: 'must be between 1 and 1000', type: 'less_than_equal' },
    ]);
  });

  it('reads a negative number as a whole number: out of range for paging, no record for an id', async () => {
    // As FastAPI's `page: int = Query(1, ge=1)` and `id: int` read them.
    for (const list of ['/api/schedules', '/api/files', '/api/transfers']) {
      const below = await call('GET', `${list}?page=-1&size=0`);
      expect(below.status, list).toBe(422);
      expect(below.body.detail, list).toEqual([
        { loc: ['query', 'page'], msg: 'must be 1 or more', type: 'greater_than_equal' },
        { loc: ['query', 'size'], msg: 'must be between 1 and 1000', type: 'greater_than_equal' },
      ]);
      const words = await call('GET', `${list}?page=one`);
      expect(words.body.detail, list).toEqual([
        { loc: ['query', 'page'], msg: 'must be a whole number', type: 'int_parsing' },
      ]);
    }
    for (const path of [
      '/api/instruments/-1',
      '/api/storage-locations/-1',
      '/api/service-accounts/-1',
      '/api/schedules/-1',
      '/api/hooks/-1',
      '/api/files/-1',
      '/api/transfers/-1',
    ]) {
      const res = await call('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.body.detail, path).toMatch(/^no .* with id -1$/);
    }
    expect((await call('PATCH', '/api/hooks/-1', 'admin', {})).status).toBe(404);
    expect((await call('DELETE', '/api/instruments/-1')).status).toBe(404);
    expect((await call('GET', '/api/files/1.5')).body.detail).toEqual([
      { loc: ['path', 'id'], msg: 'must be a whole number', type: 'int_parsing' },
    ]);
    // A filter by a negative id finds nothing.
    const none = await call('GET', '/api/files?instrument_id=-1');
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ items: [], total: 0 });
    expect((await call('GET', '/api/transfers?file_id=-1')).body).toMatchObject({ total: 0 });
    // Of any length (they were "must be a whole number" from 16 digits on).
    const huge = '99999999999999999999';
    for (const path of [`/api/instruments/${huge}`, `/api/files/${huge}`, `/api/hooks/${huge}`]) {
      expect((await call('GET', path)).status, path).toBe(404);
    }
    expect((await call('GET', `/api/instruments/${huge}/`)).status).toBe(307);
    expect((await call('GET', `/api/files?instrument_id=${huge}`)).body).toMatchObject({
      items: [],
      total: 0,
    });
    expect((await call('GET', `/api/transfers?file_id=-${huge}`)).body).toMatchObject({
      total: 0,
    });
    expect((await call('GET', `/api/files?page=${huge}`)).body).toMatchObject({ items: [] });
    expect((await call('GET', `/api/schedules?page=${huge}`)).status).toBe(200);
    expect((await call('GET', `/api/files?size=${huge}`)).body.detail).toEqual([
      { loc: ['query', 'size'], msg: 'must be between 1 and 1000', type: 'less_than_equal' },
    ]);
    // Given empty, a number is not there to be left out (it listed every file).
    for (const name of ['instrument_id', 'page', 'size']) {
      expect((await call('GET', `/api/files?${name}=`)).body.detail, name).toEqual([
        { loc: ['query', name], msg: 'must be a whole number', type: 'int_parsing' },
      ]);
    }
  });
});

describe('records from a station, schedules and runs', () => {
  let key: string;
  let accountId: number;
  let instrumentId: number;
  let scheduleId: number;
  let instrumentUuid: string;
  let nextOutbox = 1;

  function push(records: { kind: string; uuid: string; payload: object }[]): Promise<Reply> {
    return station('POST', '/sync/push', key, {
      records: records.map((r) => ({ ...r, id: nextOutbox++ })),
    });
  }

  function filePayload(uuid: string, name: string, extra: object = {}): object {
    return harvestFilePayload(
      { uuid: instrumentUuid, name: 'Records camera', toolUuid: TOOL_UUID },
      uuid,
      name,
      {
        metadata_: { file_info: { mime_type: 'text/plain' }, sample: { name: 'grid 3' } },
        updated_at: '2026-03-01T10:00:01.000Z',
        ...extra,
      },
    );
  }

  beforeAll(async () => {
    const account = await made('/api/service-accounts', { name: 'records-pc' });
    key = account.key;
    accountId = account.id;
    const location = await made('/api/storage-locations', {
      name: 'records',
      type: 'local',
      base_path: '/mnt/records',
    });
    const inst = await made('/api/instruments', {
      name: 'Records camera',
      tool_id: 1,
      service_account_id: accountId,
      watch: [{ path: '/data', include: ['*.dm4'] }],
      storage_location_id: location.id,
    });
    instrumentId = inst.id;
    instrumentUuid = db
      .prepare('SELECT uuid FROM instruments WHERE id = ?')
      .pluck()
      .get(inst.id) as string;
  });

  it("sends the station its harvest configuration, and its schedule's deployment comes back", async () => {
    const first = await station('GET', '/sync/changes?cursor=0', key);
    expect(first.status).toBe(200);
    const delta = first.body as FacilityDelta;
    expect(delta.station.tool).toBe('TEM');
    expect(delta.harvest?.instruments.map((i) => i.name)).toEqual(['Records camera']);
    expect(delta.harvest?.storage_locations.map((l) => l.name)).toEqual(['records']);

    const schedule = await made('/api/schedules', {
      instrument_id: instrumentId,
      cron: '0 3 * * *',
    });
    scheduleId = schedule.id;
    expect(schedule.deployment).toMatchObject({
      station: { id: accountId, name: 'records-pc' },
      state: 'pending',
      deployed_at: null,
    });
    const next = await station('GET', `/sync/changes?cursor=${delta.cursor}`, key);
    const sent = (next.body as FacilityDelta).harvest?.schedules ?? [];
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ cron: '0 3 * * *', version: 1, enabled: true });
    const reported = await push([
      {
        kind: 'harvest_deployment',
        uuid: sent[0].uuid,
        payload: {
          uuid: sent[0].uuid,
          version: 1,
          state: 'deployed',
          deployed_at: '2026-03-01T09:00:00.000Z',
          next_run_at: '2026-03-02T03:00:00.000Z',
          last_run_at: null,
          error: '',
        },
      },
    ]);
    expect((reported.body as PushResult).error).toBeNull();
    const deployed = (await call('GET', `/api/schedules/${scheduleId}`)).body;
    expect(deployed.deployment).toMatchObject({
      state: 'deployed',
      deployed_at: '2026-03-01T09:00:00.000Z',
      next_run_at: '2026-03-02T03:00:00.000Z',
    });
    // What it is, sent back (a client PATCHing what it read): nothing to deploy again.
    const same = await call('PATCH', `/api/schedules/${scheduleId}`, 'admin', {
      instrument_id: deployed.instrument_id,
      cron: deployed.cron,
      timezone: deployed.timezone,
      enabled: deployed.enabled,
    });
    expect(same.status).toBe(200);
    expect(same.body.deployment).toMatchObject({ state: 'deployed' });
    const resent = await station('GET', `/sync/changes?cursor=${delta.cursor}`, key);
    expect((resent.body as FacilityDelta).harvest?.schedules[0]).toMatchObject({ version: 1 });
    // An update re-deploys: pending again until the station reports the new version.
    const updated = await call('PATCH', `/api/schedules/${scheduleId}`, 'admin', {
      cron: '0 4 * * *',
    });
    expect(updated.body.deployment.state).toBe('pending');
  });

  it('queues a triggered run for the station and shows what it reports', async () => {
    const trigger = await call('POST', `/api/schedules/${scheduleId}/trigger`);
    expect(trigger.status).toBe(202);
    expect(trigger.body).toMatchObject({
      state: 'queued',
      station: { id: accountId, name: 'records-pc', online: true },
      queued_offline: false,
    });
    const delta = (await station('GET', '/sync/changes?cursor=0', key)).body as FacilityDelta;
    expect(delta.runs).toHaveLength(1);
    const run = delta.runs![0];
    const runPayload = {
      uuid: run.uuid,
      schedule_uuid: run.schedule_uuid,
      instrument_uuid: run.instrument_uuid,
      trigger: 'manual',
      requested_at: run.requested_at,
      started_at: '2026-03-01T10:00:00.000Z',
    };
    await push([
      {
        kind: 'harvest_run',
        uuid: run.uuid,
        payload: {
          ...runPayload,
          state: 'completed',
          finished_at: '2026-03-01T10:00:05.000Z',
          files_completed: 3,
          files_skipped: 1,
          files_failed: 0,
          error: '',
        },
      },
      // A late report of the start does not take the run back.
      {
        kind: 'harvest_run',
        uuid: run.uuid,
        payload: {
          ...runPayload,
          state: 'running',
          finished_at: null,
          files_completed: 0,
          files_skipped: 0,
          files_failed: 0,
          error: '',
        },
      },
    ]);
    const schedule = (await call('GET', `/api/schedules/${scheduleId}`)).body;
    expect(schedule.deployment.runs[0]).toMatchObject({
      id: trigger.body.run_id,
      state: 'completed',
      files_completed: 3,
      files_skipped: 1,
      files_failed: 0,
    });
    expect(schedule.deployment.last_run_at).toBe('2026-03-01T10:00:00.000Z');
    const after = (await station('GET', '/sync/changes?cursor=0', key)).body as FacilityDelta;
    expect(after.runs).toEqual([]);
  });

  it('says a trigger for an offline station is queued', async () => {
    db.prepare("UPDATE stations SET last_seen_at = '2026-01-01T00:00:00.000Z' WHERE id = ?").run(
      accountId,
    );
    const trigger = await call('POST', `/api/schedules/${scheduleId}/trigger`);
    expect(trigger.status).toBe(202);
    expect(trigger.body.queued_offline).toBe(true);
    expect(trigger.body.detail).toMatch(/offline.*queued/);
  });

  it("shows a moved schedule's deployment on its new station: none yet, pending only if enabled", async () => {
    const other = await made('/api/service-accounts', { name: 'deploy-b' });
    const location = await made('/api/storage-locations', {
      name: 'deploy-store',
      type: 'local',
      base_path: '/mnt/deploy',
    });
    const elsewhere = await made('/api/instruments', {
      name: 'Deploy camera',
      tool_id: 1,
      service_account_id: other.id,
      watch: [{ path: '/data/deploy' }],
      storage_location_id: location.id,
    });
    const deploymentOf = async (id: number): Promise<Record<string, unknown>> =>
      (await call('GET', `/api/schedules/${id}`)).body.deployment as Record<string, unknown>;
    /** The report of the station that runs the schedule now (this describe's records-pc). */
    const report = async (id: number, state: string, deployedAt: string | null): Promise<void> => {
      const { uuid, version } = db
        .prepare('SELECT uuid, version FROM harvest_schedules WHERE id = ?')
        .get(id) as { uuid: string; version: number };
      const pushed = await push([
        {
          kind: 'harvest_deployment',
          uuid,
          payload: {
            uuid,
            version,
            state,
            deployed_at: deployedAt,
            next_run_at: state === 'deployed' ? '2026-03-02T05:00:00.000Z' : null,
            last_run_at: null,
            error: '',
          },
        },
      ]);
      expect((pushed.body as PushResult).error).toBeNull();
    };

    // Deployed on records-pc, disabled there (removed), then moved to a station that never
    // connected: nothing is deployed there, and nothing is pending.
    const schedule = await made('/api/schedules', {
      instrument_id: instrumentId,
      cron: '0 5 * * *',
    });
    await report(schedule.id, 'deployed', '2026-03-01T09:30:00.000Z');
    expect(await deploymentOf(schedule.id)).toMatchObject({
      state: 'deployed',
      deployed_at: '2026-03-01T09:30:00.000Z',
    });
    const disabled = await call('PATCH', `/api/schedules/${schedule.id}`, 'admin', {
      enabled: false,
    });
    // records-pc still runs it until it takes the change.
    expect(disabled.body.deployment.state).toBe('pending');
    await report(schedule.id, 'removed', '2026-03-01T09:30:00.000Z');
    expect((await deploymentOf(schedule.id)).state).toBe('removed');
    // Saved again while disabled, it stays removed: there is nothing to take down.
    const retimed = await call('PATCH', `/api/schedules/${schedule.id}`, 'admin', {
      cron: '0 6 * * *',
    });
    expect(retimed.body.deployment.state).toBe('removed');
    const moved = await call('PATCH', `/api/schedules/${schedule.id}`, 'admin', {
      instrument_id: elsewhere.id,
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.deployment).toMatchObject({
      station: { id: other.id, name: 'deploy-b' },
      state: 'removed',
      deployed_at: null,
      next_run_at: null,
    });
    const enabled = await call('PATCH', `/api/schedules/${schedule.id}`, 'admin', {
      enabled: true,
    });
    expect(enabled.body.deployment).toMatchObject({ state: 'pending', deployed_at: null });

    // Its instrument moved instead: the same for each of its schedules.
    const movedInstrument = await made('/api/instruments', {
      name: 'Deploy mover',
      tool_id: 1,
      service_account_id: accountId,
      watch: [{ path: '/data/deploy-mover' }],
      storage_location_id: location.id,
    });
    const running = await made('/api/schedules', {
      instrument_id: movedInstrument.id,
      cron: '0 7 * * *',
    });
    const off = await made('/api/schedules', {
      instrument_id: movedInstrument.id,
      cron: '0 8 * * *',
      enabled: false,
    });
    // Made disabled, it has nothing to deploy.
    expect(off.deployment.state).toBe('removed');
    await report(running.id, 'deployed', '2026-03-01T09:45:00.000Z');
    await report(off.id, 'removed', null);
    expect((await deploymentOf(running.id)).deployed_at).toBe('2026-03-01T09:45:00.000Z');
    const handedOver = await call('PATCH', `/api/instruments/${movedInstrument.id}`, 'admin', {
      service_account_id: other.id,
    });
    expect(handedOver.status, JSON.stringify(handedOver.body)).toBe(200);
    expect(await deploymentOf(running.id)).toMatchObject({
      station: { id: other.id },
      state: 'pending',
      deployed_at: null,
      next_run_at: null,
    });
    expect(await deploymentOf(off.id)).toMatchObject({
      station: { id: other.id },
      state: 'removed',
      deployed_at: null,
    });

    // No station runs it: disabled while pending, it is removed at once (no one will report).
    const unrun = await made('/api/instruments', { name: 'Deploy unrun', tool_id: 1 });
    const waiting = await made('/api/schedules', { instrument_id: unrun.id, cron: '0 9 * * *' });
    expect(waiting.deployment.state).toBe('pending');
    const turnedOff = await call('PATCH', `/api/schedules/${waiting.id}`, 'admin', {
      enabled: false,
    });
    expect(turnedOff.status).toBe(200);
    expect(await deploymentOf(waiting.id)).toMatchObject({ station: null, state: 'removed' });
    expect((await call('DELETE', `/api/schedules/${waiting.id}`)).status).toBe(204);
    expect((await call('DELETE', `/api/instruments/${unrun.id}`)).status).toBe(204);

    for (const s of [schedule, running, off]) {
      expect((await call('DELETE', `/api/schedules/${s.id}`)).status).toBe(204);
    }
    for (const i of [elsewhere, movedInstrument]) {
      expect((await call('DELETE', `/api/instruments/${i.id}`)).status).toBe(204);
    }
    expect((await call('DELETE', `/api/storage-locations/${location.id}`)).status).toBe(204);
    expect((await call('DELETE', `/api/service-accounts/${other.id}`)).status).toBe(204);
  });

  it('moves the runs queued for a station with their instrument, and deletes a station that took none', async () => {
    const a = await made('/api/service-accounts', { name: 'mover-a' });
    const b = await made('/api/service-accounts', { name: 'mover-b' });
    const location = await made('/api/storage-locations', {
      name: 'mover-store',
      type: 'local',
      base_path: '/mnt/mover',
    });
    const inst = await made('/api/instruments', {
      name: 'Mover camera',
      tool_id: 1,
      service_account_id: a.id,
      watch: [{ path: '/data/mover' }],
      storage_location_id: location.id,
    });
    const schedule = await made('/api/schedules', { instrument_id: inst.id, cron: '0 3 * * *' });
    const first = await call('POST', `/api/schedules/${schedule.id}/trigger`);
    expect(first.body).toMatchObject({ station: { id: a.id }, queued_offline: true });
    const runsOf = async (): Promise<{ id: number; state: string; error: string }[]> =>
      (await call('GET', `/api/schedules/${schedule.id}`)).body.deployment.runs as {
        id: number;
        state: string;
        error: string;
      }[];
    const queuedFor = async (stationKey: string): Promise<string[]> =>
      (
        (await station('GET', '/sync/changes?cursor=0', stationKey)).body as FacilityDelta
      ).runs!.map((r) => r.instrument_uuid);

    expect(
      (await call('PATCH', `/api/instruments/${inst.id}`, 'admin', { service_account_id: b.id }))
        .status,
    ).toBe(200);
    const moved = await runsOf();
    const again = moved.find((r) => r.state === 'queued')!;
    expect(moved.find((r) => r.id === first.body.run_id)).toMatchObject({
      state: 'failed',
      error:
        `the instrument moved to service account ${b.id} (mover-b) before this run started: ` +
        `run ${again.id} is queued there instead`,
    });
    expect(await queuedFor(a.key)).toEqual([]);
    expect(await queuedFor(b.key)).toHaveLength(1);

    // Taken off every station: what was queued fails, saying why.
    await call('PATCH', `/api/instruments/${inst.id}`, 'admin', { service_account_id: null });
    expect((await runsOf()).find((r) => r.id === again.id)).toMatchObject({
      state: 'failed',
      error: 'the instrument was taken off its service account before this run started',
    });
    expect(await queuedFor(b.key)).toEqual([]);

    // Neither station took a run: neither is named by a record it synced.
    for (const account of [a, b]) {
      const gone = await call('DELETE', `/api/service-accounts/${account.id}`);
      expect(gone.status, JSON.stringify(gone.body)).toBe(204);
    }
    expect((await runsOf()).map((r) => r.state)).toEqual(['failed', 'failed']);
    await call('DELETE', `/api/instruments/${inst.id}`);
  });

  it('takes a call with no body that says its body is JSON, as curl with shared headers sends it', async () => {
    const jsonHeaders = {
      authorization: `Token ${tokens.admin}`,
      'content-type': 'application/json',
    };
    const trigger = await app.inject({
      method: 'POST',
      url: `/api/schedules/${scheduleId}/trigger`,
      headers: jsonHeaders,
    });
    expect(trigger.statusCode, trigger.body).toBe(202);
    const location = await made('/api/storage-locations', {
      name: 'short-lived',
      type: 'server',
      base_path: join(tempDir('harvest-api-empty-'), 'store'),
    });
    const removed = await app.inject({
      method: 'DELETE',
      url: `/api/storage-locations/${location.id}`,
      headers: jsonHeaders,
    });
    expect(removed.statusCode, removed.body).toBe(204);
    // A route that needs a body names it; a body that is there must still be JSON.
    const create = (payload?: string): Promise<LightMyRequestResponse> =>
      app.inject({
        method: 'POST',
        url: '/api/storage-locations',
        headers: jsonHeaders,
        ...(payload === undefined ? {} : { payload }),
      });
    const empty = await create();
    expect(empty.statusCode).toBe(422);
    expect(empty.json().detail[0]).toMatchObject({
      loc: ['body'],
      msg: 'Field required',
      type: 'missing',
    });
    const broken = await create('{"name":');
    // As FastAPI answers a body that is not JSON: 422, the problem in the list.
    expect(broken.statusCode).toBe(422);
    expect(broken.json()).toMatchObject({ detail: [{ loc: ['body'], type: 'json_invalid' }] });
    // Keys that would reach an object's prototype are refused by the parser, and named.
    const prototype = await create('{"constructor":{"prototype":{"x":1}},"name":"p2"}');
    expect(prototype.statusCode).toBe(422);
    expect(prototype.json().detail[0].msg).toBe(
      'JSON decode error: the body is not valid JSON, or has a key named __proto__, or a key ' +
        'constructor holding a key prototype (refused)',
    );
    // A trailing slash is sent on to the path without it (307, query kept), as FastAPI does,
    // before credentials are looked at; it used to be a 422 about an `id` never sent.
    for (const [method, url, to] of [
      ['GET', '/api/instruments/', '/api/instruments'],
      ['GET', '/api/files/?page=2&size=5', '/api/files?page=2&size=5'],
      ['GET', '/api/instruments/1/', '/api/instruments/1'],
      ['POST', '/api/storage-locations/', '/api/storage-locations'],
      ['GET', '/api/instruments/1/access/', '/api/instruments/1/access'],
    ] as const) {
      for (const headers of [jsonHeaders, {}]) {
        const moved = await app.inject({ method, url, headers });
        expect(moved.statusCode, `${method} ${url}`).toBe(307);
        expect(moved.headers.location).toBe(to);
      }
    }
    // Who may send a body is settled before it is read: no login 401, not an admin 403, a
    // wrong station key 401, whatever the body holds.
    for (const [url, authorization, status] of [
      ['/api/storage-locations', undefined, 401],
      ['/api/storage-locations', `Token ${tokens.alice}`, 403],
      ['/sync/push', 'Station not-a-key', 401],
    ] as const) {
      const refused = await app.inject({
        method: 'POST',
        url,
        headers: authorization
          ? { 'content-type': 'application/json', authorization }
          : { 'content-type': 'application/json' },
        payload: '{"name":',
      });
      expect(refused.statusCode, `${url} ${authorization}`).toBe(status);
    }
  });

  it("refuses text that is not well-formed Unicode in any body, keys too, in each API's own shape", async () => {
    const rule = 'not well-formed Unicode (lone surrogate)';
    const unicode = (loc: (string | number)[]) => ({
      detail: [{ loc, msg: rule, type: 'string_unicode' }],
    });
    const lone = await call('POST', '/api/storage-locations', 'admin', {
      name: 'sur\ud800x',
      type: 'local',
      base_path: '/mnt/sur',
    });
    expect(lone.status).toBe(422);
    expect(lone.body).toEqual(unicode(['body', 'name']));
    // A key, shown with U+FFFD for its lone surrogate; nested values by their place.
    const badKey = await app.inject({
      method: 'POST',
      url: '/api/storage-locations',
      headers: { authorization: `Token ${tokens.admin}`, 'content-type': 'application/json' },
      payload: '{"name":"k","type":"local","base_path":"/mnt/k","\\udc00x":1}',
    });
    expect(badKey.statusCode).toBe(422);
    expect(badKey.json()).toEqual(unicode(['body', '\ufffdx']));
    const nested = await call('PATCH', `/api/instruments/${instrumentId}`, 'admin', {
      watch: [{ path: '/data', include: ['a\udfffb'] }],
    });
    expect(nested.status).toBe(422);
    expect(nested.body).toEqual(unicode(['body', 'watch', 0, 'include', 0]));
    const names = (await call('GET', '/api/storage-locations?size=1000')).body.items.map(
      (l: { name: string }) => l.name,
    );
    expect(names.filter((n: string) => n.startsWith('sur') || n === 'k')).toEqual([]);
    // A surrogate pair is well-formed text.
    expect(
      (await made('/api/storage-locations', { name: 'pair 😀', type: 'local', base_path: '/m/p' }))
        .name,
    ).toBe('pair 😀');
    const login = await app.inject({
      method: 'POST',
      url: '/auth/jwt/login',
      payload: { username: 'admin\ud800@example.org', password: 'whatever password' },
    });
    expect(login.statusCode).toBe(422);
    expect(login.json()).toEqual(unicode(['body', 'username']));
    // A station's push and uploads, as their own body checks answer; its bookings, the
    // contract's {code, message, details} (plus detail).
    const pushed = await station('POST', '/sync/push', key, {
      records: [{ id: 1, kind: 'usage_event', uuid: newUuid(), payload: { note: 'x\ud800' } }],
    });
    expect(pushed).toEqual({ status: 400, body: { detail: `records.0.payload.note: ${rule}` } });
    const upload = await station('POST', '/sync/uploads', key, { file_uuid: '\udbff' });
    expect(upload).toEqual({ status: 400, body: { detail: `file_uuid: ${rule}` } });
    const booking = await station('POST', '/sync/reservations', key, { user_uuid: '\ud800' });
    expect(booking.status).toBe(422);
    expect(booking.body).toEqual({
      code: 'validation_failed',
      message: `user_uuid: ${rule}`,
      details: { problems: [{ path: ['user_uuid'], message: rule }] },
      detail: `user_uuid: ${rule}`,
    });
  });

  it('reads a form body only at the log-in: elsewhere it is text, refused as text/plain is', async () => {
    const send = (contentType: string): Promise<LightMyRequestResponse> =>
      app.inject({
        method: 'POST',
        url: '/api/storage-locations',
        headers: { authorization: `Token ${tokens.admin}`, 'content-type': contentType },
        payload: 'name=form-made&type=local&base_path=%2Fmnt%2Fform',
      });
    // No body at all: missing, as FastAPI says of a body model not sent.
    const none = await app.inject({
      method: 'POST',
      url: '/api/storage-locations',
      headers: { authorization: `Token ${tokens.admin}` },
    });
    expect(none.statusCode).toBe(422);
    expect(none.json().detail).toEqual([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
    const form = await send('application/x-www-form-urlencoded');
    const text = await send('text/plain');
    expect(text.statusCode).toBe(422);
    expect(form.statusCode).toBe(422);
    expect(form.json()).toEqual(text.json());
    expect(form.json().detail[0]).toMatchObject({ loc: ['body'], type: 'model_type' });
    const names = (await call('GET', '/api/storage-locations?size=1000')).body.items.map(
      (l: { name: string }) => l.name,
    );
    expect(names).not.toContain('form-made');
    // The log-in still reads its form (fastapi-users' OAuth2 password form).
    const login = await app.inject({
      method: 'POST',
      url: '/auth/jwt/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'username=nobody%40example.org&password=not+a+password',
    });
    expect(login.statusCode).toBe(400);
    expect(login.json()).toEqual({ detail: 'LOGIN_BAD_CREDENTIALS' });
  });

  it('stores pushed files and transfers once, and shows them within grants', async () => {
    const fileA = newUuid();
    const fileB = newUuid();
    const transferA = newUuid();
    const records = [
      { kind: 'harvest_file', uuid: fileA, payload: filePayload(fileA, 'a.dm4') },
      { kind: 'harvest_file', uuid: fileB, payload: filePayload(fileB, 'b.dm4') },
      {
        kind: 'harvest_transfer',
        uuid: transferA,
        payload: {
          uuid: transferA,
          file_uuid: fileA,
          status: 'completed',
          storage_location: 'records',
          destination_path: '/mnt/records/a.dm4',
          bytes_transferred: 1234,
          dest_checksum: '0123456789abcdef0123456789abcdef',
          checksum_verified: true,
          started_at: '2026-03-01T10:00:02.000Z',
          completed_at: '2026-03-01T10:00:03.000Z',
          error: '',
          note: '',
        },
      },
    ];
    const first = (await push(records)).body as PushResult;
    expect(first.error).toBeNull();
    // A resend changes nothing.
    expect(((await push(records)).body as PushResult).acked).toHaveLength(3);
    expect(db.prepare('SELECT count(*) FROM harvest_transfers').pluck().get()).toBe(1);

    const files = (await call('GET', `/api/files?instrument_id=${instrumentId}`)).body;
    expect(files.total).toBe(2);
    const a = files.items.find((f: { filename: string }) => f.filename === 'a.dm4');
    expect(a).toMatchObject({
      persistent_id: (filePayload(fileA, 'a.dm4') as { persistent_id: string }).persistent_id,
      persistent_id_type: 'ark',
      source_path: '/data/a.dm4',
      xxhash: '0123456789abcdef0123456789abcdef',
      first_discovered_at: '2026-03-01T10:00:00.000Z',
      metadata_: { sample: { name: 'grid 3' } },
    });
    const transfers = (await call('GET', `/api/transfers?file_id=${a.id}`)).body;
    expect(transfers.items).toEqual([
      expect.objectContaining({
        status: 'completed',
        checksum_verified: true,
        destination_path: '/mnt/records/a.dm4',
        bytes_transferred: 1234,
      }),
    ]);
    const inst = (await call('GET', `/api/instruments/${instrumentId}`)).body;
    expect(inst.last_harvested_at).toBe('2026-03-01T10:00:03.000Z');

    // Filters.
    const ark = a.persistent_id.replace('ark:', 'ark:/');
    expect(
      (await call('GET', `/api/files?persistent_id=${encodeURIComponent(ark)}`)).body.total,
    ).toBe(1);
    expect((await call('GET', '/api/files?filename=b.dm4')).body.total).toBe(1);
    expect(
      (await call('GET', '/api/files?metadata_key=sample.name&metadata_value=grid%203')).body.total,
    ).toBe(2);
    expect(
      (await call('GET', '/api/files?metadata_key=sample.name&metadata_value=grid%204')).body.total,
    ).toBe(0);
    // A key SQLite cannot take as a path is named (a NUL ended the path: a 500).
    for (const key of ['a%00', 'sample.%00name', 'a%22b', 'a%5Cb', 'a..b']) {
      const bad = await call('GET', `/api/files?metadata_key=${key}`);
      expect(bad.status, key).toBe(422);
      expect(bad.body.detail[0].loc, key).toEqual(['query', 'metadata_key']);
    }
    expect((await call('GET', '/api/files?first_discovered_at__gte=2026-03-02')).body.total).toBe(
      0,
    );
    expect((await call('GET', '/api/files?first_discovered_at__gte=nope')).status).toBe(422);
    // Both files were found at 10:00:00.000: a bound a fraction of a millisecond later is after
    // them (stored times have whole milliseconds), as the NEMO filters take it.
    for (const [bound, total] of [
      ['__gte=2026-03-01T10:00:00.0005Z', 0],
      ['__gte=2026-03-01T10:00:00.0000Z', 2],
      ['__lte=2026-03-01T10:00:00.0005Z', 2],
      ['__lte=2026-03-01T09:59:59.9995Z', 0],
    ] as const) {
      const answer = await call('GET', `/api/files?first_discovered_at${bound}`);
      expect(answer.body.total, bound).toBe(total);
    }
    // A date alone as the upper bound takes in that whole day.
    expect((await call('GET', '/api/files?first_discovered_at__lte=2026-03-01')).body.total).toBe(
      2,
    );
    expect((await call('GET', '/api/files?first_discovered_at__lte=2026-02-28')).body.total).toBe(
      0,
    );
    // Only real dates; and without an offset, a date-time is wall-clock time in the server's zone.
    const impossible = await call('GET', '/api/files?first_discovered_at__gte=2026-02-30');
    expect(impossible.status).toBe(422);
    expect(impossible.body.detail[0].loc).toEqual(['query', 'first_discovered_at__gte']);
    // A parameter given twice counts with its last value, as FastAPI reads a scalar parameter
    // (and the NEMO routes, as Django); one the route does not know is ignored, repeated or not.
    for (const name of [
      'filename',
      'persistent_id',
      'metadata_key',
      'metadata_value',
      'first_discovered_at__gte',
    ]) {
      const value = name === 'first_discovered_at__gte' ? '2026-01-01' : 'nothing-matches';
      const twice = await call('GET', `/api/files?${name}=${value}&${name}=${value}&${name}=a`);
      const once = await call('GET', `/api/files?${name}=a`);
      expect(twice.status, `${name}: ${JSON.stringify(twice.body)}`).toBe(once.status);
      expect(twice.body, name).toEqual(once.body);
    }
    const byName = await call('GET', '/api/files?filename=nothing&filename=a.dm4');
    expect(byName.body.items.map((f: { filename: string }) => f.filename)).toEqual(['a.dm4']);
    const everything = await call('GET', '/api/files');
    for (const url of ['/api/files?foo=1&foo=2', '/api/files?foo=1', '/api/files?size=x&size=50']) {
      const unknown = await call('GET', url);
      expect(unknown.status, `${url}: ${JSON.stringify(unknown.body)}`).toBe(200);
      expect(unknown.body, url).toEqual(everything.body);
    }
    expect((await call('GET', '/api/instruments?foo=1&foo=2')).status).toBe(200);
    expect((await call('GET', '/api/transfers?foo=1&foo=2')).status).toBe(200);
    // The last value is the one checked.
    const lastBad = await call('GET', '/api/files?size=50&size=0');
    expect(lastBad.status).toBe(422);
    expect(lastBad.body.detail[0].loc).toEqual(['query', 'size']);
    const all = await call('GET', '/api/files?page=0&instrument_id=x&persistent_id=zz');
    expect(all.status).toBe(422);
    expect(all.body.detail.map((d: { loc: string[] }) => d.loc[1])).toEqual([
      'page',
      'instrument_id',
      'persistent_id',
    ]);
    const statusTwice = await call('GET', '/api/transfers?status=failed&status=completed');
    expect(statusTwice.status).toBe(200);
    expect(statusTwice.body).toEqual((await call('GET', '/api/transfers?status=completed')).body);
    expect(
      (await call('GET', '/api/files?first_discovered_at__gte=2026-03-01T10:30')).body.total,
    ).toBe(0);
    const zurich = await createServerApp({
      db,
      log: createLogger('silent'),
      jwtSecret: 'harvest-api-test-secret-0123456789',
      timeZone: () => 'Europe/Zurich',
    });
    try {
      const inZurich = async (query: string): Promise<number> => {
        const res = await zurich.inject({
          method: 'GET',
          url: `/api/files?${query}`,
          headers: { authorization: `Token ${tokens.admin}` },
        });
        expect(res.statusCode, res.body).toBe(200);
        return res.json<{ total: number }>().total;
      };
      // 10:00 UTC is 11:00 in Zurich.
      expect(await inZurich('first_discovered_at__gte=2026-03-01T10:30')).toBe(2);
      expect(await inZurich('first_discovered_at__gte=2026-03-01T11:00:00.001')).toBe(0);
      expect(await inZurich('first_discovered_at__gte=2026-03-01T10:30Z')).toBe(0);
      expect(await inZurich('first_discovered_at__lte=2026-03-01')).toBe(2);
    } finally {
      await zurich.close();
    }

    // Without a grant: nothing, and the records do not exist.
    const bobList = (await call('GET', '/api/files', 'bob')).body;
    expect(bobList).toEqual({ items: [], total: 0, page: 1, size: 50 });
    expect((await call('GET', `/api/files/${a.id}`, 'bob')).status).toBe(404);
    expect((await call('GET', '/api/transfers', 'bob')).body.total).toBe(0);
    expect((await call('GET', `/api/transfers/${transfers.items[0].id}`, 'bob')).status).toBe(404);
    // With one: alice sees them.
    // A body that is not an object is refused whole, and none at all is missing, as FastAPI
    // answers for a body model (and as every other harvest route does).
    for (const [payload, type] of [
      ['[2]', 'model_type'],
      ['null', 'model_type'],
      ['"2"', 'model_type'],
      [undefined, 'missing'],
    ] as const) {
      const refused = await app.inject({
        method: 'POST',
        url: `/api/instruments/${instrumentId}/access`,
        headers: {
          authorization: `Token ${tokens.admin}`,
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(payload === undefined ? {} : { payload }),
      });
      expect(refused.statusCode, payload).toBe(422);
      expect(refused.json().detail, payload).toEqual([
        expect.objectContaining({ loc: ['body'], type }),
      ]);
    }
    const granted = await call('POST', `/api/instruments/${instrumentId}/access`, 'admin', {
      user_id: 2,
    });
    expect(granted.status).toBe(201);
    expect((await call('GET', `/api/instruments/${instrumentId}/access`)).body).toEqual([
      { user_id: 2, granted_at: expect.any(String) },
    ]);
    expect((await call('GET', '/api/files', 'alice')).body.total).toBe(2);
    expect((await call('GET', `/api/files/${a.id}`, 'alice')).status).toBe(200);
    expect((await call('GET', '/api/transfers', 'alice')).body.total).toBe(1);
    // A file with records cannot be deleted with its instrument; all that is in the way is
    // named at once.
    const blocked = await call('DELETE', `/api/instruments/${instrumentId}`);
    expect(blocked.status).toBe(409);
    expect(blocked.body.detail).toBe(
      `instrument ${instrumentId} has 2 file records; disable it instead; ` +
        `it is used by schedule ${scheduleId}`,
    );
    // Revoked: gone again.
    expect((await call('DELETE', `/api/instruments/${instrumentId}/access/2`)).status).toBe(204);
    expect((await call('GET', '/api/files', 'alice')).body.total).toBe(0);
    expect((await call('DELETE', `/api/instruments/${instrumentId}/access/2`)).status).toBe(404);
  });

  it('names at once all that keeps a service account from being deleted', async () => {
    // It runs an instrument and pushed records: both are named in one 409, not one per try.
    const blocked = await call('DELETE', `/api/service-accounts/${accountId}`);
    expect(blocked.status).toBe(409);
    expect(blocked.body.detail).toMatch(
      new RegExp(
        `^service account ${accountId} runs instrument Records camera; ` +
          'it is named by \\d+ records it synced; disable it instead$',
      ),
    );
  });

  it("does not count a schedule of a service account's instrument as a record it synced", async () => {
    // The schedule is the admin's, deployed on the station with its instrument: it is in the
    // way only as the instrument is, and moves with it.
    const fresh = await made('/api/service-accounts', { name: 'never-synced-pc' });
    const inst = await made('/api/instruments', {
      name: 'Scheduled camera',
      tool_id: 1,
      service_account_id: fresh.id,
      enabled: false,
    });
    await made('/api/schedules', { instrument_id: inst.id, cron: '0 3 * * *' });
    const blocked = await call('DELETE', `/api/service-accounts/${fresh.id}`);
    expect(blocked.status).toBe(409);
    expect(blocked.body.detail).toBe(
      `service account ${fresh.id} runs instrument Scheduled camera`,
    );
    const moved = await call('PATCH', `/api/instruments/${inst.id}`, 'admin', {
      service_account_id: null,
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect((await call('DELETE', `/api/service-accounts/${fresh.id}`)).status).toBe(204);
  });

  // Mutation: the type changed under its records (a station's folder read as the server's).
  it('keeps the type of a storage location that holds transfer records', async () => {
    const { id, n } = db
      .prepare(
        `SELECT storage_location_id AS id, count(*) AS n FROM harvest_transfers
         WHERE storage_location_id IS NOT NULL GROUP BY storage_location_id LIMIT 1`,
      )
      .get() as { id: number; n: number };
    const before = (await call('GET', `/api/storage-locations/${id}`)).body;
    const other = before.type === 'local' ? 'server' : 'local';
    const refused = await call('PATCH', `/api/storage-locations/${id}`, 'admin', { type: other });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toBe(
      `storage location ${id} holds ${n} transfer record${n > 1 ? 's' : ''} made as a ` +
        `${before.type} location; its type stays (make a new ${other} location instead)`,
    );
    expect((await call('GET', `/api/storage-locations/${id}`)).body).toEqual(before);
    // The same type again, or another field, is no change of type.
    const same = await call('PATCH', `/api/storage-locations/${id}`, 'admin', {
      type: before.type,
    });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
  });

  it("refuses a station's records for an instrument it was never given", async () => {
    const other = await made('/api/service-accounts', { name: 'intruder-pc' });
    const file = newUuid();
    const res = await station('POST', '/sync/push', other.key as string, {
      records: [{ id: 1, kind: 'harvest_file', uuid: file, payload: filePayload(file, 'x.dm4') }],
    });
    expect((res.body as PushResult).error).toMatchObject({ code: 'forbidden' });
    expect(db.prepare('SELECT count(*) FROM harvest_files WHERE uuid = ?').pluck().get(file)).toBe(
      0,
    );
  });

  it('refuses a file whose persistent_id_type is not "ark", as spec 002 has it', async () => {
    const file = newUuid();
    const res = await push([
      {
        kind: 'harvest_file',
        uuid: file,
        payload: filePayload(file, 'doi.dm4', { persistent_id_type: 'doi' }),
      },
    ]);
    expect((res.body as PushResult).error).toMatchObject({ code: 'invalid' });
    expect((res.body as PushResult).error?.detail).toMatch(/persistent_id_type: .*"ark"/);
    expect(db.prepare('SELECT count(*) FROM harvest_files WHERE uuid = ?').pluck().get(file)).toBe(
      0,
    );
  });

  it("refuses a file's metadata nested deeper than a station makes it, which would break every metadata search", async () => {
    // SQLite reads JSON 1,000 levels deep at most: one such record stored made every
    // metadata_key search that came to it fail, for everyone who may see the instrument.
    const file = newUuid();
    const depth = 1001;
    const deep = JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`) as object;
    const res = await push([
      {
        kind: 'harvest_file',
        uuid: file,
        payload: filePayload(file, 'deep.dm4', { metadata_: { nested: deep } }),
      },
    ]);
    expect((res.body as PushResult).error).toMatchObject({ code: 'invalid' });
    expect((res.body as PushResult).error?.detail).toMatch(/nested more than 1,000 levels deep/);
    expect(db.prepare('SELECT count(*) FROM harvest_files WHERE uuid = ?').pluck().get(file)).toBe(
      0,
    );
    // Far deeper (200,000 levels, 1.2 MB): the same refusal, not a 500 from a stack overflow
    // while the metadata was written out for SQLite's check.
    // (The body is written by hand: JSON.stringify here would overflow as well.)
    const abyss = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const record = {
      kind: 'harvest_file',
      uuid: file,
      id: nextOutbox++,
      payload: filePayload(file, 'deep.dm4', { metadata_: { nested: 'ABYSS' } }),
    };
    const deeper = await app.inject({
      method: 'POST',
      url: '/sync/push',
      headers: { authorization: `Station ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ records: [record] }).replace('"ABYSS"', abyss),
    });
    expect(deeper.statusCode).toBe(200);
    expect(deeper.json<PushResult>().error?.detail).toMatch(/nested more than 1,000 levels/);
    const search = await call('GET', '/api/files?metadata_key=file_info.mime_type');
    expect(search.status).toBe(200);
    // 200 levels, as deep as a station's hooks may give, are taken.
    const ok = newUuid();
    const fits = JSON.parse(`${'{"a":'.repeat(199)}1${'}'.repeat(199)}`) as object;
    const taken = await push([
      {
        kind: 'harvest_file',
        uuid: ok,
        payload: filePayload(ok, 'fits.dm4', { metadata_: { nested: fits } }),
      },
    ]);
    expect((taken.body as PushResult).error).toBeNull();
  });

  it('refuses a transfer completed into a server location that never received the file', async () => {
    const central = await made('/api/storage-locations', {
      name: 'central',
      type: 'server',
      base_path: tempDir('labstation-central-'),
    });
    const file = newUuid();
    const transfer = newUuid();
    const res = (
      await push([
        { kind: 'harvest_file', uuid: file, payload: filePayload(file, 'd.dm4') },
        {
          kind: 'harvest_transfer',
          uuid: transfer,
          payload: {
            uuid: transfer,
            file_uuid: file,
            status: 'completed',
            storage_location: 'central',
            destination_path: 'd.dm4',
            bytes_transferred: 1234,
            dest_checksum: '0123456789abcdef0123456789abcdef',
            checksum_verified: true,
            started_at: '2026-03-01T10:00:02.000Z',
            completed_at: '2026-03-01T10:00:03.000Z',
            error: '',
            note: '',
          },
        },
      ])
    ).body as PushResult;
    expect(res.error).toMatchObject({ code: 'upload_missing', kind: 'harvest_transfer' });
    expect(res.error?.detail).toMatch(/no finished upload/);
    expect((await call('DELETE', `/api/storage-locations/${central.id}`)).status).toBe(204);
  });

  it('refuses a transfer claiming completed without a verified checksum', async () => {
    const file = newUuid();
    const transfer = newUuid();
    await push([{ kind: 'harvest_file', uuid: file, payload: filePayload(file, 'c.dm4') }]);
    const res = (
      await push([
        {
          kind: 'harvest_transfer',
          uuid: transfer,
          payload: {
            uuid: transfer,
            file_uuid: file,
            status: 'completed',
            storage_location: 'records',
            destination_path: '/mnt/records/c.dm4',
            bytes_transferred: 1234,
            dest_checksum: null,
            checksum_verified: false,
            started_at: '2026-03-01T10:00:02.000Z',
            completed_at: '2026-03-01T10:00:03.000Z',
            error: '',
            note: '',
          },
        },
      ])
    ).body as PushResult;
    expect(res.error?.code).toBe('conflict');
    // Said in words the station's staff can act on, not as a rule of the server's tables.
    expect(res.error?.detail).toBe(
      `harvest_transfer ${transfer}: completed, but checksum_verified is false and ` +
        'dest_checksum is missing; a transfer is completed only with a verified checksum',
    );
    expect(
      db.prepare('SELECT count(*) FROM harvest_transfers WHERE uuid = ?').pluck().get(transfer),
    ).toBe(0);
  });

  it("gives a station's own instrument a service account only once its folders and storage are set", async () => {
    // A file of an instrument the station configured itself (its local bundle): the server
    // registers the instrument from it, with its own defaults.
    const ownUuid = newUuid();
    const fileUuid = newUuid();
    const pushed = await push([
      {
        kind: 'harvest_file',
        uuid: fileUuid,
        payload: filePayload(fileUuid, 'own.txt', {
          instrument_uuid: ownUuid,
          instrument: 'Own camera',
        }),
      },
    ]);
    expect(pushed.body, JSON.stringify(pushed.body)).toMatchObject({ error: null });
    expect(pushed.body.acked).toHaveLength(1);
    const ownId = db
      .prepare('SELECT id FROM instruments WHERE uuid = ?')
      .pluck()
      .get(ownUuid) as number;
    const registered = await call('GET', `/api/instruments/${ownId}`);
    expect(registered.body).toMatchObject({
      service_account_id: null,
      description: expect.stringMatching(
        /^Configured on station .*; its records arrive from there\.$/,
      ),
      watch: [],
      storage_location_id: null,
      stability_seconds: 5,
      destination_template: '{instrument}/{yyyy}/{mm}/{dd}/{relative_path}',
    });
    // Given to the station as it is, the station would stop watching its folders.
    const refused = await call('PATCH', `/api/instruments/${ownId}`, 'admin', {
      service_account_id: accountId,
    });
    expect(refused.status).toBe(422);
    expect(
      (refused.body.detail as { loc: string[]; type: string }[]).map(
        (d) => `${d.loc.join('.')} ${d.type}`,
      ),
    ).toEqual(['body.watch takeover', 'body.storage_location_id takeover']);
    expect((await call('GET', `/api/instruments/${ownId}`)).body.service_account_id).toBeNull();

    const location = await made('/api/storage-locations', {
      name: 'own-store',
      type: 'local',
      base_path: '/mnt/own',
    });
    const taken = await call('PATCH', `/api/instruments/${ownId}`, 'admin', {
      service_account_id: accountId,
      watch: [{ path: '/data/own' }],
      storage_location_id: location.id,
      destination_template: '{instrument}/{relative_path}',
      stability_seconds: 1,
    });
    expect(taken.status, JSON.stringify(taken.body)).toBe(200);
    expect(taken.body).toMatchObject({
      service_account_id: accountId,
      // It said its station configured it; the server does now.
      description: '',
      destination_template: '{instrument}/{relative_path}',
      stability_seconds: 1,
      watch: [{ path: '/data/own' }],
    });
  });

  it('keeps a file record out when its version is older, and refuses one that says otherwise at the same version', async () => {
    const file = newUuid();
    const transfer = newUuid();
    const v1 = filePayload(file, 'v.dm4', {
      state: 'waiting',
      xxhash: null,
      metadata_: {},
      updated_at: '2026-03-01T10:00:01.000Z',
    });
    const v2 = filePayload(file, 'v.dm4', { updated_at: '2026-03-01T10:00:02.000Z' });
    const transferPayload = {
      uuid: transfer,
      file_uuid: file,
      status: 'completed',
      storage_location: 'records',
      destination_path: '/mnt/records/v.dm4',
      bytes_transferred: 1234,
      dest_checksum: '0123456789abcdef0123456789abcdef',
      checksum_verified: true,
      started_at: '2026-03-01T10:00:01.500Z',
      completed_at: '2026-03-01T10:00:02.000Z',
      error: '',
      note: '',
    };
    const stored = (): unknown =>
      db
        .prepare(
          `SELECT f.size, f.xxhash, f.metadata_, f.state, f.updated_at, t.destination_path,
             t.dest_checksum FROM harvest_files f LEFT JOIN harvest_transfers t ON t.file_id = f.id
           WHERE f.uuid = ?`,
        )
        .get(file);
    const taken = await push([
      { kind: 'harvest_file', uuid: file, payload: v1 },
      { kind: 'harvest_file', uuid: file, payload: v2 },
      { kind: 'harvest_transfer', uuid: transfer, payload: transferPayload },
    ]);
    expect((taken.body as PushResult).error).toBeNull();
    const before = stored();
    // A resend of the newest version, and of the transfer, changes nothing and is taken.
    const resent = (
      await push([
        { kind: 'harvest_file', uuid: file, payload: v2 },
        { kind: 'harvest_transfer', uuid: transfer, payload: transferPayload },
      ])
    ).body as PushResult;
    expect(resent).toMatchObject({ stale: [], error: null });
    expect(resent.acked).toHaveLength(2);
    // An older version alone is acknowledged as stale (the station says so), not as stored.
    const old = (await push([{ kind: 'harvest_file', uuid: file, payload: v1 }]))
      .body as PushResult;
    expect(old.error).toBeNull();
    expect(old.stale).toEqual(old.acked);
    expect(stored()).toEqual(before);
    // The same version with other content (a station restored from a backup) is refused by
    // name; the server keeps its version.
    const other = (
      await push([
        {
          kind: 'harvest_file',
          uuid: file,
          payload: { ...v2, xxhash: 'ffffffffffffffffffffffffffffffff', metadata_: { x: 1 } },
        },
      ])
    ).body as PushResult;
    expect(other.acked).toEqual([]);
    expect(other.error).toMatchObject({ code: 'conflict', kind: 'harvest_file', uuid: file });
    expect(other.error?.detail).toMatch(/xxhash, metadata_.*restored from a backup\?/);
    expect(stored()).toEqual(before);
    // So is a transfer sent again under its uuid with other content.
    const otherTransfer = (
      await push([
        {
          kind: 'harvest_transfer',
          uuid: transfer,
          payload: { ...transferPayload, destination_path: '/mnt/records/w.dm4' },
        },
      ])
    ).body as PushResult;
    expect(otherTransfer.acked).toEqual([]);
    expect(otherTransfer.error).toMatchObject({ code: 'conflict', kind: 'harvest_transfer' });
    expect(otherTransfer.error?.detail).toMatch(/destination_path/);
    expect(stored()).toEqual(before);
  });

  it('answers each push with the highest outbox id it had taken from the data dir before it', async () => {
    // As a Labstation pushes: its key, and the data dir it is (the first to name itself holds
    // the key). A station that had more acknowledged sends again what the server lost.
    const install = newUuid();
    const pushAs = async (id: number): Promise<PushResult> => {
      const file = newUuid();
      const res = await app.inject({
        method: 'POST',
        url: '/sync/push',
        headers: {
          authorization: `Station ${key}`,
          'x-labstation-install': install,
          'x-labstation-host': 'records-pc',
        },
        payload: {
          records: [
            { id, kind: 'harvest_file', uuid: file, payload: filePayload(file, `${id}.dm4`) },
          ],
        },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json<PushResult>();
    };
    const base = nextOutbox + 1000;
    expect(await pushAs(base)).toMatchObject({ acked: [base], acked_before: null });
    expect(await pushAs(base + 1)).toMatchObject({ acked: [base + 1], acked_before: base });
    // A server restored from a backup would answer its older count here: what it had then.
    db.prepare('UPDATE stations SET install_acked_through = ? WHERE id = ?').run(base, accountId);
    expect((await pushAs(base + 2)).acked_before).toBe(base);
  });
});

describe('role matrix', () => {
  type Who = 'none' | 'bob' | 'alice' | 'sam' | 'admin';
  const whos: Who[] = ['none', 'bob', 'alice', 'sam', 'admin'];

  it('guards every management route: 401 without credentials, 403 for non-admins', async () => {
    const inst = await made('/api/instruments', { name: 'Matrix inst', tool_id: 2 });
    const sched = await made('/api/schedules', { instrument_id: inst.id, cron: '0 1 * * *' });
    await call('POST', `/api/instruments/${inst.id}/access`, 'admin', { user_id: 2 });
    const routes: [string, string, unknown?][] = [];
    for (const r of [
      'instruments',
      'storage-locations',
      'service-accounts',
      'schedules',
      'hooks',
    ]) {
      routes.push(['GET', `/api/${r}`], ['POST', `/api/${r}`, {}]);
      routes.push(
        ['GET', `/api/${r}/1`],
        ['PATCH', `/api/${r}/1`, {}],
        ['DELETE', `/api/${r}/424242`],
      );
    }
    routes.push(
      ['GET', `/api/instruments/${inst.id}/access`],
      ['POST', `/api/instruments/${inst.id}/access`, { user_id: 3 }],
      ['DELETE', `/api/instruments/${inst.id}/access/3`],
      ['POST', `/api/schedules/${sched.id}/trigger`],
    );
    for (const [method, url, body] of routes) {
      for (const who of whos) {
        const res = await call(method as 'GET', url, who === 'none' ? null : who, body);
        const want = who === 'none' ? 401 : who === 'admin' ? null : 403;
        if (want === null)
          expect([200, 201, 202, 204, 404, 409, 422], `${who} ${method} ${url}`).toContain(
            res.status,
          );
        else expect(res.status, `${who} ${method} ${url}`).toBe(want);
      }
    }
  });

  it('lets any user read files and transfers, within grants', async () => {
    for (const url of ['/api/files', '/api/transfers']) {
      expect((await call('GET', url, null)).status).toBe(401);
      for (const who of ['bob', 'alice', 'sam', 'admin'] as const) {
        expect((await call('GET', url, who)).status, `${who} ${url}`).toBe(200);
      }
    }
  });
});
