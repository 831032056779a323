/**
 * A bundle imported into a server's data dir (`labstation import`) and the admin pages' check
 * that a save does not overwrite a record changed since its editor was opened (updated_at).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { openServerData } from '../../electron/core/server/dataDir.js';
import { createStationAccount } from '../../electron/core/server/accounts.js';
import { createServerApp } from '../../electron/core/server/app.js';
import { createApiToken } from '../../electron/core/server/auth.js';
import { createLogger } from '../../electron/core/util/log.js';
import { listFacility } from '../../electron/core/server/admin/facility.js';
import { saveTool } from '../../electron/core/server/admin/facilitySaves.js';
import { importBundle } from '../../electron/core/station/facility.js';
import { AppError } from '../../electron/core/util/errors.js';
import { facilityBundle } from '../fixtures/facility.js';
import { join } from 'node:path';
import { tempDir } from './helpers.js';

let db: Db | undefined;
afterEach(() => db?.close());

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('a bundle import seen by the admin pages', () => {
  it("stamps the tools whose qualified people it changed, so an editor opened before can't save the old list back", async () => {
    const server = (db = openServerData(tempDir()));
    const bundle = facilityBundle();
    delete bundle.station; // a server runs no tool
    await importBundle(server, bundle);
    const opened = listFacility(server).tools.find((t) => t.name === 'AFM')!;
    const sem = listFacility(server).tools.find((t) => t.name === 'SEM')!;
    expect(opened.qualified_users).toEqual([]);

    // The same people again: no tool's list changes, no tool counts as changed.
    await pause(5);
    await importBundle(server, { users: facilityBundle().users });
    expect(listFacility(server).tools.find((t) => t.name === 'AFM')!.updated_at).toBe(
      opened.updated_at,
    );

    // Bob qualified for the AFM by a bundle that does not list the AFM itself.
    await pause(5);
    await importBundle(server, {
      users: [{ username: 'bob', projects: ['Other'], qualified_tools: ['AFM'] }],
    });
    const now = listFacility(server);
    const bob = now.users.find((u) => u.username === 'bob')!;
    expect(now.tools.find((t) => t.name === 'AFM')!.qualified_users).toEqual([bob.id]);
    expect(now.tools.find((t) => t.name === 'SEM')!.updated_at).toBe(sem.updated_at);

    // The AFM's editor, opened before the import, saves its old list: refused, bob stays.
    const { id, name, category, operational, visible, qualified_users, updated_at } = opened;
    const stale = { id, name, category, operational, visible, qualified_users, updated_at };
    const questions = {
      pre_usage_questions: opened.pre_usage_questions,
      post_usage_questions: opened.post_usage_questions,
    };
    let refused: unknown;
    try {
      saveTool(server, { ...stale, ...questions, category: 'Changed' });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('conflict');
    expect((refused as AppError).message).toMatch(/^AFM was changed elsewhere since it was opened/);
    expect(listFacility(server).tools.find((t) => t.name === 'AFM')!.qualified_users).toEqual([
      bob.id,
    ]);

    // Taking the qualification away by a bundle counts the same way.
    const afterGiven = listFacility(server).tools.find((t) => t.name === 'AFM')!;
    await pause(5);
    await importBundle(server, {
      users: [{ username: 'bob', projects: ['Other'], qualified_tools: [] }],
    });
    const afterTaken = listFacility(server).tools.find((t) => t.name === 'AFM')!;
    expect(afterTaken.qualified_users).toEqual([]);
    expect(afterTaken.updated_at).not.toBe(afterGiven.updated_at);
  });

  it('a re-import of the same bundle changes nothing: no change for stations to pull, no editor made stale; what differs is written', async () => {
    const server = (db = openServerData(tempDir()));
    const bundle = facilityBundle();
    delete bundle.station;
    const users = bundle.users as Record<string, unknown>[];
    users[0] = { ...users[0], email: 'alice@example.org', password: 'alice password 1' };
    await importBundle(server, bundle);
    const changes = (): { entity: string; uuid: string }[] =>
      server
        .prepare('SELECT entity, uuid FROM sync_changes WHERE seq > ? ORDER BY seq')
        .all(mark) as { entity: string; uuid: string }[];
    let mark = server.prepare('SELECT max(seq) FROM sync_changes').pluck().get() as number;
    const before = listFacility(server);
    const hashes = (): unknown =>
      server.prepare('SELECT username, pin_hash, password_hash FROM users ORDER BY id').all();
    const hashesBefore = hashes();

    // The same bundle again, PINs and password as plain text: they still match their hashes.
    await pause(5);
    await importBundle(server, bundle);
    expect(changes()).toEqual([]);
    expect(listFacility(server)).toEqual(before);
    expect(hashes()).toEqual(hashesBefore);

    // What differs is written, and only that: bob's PIN, alice's projects, one project, one tool.
    mark = server.prepare('SELECT max(seq) FROM sync_changes').pluck().get() as number;
    const again = facilityBundle();
    delete again.station;
    const changed = again.users as Record<string, unknown>[];
    changed[0] = { ...users[0], projects: ['Other'] };
    changed[1] = { ...changed[1], pin: '5432' };
    (again.projects as Record<string, unknown>[])[0].active = false;
    (again.tools as Record<string, unknown>[])[0].pre_usage_questions = [];
    await importBundle(server, again);
    const uuidOf = (table: string, column: string, name: string): string =>
      server.prepare(`SELECT uuid FROM ${table} WHERE ${column} = ?`).pluck().get(name) as string;
    const logged = new Set(changes().map((c) => `${c.entity} ${c.uuid}`));
    expect(logged).toEqual(
      new Set([
        `user ${uuidOf('users', 'username', 'alice')}`,
        `user ${uuidOf('users', 'username', 'bob')}`,
        `project ${uuidOf('projects', 'name', (again.projects as { name: string }[])[0].name)}`,
        `tool ${uuidOf('tools', 'name', (again.tools as { name: string }[])[0].name)}`,
      ]),
    );
    const after = hashes() as { username: string; pin_hash: string }[];
    const bob = (list: unknown): string =>
      (list as { username: string; pin_hash: string }[]).find((u) => u.username === 'bob')!
        .pin_hash;
    expect(bob(after)).not.toBe(bob(hashesBefore));
    expect(after.filter((u) => u.username !== 'bob')).toEqual(
      (hashesBefore as { username: string }[]).filter((u) => u.username !== 'bob'),
    );
  });
});

describe('a bundle with harvest settings imported into a server', () => {
  /** A server dir with an admin, the harvest API on it, and a bundle's harvest settings. */
  async function serverWithApi() {
    const dir = tempDir();
    const server = (db = openServerData(dir));
    const base = facilityBundle();
    delete base.station;
    const bundle = {
      ...base,
      users: [
        ...(base.users as object[]),
        { username: 'ada', password: 'ada password 1', role: 'admin' },
      ],
      storage_locations: [{ name: 'archive', type: 'local', base_path: join(dir, 'store') }],
      instruments: [
        {
          name: 'sem-camera',
          tool: 'SEM',
          watch: [{ path: 'D:\\Data' }],
          storage_location: 'archive',
        },
        {
          name: 'afm-head',
          tool: 'AFM',
          watch: [{ path: '/data/afm' }],
          storage_location: 'archive',
        },
      ],
    };
    await importBundle(server, bundle);
    const admin = server
      .prepare("SELECT id FROM users WHERE username = 'ada'")
      .pluck()
      .get() as number;
    const token = createApiToken(server, admin).token;
    const app = await createServerApp({
      db: server,
      log: createLogger('silent'),
      jwtSecret: 'admin-import-test-secret-0123456789',
      timeZone: () => 'UTC',
    });
    const api = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => {
      const res = await app.inject({
        method,
        url,
        headers: { authorization: `Token ${token}` },
        ...(payload ? { payload } : {}),
      });
      return { status: res.statusCode, body: res.json<Record<string, unknown>>() };
    };
    const instrumentId = (name: string) =>
      server.prepare('SELECT id FROM instruments WHERE name = ?').pluck().get(name) as number;
    return { server, bundle, app, api, instrumentId };
  }

  // Mutation: the bundle's schedules taken as the whole list on a server too, as they were: the
  // import below removed both schedules made through the API.
  it('keeps the schedules made through the API that the bundle does not list', async () => {
    const { bundle, app, api, instrumentId } = await serverWithApi();
    try {
      const made: unknown[] = [];
      for (const cron of ['0 2 * * *', '30 3 * * *']) {
        const res = await api('POST', '/api/schedules', {
          instrument_id: instrumentId('afm-head'),
          cron,
        });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        made.push(res.body.id);
      }
      await importBundle(db!, {
        ...bundle,
        schedules: [{ instrument: 'sem-camera', cron: '0 1 * * *' }],
      });
      // Again with the API's first schedule listed: it is that one, not a second.
      await importBundle(db!, {
        ...bundle,
        schedules: [{ instrument: 'afm-head', cron: '0 2 * * *' }],
      });
      const listed = await api('GET', '/api/schedules');
      const rows = listed.body.items as {
        id: number;
        instrument_id: number;
        cron: string;
      }[];
      expect(rows.map((r) => [r.instrument_id, r.cron]).sort()).toEqual(
        [
          [instrumentId('afm-head'), '0 2 * * *'],
          [instrumentId('afm-head'), '30 3 * * *'],
          [instrumentId('sem-camera'), '0 1 * * *'],
        ].sort(),
      );
      expect(rows.filter((r) => made.includes(r.id))).toHaveLength(2);
    } finally {
      await app.close();
    }
  });

  // Mutation: no check of the service account's tool at import, as it was: the instrument moved
  // to the AFM while sem-pc, which harvests it, runs the SEM (the API refuses that move).
  it('refuses to move an instrument off the tool of the service account that harvests it', async () => {
    const { server, bundle, app, api, instrumentId } = await serverWithApi();
    try {
      const account = createStationAccount(server, { name: 'sem-pc', tool: 'SEM' });
      const patched = await api('PATCH', `/api/instruments/${instrumentId('sem-camera')}`, {
        service_account_id: account.id,
      });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      const moved = {
        ...bundle,
        instruments: [{ ...bundle.instruments[0], tool: 'AFM' }],
      };
      await expect(importBundle(server, moved)).rejects.toThrow(
        'instruments[0] (sem-camera).tool: service account sem-pc harvests it and runs SEM; ' +
          'its instruments must be on that tool, not on AFM',
      );
      const tool = server
        .prepare(
          'SELECT t.name FROM instruments i JOIN tools t ON t.id = i.tool_id WHERE i.name = ?',
        )
        .pluck()
        .get('sem-camera');
      expect(tool).toBe('SEM');
    } finally {
      await app.close();
    }
  });

  // Mutation: no check of repeated schedules at import, as it was: both were stored, and each
  // night's harvest ran twice.
  it('refuses one instrument scheduled twice at the same times, naming the first', async () => {
    const { server, bundle, app } = await serverWithApi();
    await app.close();
    const twice = { instrument: 'afm-head', cron: '0 2 * * *' };
    await expect(
      importBundle(server, {
        ...bundle,
        schedules: [twice, { ...twice, timezone: 'Europe/Zurich' }, twice],
      }),
    ).rejects.toThrow(
      'schedules[2].cron: schedules[0] already runs afm-head at these times (the same cron and time zone)',
    );
    // One zone written two ways is the same times.
    await expect(
      importBundle(server, {
        ...bundle,
        schedules: [
          { ...twice, timezone: 'Europe/Zurich' },
          { ...twice, timezone: 'europe/zurich' },
        ],
      }),
    ).rejects.toThrow('schedules[1].cron: schedules[0] already runs afm-head at these times');
    // One cron written two ways too: spaces, and the seconds field given or left out.
    for (const other of ['0  2 * * *', '0 0 2 * * *']) {
      await expect(
        importBundle(server, { ...bundle, schedules: [twice, { ...twice, cron: other }] }),
      ).rejects.toThrow('schedules[1].cron: schedules[0] already runs afm-head at these times');
    }
    expect(server.prepare('SELECT count(*) FROM harvest_schedules').pluck().get()).toBe(0);
    // Off, the second is not a second run: taken.
    await importBundle(server, { ...bundle, schedules: [twice, { ...twice, enabled: false }] });
    expect(server.prepare('SELECT count(*) FROM harvest_schedules').pluck().get()).toBe(2);
  });

  // Mutation: a schedule matched by instrument and cron alone, the first by id, as it was: the
  // second import changed the Zurich one to the server's zone, beside the one already there.
  it('matches a schedule listed again to the one in its time zone, making none twice', async () => {
    const { server, bundle, app } = await serverWithApi();
    await app.close();
    const nightly = { instrument: 'afm-head', cron: '0 2 * * *' };
    await importBundle(server, {
      ...bundle,
      schedules: [{ ...nightly, timezone: 'Europe/Zurich' }, nightly],
    });
    await importBundle(server, { ...bundle, schedules: [nightly] });
    expect(
      server.prepare('SELECT cron, timezone, enabled FROM harvest_schedules ORDER BY id').all(),
    ).toEqual([
      { cron: '0 2 * * *', timezone: 'Europe/Zurich', enabled: 1 },
      { cron: '0 2 * * *', timezone: null, enabled: 1 },
    ]);
  });

  // Mutation: station paths only where the data dir is a server's already, as it was: a server
  // bundle with no people in it, into a new data dir, was refused its Windows path.
  it("takes a station's Windows path into a new data dir from a bundle with no station", async () => {
    const fresh = (db = openDatabase(join(tempDir(), 'labstation.db')));
    await importBundle(fresh, {
      tools: [{ name: 'SEM' }],
      storage_locations: [{ name: 'archive', type: 'local', base_path: 'E:\\Archive' }],
      instruments: [
        {
          name: 'sem-camera',
          tool: 'SEM',
          watch: [{ path: 'D:\\Data' }],
          storage_location: 'archive',
        },
      ],
    });
    expect(fresh.prepare('SELECT base_path FROM storage_locations').pluck().get()).toBe(
      'E:\\Archive',
    );
  });
});
