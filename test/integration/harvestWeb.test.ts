/**
 * The harvest calls of the server's web carrier (`POST /rpc/<name>` with a JWT from
 * `/auth/jwt/login`), on a real SQLite file and the real server app: they run the REST API's
 * resources (a record made here is the REST API's record), refusals keep their field in
 * `details.problems[].path`, 404/409 keep their code, admins alone manage, and everyone reads
 * files and transfers within their grants.
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harvestAdminSchemas } from '../../shared/harvestAdminApi.js';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { createAccount } from '../../electron/core/server/accounts.js';
import { createServerApp } from '../../electron/core/server/app.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { createLogger } from '../../electron/core/util/log.js';
import type { PushResult } from '../../electron/core/sync/protocol.js';
import { tempDir } from './helpers.js';

const T0 = '2026-01-01T00:00:00.000Z';
const PEOPLE = {
  admin: { email: 'ada@example.org', password: 'admin password 1', role: 'admin' },
  alice: { email: 'alice@example.org', password: 'alice password 1', role: 'user' },
  bob: { email: 'bob@example.org', password: 'bob password 12', role: 'user' },
} as const;
type Who = keyof typeof PEOPLE;

interface Reply<T = Record<string, unknown>> {
  status: number;
  body: T;
}

interface Problem {
  path: (string | number)[];
  message: string;
}

interface ErrorBody {
  code: string;
  message: string;
  details?: { problems: Problem[] };
}

let db: Db;
let app: FastifyInstance;
const jwt: Record<Who, string> = { admin: '', alice: '', bob: '' };
const ids: Record<Who, number> = { admin: 0, alice: 0, bob: 0 };
let toolId: number;
let toolUuid: string;

async function login(who: Who): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/auth/jwt/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      username: PEOPLE[who].email,
      password: PEOPLE[who].password,
    }).toString(),
  });
  expect(res.statusCode).toBe(200);
  return res.json<{ access_token: string }>().access_token;
}

async function rpc<T = Record<string, unknown>>(
  name: string,
  args: unknown,
  who: Who | null = 'admin',
): Promise<Reply<T>> {
  const res = await app.inject({
    method: 'POST',
    url: `/rpc/${name}`,
    headers: who ? { authorization: `Bearer ${jwt[who]}` } : {},
    payload: args as object,
  });
  return { status: res.statusCode, body: res.json<T>() };
}

async function ok<T = Record<string, unknown>>(
  name: string,
  args: unknown,
  who: Who = 'admin',
): Promise<T> {
  const res = await rpc<T>(name, args, who);
  expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

async function refused(name: string, args: unknown, who: Who = 'admin'): Promise<Reply<ErrorBody>> {
  const res = await rpc<ErrorBody>(name, args, who);
  expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBeGreaterThanOrEqual(400);
  return res;
}

/** The problems of a refusal by their path, e.g. 'watch.0.path' -> message. */
function byPath(body: ErrorBody): Record<string, string> {
  return Object.fromEntries(
    (body.details?.problems ?? []).map((p) => [p.path.join('.'), p.message]),
  );
}

interface Item<T> {
  item: T;
}
interface Named {
  id: number;
  name: string;
}

beforeAll(async () => {
  db = openDatabase(join(tempDir('labstation-harvest-web-'), 'server.db'));
  db.prepare("INSERT INTO settings (key, value) VALUES ('mode', '\"server\"')").run();
  for (const who of Object.keys(PEOPLE) as Who[]) {
    ids[who] = (await createAccount(db, PEOPLE[who])).id;
  }
  toolUuid = newUuid();
  toolId = Number(
    db
      .prepare(
        `INSERT INTO tools (uuid, name, category, operational, visible, shutdown, created_at,
           updated_at) VALUES (?, 'TEM', 'Microscopy', 1, 1, 0, ?, ?)`,
      )
      .run(toolUuid, T0, T0).lastInsertRowid,
  );
  app = await createServerApp({
    db,
    log: createLogger('silent'),
    jwtSecret: 'harvest-web-test-secret-0123456789',
    timeZone: () => 'UTC',
  });
  await app.ready();
  for (const who of Object.keys(PEOPLE) as Who[]) jwt[who] = await login(who);
});

afterAll(async () => {
  await app.close();
  db.close();
});

describe('management through the web carrier', () => {
  let locationId: number;
  let accountId: number;
  let stationKey: string;
  let instrumentId: number;
  let instrumentUuid: string;
  let scheduleId: number;

  it('creates, lists, updates and deletes records the REST API serves', async () => {
    const location = await ok<Item<Named>>('admin.storageLocations.create', {
      name: 'archive',
      type: 'local',
      base_path: '/mnt/archive',
    });
    locationId = location.item.id;
    expect(location.item).toEqual({
      id: locationId,
      name: 'archive',
      type: 'local',
      base_path: '/mnt/archive',
      enabled: true,
    });
    const account = await ok<Item<Named> & { key: string }>('admin.serviceAccounts.create', {
      name: 'tem-pc',
    });
    accountId = account.item.id;
    stationKey = account.key;
    expect(stationKey).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    const accounts = await ok<{ items: Record<string, unknown>[] }>(
      'admin.serviceAccounts.list',
      {},
    );
    expect(accounts.items.map((a) => a.name)).toEqual(['tem-pc']);
    expect(JSON.stringify(accounts)).not.toContain(stationKey);

    const instrument = await ok<Item<Named & { watch: { exclude: string[] }[] }>>(
      'admin.instruments.create',
      {
        name: 'TEM camera',
        tool_id: toolId,
        service_account_id: accountId,
        storage_location_id: locationId,
        watch: [{ path: '/data/tem', include: ['*.dm4'] }],
      },
    );
    instrumentId = instrument.item.id;
    expect(instrument.item.watch[0].exclude).toContain('*.tmp');
    instrumentUuid = db
      .prepare('SELECT uuid FROM instruments WHERE id = ?')
      .pluck()
      .get(instrumentId) as string;

    const updated = await ok<Item<{ stability_seconds: number; name: string }>>(
      'admin.instruments.update',
      { id: instrumentId, stability_seconds: 12 },
    );
    expect(updated.item).toMatchObject({ name: 'TEM camera', stability_seconds: 12 });
    // The same record through the REST API.
    const rest = await app.inject({
      method: 'GET',
      url: `/api/instruments/${instrumentId}`,
      headers: { authorization: `Bearer ${jwt.admin}` },
    });
    expect(rest.json()).toEqual(updated.item);

    // Two admins open the instrument; the first saves, the second saves the editor it opened
    // before: refused, naming it, and the first one's change stays.
    const opened = updated.item as unknown as Record<string, unknown>;
    const first = await ok<Item<{ stability_seconds: number }>>('admin.instruments.update', {
      id: instrumentId,
      stability_seconds: 20,
      loaded: opened,
    });
    expect(first.item.stability_seconds).toBe(20);
    const stale = await refused('admin.instruments.update', {
      id: instrumentId,
      destination_template: '{instrument}/{filename}',
      loaded: opened,
    });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      code: 'conflict',
      detail:
        'instrument TEM camera was changed elsewhere since it was opened here; reload the page ' +
        'to see that change, then make yours again',
    });
    expect(
      db
        .prepare('SELECT stability_seconds, destination_template FROM instruments WHERE id = ?')
        .get(instrumentId),
    ).toMatchObject({ stability_seconds: 20, destination_template: opened.destination_template });
    // What changes on its own (its last harvest) is not another admin's change; saved from what
    // the first save answered, it is taken.
    db.prepare('UPDATE instruments SET last_harvested_at = ? WHERE id = ?').run(
      '2026-12-06T01:00:00.000Z',
      instrumentId,
    );
    await ok('admin.instruments.update', {
      id: instrumentId,
      stability_seconds: 12,
      loaded: first.item,
    });

    const schedule = await ok<Item<{ id: number; deployment: { state: string } }>>(
      'admin.schedules.create',
      { instrument_id: instrumentId, cron: '0 3 * * *', timezone: 'Europe/Zurich' },
    );
    scheduleId = schedule.item.id;
    expect(schedule.item.deployment.state).toBe('pending');
    const hook = await ok<Item<Named>>('admin.hooks.create', {
      name: 'info',
      trigger: 'post_transfer',
      kind: 'file_info',
      instrument_id: instrumentId,
    });
    const list = await ok<{ items: Named[]; total: number; page: number; size: number }>(
      'admin.hooks.list',
      { size: 10 },
    );
    expect(list).toMatchObject({ total: 1, page: 1, size: 10 });
    expect(await ok('admin.hooks.delete', { id: hook.item.id })).toEqual({ ok: true });
    expect((await ok<{ total: number }>('admin.hooks.list', {})).total).toBe(0);
  });

  it('names the field of each problem', async () => {
    const bad = await refused('admin.instruments.create', {
      name: 'Camera',
      tool_id: 999,
      watch: [{ path: 'relative', include: ['[abc'] }],
      destination_template: '{instrument}/{colour}',
    });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('validation_failed');
    const problems = byPath(bad.body);
    expect(problems.tool_id).toBe('no tool with id 999');
    expect(problems['watch.0.path']).toMatch(/absolute path/);
    expect(problems['watch.0.include.0']).toBeDefined();
    expect(problems.destination_template).toMatch(/colour/);
    expect(bad.body.message).toMatch(/^tool_id: no tool with id 999/);

    const taken = await refused('admin.instruments.create', {
      name: 'TEM camera',
      tool_id: toolId,
    });
    expect(Object.keys(byPath(taken.body))).toEqual(['name']);
    const duplicate = await refused('admin.storageLocations.create', {
      name: 'archive',
      type: 'server',
      base_path: 'relative',
    });
    expect(Object.keys(byPath(duplicate.body)).sort()).toEqual(['base_path', 'name']);

    const hook = await refused('admin.hooks.create', {
      name: 'sidecars',
      trigger: 'pre_transfer',
      kind: 'sidecar_json',
      config: { suffixes: [] },
    });
    expect(Object.keys(byPath(hook.body))).toEqual(
      expect.arrayContaining(['trigger', 'config.suffixes']),
    );
    const cron = await refused('admin.schedules.update', { id: scheduleId, cron: '61 * * * *' });
    expect(Object.keys(byPath(cron.body))).toEqual(['cron']);
    // What the contract's own schema refuses never reaches the resource.
    const shape = await refused('admin.storageLocations.create', { name: 'x', colour: 'red' });
    expect(shape.body.code).toBe('bad_request');
  });

  it('keeps 404 and 409 as not_found and conflict, with the REST message', async () => {
    const missing = await refused('admin.schedules.update', { id: 424242, enabled: false });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({
      code: 'not_found',
      message: 'no schedule with id 424242',
    });
    const used = await refused('admin.storageLocations.delete', { id: locationId });
    expect(used.status).toBe(409);
    expect(used.body).toMatchObject({
      code: 'conflict',
      message: `storage location ${locationId} is used by instrument TEM camera`,
    });
  });

  it('triggers a run: queued, and says when the station is offline', async () => {
    const answer = await ok<{ state: string; queued_offline: boolean; detail: string }>(
      'admin.schedules.trigger',
      { id: scheduleId },
    );
    expect(answer).toMatchObject({ state: 'queued', queued_offline: true });
    expect(answer.detail).toMatch(/tem-pc is offline .*queued/);
    const schedules = await ok<{ items: { deployment: { runs: { state: string }[] } }[] }>(
      'admin.schedules.list',
      {},
    );
    expect(schedules.items[0].deployment.runs[0].state).toBe('queued');
    const loose = await ok<Item<Named>>('admin.instruments.create', {
      name: 'Loose',
      tool_id: toolId,
    });
    const orphan = await ok<Item<{ id: number }>>('admin.schedules.create', {
      instrument_id: loose.item.id,
      cron: '0 * * * *',
    });
    const refusedRun = await refused('admin.schedules.trigger', { id: orphan.item.id });
    expect(refusedRun.body).toMatchObject({ code: 'conflict' });
    expect(refusedRun.body.message).toMatch(/no service account/);
  });

  it('refuses every admin call to a non-admin, and every call without a login', async () => {
    for (const name of Object.keys(harvestAdminSchemas)) {
      const res = await rpc<ErrorBody>(name, {}, 'bob');
      expect(res.status, name).toBe(403);
      expect(res.body.code).toBe('forbidden');
      expect((await rpc(name, {}, null)).status, name).toBe(401);
    }
    expect((await rpc('files.list', {}, null)).status).toBe(401);
  });

  describe('files and transfers within grants', () => {
    let fileId: number;
    let ark: string;

    beforeAll(async () => {
      const file = newUuid();
      const transfer = newUuid();
      ark = `ark:99999/fk4${file.slice(-8).replace(/[^0-9bcdfghjkmnpqrstvwxz]/g, 'b')}`;
      const push = await app.inject({
        method: 'POST',
        url: '/sync/push',
        headers: { authorization: `Station ${stationKey}` },
        payload: {
          records: [
            {
              id: 1,
              kind: 'harvest_file',
              uuid: file,
              payload: {
                uuid: file,
                instrument_uuid: instrumentUuid,
                instrument: 'TEM camera',
                tool_uuid: toolUuid,
                persistent_id: ark,
                persistent_id_type: 'ark',
                watch_path: '/data/tem',
                source_path: '/data/tem/grid3.dm4',
                relative_path: 'grid3.dm4',
                filename: 'grid3.dm4',
                size: 2048,
                mtime_ms: 1,
                xxhash: '0123456789abcdef0123456789abcdef',
                hash_algorithm: 'xxh3-128',
                first_discovered_at: '2026-03-01T10:00:00.000Z',
                usage_event_uuid: null,
                metadata_: { sample: { name: 'grid 3' } },
                state: 'done',
                updated_at: '2026-03-01T10:00:01.000Z',
              },
            },
            {
              id: 2,
              kind: 'harvest_transfer',
              uuid: transfer,
              payload: {
                uuid: transfer,
                file_uuid: file,
                status: 'completed',
                storage_location: 'archive',
                destination_path: '/mnt/archive/grid3.dm4',
                bytes_transferred: 2048,
                dest_checksum: '0123456789abcdef0123456789abcdef',
                checksum_verified: true,
                started_at: '2026-03-01T10:00:02.000Z',
                completed_at: '2026-03-01T10:00:03.000Z',
                error: '',
                note: '',
              },
            },
          ],
        },
      });
      expect(push.json<PushResult>().error).toBeNull();
      fileId = db
        .prepare('SELECT id FROM harvest_files WHERE uuid = ?')
        .pluck()
        .get(file) as number;
    });

    it('lets admins read every file with its transfers, and filter them', async () => {
      const all = await ok<{ items: { filename: string }[]; total: number }>('files.list', {});
      expect(all.total).toBe(1);
      const detail = await ok<{ file: { persistent_id: string }; transfers: unknown[] }>(
        'files.get',
        { id: fileId },
      );
      expect(detail.file.persistent_id).toBe(ark);
      expect(detail.transfers).toEqual([
        expect.objectContaining({
          status: 'completed',
          checksum_verified: true,
          destination_path: '/mnt/archive/grid3.dm4',
          bytes_transferred: 2048,
        }),
      ]);
      const total = async (args: object): Promise<number> =>
        (await ok<{ total: number }>('files.list', args)).total;
      expect(await total({ instrument_id: instrumentId })).toBe(1);
      expect(await total({ filename: 'grid3.dm4' })).toBe(1);
      expect(await total({ filename: 'grid4.dm4' })).toBe(0);
      expect(await total({ persistent_id: ark.replace('ark:', 'ark:/') })).toBe(1);
      expect(await total({ metadata_key: 'sample.name', metadata_value: 'grid 3' })).toBe(1);
      expect(await total({ metadata_key: 'sample.name', metadata_value: 'grid 4' })).toBe(0);
      expect(await total({ page: 2, size: 1 })).toBe(1);
      const badArk = await refused('files.list', { persistent_id: 'not an ark' });
      expect(badArk.body.code).toBe('validation_failed');
      expect(Object.keys(byPath(badArk.body))).toEqual(['persistent_id']);
    });

    // Mutation: files.get listing the file's first 1,000 transfers (the oldest).
    it("shows a file's latest 1,000 transfers and how many it has, however many there are", async () => {
      // A destination away for weeks: an attempt every hour, each a failed transfer.
      const add = db.prepare(
        `INSERT INTO harvest_transfers (uuid, file_id, status, storage_location_id,
           destination_path, bytes_transferred, dest_checksum, checksum_verified, started_at,
           completed_at, error, note)
         SELECT ?, file_id, 'failed', storage_location_id, destination_path, 0, NULL, 0,
           started_at, NULL, 'share not reachable', '' FROM harvest_transfers WHERE file_id = ?
         ORDER BY id LIMIT 1`,
      );
      db.transaction(() => {
        for (let i = 0; i < 1000; i++) add.run(newUuid(), fileId);
      })();
      const newest = db
        .prepare('SELECT max(id) FROM harvest_transfers WHERE file_id = ?')
        .pluck()
        .get(fileId) as number;
      const detail = await ok<{
        transfers: { id: number; status: string }[];
        transfers_total: number;
      }>('files.get', { id: fileId });
      expect(detail.transfers_total).toBe(1001);
      expect(detail.transfers).toHaveLength(1000);
      expect(detail.transfers.at(-1)?.id).toBe(newest);
      expect(detail.transfers[0]?.id).toBe(newest - 999);
      expect(detail.transfers.every((t) => t.status === 'failed')).toBe(true);
      db.prepare("DELETE FROM harvest_transfers WHERE file_id = ? AND status = 'failed'").run(
        fileId,
      );
    });

    it('shows a user only the files of instruments granted to them', async () => {
      expect(await ok('files.list', {}, 'alice')).toEqual({
        items: [],
        total: 0,
        page: 1,
        size: 50,
      });
      expect((await refused('files.get', { id: fileId }, 'alice')).body.code).toBe('not_found');
      expect(await ok('files.instruments', {}, 'alice')).toEqual({ instruments: [] });

      const granted = await ok<{ created: boolean; grant: { user_id: number } }>(
        'admin.access.grant',
        { instrument_id: instrumentId, user_id: ids.alice },
      );
      expect(granted).toMatchObject({ created: true, grant: { user_id: ids.alice } });
      const again = await ok<{ created: boolean }>('admin.access.grant', {
        instrument_id: instrumentId,
        user_id: ids.alice,
      });
      expect(again.created).toBe(false);
      expect(await ok('admin.access.list', { instrument_id: instrumentId })).toEqual({
        grants: [{ user_id: ids.alice, granted_at: expect.any(String) as string }],
      });
      const nobody = await refused('admin.access.grant', {
        instrument_id: instrumentId,
        user_id: 424242,
      });
      expect(byPath(nobody.body)).toEqual({ user_id: 'no user with id 424242' });

      expect((await ok<{ total: number }>('files.list', {}, 'alice')).total).toBe(1);
      expect(
        (await ok<{ transfers: unknown[] }>('files.get', { id: fileId }, 'alice')).transfers,
      ).toHaveLength(1);
      expect(await ok('files.instruments', {}, 'alice')).toEqual({
        instruments: [{ id: instrumentId, name: 'TEM camera' }],
      });
      // Bob has no grant: the file does not exist for him.
      expect((await ok<{ total: number }>('files.list', {}, 'bob')).total).toBe(0);
      expect((await refused('files.get', { id: fileId }, 'bob')).status).toBe(404);

      expect(
        await ok('admin.access.revoke', { instrument_id: instrumentId, user_id: ids.alice }),
      ).toEqual({ ok: true });
      expect((await ok<{ total: number }>('files.list', {}, 'alice')).total).toBe(0);
      const twice = await refused('admin.access.revoke', {
        instrument_id: instrumentId,
        user_id: ids.alice,
      });
      expect(twice.body.code).toBe('not_found');
    });
  });
});

describe('text the web page sends', () => {
  const person = (over: Record<string, unknown>): Record<string, unknown> => ({
    username: 'carol',
    email: 'carol@example.org',
    first_name: 'Carol',
    last_name: 'Ng',
    badge_number: '',
    role: 'user',
    is_active: true,
    projects: [],
    qualified_tools: [],
    ...over,
  });
  const people = (): number => db.prepare('SELECT count(*) FROM users').pluck().get() as number;

  it('refuses text that is not well-formed Unicode anywhere in a call, naming where', async () => {
    const before = people();
    const rule = 'not well-formed Unicode (lone surrogate)';
    const lone = await refused('admin.users.save', person({ username: 's\ud800u' }));
    expect(lone.status).toBe(400);
    expect(lone.body).toMatchObject({
      code: 'bad_request',
      message: `admin.users.save: username: ${rule}`,
      details: { problems: [`username: ${rule}`] },
    });
    // In a list, and in a key (shown with U+FFFD).
    const listed = await refused('admin.users.save', person({ projects: [1, '\udc00'] }));
    expect(listed.body.message).toBe(`admin.users.save: projects[1]: ${rule}`);
    const key = await refused('admin.users.save', { ...person({}), 'x\udbff': 1 });
    expect(key.body.message).toBe(`admin.users.save: x\ufffd: ${rule}`);
    expect(people()).toBe(before);
  });

  it('keeps names to one line: no line separators', async () => {
    const before = people();
    for (const [field, value, rule] of [
      ['username', 'ca\u2028rol', 'must not hold line or paragraph separators (U+2028, U+2029)'],
      ['last_name', 'N\u2029g', 'must not hold line or paragraph separators (U+2028, U+2029)'],
    ] as const) {
      const res = await refused('admin.users.save', person({ [field]: value }));
      expect(res.status, field).toBe(400);
      expect(res.body.message).toBe(`admin.users.save: ${field}: ${rule}`);
    }
    // Letters of right-to-left scripts, their marks (U+200E, U+200F) and the embeddings a
    // word processor puts around them are text.
    const made = await ok<{ user: { username: string; first_name: string } }>(
      'admin.users.save',
      person({ username: 'noa', first_name: 'נועה\u200f', last_name: '\u202bكريم\u202c' }),
    );
    expect(made.user).toMatchObject({ username: 'noa', first_name: 'נועה\u200f' });
    expect(people()).toBe(before + 1);
  });
});
