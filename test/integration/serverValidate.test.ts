/**
 * Staff validate usage events on the server (`usage.validateServer`), with real processes: a
 * `labstation serve` on loopback and a `labstation station --server URL --key KEY` that records
 * the usage, takes the validation in its next pull and pushes it back. The rules of what a push
 * leaves of a validation given on the server are held with records pushed by hand, under a
 * second station key.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goodPreAnswers } from '../fixtures/facility.js';
import {
  createStationKey,
  loginJwt,
  serverRequest,
  waitFor,
  type HttpReply,
  type ServerProcess,
  type StationProcess,
} from './helpers.js';
import {
  ALICE,
  BOB,
  SAM,
  startServerWithStation,
  stopServerWithStation,
} from './serverWithStation.js';
import { recentUsageSql } from '../../electron/core/server/web/usageValidation.js';
import { usagePayload, type UsageRefs } from './usagePushFixtures.js';

let serverDir: string;
let stationDir: string;
let server: ServerProcess;
let station: StationProcess | undefined;
let serverDb: Database.Database;

interface Validation {
  validated: number;
  validated_by: string | null;
  validated_on_server_by: string | null;
  validation_acked: number;
}

/** The server's validation of event `uuid`, people by username. */
function serverValidation(uuid: string): Validation | undefined {
  return serverDb
    .prepare(
      `SELECT e.validated, v.username AS validated_by, s.username AS validated_on_server_by,
         e.validation_acked
       FROM usage_events e LEFT JOIN users v ON v.id = e.validated_by_id
         LEFT JOIN users s ON s.id = e.validated_on_server_by_id
       WHERE e.uuid = ?`,
    )
    .get(uuid) as Validation | undefined;
}

/** The station's validation of event `uuid`: the flag and who, by username. */
function stationValidation(uuid: string): { validated: number; validated_by: string | null } {
  const db = new Database(join(stationDir, 'labstation.db'), { readonly: true });
  try {
    return db
      .prepare(
        `SELECT e.validated, v.username AS validated_by FROM usage_events e
         LEFT JOIN users v ON v.id = e.validated_by_id WHERE e.uuid = ?`,
      )
      .get(uuid) as { validated: number; validated_by: string | null };
  } finally {
    db.close();
  }
}

async function stationOk(name: string, args: unknown): Promise<Record<string, unknown>> {
  const res = await station!.rpc(name, args);
  expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body as Record<string, unknown>;
}

/** A call of the server's contract as `user` (logged in for it): the answer's status and body. */
async function rpcAs(
  user: { email: string; password: string },
  name: string,
  args: unknown,
): Promise<HttpReply> {
  return serverRequest(server.url, await loginJwt(server.url, user), 'POST', `/rpc/${name}`, args);
}

/** `usage.recent` as `user` asks it: the answer's status and body. */
function recent(
  args: unknown,
  user: { email: string; password: string } = SAM,
): Promise<HttpReply> {
  return rpcAs(user, 'usage.recent', args);
}

/** The events of a `usage.recent` answer. */
function listed(answer: { body: Record<string, unknown> }): Record<string, unknown>[] {
  return answer.body.events as Record<string, unknown>[];
}

function validate(usage: string, user: { email: string; password: string }): Promise<HttpReply> {
  return rpcAs(user, 'usage.validateServer', { usage });
}

/** Alice starts the SEM at the station; the server has the event. Returns its uuid. */
async function aliceStarts(): Promise<string> {
  await stationOk('session.logon', { login: 'alice', pin: '1234' });
  const enabled = await stationOk('toolControl.enable', {
    tool: 'SEM',
    project: 'Cathodes',
    answers: goodPreAnswers,
  });
  const uuid = (enabled.usage as { uuid: string }).uuid;
  await waitFor('the active usage on the server', () => serverValidation(uuid));
  return uuid;
}

/** Alice ends her usage at the station; the server has it ended. */
async function aliceEnds(uuid: string): Promise<void> {
  await stationOk('toolControl.disable', { tool: 'SEM', answers: { problem: 'No' } });
  await stationOk('session.logoff', {});
  await waitFor(
    'the ended usage on the server',
    () =>
      serverDb.prepare('SELECT "end" FROM usage_events WHERE uuid = ?').pluck().get(uuid) ??
      undefined,
  );
}

beforeAll(async () => {
  ({ serverDir, server, serverDb, stationDir, station } = await startServerWithStation(
    'sem-validate',
    'admin',
  ));
}, 60_000);

afterAll(() => stopServerWithStation({ station, serverDb, server }));

describe('staff validate a usage event on the server', () => {
  it('refuses an active event, a person not staff, and an event the server does not have', async () => {
    const uuid = await aliceStarts();
    const active = await validate(uuid, SAM);
    expect(active.status).toBe(409);
    expect(active.body).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(
        /^usage: usage event \d+ is still active; end it before validating$/,
      ) as unknown,
    });
    await aliceEnds(uuid);

    const notStaff = await validate(uuid, ALICE);
    expect(notStaff).toMatchObject({
      status: 403,
      body: { code: 'forbidden', message: 'usage.validateServer is for staff and admins only' },
    });
    const unknown = await validate('01900000-0000-7000-8000-00000000dead', SAM);
    expect(unknown).toMatchObject({
      status: 404,
      body: {
        code: 'not_found',
        message: 'usage: usage event "01900000-0000-7000-8000-00000000dead" does not exist',
      },
    });
    expect(serverValidation(uuid)).toMatchObject({ validated: 0, validation_acked: 1 });
    expect(stationValidation(uuid)).toEqual({ validated: 0, validated_by: null });
  });

  it('the station takes the validation with who gave it and pushes it back; the server keeps it', async () => {
    const uuid = await aliceStarts();
    await aliceEnds(uuid);
    const version = serverDb
      .prepare('SELECT version FROM usage_events WHERE uuid = ?')
      .pluck()
      .get(uuid) as number;

    // Staff find it among everyone's recent usage, with who used the tool.
    const events = listed(await recent({}));
    expect(events[0]).toMatchObject({ uuid, user_name: 'Alice Martin', validated: false });

    const done = await validate(uuid, SAM);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.usage).toMatchObject({ uuid, validated: true, validated_by_name: 'sam' });
    expect(
      serverDb.prepare('SELECT version FROM usage_events WHERE uuid = ?').pluck().get(uuid),
    ).toBeGreaterThan(version);

    await waitFor('the station to take the validation', () => {
      const local = stationValidation(uuid);
      return local.validated === 1 ? local : undefined;
    });
    expect(stationValidation(uuid)).toEqual({ validated: 1, validated_by: 'sam' });
    // Its push acknowledges it: the server no longer sends it, and keeps who validated it.
    await waitFor('the station to push it back', () =>
      serverValidation(uuid)?.validation_acked === 1 ? true : undefined,
    );
    expect(serverValidation(uuid)).toEqual({
      validated: 1,
      validated_by: 'sam',
      validated_on_server_by: 'sam',
      validation_acked: 1,
    });

    // Validating it again is harmless: nothing changes, on either side.
    const again = await validate(uuid, BOB);
    expect(again.status).toBe(200);
    expect(again.body.usage).toMatchObject({ validated: true, validated_by_name: 'sam' });
    expect(serverValidation(uuid)).toMatchObject({ validated_by: 'sam', validation_acked: 1 });
  });

  it('a station that validated the event itself keeps who validated it', async () => {
    const uuid = await aliceStarts();
    await aliceEnds(uuid);
    await stationOk('session.logon', { login: 'sam', pin: '9999' });
    await stationOk('toolControl.validate', { usage: uuid });
    await stationOk('session.logoff', {});
    await waitFor('the station’s validation on the server', () =>
      serverValidation(uuid)?.validated === 1 ? true : undefined,
    );

    const late = await validate(uuid, BOB);
    expect(late.status).toBe(200);
    expect(late.body.usage).toMatchObject({ validated: true, validated_by_name: 'sam' });
    expect(serverValidation(uuid)).toEqual({
      validated: 1,
      validated_by: 'sam',
      validated_on_server_by: null,
      validation_acked: 1,
    });
    expect(stationValidation(uuid)).toEqual({ validated: 1, validated_by: 'sam' });
  });
});

describe('what a push leaves of a validation given on the server', () => {
  let key: string;
  let refs: UsageRefs;
  let samUuid: string;
  let bobUuid: string;
  let n = 0;
  let id = 0;

  /** An ended usage event as a station pushes it, on the SEM, by alice for Cathodes. */
  function ended(over: Record<string, unknown> = {}): Record<string, unknown> {
    n += 1;
    const uuid = `01900000-0000-7000-8000-${String(200_000 + n).padStart(12, '0')}`;
    return usagePayload(refs, uuid, '2024-02-05T09:00:00.000Z', {
      end: '2024-02-05T10:00:00.000Z',
      run_data: '{"problem":"No"}',
      version: 2,
      ...over,
    });
  }

  async function push(payload: Record<string, unknown>): Promise<void> {
    id += 1;
    const res = await fetch(`${server.url}sync/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Station ${key}` },
      body: JSON.stringify({
        records: [{ id, kind: 'usage_event', uuid: payload.uuid as string, payload }],
      }),
    });
    expect(await res.json()).toEqual({ acked: [id], stale: [], error: null });
  }

  /** The validations the server sends this station for event `uuid`. */
  async function owed(uuid: string): Promise<unknown[]> {
    const res = await fetch(`${server.url}sync/changes?cursor=0`, {
      headers: { authorization: `Station ${key}` },
    });
    const delta = (await res.json()) as { validations: { usage_uuid: string }[] };
    return delta.validations.filter((v) => v.usage_uuid === uuid);
  }

  beforeAll(async () => {
    key = await createStationKey(serverDir, 'sem-raw', 'SEM');
    const uuids = serverDb
      .prepare(
        `SELECT (SELECT uuid FROM users WHERE username = 'alice') AS user_uuid,
           (SELECT uuid FROM projects WHERE name = 'Cathodes') AS project_uuid,
           (SELECT uuid FROM tools WHERE name = 'SEM') AS tool_uuid,
           (SELECT uuid FROM users WHERE username = 'sam') AS sam,
           (SELECT uuid FROM users WHERE username = 'bob') AS bob`,
      )
      .get() as UsageRefs & { sam: string; bob: string };
    refs = uuids;
    samUuid = uuids.sam;
    bobUuid = uuids.bob;
  });

  it('a later push of the event not validated keeps it; one validated acknowledges it', async () => {
    const event = ended();
    const uuid = event.uuid as string;
    await push(event);
    expect((await validate(uuid, BOB)).status).toBe(200);
    expect(await owed(uuid)).toEqual([
      { usage_uuid: uuid, validated_by_uuid: bobUuid, validated_at: expect.any(String) as unknown },
    ]);

    // The station changed the event before it heard of the validation.
    await push({ ...event, version: 3 });
    expect(serverValidation(uuid)).toEqual({
      validated: 1,
      validated_by: 'bob',
      validated_on_server_by: 'bob',
      validation_acked: 0,
    });
    expect(await owed(uuid)).toHaveLength(1);

    // It took the validation, from a person it does not know: the server keeps who.
    await push({ ...event, validated: 1, validated_by_uuid: null, version: 4 });
    expect(serverValidation(uuid)).toMatchObject({ validated_by: 'bob', validation_acked: 1 });
    expect(await owed(uuid)).toEqual([]);
    // A late push of an older change (still newer than the last stored) takes nothing back.
    await push({ ...event, version: 5 });
    expect(serverValidation(uuid)).toMatchObject({ validated: 1, validated_by: 'bob' });
  });

  it('the station validated it itself before it heard of the server’s: its person is kept', async () => {
    const event = ended();
    const uuid = event.uuid as string;
    await push(event);
    expect((await validate(uuid, BOB)).status).toBe(200);
    await push({ ...event, validated: 1, validated_by_uuid: samUuid, version: 3 });
    expect(serverValidation(uuid)).toEqual({
      validated: 1,
      validated_by: 'sam',
      validated_on_server_by: 'bob',
      validation_acked: 1,
    });
    expect(await owed(uuid)).toEqual([]);
  });

  it('a pending form left open while staff validate the event is still taken; one whose event the station changed is not', async () => {
    // Force-ended at the station: its post-usage questions pending, which alice answers here.
    const pendingEvent = (): Record<string, unknown> =>
      ended({ run_data: '', post_usage_pending: 1, reminder_due: 1 });
    const formOf = async (uuid: string): Promise<{ version: number }> => {
      const mine = await rpcAs(ALICE, 'usage.pendingMine', {});
      const forms = mine.body.pending as { usage: { uuid: string }; version: number }[];
      const form = forms.find((f) => f.usage.uuid === uuid);
      expect(form, JSON.stringify(mine.body)).toBeDefined();
      return form!;
    };
    const answer = (uuid: string, version: number): Promise<HttpReply> =>
      rpcAs(ALICE, 'usage.completePendingServer', {
        usage: uuid,
        answers: { problem: 'No', notes: 'after the validation' },
        version,
      });

    const event = pendingEvent();
    const uuid = event.uuid as string;
    await push(event);
    const form = await formOf(uuid);
    expect((await validate(uuid, SAM)).status).toBe(200);
    // The station takes the validation and pushes the event back with it, its reminder sent.
    await push({ ...event, validated: 1, validated_by_uuid: samUuid, reminder_due: 0, version: 3 });
    expect(serverValidation(uuid)).toMatchObject({ validated: 1, validation_acked: 1 });
    const done = await answer(uuid, form.version);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.version).toBe(form.version + 1);
    expect(
      JSON.parse(
        serverDb
          .prepare('SELECT run_data FROM usage_events WHERE uuid = ?')
          .pluck()
          .get(uuid) as string,
      ),
    ).toEqual({ problem: 'No', notes: 'after the validation' });

    // What the form shows changed (the station put the end right): the form is stale.
    const moved = pendingEvent();
    await push(moved);
    const movedForm = await formOf(moved.uuid as string);
    await push({ ...moved, end: '2024-02-05T10:30:00.000Z', version: 3 });
    const stale = await answer(moved.uuid as string, movedForm.version);
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/changed since this form was loaded/) as unknown,
    });
    expect((await formOf(moved.uuid as string)).version).toBe(movedForm.version + 1);

    // Answered at the station meanwhile: stale too, and the station's answers stay.
    const answeredThere = pendingEvent();
    await push(answeredThere);
    const thereForm = await formOf(answeredThere.uuid as string);
    await push({
      ...answeredThere,
      run_data: '{"problem":"Yes"}',
      post_usage_pending: 0,
      version: 3,
    });
    expect(await answer(answeredThere.uuid as string, thereForm.version)).toMatchObject({
      status: 409,
      body: { message: expect.stringMatching(/changed since this form was loaded/) as unknown },
    });
    expect(
      serverDb
        .prepare('SELECT run_data FROM usage_events WHERE uuid = ?')
        .pluck()
        .get(answeredThere.uuid),
    ).toBe('{"problem":"Yes"}');
  });

  it('lists only the ended events left to validate when asked, newest first', async () => {
    const uuid = await aliceStarts();
    const uuidsToValidate = async (): Promise<unknown[]> => {
      const answer = await recent({ to_validate: true });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      for (const event of listed(answer)) {
        expect(event).toMatchObject({ validated: false, end: expect.any(String) as unknown });
      }
      return listed(answer).map((event) => event.uuid);
    };
    // Active: not yet one to validate, though everyone's recent usage has it.
    expect(await uuidsToValidate()).not.toContain(uuid);
    expect(listed(await recent({})).map((event) => event.uuid)).toContain(uuid);

    await aliceEnds(uuid);
    expect((await uuidsToValidate())[0]).toBe(uuid);
    expect((await validate(uuid, SAM)).status).toBe(200);
    expect(await uuidsToValidate()).not.toContain(uuid);
    expect(listed(await recent({ to_validate: false })).map((event) => event.uuid)).toContain(uuid);

    // The answer's rule is the schema's, named; a person not staff is refused.
    expect(await recent({ to_validate: 'yes' })).toMatchObject({
      status: 400,
      body: {
        code: 'bad_request',
        message: expect.stringMatching(/^usage\.recent: to_validate: .*boolean/) as unknown,
      },
    });
    expect((await recent({ to_validate: true }, ALICE)).status).toBe(403);
  });

  it('finds the events left to validate through their own index, a tool’s through its own (query plans)', () => {
    const plan = (filters: Parameters<typeof recentUsageSql>[0]): string =>
      (
        serverDb.prepare(`EXPLAIN QUERY PLAN ${recentUsageSql(filters)}`).all({
          limit: 50,
          ...(filters.toolId === undefined ? {} : { toolId: 1 }),
          ...(filters.beforeId === undefined
            ? {}
            : { beforeStart: '2024-02-05T09:00:00.000Z', beforeId: 7 }),
        }) as { detail: string }[]
      )
        .map((row) => row.detail)
        .join('\n');
    const combinations = [{}, { toolId: 1 }, { beforeId: 7 }, { toolId: 1, beforeId: 7 }];
    // Left to validate, a tool's too: the partial index of those alone, no sort at all (the
    // tool's own index would walk its whole history, validated or not).
    for (const filters of combinations.map((f) => ({ ...f, toValidate: true }))) {
      expect(plan(filters)).toMatch(/USING (COVERING )?INDEX usage_events_to_validate\b/);
      expect(plan(filters)).not.toMatch(/TEMP B-TREE/);
    }
    // Otherwise by start, a tool's through its own index; ties on the start are put in id
    // order within each start, never the whole list sorted.
    for (const filters of combinations) {
      const index = filters.toolId === undefined ? 'usage_events_start' : 'usage_events_tool_start';
      expect(plan(filters)).toMatch(new RegExp(`USING (COVERING )?INDEX ${index}\\b`));
      expect(plan(filters)).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
    }
  });

  it('narrows everyone’s usage to a tool, and pages further back in order, events of one start by id', async () => {
    // Three ended SEM events of one start (as ended() makes them), and one of the AFM's, pushed
    // by a station of the AFM.
    const sem = [ended(), ended(), ended()];
    for (const event of sem) await push(event);
    const afmKey = await createStationKey(serverDir, 'afm-raw', 'AFM');
    const afmUuid = serverDb
      .prepare(`SELECT uuid FROM tools WHERE name = 'AFM'`)
      .pluck()
      .get() as string;
    n += 1;
    const afmEvent = usagePayload(
      { ...refs, tool_uuid: afmUuid },
      `01900000-0000-7000-8000-${String(200_000 + n).padStart(12, '0')}`,
      '2024-02-05T09:00:00.000Z',
      { end: '2024-02-05T10:00:00.000Z', run_data: '{"problem":"No"}', version: 2 },
    );
    const pushed = await fetch(`${server.url}sync/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Station ${afmKey}` },
      body: JSON.stringify({
        records: [{ id: 1, kind: 'usage_event', uuid: afmEvent.uuid as string, payload: afmEvent }],
      }),
    });
    expect(await pushed.json()).toEqual({ acked: [1], stale: [], error: null });

    const tools = await rpcAs(SAM, 'usage.tools', {});
    expect(tools.status).toBe(200);
    const toolList = tools.body.tools as { id: number; name: string }[];
    expect(toolList.map((t) => t.name)).toEqual(['AFM', 'SEM']);
    const afmId = toolList[0].id;
    const semId = toolList[1].id;

    const afm = listed(await recent({ tool_id: afmId, limit: 500 }));
    expect(afm.map((e) => e.uuid)).toEqual([afmEvent.uuid]);
    const semAll = listed(await recent({ tool_id: semId, limit: 500 }));
    expect(semAll.every((e) => e.tool_name === 'SEM')).toBe(true);
    expect(semAll.map((e) => e.uuid)).toEqual(expect.arrayContaining(sem.map((e) => e.uuid)));

    // Page by page, one at a time, the SEM's list comes out whole and in order: the three of
    // one start among them, by id (newest first).
    const paged: Record<string, unknown>[] = [];
    let page = listed(await recent({ tool_id: semId, limit: 1 }));
    while (page.length) {
      paged.push(...page);
      page = listed(await recent({ tool_id: semId, limit: 1, before_id: page[0].id as number }));
    }
    expect(paged.map((e) => e.uuid)).toEqual(semAll.map((e) => e.uuid));
    const ours = paged.filter((e) => sem.some((s) => s.uuid === e.uuid)).map((e) => e.id as number);
    expect(ours).toEqual([...ours].sort((a, b) => b - a));
    // Everyone's, two at a time, the same as in one read.
    const all = listed(await recent({ limit: 500 }));
    const twoByTwo: Record<string, unknown>[] = [];
    page = listed(await recent({ limit: 2 }));
    while (page.length) {
      twoByTwo.push(...page);
      page = listed(await recent({ limit: 2, before_id: page[page.length - 1].id as number }));
    }
    expect(twoByTwo.map((e) => e.uuid)).toEqual(all.map((e) => e.uuid));

    // What does not exist is named; a bad value is refused by its rule.
    expect(await recent({ tool_id: 999_999 })).toMatchObject({
      status: 404,
      body: { code: 'not_found', message: 'tool_id: tool 999999 does not exist' },
    });
    expect(await recent({ before_id: 999_999 })).toMatchObject({
      status: 404,
      body: { code: 'not_found', message: 'before_id: usage event 999999 does not exist' },
    });
    expect(await recent({ tool_id: 0 })).toMatchObject({
      status: 400,
      body: {
        code: 'bad_request',
        message: expect.stringMatching(/^usage\.recent: tool_id: /) as unknown,
      },
    });
    expect((await rpcAs(ALICE, 'usage.tools', {})).status).toBe(403);
  });

  it('the station’s validation reached the server first: validating there changes nothing', async () => {
    const event = ended({ validated: 1, validated_by_uuid: samUuid });
    const uuid = event.uuid as string;
    await push(event);
    const version = serverDb
      .prepare('SELECT version FROM usage_events WHERE uuid = ?')
      .pluck()
      .get(uuid) as number;
    const res = await validate(uuid, BOB);
    expect(res.status).toBe(200);
    expect(res.body.usage).toMatchObject({ validated: true, validated_by_name: 'sam' });
    expect(serverValidation(uuid)).toEqual({
      validated: 1,
      validated_by: 'sam',
      validated_on_server_by: null,
      validation_acked: 1,
    });
    expect(
      serverDb.prepare('SELECT version FROM usage_events WHERE uuid = ?').pluck().get(uuid),
    ).toBe(version);
    expect(await owed(uuid)).toEqual([]);
  });
});
