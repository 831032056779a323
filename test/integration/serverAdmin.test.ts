/**
 * The admin calls of the server (`POST /rpc/admin.*`), with real processes: a `labstation
 * serve`, and a `labstation station` registered through them. What an admin changes reaches the
 * station; tokens and keys made here work, and stop working when revoked or replaced.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { facilityBundle } from '../fixtures/facility.js';
import {
  runCli,
  startServer,
  startStation,
  tempDir,
  writeJson,
  type ServerProcess,
  type StationProcess,
  waitFor,
  loginJwt,
} from './helpers.js';

const ADMIN = { email: 'admin@example.org', password: 'admin password 1' };
const SAM = { email: 'sam@example.org', password: 'staff password 1' };
const ALICE = { email: 'alice@example.org', password: 'alice password 1' };

let serverDir: string;
let server: ServerProcess;
let serverDb: Database.Database;
const stations: StationProcess[] = [];
let adminJwt: string;
let stationDir: string;
let stationKey: string;

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

const jwtFor = (user: { email: string; password: string }): Promise<string> =>
  loginJwt(server.url, user);

async function rpc(name: string, args: unknown, jwt?: string): Promise<Reply> {
  const res = await fetch(`${server.url}rpc/${name}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(jwt ? { authorization: `Bearer ${jwt}` } : {}),
    },
    body: JSON.stringify(args),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function ok<T = Record<string, unknown>>(name: string, args: unknown): Promise<T> {
  const res = await rpc(name, args, adminJwt);
  expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body as T;
}

interface Facility {
  users: { id: number; username: string; projects: number[]; qualified_tools: number[] }[];
  projects: { id: number; name: string; active: boolean }[];
  tools: {
    id: number;
    name: string;
    pre_usage_questions: unknown[];
    post_usage_questions: unknown[];
    qualified_users: number[];
  }[];
}

const facility = (): Promise<Facility> => ok<Facility>('admin.facility', {});
const idOf = (list: { id: number; name?: string; username?: string }[], name: string): number =>
  list.find((x) => x.name === name || x.username === name)!.id;

function userInput(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    username: 'carol',
    email: 'carol@example.org',
    first_name: 'Carol',
    last_name: 'Ng',
    badge_number: '555000',
    role: 'user',
    is_active: true,
    pin: '4321',
    password: 'carol password 1',
    projects: [],
    qualified_tools: [],
    ...over,
  };
}

beforeAll(async () => {
  serverDir = join(tempDir(), 'server');
  const bundle = facilityBundle();
  delete bundle.station;
  const users = bundle.users as Record<string, unknown>[];
  users[0] = { ...users[0], ...ALICE };
  users[2] = { ...users[2], ...SAM, role: 'staff' };
  const imported = await runCli([
    'import',
    '--data',
    serverDir,
    writeJson(tempDir(), 'b.json', bundle),
  ]);
  expect(imported.stderr).toBe('');
  server = await startServer(serverDir, {
    LABSTATION_ADMIN_EMAIL: ADMIN.email,
    LABSTATION_ADMIN_PASSWORD: ADMIN.password,
  });
  serverDb = new Database(join(serverDir, 'labstation.db'), { readonly: true });
  adminJwt = await jwtFor(ADMIN);
}, 30_000);

afterAll(async () => {
  for (const s of stations) await s.stop();
  serverDb?.close();
  await server?.stop();
});

const ADMIN_CALLS: [string, unknown][] = [
  ['admin.facility', {}],
  ['admin.users.save', userInput()],
  ['admin.projects.save', { name: 'X', application_identifier: '', active: true }],
  [
    'admin.tools.save',
    {
      name: 'X',
      category: '',
      operational: true,
      visible: true,
      pre_usage_questions: [],
      post_usage_questions: [],
      qualified_users: [],
    },
  ],
  ['admin.tokens.list', {}],
  ['admin.tokens.create', { user: 1, name: 'x' }],
  ['admin.tokens.revoke', { id: 1 }],
  ['admin.stations.list', {}],
  ['admin.stations.create', { name: 'x', description: '', tool: null }],
  ['admin.stations.update', { id: 1, name: 'x', description: '', tool: null, enabled: true }],
  ['admin.stations.newKey', { id: 1 }],
  ['admin.mail.list', {}],
  ['admin.mail.retry', { id: 1 }],
];

describe('admin calls', () => {
  it('are refused without a login (401), and to staff and users (403), changing nothing', async () => {
    const staff = await jwtFor(SAM);
    const user = await jwtFor(ALICE);
    const before = serverDb.prepare('SELECT count(*) FROM sync_changes').pluck().get();
    for (const [name, args] of ADMIN_CALLS) {
      expect((await rpc(name, args)).status, name).toBe(401);
      for (const jwt of [staff, user]) {
        const res = await rpc(name, args, jwt);
        expect(res.status, name).toBe(403);
        expect(res.body).toMatchObject({ code: 'forbidden', detail: `${name} is for admins only` });
      }
    }
    expect(serverDb.prepare('SELECT count(*) FROM sync_changes').pluck().get()).toBe(before);
    expect(
      serverDb.prepare("SELECT count(*) FROM users WHERE username = 'carol'").pluck().get(),
    ).toBe(0);
  });

  it('lists the facility without any secret', async () => {
    const all = await facility();
    expect(all.users.map((u) => u.username)).toEqual(['admin', 'alice', 'bob', 'sam']);
    expect(all.tools.map((t) => t.name)).toEqual(['AFM', 'SEM']);
    const alice = all.users.find((u) => u.username === 'alice')!;
    expect(alice).toMatchObject({ has_pin: true, has_password: true, badge_number: '100200' });
    expect(alice.projects).toEqual([idOf(all.projects, 'Cathodes'), idOf(all.projects, 'Old')]);
    expect(JSON.stringify(all)).not.toMatch(/argon2|pin_hash|password_hash/);
  });

  it('creates a person who can log in, with projects and qualifications, and edits them', async () => {
    const all = await facility();
    const sem = idOf(all.tools, 'SEM');
    const other = idOf(all.projects, 'Other');
    const made = await ok<{ user: { id: number; has_pin: boolean; qualified_tools: number[] } }>(
      'admin.users.save',
      userInput({ projects: [other], qualified_tools: [sem] }),
    );
    expect(made.user).toMatchObject({ has_pin: true, qualified_tools: [sem] });
    expect(await jwtFor({ email: 'carol@example.org', password: 'carol password 1' })).toBeTruthy();
    const row = serverDb
      .prepare('SELECT pin_hash, password_hash, is_staff, role FROM users WHERE id = ?')
      .get(made.user.id) as Record<string, unknown>;
    expect(row.pin_hash).toMatch(/^\$argon2id\$/);
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
    expect(row).toMatchObject({ is_staff: 0, role: 'user' });

    // Empty secrets keep the current ones; the role sets is_staff.
    const edited = await ok<{ user: Record<string, unknown> }>(
      'admin.users.save',
      userInput({ id: made.user.id, role: 'staff', pin: '', password: '', qualified_tools: [] }),
    );
    expect(edited.user).toMatchObject({ role: 'staff', has_pin: true, qualified_tools: [] });
    expect(
      serverDb.prepare('SELECT password_hash FROM users WHERE id = ?').pluck().get(made.user.id),
    ).toBe(row.password_hash);
    expect(
      serverDb.prepare('SELECT is_staff FROM users WHERE id = ?').pluck().get(made.user.id),
    ).toBe(1);
    // The e-mail of someone with a password is how they log in: it may not be cleared.
    const cleared = await rpc(
      'admin.users.save',
      userInput({ id: made.user.id, role: 'staff', email: '', pin: '', password: '' }),
      adminJwt,
    );
    expect(cleared.status).toBe(422);
    expect(JSON.stringify(cleared.body)).toContain('is needed to log in to the server');
    expect(serverDb.prepare('SELECT email FROM users WHERE id = ?').pluck().get(made.user.id)).toBe(
      'carol@example.org',
    );
  });

  it('refuses clashing names, bad fields and unknown ids, naming the field, storing nothing', async () => {
    const cases: [Record<string, unknown>, number, string, RegExp][] = [
      [
        userInput({ username: 'ALICE', email: 'x1@example.org', badge_number: '' }),
        409,
        'username',
        /taken/,
      ],
      [
        userInput({ username: 'dan', email: 'x2@example.org', badge_number: '100200' }),
        409,
        'badge_number',
        /belongs to alice/,
      ],
      [
        userInput({ username: 'erin', email: 'x3@example.org', badge_number: 'bob' }),
        409,
        'badge_number',
        /username of bob/,
      ],
      [
        userInput({ username: '100200', email: 'x4@example.org', badge_number: '' }),
        409,
        'username',
        /badge number of alice/,
      ],
      [
        userInput({ username: 'fay', email: 'ALICE@example.org', badge_number: '' }),
        409,
        'email',
        /alice's/,
      ],
      [
        userInput({ username: 'gus', email: 'g@example.org', badge_number: '', projects: [999] }),
        422,
        'projects',
        /no project with id 999/,
      ],
      [
        userInput({ username: 'hal', email: '', badge_number: '', password: 'long enough 1' }),
        422,
        'email',
        /needed to log in/,
      ],
    ];
    const before = serverDb.prepare('SELECT count(*) FROM users').pluck().get();
    for (const [input, status, field, message] of cases) {
      const res = await rpc('admin.users.save', input, adminJwt);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.message).toMatch(new RegExp(`^${field}: `));
      expect(res.body.message).toMatch(message);
      expect(res.body.details).toEqual({
        problems: [{ path: [field], message: expect.any(String) as string }],
      });
    }
    // Every clash at once, each at its field: not one per save.
    const all = await rpc(
      'admin.users.save',
      userInput({ username: 'bob', email: 'ALICE@example.org', badge_number: '100200' }),
      adminJwt,
    );
    expect(all.status).toBe(409);
    expect(all.body.details).toEqual({
      problems: [
        { path: ['username'], message: 'bob is taken' },
        { path: ['badge_number'], message: '100200 belongs to alice' },
        { path: ['email'], message: "ALICE@example.org is alice's" },
      ],
    });
    expect(all.body.message).toBe(
      "username: bob is taken; badge_number: 100200 belongs to alice; email: ALICE@example.org is alice's",
    );
    // Schema rules: short PIN, short password, unknown role, unknown field.
    for (const bad of [
      userInput({ username: 'ivy', pin: '12' }),
      userInput({ username: 'ivy', password: 'short' }),
      userInput({ username: 'ivy', role: 'root' }),
      userInput({ username: 'ivy', extra: 1 }),
    ]) {
      const res = await rpc('admin.users.save', bad, adminJwt);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.code).toBe('bad_request');
    }
    // One-line fields hold no control character: they reach paths, mails and CSV cells.
    for (const [field, value] of [
      ['username', 'ivy\tx'],
      ['last_name', 'Smith\nBcc: x@y.org'],
      ['badge_number', '12\u000034'],
    ] as const) {
      const res = await rpc(
        'admin.users.save',
        userInput({ username: 'ivy', [field]: value }),
        adminJwt,
      );
      expect(res.status, field).toBe(400);
      expect(res.body.message).toBe(
        `admin.users.save: ${field}: must not hold control characters (NUL, tab, line break)`,
      );
    }
    expect(serverDb.prepare('SELECT count(*) FROM users').pluck().get()).toBe(before);
  });

  it("keeps an admin when two admins take away each other's access at once", async () => {
    const BOSS = { email: 'boss2@example.org', password: 'boss2 password 1' };
    await ok('admin.users.save', {
      ...userInput({ username: 'boss2', badge_number: '', pin: '', role: 'admin' }),
      ...BOSS,
    });
    const bossJwt = await jwtFor(BOSS);
    const all = await facility();
    const demote = (username: string, email: string) =>
      userInput({
        id: idOf(all.users, username),
        username,
        email,
        badge_number: '',
        role: 'user',
        // Each save hashes a PIN before its write: the two overlap.
        pin: '8765',
        password: '',
      });
    const [first, second] = await Promise.all([
      rpc('admin.users.save', demote('boss2', BOSS.email), adminJwt),
      rpc('admin.users.save', demote('admin', ADMIN.email), bossJwt),
    ]);
    // One of them went first; the other's access was gone by its turn (both were 200, and
    // no admin was left).
    expect([first.status, second.status].sort()).toEqual([200, 403]);
    expect(
      serverDb
        .prepare("SELECT count(*) FROM users WHERE role = 'admin' AND is_active = 1")
        .pluck()
        .get(),
    ).toBe(1);
    // The admin this suite logs in as is put back, whichever went first.
    if (second.status === 200) {
      const restore = await rpc(
        'admin.users.save',
        { ...demote('admin', ADMIN.email), role: 'admin', pin: '' },
        bossJwt,
      );
      expect(restore.status).toBe(200);
      await ok('admin.users.save', { ...demote('boss2', BOSS.email), pin: '' });
    }
  });

  it('will not let an admin take away their own admin access', async () => {
    const all = await facility();
    const me = all.users.find((u) => u.username === 'admin')!;
    const base = userInput({
      id: me.id,
      username: 'admin',
      email: ADMIN.email,
      badge_number: '',
      pin: '',
      password: '',
    });
    const demote = await rpc('admin.users.save', { ...base, role: 'staff' }, adminJwt);
    expect(demote.status).toBe(409);
    expect(demote.body.message).toMatch(/^role: you cannot take away your own admin access/);
    const deactivate = await rpc(
      'admin.users.save',
      { ...base, role: 'admin', is_active: false },
      adminJwt,
    );
    expect(deactivate.status).toBe(409);
    expect(serverDb.prepare('SELECT role, is_active FROM users WHERE id = ?').get(me.id)).toEqual({
      role: 'admin',
      is_active: 1,
    });
  });

  it('creates and edits projects; a name is unique', async () => {
    const made = await ok<{ project: { id: number } }>('admin.projects.save', {
      name: 'Anodes',
      application_identifier: 'PRJ-9',
      active: true,
    });
    const edited = await ok<{ project: Record<string, unknown> }>('admin.projects.save', {
      id: made.project.id,
      name: 'Anodes',
      application_identifier: 'PRJ-10',
      active: false,
    });
    expect(edited.project).toMatchObject({ application_identifier: 'PRJ-10', active: false });
    const clash = await rpc(
      'admin.projects.save',
      { id: made.project.id, name: 'Cathodes', application_identifier: '', active: true },
      adminJwt,
    );
    expect(clash.status).toBe(409);
    expect(clash.body.message).toMatch(/^name: a project named Cathodes exists/);
  });

  it('refuses a save of a record changed since it was opened, also through a linked record, keeping the change', async () => {
    type Stamped = { id: number; updated_at: string } & Record<string, unknown>;
    const all = (await facility()) as unknown as {
      users: Stamped[];
      projects: Stamped[];
      tools: Stamped[];
    };
    const bob = all.users.find((u) => u.username === 'bob')!;
    const afm = all.tools.find((t) => t.name === 'AFM')!;
    const project = all.projects.find((p) => p.name === 'Other')!;
    const asOpened = (u: Stamped): Record<string, unknown> => {
      const { id, username, email, first_name, last_name, badge_number, role, is_active } = u;
      const { projects, qualified_tools, updated_at } = u;
      return {
        ...{ id, username, email, first_name, last_name, badge_number, role, is_active },
        ...{ projects, qualified_tools, updated_at },
      };
    };
    // Two admins open bob; the first saves a new last name, the second a new badge.
    const first = await ok<{ user: Stamped }>('admin.users.save', {
      ...asOpened(bob),
      last_name: 'First',
    });
    expect(first.user.updated_at).not.toBe(bob.updated_at);
    const second = await rpc(
      'admin.users.save',
      { ...asOpened(bob), badge_number: '777' },
      adminJwt,
    );
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({
      code: 'conflict',
      detail:
        `bob was changed elsewhere since it was opened here (saved at ${first.user.updated_at}); ` +
        'reload the page to see that change, then make yours again',
    });
    const stored = serverDb
      .prepare('SELECT last_name, badge_number FROM users WHERE id = ?')
      .get(bob.id) as { last_name: string; badge_number: string | null };
    expect(stored).toEqual({ last_name: 'First', badge_number: bob.badge_number || null });
    // Saved again from what the first save answered: taken.
    await ok('admin.users.save', { ...asOpened(first.user), badge_number: '777' });

    // Qualifying bob for the AFM changes the AFM's list of qualified people: an AFM editor
    // opened before would save its old list back, and take the qualification away.
    const now = (await facility()) as unknown as { users: Stamped[] };
    const bobNow = now.users.find((u) => u.username === 'bob')!;
    await ok('admin.users.save', {
      ...asOpened(bobNow),
      qualified_tools: [...(bobNow.qualified_tools as number[]), afm.id],
    });
    const { id, name, category, operational, visible, qualified_users, updated_at } = afm;
    const staleTool = await rpc(
      'admin.tools.save',
      {
        ...{ id, name, category, operational, visible, qualified_users, updated_at },
        pre_usage_questions: afm.pre_usage_questions,
        post_usage_questions: afm.post_usage_questions,
        category: 'Changed',
      },
      adminJwt,
    );
    expect(staleTool.status).toBe(409);
    expect(staleTool.body.detail).toMatch(/^AFM was changed elsewhere since it was opened here/);
    expect(
      serverDb
        .prepare('SELECT 1 FROM qualifications WHERE user_id = ? AND tool_id = ?')
        .get(bob.id, afm.id),
    ).toBeTruthy();

    // A project the same way; a save without updated_at (a script) is taken as before.
    const renamed = await ok<{ project: Stamped }>('admin.projects.save', {
      id: project.id,
      name: 'Other',
      application_identifier: 'PRJ-A',
      active: true,
      updated_at: project.updated_at,
    });
    expect(renamed.project.updated_at).not.toBe(project.updated_at);
    const staleProject = await rpc(
      'admin.projects.save',
      {
        id: project.id,
        name: 'Other',
        application_identifier: 'PRJ-B',
        active: true,
        updated_at: project.updated_at,
      },
      adminJwt,
    );
    expect(staleProject.status).toBe(409);
    await ok('admin.projects.save', {
      id: project.id,
      name: 'Other',
      application_identifier: 'PRJ-C',
      active: true,
    });
  });

  it('refuses a question form with every problem named under its field, keeping the stored one', async () => {
    const all = await facility();
    const sem = all.tools.find((t) => t.name === 'SEM')!;
    const stored = serverDb
      .prepare("SELECT post_usage_questions FROM tools WHERE name = 'SEM'")
      .pluck()
      .get();
    const res = await rpc(
      'admin.tools.save',
      {
        id: sem.id,
        name: 'SEM',
        category: '',
        operational: true,
        visible: true,
        pre_usage_questions: [],
        post_usage_questions: [
          { type: 'radio', name: 'a', choices: ['x', 'y'], labels: ['only one'] },
          { type: 'formula', name: 'f', formula: 'nope + 1' },
          { type: 'sparkle', name: 's' },
        ],
        qualified_users: [],
      },
      adminJwt,
    );
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    const problems = (res.body.details as { problems: { path: string[]; message: string }[] })
      .problems;
    expect(problems.length).toBeGreaterThanOrEqual(3);
    expect(problems.every((p) => p.path[0] === 'post_usage_questions')).toBe(true);
    const text = problems.map((p) => p.message).join('\n');
    expect(text).toMatch(/labels/);
    expect(text).toMatch(/nope/);
    expect(text).toMatch(/sparkle/);
    expect(
      serverDb.prepare("SELECT post_usage_questions FROM tools WHERE name = 'SEM'").pluck().get(),
    ).toBe(stored);
  });

  // Mutation: a null list taken as none (the save put no questions in place of the
  // stored ones); a list left out is refused by the schema.
  it('refuses a null question list, keeping the stored one', async () => {
    const all = await facility();
    const sem = all.tools.find((t) => t.name === 'SEM')!;
    const stored = serverDb
      .prepare("SELECT pre_usage_questions, post_usage_questions FROM tools WHERE name = 'SEM'")
      .get();
    const base = {
      id: sem.id,
      name: 'SEM',
      category: '',
      operational: true,
      visible: true,
      qualified_users: [],
    };
    for (const [lists, field] of [
      [{ pre_usage_questions: null, post_usage_questions: [] }, 'pre_usage_questions'],
      [{ pre_usage_questions: [], post_usage_questions: null }, 'post_usage_questions'],
    ] as const) {
      const res = await rpc('admin.tools.save', { ...base, ...lists }, adminJwt);
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.details).toEqual({
        problems: [{ path: [field], message: 'is required: a list of questions ([] for none)' }],
      });
    }
    const left = await rpc('admin.tools.save', { ...base, pre_usage_questions: [] }, adminJwt);
    expect(left.status).toBe(400);
    expect(left.body.message).toBe('admin.tools.save: post_usage_questions: is required');
    expect(
      serverDb
        .prepare("SELECT pre_usage_questions, post_usage_questions FROM tools WHERE name = 'SEM'")
        .get(),
    ).toEqual(stored);
  });

  it('names the problems of both question lists at once, each at its question and property', async () => {
    const all = await facility();
    const sem = all.tools.find((t) => t.name === 'SEM')!;
    const res = await rpc(
      'admin.tools.save',
      {
        id: sem.id,
        name: 'SEM',
        category: '',
        operational: true,
        visible: true,
        pre_usage_questions: [{ type: 'float', name: 'x', precision: -1 }],
        post_usage_questions: [{ type: 'textbox', name: 'a', pattern: '[' }],
        qualified_users: [],
      },
      adminJwt,
    );
    expect(res.status).toBe(422);
    const problems = (res.body.details as { problems: { path: string[]; message: string }[] })
      .problems;
    expect(problems.map((p) => p.path)).toEqual([
      ['pre_usage_questions', 'x.precision'],
      ['post_usage_questions', 'a.pattern'],
    ]);
    expect(res.body.message).toMatch(/^pre_usage_questions: .*precision.* \(and 1 more\)$/);
  });

  it('registers a station whose key syncs; tool edits reach it; a new key shuts out the old', async () => {
    const all = await facility();
    const sem = all.tools.find((t) => t.name === 'SEM')!;
    const made = await ok<{ key: string; station: { id: number; tool_name: string } }>(
      'admin.stations.create',
      { name: 'sem-pc', description: 'SEM room 2', tool: sem.id },
    );
    expect(made.station.tool_name).toBe('SEM');
    expect(JSON.stringify(await ok('admin.stations.list', {}))).not.toContain(made.key);
    expect(
      serverDb.prepare('SELECT key_hash FROM stations WHERE id = ?').pluck().get(made.station.id),
    ).not.toBe(made.key);

    stationDir = join(tempDir(), 'station');
    const station = await startStation(stationDir, { LABSTATION_SYNC_BACKOFF_CAP_MS: '1000' }, [
      '--server',
      server.url,
      '--key',
      made.key,
    ]);
    stations.push(station);
    const postNames = async (): Promise<string[]> => {
      const res = await station.rpc('toolControl.status', { tool: 'SEM' });
      if (res.status !== 200) return [];
      const status = res.body as { tool: { post_usage_questions: { name: string }[] } };
      return status.tool.post_usage_questions.map((q) => q.name);
    };
    await waitFor('the station to pull its tool', async () =>
      (await postNames()).length ? true : undefined,
    );

    // The admin adds a post-usage question; the online station has it within seconds.
    await ok('admin.tools.save', {
      id: sem.id,
      name: 'SEM',
      category: 'Microscopy',
      operational: true,
      visible: true,
      pre_usage_questions: sem.pre_usage_questions,
      post_usage_questions: [
        ...sem.post_usage_questions,
        { type: 'number_float', name: 'beam_current', title: 'Beam current', precision: 2 },
      ],
      qualified_users: sem.qualified_users,
    });
    await waitFor('the new question at the station', async () =>
      (await postNames()).includes('beam_current') ? true : undefined,
    );

    // A new key: the old one is refused by the sync API.
    const renewed = await ok<{ key: string }>('admin.stations.newKey', { id: made.station.id });
    expect(renewed.key).not.toBe(made.key);
    stationKey = renewed.key;
    const pull = (key: string) =>
      fetch(`${server.url}sync/changes?cursor=0`, { headers: { authorization: `Station ${key}` } });
    expect((await pull(made.key)).status).toBe(401);
    expect((await pull(renewed.key)).status).toBe(200);
  }, 60_000);

  it('keeps a station on the tool of its instruments, and names the field of a taken name or a refused tool', async () => {
    const all = await facility();
    const sem = idOf(all.tools, 'SEM');
    const afm = idOf(all.tools, 'AFM');
    const made = await ok<{ station: { id: number } }>('admin.stations.create', {
      name: 'afm-pc',
      description: '',
      tool: null,
    });
    const id = made.station.id;
    const taken = await rpc(
      'admin.stations.create',
      { name: 'afm-pc', description: '', tool: null },
      adminJwt,
    );
    expect(taken.status).toBe(409);
    expect(taken.body.details).toEqual({
      problems: [{ path: ['name'], message: 'a station named "afm-pc" exists' }],
    });
    const noTool = await rpc(
      'admin.stations.create',
      { name: 'afm-pc-x', description: '', tool: 999 },
      adminJwt,
    );
    expect(noTool.status).toBe(404);
    expect(noTool.body.details).toEqual({
      problems: [{ path: ['tool'], message: 'no tool with id 999' }],
    });
    // Its first instrument binds it to that instrument's tool.
    await ok('admin.instruments.create', {
      name: 'AFM head',
      tool_id: afm,
      service_account_id: id,
      enabled: false,
    });
    const update = (tool: number | null, name = 'afm-pc') =>
      rpc('admin.stations.update', { id, name, description: '', tool, enabled: true }, adminJwt);
    const toolOf = () =>
      serverDb.prepare('SELECT tool_id FROM stations WHERE id = ?').pluck().get(id);
    expect(toolOf()).toBe(afm);

    // Another tool, or none, would leave its instrument harvested by nobody: refused at the tool.
    for (const tool of [sem, null]) {
      const refused = await update(tool);
      expect(refused.status).toBe(409);
      const problems = (refused.body.details as { problems: { path: string[]; message: string }[] })
        .problems;
      expect(problems).toHaveLength(1);
      expect(problems[0].path).toEqual(['tool']);
      expect(problems[0].message).toMatch(
        /runs instrument AFM head \(tool AFM\); give it to another station or tool/,
      );
      expect(toolOf()).toBe(afm);
    }
    const clash = await update(afm, 'sem-pc');
    expect(clash.status).toBe(409);
    expect(clash.body.details).toEqual({
      problems: [{ path: ['name'], message: 'a station named "sem-pc" exists' }],
    });
    // Its own tool, renamed: saved.
    await ok('admin.stations.update', {
      id,
      name: 'afm-pc-2',
      description: '',
      tool: afm,
      enabled: true,
    });
    expect(toolOf()).toBe(afm);
    // A station an older version left with an instrument of another tool can still be turned
    // off or renamed, its tool kept: only a change of tool is checked.
    const writer = new Database(join(serverDir, 'labstation.db'));
    writer.prepare('UPDATE stations SET tool_id = ? WHERE id = ?').run(sem, id);
    writer.close();
    await ok('admin.stations.update', {
      id,
      name: 'afm-pc-3',
      description: '',
      tool: sem,
      enabled: false,
    });
    expect(toolOf()).toBe(sem);
  });

  it('renames that swap two usernames in one go reach the station', async () => {
    const all = (await ok<{ users: Record<string, unknown>[] }>('admin.facility', {})).users;
    const input = (u: Record<string, unknown>, over: Record<string, unknown>) => ({
      id: u.id,
      username: u.username,
      email: u.email,
      first_name: u.first_name,
      last_name: u.last_name,
      badge_number: u.badge_number,
      role: u.role,
      is_active: u.is_active,
      projects: u.projects,
      qualified_tools: u.qualified_tools,
      ...over,
    });
    const alice = all.find((u) => u.username === 'alice')!;
    const bob = all.find((u) => u.username === 'bob')!;
    // The station is off while the admin works: it gets all of it in one delta, where bob (first
    // changed) comes before alice, and takes alice's name before alice has left it.
    await stations.pop()!.stop();
    await ok('admin.users.save', input(bob, { pin: '5555' }));
    await ok('admin.users.save', input(alice, { username: 'alice1' }));
    await ok('admin.users.save', input(bob, { username: 'alice' }));
    const station = await startStation(stationDir, { LABSTATION_SYNC_BACKOFF_CAP_MS: '1000' }, [
      '--server',
      server.url,
      '--key',
      stationKey,
    ]);
    stations.push(station);
    const logon = async (login: string, pin: string): Promise<string | undefined> => {
      const res = await station.rpc('session.logon', { login, pin });
      if (res.status !== 200) return undefined;
      await station.rpc('session.logoff', {});
      return (res.body as { user: { username: string } }).user.username;
    };
    await waitFor('the renames at the station', async () =>
      (await logon('alice', '5555')) === 'alice' ? true : undefined,
    );
    expect(await logon('alice1', '1234')).toBe('alice1');
    expect(await logon('100200', '1234')).toBe('alice1');
  }, 30_000);

  it('refuses a username that is someone’s badge in another letter case', async () => {
    await ok(
      'admin.users.save',
      userInput({ username: 'quinn', email: 'q@example.org', badge_number: 'QX7' }),
    );
    const res = await rpc(
      'admin.users.save',
      userInput({ username: 'qx7', email: 'qx7@example.org', badge_number: '' }),
      adminJwt,
    );
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/^username: qx7 is the badge number of quinn/);
  });

  it('makes API tokens that read the NEMO API, shown once, and revokes them', async () => {
    const all = await facility();
    const sam = all.users.find((u) => u.username === 'sam')!;
    const made = await ok<{ token: string; info: { id: number; prefix: string } }>(
      'admin.tokens.create',
      { user: sam.id, name: 'NexusLIMS' },
    );
    expect(made.token.startsWith(made.info.prefix)).toBe(true);
    const listed = await ok<{ tokens: { id: number; user_email: string; name: string }[] }>(
      'admin.tokens.list',
      {},
    );
    expect(listed.tokens[0]).toMatchObject({
      id: made.info.id,
      user_email: SAM.email,
      // Named by username too: a person without an e-mail (staff may have none) is still named.
      user_username: 'sam',
      name: 'NexusLIMS',
    });
    expect(JSON.stringify(listed)).not.toContain(made.token);

    const read = () =>
      fetch(`${server.url}api/users/`, { headers: { authorization: `Token ${made.token}` } });
    expect((await read()).status).toBe(200);
    await ok('admin.tokens.revoke', { id: made.info.id });
    expect((await read()).status).toBe(401);
    expect((await rpc('admin.tokens.revoke', { id: made.info.id }, adminJwt)).status).toBe(404);
  });

  it('ends the API tokens of a person turned off: turned on again, they stay ended', async () => {
    const made = await ok<{ user: { id: number } }>(
      'admin.users.save',
      userInput({ username: 'dana', email: 'dana@example.org', badge_number: '', pin: '' }),
    );
    const id = made.user.id;
    const { token } = await ok<{ token: string }>('admin.tokens.create', { user: id, name: 'x' });
    const read = async (): Promise<number> =>
      (await fetch(`${server.url}api/files`, { headers: { authorization: `Token ${token}` } }))
        .status;
    expect(await read()).toBe(200);
    const save = (active: boolean) =>
      ok('admin.users.save', {
        ...userInput({ username: 'dana', email: 'dana@example.org', badge_number: '', pin: '' }),
        id,
        password: '',
        is_active: active,
      });
    await save(false);
    expect(await read()).toBe(401);
    // No token is made for them while they are off: said at the person chosen.
    const refused = await rpc('admin.tokens.create', { user: id, name: 'z' }, adminJwt);
    expect(refused.status).toBe(422);
    expect(refused.body.details).toEqual({
      problems: [
        { path: ['user'], message: 'dana is deactivated; a token for them would not work' },
      ],
    });
    await save(true);
    expect(await read()).toBe(401);
    const tokens = await ok<{ tokens: { user_id: number }[] }>('admin.tokens.list', {});
    expect(tokens.tokens.filter((t) => t.user_id === id)).toEqual([]);
    // A token made for them now works.
    const fresh = await ok<{ token: string }>('admin.tokens.create', { user: id, name: 'y' });
    const again = await fetch(`${server.url}api/files`, {
      headers: { authorization: `Token ${fresh.token}` },
    });
    expect(again.status).toBe(200);
  });
});
