/**
 * What the server keeps of pushed problem reports, usage events and consumable withdrawals
 * (electron/core/server/sync/ingest.ts), and of the answers to a form given on the server: rules
 * a hand-mutation review found held by no other test, each named by the mutation it fails with.
 * A real `labstation serve` on loopback, pushed to over HTTP with a station key.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { facilityBundle } from '../fixtures/facility.js';
import {
  createStationKey,
  loginJwt,
  runCli,
  startServer,
  tempDir,
  writeJson,
  type ServerProcess,
} from './helpers.js';
import { usagePayload, type UsageRefs } from './usagePushFixtures.js';

const ALICE = { email: 'alice@example.org', password: 'alice password 1' };

let serverDir: string;
let server: ServerProcess;
let serverDb: Database.Database;
let key: string;
let refs: UsageRefs;

async function push(records: unknown[], as = key): Promise<unknown> {
  const res = await fetch(`${server.url}sync/push`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Station ${as}` },
    body: JSON.stringify({ records }),
  });
  expect(res.status).toBe(200);
  return res.json();
}

beforeAll(async () => {
  serverDir = join(tempDir(), 'server');
  const bundle = facilityBundle();
  delete bundle.station;
  const users = bundle.users as Record<string, unknown>[];
  users[0] = { ...users[0], ...ALICE };
  const imported = await runCli([
    'import',
    '--data',
    serverDir,
    writeJson(tempDir(), 'b.json', bundle),
  ]);
  expect(imported.code).toBe(0);
  server = await startServer(serverDir);
  serverDb = new Database(join(serverDir, 'labstation.db'), { readonly: true });
  key = await createStationKey(serverDir, 'sem-pc', 'SEM');
  refs = serverDb
    .prepare(
      `SELECT (SELECT uuid FROM users WHERE username = 'alice') AS user_uuid,
         (SELECT uuid FROM projects WHERE name = 'Cathodes') AS project_uuid,
         (SELECT uuid FROM tools WHERE name = 'SEM') AS tool_uuid`,
    )
    .get() as typeof refs;
});

afterAll(async () => {
  serverDb?.close();
  await server?.stop();
});

describe('usage events a station never makes', () => {
  it('refuses an end before the start, and a pending form of a usage not ended, at the field', async () => {
    const uuid = '01900000-0000-7000-8000-000000700010';
    const record = (payload: object) => ({ id: 1, kind: 'usage_event', uuid, payload });
    const start = '2026-01-05T08:00:00.000Z';
    const backwards = usagePayload(refs, uuid, start, { end: '2026-01-04T08:00:00.000Z' });
    expect(await push([record(backwards)])).toMatchObject({
      acked: [],
      error: {
        code: 'invalid',
        detail: `usage_event ${uuid}: end: must not be before start (${start})`,
      },
    });
    const pendingActive = usagePayload(refs, uuid, start, { post_usage_pending: 1 });
    expect(await push([record(pendingActive)])).toMatchObject({
      acked: [],
      error: {
        code: 'invalid',
        detail:
          `usage_event ${uuid}: post_usage_pending: only an ended usage has its post-usage ` +
          'questions pending; end is null',
      },
    });
    expect(serverDb.prepare('SELECT 1 FROM usage_events WHERE uuid = ?').get(uuid)).toBeUndefined();
    // Ended at its start (a usage of no time) with its form pending is a station's.
    const ended = usagePayload(refs, uuid, start, { end: start, post_usage_pending: 1 });
    expect(await push([record(ended)])).toMatchObject({ acked: [1], error: null });
  });
});

describe('problem reports pushed to the server', () => {
  // Mutation: upsertProblem taking the pushed resolved_at over the stored one.
  it('keeps a resolution when an older push of the report, unresolved, arrives again', async () => {
    const uuid = '01900000-0000-7000-8000-000000700001';
    const created = {
      uuid,
      tool_uuid: refs.tool_uuid,
      usage_event_uuid: null,
      user_uuid: refs.user_uuid,
      question: 'problem',
      description: 'Vacuum fault',
      force_shutdown: true,
      safety_hazard: false,
      created_at: '2024-01-05T10:00:00.000Z',
      resolved_at: null,
      resolved_by_uuid: null,
    };
    const resolved = {
      ...created,
      resolved_at: '2024-01-05T12:00:00.000Z',
      resolved_by_uuid: refs.user_uuid,
    };
    const record = (id: number, payload: object) => ({
      id,
      kind: 'problem_report',
      uuid,
      payload,
    });
    expect(await push([record(1, created)])).toMatchObject({ acked: [1], error: null });
    expect(
      serverDb.prepare("SELECT shutdown, shutdown_reason FROM tools WHERE name = 'SEM'").get(),
    ).toEqual({ shutdown: 1, shutdown_reason: 'Vacuum fault' });
    expect(await push([record(2, resolved)])).toMatchObject({ acked: [2], error: null });
    // The creation sent again (a station restored from a backup, a resend): nothing undone.
    expect(await push([record(3, created)])).toMatchObject({ acked: [3], error: null });
    expect(
      serverDb.prepare('SELECT resolved_at FROM problem_reports WHERE uuid = ?').pluck().get(uuid),
    ).toBe('2024-01-05T12:00:00.000Z');
    expect(serverDb.prepare("SELECT shutdown FROM tools WHERE name = 'SEM'").pluck().get()).toBe(0);
  });

  // Mutation: upsertProblem without its owner check.
  it("refuses a station to change another station's report, even for the same tool", async () => {
    const uuid = '01900000-0000-7000-8000-000000700002';
    const payload = {
      uuid,
      tool_uuid: refs.tool_uuid,
      usage_event_uuid: null,
      user_uuid: refs.user_uuid,
      question: 'problem',
      description: 'Stage stuck',
      force_shutdown: false,
      safety_hazard: false,
      created_at: '2024-01-06T10:00:00.000Z',
      resolved_at: null,
      resolved_by_uuid: null,
    };
    const record = (id: number, body: object) => ({
      id,
      kind: 'problem_report',
      uuid,
      payload: body,
    });
    expect(await push([record(1, payload)])).toMatchObject({ acked: [1], error: null });
    const other = await createStationKey(serverDir, 'sem-other', 'SEM');
    const resolved = { ...payload, resolved_at: '2024-01-06T11:00:00.000Z' };
    expect(await push([record(1, resolved)], other)).toMatchObject({
      acked: [],
      error: { id: 1, code: 'forbidden' },
    });
    expect(
      serverDb
        .prepare('SELECT resolved_at, resolved_by_id FROM problem_reports WHERE uuid = ?')
        .get(uuid),
    ).toEqual({ resolved_at: null, resolved_by_id: null });
  });
});

describe('answers given on the server', () => {
  // Mutation: completePendingOnServer without its check that the form is pending.
  it("refuses to answer a usage whose answers the station gave: they are the station's", async () => {
    const uuid = '01900000-0000-7000-8000-000000700003';
    const runData = JSON.stringify({ problem: 'No', notes: 'answered at the station' });
    const event = {
      uuid,
      user_uuid: refs.user_uuid,
      operator_uuid: refs.user_uuid,
      project_uuid: refs.project_uuid,
      tool_uuid: refs.tool_uuid,
      start: '2024-01-07T09:00:00.000Z',
      end: '2024-01-07T10:00:00.000Z',
      validated: 0,
      remote_work: 0,
      pre_run_data: '{}',
      run_data: runData,
      post_usage_pending: 0,
      reminder_due: 0,
      version: 2,
    };
    expect(await push([{ id: 1, kind: 'usage_event', uuid, payload: event }])).toMatchObject({
      acked: [1],
      error: null,
    });
    const { version, form_version: formVersion } = serverDb
      .prepare('SELECT version, form_version FROM usage_events WHERE uuid = ?')
      .get(uuid) as { version: number; form_version: number };
    const res = await fetch(`${server.url}rpc/usage.completePendingServer`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await loginJwt(server.url, ALICE)}`,
      },
      body: JSON.stringify({
        usage: uuid,
        answers: { problem: 'Yes', notes: 'overwritten' },
        version: formVersion,
      }),
    });
    expect(res.status).toBe(409);
    expect(
      serverDb
        .prepare('SELECT run_data, version, answered_on_server_at FROM usage_events WHERE uuid = ?')
        .get(uuid),
    ).toEqual({ run_data: runData, version, answered_on_server_at: null });
  });
});

describe('a pending form answered on the server, then pushed by its station', () => {
  // Mutations: upsertUsage taking the pushed post_usage_pending (or reminder_due) over the
  // answers given on the server; its resend check comparing run_data even when the server
  // answered (the resend is refused as a conflict and the station's outbox is stuck); its
  // return on a stale push taken out.
  it('stays answered whatever the station still says of it, and answers only once', async () => {
    const uuid = '01900000-0000-7000-8000-000000700004';
    const active = usagePayload(refs, uuid, '2024-01-08T09:00:00.000Z');
    // Force-ended at the station: ended, its answers pending.
    const forced = {
      ...active,
      end: '2024-01-08T10:00:00.000Z',
      post_usage_pending: 1,
      reminder_due: 1,
      version: 2,
    };
    const record = (id: number, payload: object) => ({ id, kind: 'usage_event', uuid, payload });
    expect(await push([record(1, active), record(2, forced)])).toMatchObject({
      acked: [1, 2],
      error: null,
    });
    const stored = () =>
      serverDb
        .prepare(
          `SELECT run_data, post_usage_pending, reminder_due, answer_acked, validated, version,
             form_version
           FROM usage_events WHERE uuid = ?`,
        )
        .get(uuid) as { run_data: string; version: number; form_version: number } & Record<
        string,
        unknown
      >;
    expect(stored()).toMatchObject({ post_usage_pending: 1, reminder_due: 1 });

    const jwt = await loginJwt(server.url, ALICE);
    const answer = (answers: object, version: number) =>
      fetch(`${server.url}rpc/usage.completePendingServer`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
        body: JSON.stringify({ usage: uuid, answers, version }),
      });
    const first = await answer({ problem: 'No', notes: 'in the browser' }, stored().form_version);
    expect(first.status).toBe(200);
    const serverAnswers = stored().run_data;
    expect(JSON.parse(serverAnswers)).toEqual({ problem: 'No', notes: 'in the browser' });
    const answered = {
      run_data: serverAnswers,
      post_usage_pending: 0,
      reminder_due: 0,
      answer_acked: 0,
      validated: 0,
    };
    expect(stored()).toMatchObject(answered);

    // The station resends its force-end (its ack was lost): taken as a resend, nothing changed.
    expect(await push([record(3, forced)])).toMatchObject({ acked: [3], stale: [], error: null });
    expect(stored()).toMatchObject(answered);
    // An older push arriving late is stale and changes nothing either.
    expect(await push([record(4, active)])).toMatchObject({ acked: [4], stale: [4], error: null });
    expect(stored()).toMatchObject(answered);
    // A newer change of the station's, made before it heard of the answers (staff validate the
    // event, its form still pending there), is taken; the form stays answered and the answers
    // stay owed to the station.
    const validated = { ...forced, validated: 1, validated_by_uuid: refs.user_uuid, version: 3 };
    expect(await push([record(5, validated)])).toMatchObject({ acked: [5], error: null });
    expect(stored()).toMatchObject({ ...answered, validated: 1 });

    // The form is no longer pending on the server: a second answer in the browser is refused.
    // (At the form's version now: the validation did not move it, so the refusal is this one.)
    const second = await answer(
      { problem: 'Yes', notes: 'a second answer' },
      stored().form_version,
    );
    expect(second.status).toBe(409);
    expect(((await second.json()) as { message: string }).message).toMatch(/already answered/);
    expect(stored()).toMatchObject({ ...answered, validated: 1 });
  });
});

describe('consumable withdrawals pushed to the server', () => {
  // Mutation: insertWithdrawal without its return on a withdrawal already stored (the resend
  // is refused on the uuid's UNIQUE constraint, and the station's outbox is stuck behind it).
  it('stores a withdrawal once, however often the push that carries it is resent', async () => {
    const usageUuid = '01900000-0000-7000-8000-000000700005';
    const uuid = '01900000-0000-7000-8000-000000700006';
    const usage = {
      uuid: usageUuid,
      user_uuid: refs.user_uuid,
      operator_uuid: refs.user_uuid,
      project_uuid: refs.project_uuid,
      tool_uuid: refs.tool_uuid,
      start: '2024-01-09T09:00:00.000Z',
      end: null,
      validated: 0,
      remote_work: 0,
      pre_run_data: JSON.stringify({ sample_group: [{ sample_name: 'A1', stubs: 2 }] }),
      run_data: '',
      post_usage_pending: 0,
      reminder_due: 0,
      version: 1,
    };
    const withdrawal = {
      uuid,
      consumable: 'SEM stub',
      quantity: 2,
      user_uuid: refs.user_uuid,
      project_uuid: refs.project_uuid,
      tool_uuid: refs.tool_uuid,
      usage_event_uuid: usageUuid,
      question: 'stubs',
      created_at: '2024-01-09T09:00:00.000Z',
    };
    const batch = [
      { id: 1, kind: 'usage_event', uuid: usageUuid, payload: usage },
      { id: 2, kind: 'consumable_withdrawal', uuid, payload: withdrawal },
    ];
    const stored = () =>
      serverDb
        .prepare(
          `SELECT w.uuid, w.consumable, w.quantity, w.question FROM consumable_withdrawals w
           JOIN usage_events e ON e.id = w.usage_event_id WHERE e.uuid = ?`,
        )
        .all(usageUuid);
    const once = [{ uuid, consumable: 'SEM stub', quantity: 2, question: 'stubs' }];
    expect(await push(batch)).toMatchObject({ acked: [1, 2], error: null });
    expect(stored()).toEqual(once);
    // The ack was lost: the station sends the same batch again, then the withdrawal alone.
    expect(await push(batch)).toMatchObject({ acked: [1, 2], error: null });
    expect(await push([batch[1]])).toMatchObject({ acked: [2], error: null });
    expect(stored()).toEqual(once);
  });
});
