/**
 * Reservations on the server, through the real fastify app and `POST /rpc/<name>` with the JWTs
 * of real logins, on a real SQLite file: question sets (validation, the shared-name refusal,
 * where each applies, the merged form), booking (answers, overlaps of tools and areas),
 * cancelling (kept, listed by the NEMO API), who may do what, and the overlap check's plan.
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { createServerApp } from '../../electron/core/server/app.js';
import {
  AREA_OVERLAP_SQL,
  bookReservation,
  TOOL_OVERLAP_SQL,
} from '../../electron/core/server/reservations/book.js';
import type { Account } from '../../electron/core/server/auth.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { createLogger } from '../../electron/core/util/log.js';
import { hashSecret } from '../../electron/core/util/pin.js';
import { tempDir } from './helpers.js';

const T0 = '2026-01-01T00:00:00.000Z';
const PASSWORD = 'a long password 1';
type Who = 'admin' | 'staff' | 'alice' | 'bob';

let db: Db;
let app: FastifyInstance;
const jwt = {} as Record<Who, string>;
const userId = { admin: 1, staff: 2, alice: 3, bob: 4 } as const;
/** Tools 1 (TEM), 2 (SEM), 3 (AFM); projects 1 (P1), 2 (P2). */
const TEM = 1;
const SEM = 2;
const AFM = 3;
const P1 = 1;
const P2 = 2;

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

async function rpc(who: Who, name: string, args: unknown): Promise<Reply> {
  const res = await app.inject({
    method: 'POST',
    url: `/rpc/${name}`,
    headers: { authorization: `Bearer ${jwt[who]}`, 'content-type': 'application/json' },
    payload: JSON.stringify(args),
  });
  return { status: res.statusCode, body: res.json<Record<string, unknown>>() };
}

async function ok<T = Record<string, unknown>>(who: Who, name: string, args: unknown): Promise<T> {
  const res = await rpc(who, name, args);
  expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body as T;
}

function setInput(over: Record<string, unknown>): Record<string, unknown> {
  return {
    enabled: true,
    name: 'set',
    questions: [],
    tool_reservations: true,
    only_for_tools: [],
    area_reservations: false,
    only_for_areas: [],
    only_for_projects: [],
    ...over,
  };
}

const text = (name: string, title = name) => ({ type: 'textbox', name, title });
const saveSet = (over: Record<string, unknown>) =>
  rpc('admin', 'admin.reservationQuestionSets.save', setInput(over));
const formNames = async (args: Record<string, unknown>): Promise<string[]> =>
  (
    await ok<{ questions: { name: string }[] }>(
      'admin',
      'admin.reservationQuestionSets.preview',
      args,
    )
  ).questions.map((q) => q.name);

function clearSets(): void {
  db.prepare('DELETE FROM reservation_question_sets').run();
}

function seed(hash: string): void {
  const user = db.prepare(
    `INSERT INTO users (id, uuid, username, email, role, is_staff, is_active, password_hash,
       created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?)`,
  );
  user.run(1, newUuid(), 'admin', 'admin@example.org', 'admin', 1, hash, T0, T0);
  user.run(2, newUuid(), 'staff', 'staff@example.org', 'staff', 1, hash, T0, T0);
  user.run(3, newUuid(), 'alice', 'alice@example.org', 'user', 0, hash, T0, T0);
  user.run(4, newUuid(), 'bob', 'bob@example.org', 'user', 0, hash, T0, T0);
  const tool = db.prepare(
    'INSERT INTO tools (id, uuid, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
  );
  tool.run(TEM, newUuid(), 'TEM', T0, T0);
  tool.run(SEM, newUuid(), 'SEM', T0, T0);
  tool.run(AFM, newUuid(), 'AFM', T0, T0);
  const project = db.prepare(
    'INSERT INTO projects (id, uuid, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
  );
  project.run(P1, newUuid(), 'P1', T0, T0);
  project.run(P2, newUuid(), 'P2', T0, T0);
  for (const u of [3, 4]) {
    for (const p of [P1, P2]) {
      db.prepare('INSERT INTO user_projects (user_id, project_id) VALUES (?, ?)').run(u, p);
    }
    for (const t of [TEM, SEM, AFM]) {
      db.prepare('INSERT INTO qualifications (user_id, tool_id) VALUES (?, ?)').run(u, t);
    }
  }
}

beforeAll(async () => {
  db = openDatabase(join(tempDir('labstation-reservations-'), 'server.db'));
  db.prepare("INSERT INTO settings (key, value) VALUES ('mode', '\"server\"')").run();
  seed(await hashSecret(PASSWORD));
  app = await createServerApp({
    db,
    log: createLogger('silent'),
    jwtSecret: 'reservations-test-secret-0123456789',
    timeZone: () => 'UTC',
  });
  await app.ready();
  for (const who of Object.keys(userId) as Who[]) {
    const res = await app.inject({
      method: 'POST',
      url: '/auth/jwt/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        username: `${who}@example.org`,
        password: PASSWORD,
      }).toString(),
    });
    expect(res.statusCode, res.body).toBe(200);
    jwt[who] = res.json<{ access_token: string }>().access_token;
  }
}, 30_000);

afterAll(async () => {
  await app.close();
  db.close();
});

describe('reservation question sets', () => {
  it('refuses a question list the usage question language refuses, naming the question and rule', async () => {
    const res = await saveSet({
      name: 'bad',
      questions: [{ type: 'number', name: 'samples', title: 'Samples', min: 'many' }],
    });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(String(res.body.detail)).toMatch(/^questions: .*samples.*min/);
    expect(db.prepare('SELECT count(*) FROM reservation_question_sets').pluck().get()).toBe(0);
  });

  it('refuses a name two sets that can apply together both use, naming the question and both sets', async () => {
    clearSets();
    const first = await saveSet({ name: 'Safety', questions: [text('purpose')] });
    expect(first.status).toBe(200);
    const res = await saveSet({
      name: 'Billing',
      questions: [text('budget'), text('purpose')],
      only_for_tools: [TEM],
    });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/"purpose" is used by both "Billing" and "Safety"/);
    // Never together: areas only, or a disabled set, or disjoint project lists.
    expect(
      (
        await saveSet({
          name: 'Areas',
          questions: [text('purpose')],
          tool_reservations: false,
          area_reservations: true,
        })
      ).status,
    ).toBe(200);
    expect(
      (await saveSet({ name: 'Off', enabled: false, questions: [text('purpose')] })).status,
    ).toBe(200);
    clearSets();
    expect(
      (await saveSet({ name: 'A', questions: [text('purpose')], only_for_projects: [P1] })).status,
    ).toBe(200);
    expect(
      (await saveSet({ name: 'B', questions: [text('purpose')], only_for_projects: [P2] })).status,
    ).toBe(200);
    // Disjoint tool lists never meet; a nested group name counts too.
    clearSets();
    expect(
      (await saveSet({ name: 'A', questions: [text('purpose')], only_for_tools: [TEM] })).status,
    ).toBe(200);
    expect(
      (await saveSet({ name: 'B', questions: [text('purpose')], only_for_tools: [SEM] })).status,
    ).toBe(200);
    const nested = await saveSet({
      name: 'C',
      questions: [
        { type: 'group', name: 'samples', title: 'Samples', questions: [text('purpose')] },
      ],
    });
    expect(nested.status).toBe(409);
    expect(nested.body.detail).toMatch(/"purpose" is used by both "C" and "A"/);
    // Enabling a disabled set is checked too.
    const off = await ok<{ set: { id: number } }>(
      'admin',
      'admin.reservationQuestionSets.save',
      setInput({ name: 'D', enabled: false, questions: [text('purpose')] }),
    );
    const on = await saveSet({
      id: off.set.id,
      name: 'D',
      enabled: true,
      questions: [text('purpose')],
    });
    expect(on.status).toBe(409);
  });

  it('refuses a save of a set another admin changed since it was read, naming it, and keeps theirs', async () => {
    clearSets();
    type Saved = { set: { id: number; updated_at: string; questions: { name: string }[] } };
    const made = await ok<Saved>(
      'admin',
      'admin.reservationQuestionSets.save',
      setInput({ name: 'Safety', questions: [text('a')] }),
    );
    // Two admins open it; the first adds a question, the second saves what it read.
    const opened = made.set.updated_at;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const first = await ok<Saved>(
      'admin',
      'admin.reservationQuestionSets.save',
      setInput({
        id: made.set.id,
        name: 'Safety',
        questions: [text('a'), text('b')],
        updated_at: opened,
      }),
    );
    const stale = await saveSet({
      id: made.set.id,
      name: 'Safety v2',
      questions: [text('a')],
      updated_at: opened,
    });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      code: 'conflict',
      detail:
        `Safety was changed elsewhere since it was opened here (saved at ` +
        `${first.set.updated_at}); reload the page to see that change, then make yours again`,
    });
    const kept = db
      .prepare('SELECT name, questions FROM reservation_question_sets WHERE id = ?')
      .get(made.set.id) as { name: string; questions: string };
    expect(kept.name).toBe('Safety');
    expect((JSON.parse(kept.questions) as { name: string }[]).map((q) => q.name)).toEqual([
      'a',
      'b',
    ]);
    // Saved from what the first save answered: taken.
    expect(
      (
        await saveSet({
          id: made.set.id,
          name: 'Safety v2',
          questions: [text('a'), text('b')],
          updated_at: first.set.updated_at,
        })
      ).status,
    ).toBe(200);
  });

  it('applies sets by their flags, lists and enabled state, and merges them in set order', async () => {
    clearSets();
    db.prepare('DELETE FROM area_tools').run();
    db.prepare('DELETE FROM areas').run();
    const area = (
      await ok<{ area: { id: number; tools: number[] } }>('admin', 'admin.areas.save', {
        name: 'Clean room',
        tools: [SEM, AFM],
      })
    ).area;
    expect(area.tools).toEqual([SEM, AFM]);
    const save = async (over: Record<string, unknown>) =>
      (
        await ok<{ set: { id: number } }>(
          'admin',
          'admin.reservationQuestionSets.save',
          setInput(over),
        )
      ).set.id;
    await save({ name: 'z all tools', questions: [text('a1')] });
    await save({ name: 'y TEM only', questions: [text('b1'), text('b2')], only_for_tools: [TEM] });
    await save({
      name: 'x areas',
      questions: [text('c1')],
      tool_reservations: false,
      area_reservations: true,
    });
    await save({
      name: 'w P2 only',
      questions: [text('d1')],
      area_reservations: true,
      only_for_projects: [P2],
    });
    // Off for both kinds: neither a tool's nor an area's form asks it.
    await save({
      name: 'v off',
      enabled: false,
      questions: [text('e1')],
      area_reservations: true,
    });
    const other = (
      await ok<{ area: { id: number } }>('admin', 'admin.areas.save', { name: 'Other', tools: [] })
    ).area.id;
    await save({
      name: 'u other area',
      questions: [text('f1')],
      tool_reservations: false,
      area_reservations: true,
      only_for_areas: [other],
    });
    expect(await formNames({ tool: TEM, project: P1 })).toEqual(['a1', 'b1', 'b2']);
    expect(await formNames({ tool: SEM, project: P1 })).toEqual(['a1']);
    expect(await formNames({ tool: SEM, project: P2 })).toEqual(['a1', 'd1']);
    expect(await formNames({ area: area.id, project: P1 })).toEqual(['c1']);
    expect(await formNames({ area: area.id, project: P2 })).toEqual(['c1', 'd1']);
    expect(await formNames({ area: other, project: P1 })).toEqual(['c1', 'f1']);
    const form = await ok<{ sets: { name: string }[] }>('alice', 'reservations.questions', {
      tool: TEM,
      project: P1,
    });
    expect(form.sets.map((s) => s.name)).toEqual(['z all tools', 'y TEM only']);
    const both = await rpc('admin', 'admin.reservationQuestionSets.preview', {
      tool: TEM,
      area: area.id,
      project: P1,
    });
    expect(both.status).toBe(400);
    const listed = await ok<{ sets: { name: string; only_for_tools: number[] }[] }>(
      'admin',
      'admin.reservationQuestionSets.list',
      {},
    );
    expect(listed.sets.find((s) => s.name === 'y TEM only')?.only_for_tools).toEqual([TEM]);
  });

  it('lets only admins manage question sets and areas', async () => {
    for (const who of ['alice', 'staff'] as const) {
      for (const [name, args] of [
        ['admin.reservationQuestionSets.list', {}],
        ['admin.reservationQuestionSets.save', setInput({ name: 'mine' })],
        ['admin.reservationQuestionSets.delete', { id: 1 }],
        ['admin.reservationQuestionSets.preview', { tool: TEM, project: P1 }],
        ['admin.areas.save', { name: 'mine', tools: [] }],
      ] as const) {
        expect((await rpc(who, name, args)).status, `${who} ${name}`).toBe(403);
      }
    }
    const sets = await ok<{ sets: { id: number }[] }>(
      'admin',
      'admin.reservationQuestionSets.list',
      {},
    );
    const id = sets.sets[0].id;
    await ok('admin', 'admin.reservationQuestionSets.delete', { id });
    expect((await rpc('admin', 'admin.reservationQuestionSets.delete', { id })).status).toBe(404);
  });
});

describe('booking', () => {
  let area: number;

  beforeAll(async () => {
    clearSets();
    db.prepare('DELETE FROM reservations').run();
    db.prepare('DELETE FROM area_tools').run();
    db.prepare('DELETE FROM areas').run();
    area = (
      await ok<{ area: { id: number } }>('admin', 'admin.areas.save', {
        name: 'Bay',
        tools: [SEM],
      })
    ).area.id;
    await ok(
      'admin',
      'admin.reservationQuestionSets.save',
      setInput({
        name: 'Samples',
        questions: [
          { type: 'textbox', name: 'purpose', title: 'Purpose', required: true },
          { type: 'number', name: 'samples', title: 'Number of samples', min: 1, max: 10 },
        ],
        area_reservations: true,
      }),
    );
  });

  const book = (who: Who, over: Record<string, unknown>) =>
    rpc(who, 'reservations.book', {
      tool: TEM,
      project: P1,
      start: '2030-01-01T10:00:00Z',
      end: '2030-01-01T11:00:00Z',
      answers: { purpose: 'imaging', samples: 3 },
      ...over,
    });

  it('validates the answers against the merged questions and stores them canonical', async () => {
    const bad = await book('alice', { answers: { purpose: 'imaging', samples: 50 } });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('validation_failed');
    expect(String(bad.body.detail)).toMatch(/^answers: .*Number of samples/);
    const missing = await book('alice', { answers: {} });
    expect(String(missing.body.detail)).toMatch(/Purpose/);
    // Sent in NEMO's own shape (the definition with user_input): stored canonical.
    const good = await book('alice', {
      answers: { purpose: { type: 'textbox', name: 'purpose', user_input: 'imaging' }, samples: 3 },
    });
    expect(good.status, JSON.stringify(good.body)).toBe(200);
    const r = (good.body as { reservation: Record<string, unknown> }).reservation;
    expect(r).toMatchObject({
      user_id: userId.alice,
      creator_id: userId.alice,
      project_id: P1,
      tool_id: TEM,
      area_id: null,
      start: '2030-01-01T10:00:00.000Z',
      end: '2030-01-01T11:00:00.000Z',
      cancelled: false,
      target_name: 'TEM',
    });
    expect(JSON.parse(String(r.question_data))).toEqual({ purpose: 'imaging', samples: 3 });
  });

  it('refuses an overlap on the same tool; touching ends are no overlap', async () => {
    const clash = await book('bob', { start: '2030-01-01T10:30:00Z', end: '2030-01-01T12:00:00Z' });
    expect(clash.status).toBe(409);
    expect(clash.body.detail).toMatch(/overlaps reservation \d+ of the tool TEM/);
    // The same instant written with another offset is the same time.
    const shifted = await book('bob', {
      start: '2030-01-01T11:30:00+01:00',
      end: '2030-01-01T13:00:00+01:00',
    });
    expect(shifted.status).toBe(409);
    expect(
      (await book('bob', { start: '2030-01-01T11:00:00Z', end: '2030-01-01T12:00:00Z' })).status,
    ).toBe(200);
    expect(
      (await book('bob', { start: '2030-01-01T09:00:00Z', end: '2030-01-01T10:00:00Z' })).status,
    ).toBe(200);
    expect((await book('bob', { tool: SEM })).status).toBe(200);
  });

  it('answers the same booking sent again with the reservation it made, not an overlap', async () => {
    // Alice's 10:00-11:00 on TEM above; its answer lost on the way back (a station's
    // connection cut), she books again.
    const first = await book('alice', {});
    const again = await book('alice', {});
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const id = (r: typeof first) => (r.body as { reservation: { id: number } }).reservation.id;
    expect(id(again)).toBe(id(first));
    // Anything else about it is another booking, which overlaps.
    const other = await book('alice', { answers: { purpose: 'imaging', samples: 4 } });
    expect(other.status).toBe(409);
    expect(other.body.detail).toMatch(/overlaps reservation \d+ of the tool TEM/);
    expect((await book('bob', {})).status).toBe(409);
  });

  // Mutation: the past-time checks before the lookup of the same booking, as they were: the
  // booking sent again after the grace was refused as starting in the past, though it was made.
  it('answers the same booking sent again after the grace with the reservation it made', () => {
    const alice = db.prepare('SELECT * FROM users WHERE id = ?').get(userId.alice) as Account;
    const at = Date.parse('2031-02-03T09:00:00Z');
    const iso = (minutes: number) => new Date(at + minutes * 60_000).toISOString();
    const args = {
      tool: TEM,
      project: P1,
      start: iso(1),
      end: iso(61),
      answers: { purpose: 'imaging', samples: 3 },
    };
    const made = bookReservation(db, alice, args, iso(0));
    // Its answer lost, the same booking again seven minutes later.
    expect(bookReservation(db, alice, args, iso(7)).reservation.id).toBe(made.reservation.id);
    // Another booking starting then is refused, as before.
    expect(() =>
      bookReservation(db, alice, { ...args, start: iso(1), end: iso(30) }, iso(7)),
    ).toThrow('start: is in the past; a reservation starts from now on');
    db.prepare('DELETE FROM reservations WHERE id = ?').run(made.reservation.id);
  });

  // Mutation: the instant pattern with three decimals at most: 422, "must be an ISO 8601
  // date-time with an offset", for a time copied from the read API.
  it('takes times as the read API writes them, with six decimals', async () => {
    const made = await book('alice', {
      start: '2031-03-04T10:00:00.000000+01:00',
      end: '2031-03-04T11:00:00.250000+01:00',
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect((made.body as { reservation: Record<string, unknown> }).reservation).toMatchObject({
      start: '2031-03-04T09:00:00.000Z',
      end: '2031-03-04T10:00:00.250Z',
    });
  });

  it('makes an area reservation hold its tools, and a tool reservation block its areas', async () => {
    // SEM is in the bay and booked 10:00-11:00 above.
    const areaClash = await book('alice', { tool: undefined, area: area });
    expect(areaClash.status).toBe(409);
    expect(areaClash.body.detail).toMatch(/of the tool SEM/);
    expect(
      (
        await book('alice', {
          tool: undefined,
          area,
          start: '2030-01-02T10:00:00Z',
          end: '2030-01-02T11:00:00Z',
        })
      ).status,
    ).toBe(200);
    const toolClash = await book('bob', {
      tool: SEM,
      start: '2030-01-02T10:30:00Z',
      end: '2030-01-02T10:45:00Z',
    });
    expect(toolClash.status).toBe(409);
    expect(toolClash.body.detail).toMatch(/of the area Bay/);
    // Another area sharing SEM overlaps the bay too; TEM alone does not.
    const hall = (
      await ok<{ area: { id: number } }>('admin', 'admin.areas.save', {
        name: 'Hall',
        tools: [SEM, AFM],
      })
    ).area.id;
    expect(
      (
        await book('bob', {
          tool: undefined,
          area: hall,
          start: '2030-01-02T10:00:00Z',
          end: '2030-01-02T11:00:00Z',
        })
      ).status,
    ).toBe(409);
    expect(
      (await book('bob', { start: '2030-01-02T10:00:00Z', end: '2030-01-02T11:00:00Z' })).status,
    ).toBe(200);
  });

  it('refuses bookings for others by users, unqualified users, foreign projects and bad times', async () => {
    const forBob = await book('alice', {
      user: userId.bob,
      start: '2030-02-01T10:00:00Z',
      end: '2030-02-01T11:00:00Z',
    });
    expect(forBob.status).toBe(403);
    const byStaff = await book('staff', {
      user: userId.bob,
      start: '2030-02-01T10:00:00Z',
      end: '2030-02-01T11:00:00Z',
    });
    expect(byStaff.status).toBe(200);
    expect(byStaff.body.reservation).toMatchObject({
      user_id: userId.bob,
      creator_id: userId.staff,
    });
    db.prepare('DELETE FROM qualifications WHERE user_id = ? AND tool_id = ?').run(userId.bob, AFM);
    expect(
      (await book('bob', { tool: AFM, start: '2030-02-02T10:00:00Z', end: '2030-02-02T11:00:00Z' }))
        .body.code,
    ).toBe('not_qualified');
    // An area holds its tools: booking it takes a qualification on each of them.
    const afmBay = (
      await ok<{ area: { id: number } }>('admin', 'admin.areas.save', {
        name: 'AFM bay',
        tools: [SEM, AFM],
      })
    ).area.id;
    const areaTime = { tool: undefined, area: afmBay, start: '2030-02-03T10:00:00Z' };
    const unqualified = await book('bob', { ...areaTime, end: '2030-02-03T11:00:00Z' });
    expect(unqualified.status).toBe(403);
    expect(unqualified.body).toMatchObject({
      code: 'not_qualified',
      message: 'You are not qualified on every tool of this area (not on AFM).',
    });
    expect(
      db.prepare('SELECT count(*) FROM reservations WHERE area_id = ?').pluck().get(afmBay),
    ).toBe(0);
    const areaByStaff = await book('staff', {
      ...areaTime,
      user: userId.bob,
      end: '2030-02-03T11:00:00Z',
    });
    expect(areaByStaff.status).toBe(200);
    db.prepare('INSERT INTO qualifications (user_id, tool_id) VALUES (?, ?)').run(userId.bob, AFM);
    db.prepare('DELETE FROM user_projects WHERE user_id = ? AND project_id = ?').run(
      userId.bob,
      P2,
    );
    expect(
      String(
        (
          await book('bob', {
            project: P2,
            start: '2030-02-03T10:00:00Z',
            end: '2030-02-03T11:00:00Z',
          })
        ).body.detail,
      ),
    ).toMatch(/^project:/);
    expect(
      String(
        (await book('bob', { start: '2030-02-04T11:00:00Z', end: '2030-02-04T10:00:00Z' })).body
          .detail,
      ),
    ).toMatch(/^end: must be after/);
    expect(
      String(
        (await book('bob', { start: '2020-02-04T10:00:00Z', end: '2020-02-04T11:00:00Z' })).body
          .detail,
      ),
    ).toMatch(/^end: is in the past/);
    // A day the month does not have, or an hour past 23, is refused at its field: not taken
    // for a day after it (2027-02-30 was booked as 2027-03-02).
    for (const [start, end, field] of [
      ['2030-02-30T10:00:00Z', '2030-03-03T11:00:00Z', 'start'],
      ['2030-04-30T10:00:00+02:00', '2030-04-31T11:00:00+02:00', 'end'],
      ['2030-02-04T24:00:00Z', '2030-02-05T11:00:00Z', 'start'],
    ]) {
      const odd = await book('bob', { start, end });
      expect(odd.status, start).toBe(422);
      expect(String(odd.body.detail)).toBe(
        `${field}: ${field === 'start' ? start : end} is not a date of the calendar`,
      );
    }
    // An offset far from UTC moves the day, not the date written.
    const east = await book('bob', {
      start: '2030-02-28T23:00:00-11:00',
      end: '2030-03-01T01:00:00+14:00',
    });
    expect(east.status, JSON.stringify(east.body)).toBe(422); // ends before it starts: end's rule
    expect(String(east.body.detail)).toMatch(/^end: must be after/);
    // Years JavaScript writes as "+010000-…" would sort before every other date as text.
    const farOff = await book('bob', {
      start: '9999-12-31T23:00:00-05:00',
      end: '9999-12-31T23:30:00-05:00',
    });
    expect(farOff.status).toBe(422);
    expect(String(farOff.body.detail)).toBe(
      'start: 9999-12-31T23:00:00-05:00 must fall within the years 0001 to 9999 (UTC)',
    );
    // A start already past (beyond a few minutes' grace for filling in the form) is refused,
    // but for staff, who may record a booking that began earlier.
    const hour = 3_600_000;
    const now = Date.now();
    const running = {
      start: new Date(now - hour).toISOString(),
      end: new Date(now + hour).toISOString(),
    };
    expect(String((await book('bob', running)).body.detail)).toMatch(/^start: is in the past/);
    const justNow = { start: new Date(now - 60_000).toISOString(), end: running.end };
    const taken = await book('alice', justNow);
    expect(taken.status, JSON.stringify(taken.body)).toBe(200);
    const recorded = await book('staff', { ...running, tool: SEM, user: userId.alice });
    expect(recorded.status, JSON.stringify(recorded.body)).toBe(200);
    expect((await book('bob', { start: '2030-02-04T10:00', end: '2030-02-04T11:00' })).status).toBe(
      400,
    );
  });

  it('cancels by keeping the record; only its user, creator or staff may', async () => {
    const id = (
      (await book('alice', { start: '2030-03-01T10:00:00Z', end: '2030-03-01T11:00:00Z' }))
        .body as {
        reservation: { id: number };
      }
    ).reservation.id;
    const refused = await rpc('bob', 'reservations.cancel', { id });
    expect(refused.status).toBe(403);
    const cancelled = await ok<{ reservation: { cancelled: boolean } }>(
      'alice',
      'reservations.cancel',
      { id },
    );
    expect(cancelled.reservation.cancelled).toBe(true);
    expect(db.prepare('SELECT cancelled FROM reservations WHERE id = ?').pluck().get(id)).toBe(1);
    // The same booking made again is a new reservation, not the cancelled one given back.
    const again = await ok<{ reservation: { id: number; cancelled: boolean } }>(
      'alice',
      'reservations.book',
      {
        tool: TEM,
        project: P1,
        start: '2030-03-01T10:00:00Z',
        end: '2030-03-01T11:00:00Z',
        answers: { purpose: 'imaging', samples: 3 },
      },
    );
    expect(again.reservation).toMatchObject({ cancelled: false });
    expect(again.reservation.id).not.toBe(id);
    await ok('alice', 'reservations.cancel', { id: again.reservation.id });
    // The time is free again.
    expect(
      (await book('bob', { start: '2030-03-01T10:00:00Z', end: '2030-03-01T11:00:00Z' })).status,
    ).toBe(200);
    const byStaff = (
      await book('staff', {
        user: userId.bob,
        start: '2030-03-02T10:00:00Z',
        end: '2030-03-02T11:00:00Z',
      })
    ).body as { reservation: { id: number } };
    expect((await rpc('staff', 'reservations.cancel', { id: byStaff.reservation.id })).status).toBe(
      200,
    );
    expect((await rpc('admin', 'reservations.cancel', { id: 424242 })).status).toBe(404);
    // One that has ended is for staff to cancel only, as in NEMO: the experiment record of its
    // usage may rest on its answers.
    const ended = Number(
      db
        .prepare(
          `INSERT INTO reservations (uuid, user_id, creator_id, tool_id, project_id, start, "end",
             question_data, created_at, updated_at)
           SELECT '01900000-0000-7000-8000-00000000e0d0', id, id, ?, ?, '2026-01-05T09:00:00.000Z',
             '2026-01-05T10:00:00.000Z', '{}', '2026-01-01T00:00:00.000Z',
             '2026-01-01T00:00:00.000Z'
           FROM users WHERE id = ?`,
        )
        .run(TEM, P1, userId.alice).lastInsertRowid,
    );
    const late = await rpc('alice', 'reservations.cancel', { id: ended });
    expect(late.status).toBe(422);
    expect(String(late.body.detail)).toBe(
      `id: reservation ${ended} has already ended; only staff can cancel it now`,
    );
    expect(db.prepare('SELECT cancelled FROM reservations WHERE id = ?').pluck().get(ended)).toBe(
      0,
    );
    expect((await rpc('staff', 'reservations.cancel', { id: ended })).status).toBe(200);
    // One under way is ended now instead: the tool is free, and the part gone by (which a usage's
    // experiment record may rest on) stays booked. Staff cancel it whole.
    const running = (uuid: string): number =>
      Number(
        db
          .prepare(
            `INSERT INTO reservations (uuid, user_id, creator_id, tool_id, project_id, start, "end",
               question_data, created_at, updated_at)
             SELECT ?, id, id, ?, ?, '2026-01-05T09:00:00.000Z', '2099-01-05T10:00:00.000Z', '{}',
               '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'
             FROM users WHERE id = ?`,
          )
          .run(uuid, TEM, P1, userId.alice).lastInsertRowid,
      );
    const begun = running('01900000-0000-7000-8000-00000000e0d1');
    const before = Date.now();
    const early = await rpc('alice', 'reservations.cancel', { id: begun });
    expect(early.status).toBe(200);
    const kept = db
      .prepare('SELECT cancelled, start, "end" FROM reservations WHERE id = ?')
      .get(begun) as { cancelled: number; start: string; end: string };
    expect(kept).toMatchObject({ cancelled: 0, start: '2026-01-05T09:00:00.000Z' });
    expect(Date.parse(kept.end)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(kept.end)).toBeLessThanOrEqual(Date.now());
    // Asked again (an answer lost on the way): done already, not refused as ended.
    const twice = await rpc('alice', 'reservations.cancel', { id: begun });
    expect(twice.status).toBe(200);
    expect(db.prepare('SELECT "end" FROM reservations WHERE id = ?').pluck().get(begun)).toBe(
      kept.end,
    );
    const whole = running('01900000-0000-7000-8000-00000000e0d2');
    expect((await rpc('staff', 'reservations.cancel', { id: whole })).status).toBe(200);
    expect(db.prepare('SELECT cancelled FROM reservations WHERE id = ?').pluck().get(whole)).toBe(
      1,
    );
    // A cancelled area reservation no longer holds the area's tools.
    const bay = await ok<{ reservation: { id: number } }>('alice', 'reservations.book', {
      area,
      project: P1,
      start: '2030-03-03T10:00:00Z',
      end: '2030-03-03T11:00:00Z',
      answers: { purpose: 'imaging' },
    });
    const slot = { tool: SEM, start: '2030-03-03T10:00:00Z', end: '2030-03-03T11:00:00Z' };
    expect((await book('bob', slot)).status).toBe(409);
    await ok('alice', 'reservations.cancel', { id: bay.reservation.id });
    expect((await book('bob', slot)).status).toBe(200);
    const list = await app.inject({
      method: 'GET',
      url: '/api/reservations/?cancelled=true',
      headers: { authorization: `Bearer ${jwt.admin}` },
    });
    expect(list.statusCode, list.body).toBe(200);
    const body = list.json<
      { results?: { id: number; cancelled: boolean }[] } | { id: number; cancelled: boolean }[]
    >();
    const rows = Array.isArray(body) ? body : (body.results ?? []);
    expect(rows.map((r) => r.id).sort()).toEqual(
      [id, again.reservation.id, byStaff.reservation.id, ended, whole, bay.reservation.id].sort(),
    );
    expect(rows.every((r) => r.cancelled)).toBe(true);
  });

  it('lists a tool’s upcoming reservations, its areas’ too, without others’ answers', async () => {
    const seen = await ok<{
      reservations: {
        tool_id: number | null;
        area_id: number | null;
        user_id: number;
        question_data: string;
        project_name: string | null;
      }[];
    }>('bob', 'reservations.forTool', { tool: SEM });
    expect(seen.reservations.some((r) => r.area_id === area)).toBe(true);
    expect(seen.reservations.every((r) => r.tool_id === SEM || r.area_id !== null)).toBe(true);
    // Nor their projects (mutation: the project was sent with the answers blanked).
    for (const r of seen.reservations) {
      expect(r.question_data === '', `user ${r.user_id}`).toBe(r.user_id !== userId.bob);
      expect(r.project_name === null, `user ${r.user_id}`).toBe(r.user_id !== userId.bob);
    }
    const staff = await ok<{ reservations: { project_name: string | null }[] }>(
      'staff',
      'reservations.forTool',
      { tool: SEM },
    );
    expect(staff.reservations.every((r) => r.project_name !== null)).toBe(true);
  });
});

describe('the calendar, one’s own reservations and what one may book', () => {
  /** The reservations below by letter, as booked. */
  const r = {} as Record<'a' | 'b' | 'c' | 'd' | 'e' | 'f' | 'g', number>;
  let bay: number;
  let hall: number;
  let side: number;

  beforeAll(async () => {
    clearSets();
    db.prepare('DELETE FROM reservations').run();
    db.prepare('DELETE FROM area_tools').run();
    db.prepare('DELETE FROM areas').run();
    const area = async (name: string, tools: number[]): Promise<number> =>
      (await ok<{ area: { id: number } }>('admin', 'admin.areas.save', { name, tools })).area.id;
    bay = await area('Bay', [SEM]);
    hall = await area('Hall', [SEM, AFM]);
    side = await area('Side', [AFM]);
    await ok(
      'admin',
      'admin.reservationQuestionSets.save',
      setInput({ name: 'Purpose', questions: [text('purpose')], area_reservations: true }),
    );
    const book = async (
      who: Who,
      letter: keyof typeof r,
      over: Record<string, unknown>,
    ): Promise<void> => {
      const reply = await ok<{ reservation: { id: number } }>(who, 'reservations.book', {
        project: P1,
        answers: { purpose: `purpose ${letter}` },
        ...over,
      });
      r[letter] = reply.reservation.id;
    };
    const at = (day: string, from: string, to: string) => ({
      start: `2031-05-${day}T${from}:00Z`,
      end: `2031-05-${day}T${to}:00Z`,
    });
    await book('alice', 'a', { tool: TEM, ...at('05', '10:00', '11:00') });
    await book('bob', 'b', { tool: SEM, ...at('05', '12:00', '13:00') });
    await book('alice', 'c', { area: bay, ...at('06', '10:00', '11:00') });
    await book('bob', 'd', { area: side, ...at('06', '12:00', '13:00') });
    await book('staff', 'e', { tool: AFM, user: userId.bob, ...at('07', '09:00', '10:00') });
    await book('alice', 'f', { tool: SEM, ...at('20', '10:00', '11:00') });
    await book('bob', 'g', { tool: SEM, ...at('07', '14:00', '15:00') });
    await ok('bob', 'reservations.cancel', { id: r.g });
  });

  const week = { from: '2031-05-04T00:00:00Z', to: '2031-05-11T00:00:00Z' };
  const calendar = async (who: Who, args: Record<string, unknown>) =>
    (
      await ok<{ reservations: { id: number; user_id: number; question_data: string }[] }>(
        who,
        'reservations.calendar',
        { ...week, ...args },
      )
    ).reservations;
  const idsOf = (list: { id: number }[]): number[] => list.map((x) => x.id);

  it('shows a tool’s own reservations and those of areas holding it, in the range, by start', async () => {
    expect(idsOf(await calendar('bob', { tool: SEM }))).toEqual([r.b, r.c]);
    expect(idsOf(await calendar('bob', { tool: TEM }))).toEqual([r.a]);
    expect(idsOf(await calendar('bob', { tool: AFM }))).toEqual([r.d, r.e]);
    // Touching the range's ends is outside it; a range may start in a reservation.
    expect(idsOf(await calendar('bob', { tool: TEM, from: '2031-05-05T11:00:00Z' }))).toEqual([]);
    expect(
      idsOf(
        await calendar('bob', {
          tool: TEM,
          from: '2031-05-05T10:30:00+00:00',
          to: '2031-05-05T13:30:00+02:00',
        }),
      ),
    ).toEqual([r.a]);
  });

  it('shows an area’s own reservations, its tools’ and those of areas sharing a tool', async () => {
    expect(idsOf(await calendar('alice', { area: bay }))).toEqual([r.b, r.c]);
    expect(idsOf(await calendar('alice', { area: hall }))).toEqual([r.b, r.c, r.d, r.e]);
    expect(idsOf(await calendar('alice', { area: side }))).toEqual([r.d, r.e]);
  });

  it('leaves out other people’s answers unless staff asks', async () => {
    const seen = await calendar('bob', { area: hall });
    for (const x of seen) {
      expect(x.question_data === '', `reservation ${x.id}`).toBe(x.user_id !== userId.bob);
    }
    const staffSees = await calendar('staff', { area: hall });
    expect(staffSees.every((x) => x.question_data.startsWith('{"purpose"'))).toBe(true);
  });

  it('refuses a range that is empty, too long, or a target that is not one thing', async () => {
    const refused = async (args: Record<string, unknown>) =>
      rpc('alice', 'reservations.calendar', { tool: SEM, ...week, ...args });
    const backwards = await refused({ to: week.from });
    expect(backwards.status).toBe(422);
    expect(backwards.body.detail).toMatch(/^to: must be after from/);
    expect(backwards.body.details).toEqual({
      problems: [{ path: ['to'], message: 'must be after from' }],
    });
    const long = await refused({ to: '2031-07-06T00:00:00Z' });
    expect(long.status).toBe(422);
    expect(long.body.detail).toMatch(/^to: the range may span at most 62 days/);
    expect((await refused({ to: '2031-07-05T00:00:00Z' })).status).toBe(200);
    // 62 days of Zurich's calendar across the autumn clock change: 62 x 24 h and one more.
    const autumn = { from: '2031-09-01T00:00:00+02:00', to: '2031-11-02T00:00:00+01:00' };
    expect((await refused(autumn)).status).toBe(200);
    expect((await refused({ ...autumn, to: '2031-11-02T01:00:00+01:00' })).status).toBe(422);
    expect((await refused({ area: bay })).status).toBe(400);
    expect((await refused({ from: '2031-05-04' })).status).toBe(400);
    const missing = await refused({ tool: 424242 });
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toMatch(/^tool: no tool/);
    const res = await app.inject({
      method: 'POST',
      url: '/rpc/reservations.calendar',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ tool: SEM, ...week }),
    });
    expect(res.statusCode).toBe(401);
  });

  it('lists one’s own upcoming reservations, for one or booked by one, not cancelled', async () => {
    const mine = async (who: Who) =>
      idsOf(
        (await ok<{ reservations: { id: number }[] }>(who, 'reservations.mine', {})).reservations,
      );
    expect(await mine('alice')).toEqual([r.a, r.c, r.f]);
    expect(await mine('bob')).toEqual([r.b, r.d, r.e]);
    expect(await mine('staff')).toEqual([r.e]);
    expect(await mine('admin')).toEqual([]);
  });

  it('offers a user their qualified tools, the areas and their active projects; staff everything', async () => {
    db.prepare('DELETE FROM qualifications WHERE user_id = ? AND tool_id = ?').run(
      userId.alice,
      AFM,
    );
    db.prepare("UPDATE projects SET active = 0 WHERE name = 'P2'").run();
    try {
      const alice = await ok<{
        tools: { name: string }[];
        areas: { name: string; tools: { name: string }[] }[];
        projects: { name: string }[];
        people: { id: number; projects: number[] }[];
      }>('alice', 'reservations.targets', {});
      expect(alice.tools.map((t) => t.name)).toEqual(['SEM', 'TEM']);
      // Only the areas whose every tool she may book: Hall and Side hold the AFM.
      expect(alice.areas.map((a) => [a.name, a.tools.map((t) => t.name)])).toEqual([
        ['Bay', ['SEM']],
      ]);
      expect(alice.projects.map((p) => p.name)).toEqual(['P1']);
      expect(alice.people).toEqual([{ id: userId.alice, name: 'alice', projects: [P1] }]);
      const staff = await ok<typeof alice>('staff', 'reservations.targets', {});
      expect(staff.tools.map((t) => t.name)).toEqual(['AFM', 'SEM', 'TEM']);
      expect(staff.areas.map((a) => a.name)).toEqual(['Bay', 'Hall', 'Side']);
      expect(staff.projects.map((p) => p.name)).toEqual(['P1']);
      expect(staff.people.map((p) => p.id).sort()).toEqual(Object.values(userId).sort());
      expect(staff.people.find((p) => p.id === userId.bob)?.projects).toEqual([P1]);
    } finally {
      db.prepare("UPDATE projects SET active = 1 WHERE name = 'P2'").run();
      db.prepare('INSERT INTO qualifications (user_id, tool_id) VALUES (?, ?)').run(
        userId.alice,
        AFM,
      );
    }
  });
});

describe('an area whose tools change', () => {
  // Mutation: saveArea without refuseDoubleBooking: the tool was then held twice at once.
  it('takes no tool that one of its bookings would hold while the tool is booked', async () => {
    const annex = (
      await ok<{ area: { id: number } }>('admin', 'admin.areas.save', { name: 'Annex', tools: [] })
    ).area.id;
    const slot = { start: '2031-06-09T12:00:00Z', end: '2031-06-09T13:00:00Z' };
    const booking = async (who: Who, over: Record<string, unknown>) =>
      (
        await ok<{ reservation: { id: number } }>(who, 'reservations.book', {
          project: P1,
          answers: {},
          ...slot,
          ...over,
        })
      ).reservation.id;
    const tem = await booking('alice', { tool: TEM });
    const area = await booking('alice', { area: annex });
    const add = await rpc('admin', 'admin.areas.save', { id: annex, name: 'Annex', tools: [TEM] });
    expect(add.status).toBe(409);
    expect(add.body.message).toBe(
      `tools: TEM is booked from ${slot.start.replace('Z', '.000Z')} to ${slot.end.replace('Z', '.000Z')} ` +
        `(reservation ${tem}) while reservation ${area} of this area would hold it too; ` +
        'cancel one of them first',
    );
    expect(db.prepare('SELECT count(*) FROM area_tools WHERE area_id = ?').pluck().get(annex)).toBe(
      0,
    );
    // Once one of them is cancelled, the area takes the tool.
    await ok('alice', 'reservations.cancel', { id: tem });
    await ok('admin', 'admin.areas.save', { id: annex, name: 'Annex', tools: [TEM] });
    await ok('alice', 'reservations.cancel', { id: area });
    db.prepare('DELETE FROM area_tools WHERE area_id = ?').run(annex);
    db.prepare('DELETE FROM reservations WHERE area_id = ?').run(annex);
    db.prepare('DELETE FROM areas WHERE id = ?').run(annex);
  });
});

describe('an area two admins edit at once', () => {
  // Mutation: saveArea without the updated_at check: the second admin's stale list of tools
  // replaced the first admin's, with no word of it.
  it('refuses the save of the admin who read it before the other saved', async () => {
    type Saved = { area: { id: number; tools: number[]; updated_at: string } };
    const made = await ok<Saved>('admin', 'admin.areas.save', { name: 'Bay 4', tools: [] });
    const opened = made.area.updated_at;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const first = await ok<Saved>('admin', 'admin.areas.save', {
      id: made.area.id,
      name: 'Bay 4',
      tools: [SEM],
      updated_at: opened,
    });
    expect(first.area.updated_at > opened).toBe(true);
    const stale = await rpc('admin', 'admin.areas.save', {
      id: made.area.id,
      name: 'Bay 4 (north)',
      tools: [],
      updated_at: opened,
    });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      code: 'conflict',
      detail:
        `Bay 4 was changed elsewhere since it was opened here (saved at ` +
        `${first.area.updated_at}); reload the page to see that change, then make yours again`,
    });
    const listed = await ok<{ areas: Saved['area'][] }>('admin', 'admin.areas.list', {});
    expect(listed.areas.find((a) => a.id === made.area.id)).toMatchObject({
      tools: [SEM],
      updated_at: first.area.updated_at,
    });
    // Saved from what the first save answered: taken.
    const again = await ok<Saved>('admin', 'admin.areas.save', {
      id: made.area.id,
      name: 'Bay 4 (north)',
      tools: [],
      updated_at: first.area.updated_at,
    });
    expect(again.area.tools).toEqual([]);
    db.prepare('DELETE FROM areas WHERE id = ?').run(made.area.id);
  });
});

describe('the overlap check', () => {
  it('is an index search on the tool or the area and the start', () => {
    const plan = (sql: string): string =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(1, 'b', 'a') as { detail: string }[])
        .map((r) => r.detail)
        .join('\n');
    expect(plan(TOOL_OVERLAP_SQL)).toMatch(
      /SEARCH reservations USING INDEX reservations_tool_start \(tool_id=\? AND start<\?\)/,
    );
    expect(plan(AREA_OVERLAP_SQL)).toMatch(
      /SEARCH reservations USING INDEX reservations_area_start \(area_id=\? AND start<\?\)/,
    );
  });
});
