/**
 * The server's web carrier for browser users (`POST /rpc/<name>` with a JWT), with real
 * processes: a `labstation serve`, a `labstation station --server URL --key KEY` where a usage
 * is force-ended, and the pending post-usage answers completed on the server.
 */
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { UI_CSP_HEADER } from '../../electron/core/http/securityHeaders.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goodPreAnswers } from '../fixtures/facility.js';
import { runCli, type ServerProcess, type StationProcess, waitFor, loginJwt } from './helpers.js';
import {
  ALICE,
  BOB,
  SAM,
  startServerWithStation,
  stopServerWithStation,
} from './serverWithStation.js';

/** The renderer that `labstation serve` (run from dist/) hands out. */
const RENDERER_DIR = join(import.meta.dirname, '..', '..', 'dist', 'renderer');

let serverDir: string;
let stationDir: string;
let server: ServerProcess;
let station: StationProcess | undefined;
let serverDb: Database.Database;
let stationKey: string;
let pendingUuid: string;

function lastLine(text: string): string {
  return text.trim().split('\n').pop()!;
}

interface EventRow {
  id: number;
  uuid: string;
  end: string | null;
  run_data: string;
  post_usage_pending: number;
  reminder_due: number;
  version: number;
  /** The version of what its pending form shows: what a form is answered at. */
  form_version: number;
}

function serverEvent(uuid: string): EventRow | undefined {
  return serverDb
    .prepare(
      `SELECT id, uuid, "end", run_data, post_usage_pending, reminder_due, version, form_version
       FROM usage_events WHERE uuid = ?`,
    )
    .get(uuid) as EventRow | undefined;
}

async function stationOk(name: string, args: unknown): Promise<Record<string, unknown>> {
  const res = await station!.rpc(name, args);
  expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body as Record<string, unknown>;
}

const jwtFor = (user: { email: string; password: string }): Promise<string> =>
  loginJwt(server.url, user);

async function rpc(
  name: string,
  args: unknown,
  jwt?: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
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

beforeAll(async () => {
  ({ serverDir, server, serverDb, stationDir, station, stationKey } = await startServerWithStation(
    'sem-web',
    'user',
  ));

  // Alice uses the SEM at a real station; staff force-ends it: her answers are pending.
  await stationOk('session.logon', { login: 'alice', pin: '1234' });
  const enabled = await stationOk('toolControl.enable', {
    tool: 'SEM',
    project: 'Cathodes',
    answers: goodPreAnswers,
  });
  pendingUuid = (enabled.usage as { uuid: string }).uuid;
  await stationOk('session.logoff', {});
  await stationOk('session.logon', { login: 'sam', pin: '9999' });
  await stationOk('toolControl.forceEnd', { tool: 'SEM' });
  await stationOk('session.logoff', {});
  await waitFor('the force-ended usage on the server', () => {
    const row = serverEvent(pendingUuid);
    return row?.end && row.post_usage_pending === 1 ? row : undefined;
  });
}, 60_000);

afterAll(() => stopServerWithStation({ station, serverDb, server }));

describe('server rpc for browser users', () => {
  it('serves the UI with the security headers, and says it is a server', async () => {
    const page = await fetch(server.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('content-security-policy')).toBe(UI_CSP_HEADER);
    expect(await page.text()).toContain('<div id="root">');
    const health = await fetch(`${server.url}health`);
    expect(await health.json()).toEqual({ status: 'ok', role: 'server' });
  });

  it('serves the page’s own scripts, but neither the bench page nor source maps', async () => {
    const page = await (await fetch(server.url)).text();
    const script = /<script[^>]* src="(?:\.?\/)?([^"]+\.js)"/.exec(page)?.[1];
    expect(script).toMatch(/^assets\//);
    expect((await fetch(`${server.url}${script}`)).status).toBe(200);
    const bench = (await readdir(join(RENDERER_DIR, 'assets'))).find((f) =>
      /^bench-.*\.js$/.test(f),
    );
    expect(existsSync(join(RENDERER_DIR, `${script}.map`)) && bench).toBeTruthy();
    for (const path of [`${script}.map`, 'bench.html', `assets/${bench}`]) {
      expect((await fetch(`${server.url}${path}`)).status, path).toBe(404);
    }
    // Nor under the names Windows or macOS open it under (uiFiles.test.ts
    // checks the listener where such names exist): the same 404 as the app scheme's.
    for (const path of [
      'Bench.html',
      'BENCH.HTML',
      'bench.html.',
      'bench.html%20',
      'bench.html%2E%20',
      'bench.html::$DATA',
      `assets/${bench?.toUpperCase()}`,
      `assets/${bench}.`,
      `assets./${bench}`,
    ]) {
      expect((await fetch(`${server.url}${path}`)).status, path).toBe(404);
    }
  });

  it('sends the security headers with every answer: the APIs, their refusals, unknown paths', async () => {
    const answers = [
      await fetch(`${server.url}health`),
      await fetch(`${server.url}openapi.json`),
      await fetch(`${server.url}api/tools/`),
      await fetch(`${server.url}sync/reservations`, { method: 'POST', body: '{}' }),
      await fetch(`${server.url}rpc/usage.pendingMine`, { method: 'POST', body: '{}' }),
      await fetch(`${server.url}no/such/path`),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 401, 401, 401, 404]);
    for (const answer of answers) {
      expect(answer.headers.get('x-content-type-options'), answer.url).toBe('nosniff');
      expect(answer.headers.get('x-frame-options'), answer.url).toBe('DENY');
      expect(answer.headers.get('referrer-policy'), answer.url).toBe('no-referrer');
    }
  });

  it('refuses calls without a JWT or with a bad one: 401 {code, message}', async () => {
    const none = await rpc('usage.pendingMine', {});
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({
      code: 'unauthenticated',
      message: expect.any(String) as string,
    });
    expect(none.body.detail).toBe(none.body.message);
    const bad = await rpc('usage.pendingMine', {}, 'not.a.jwt');
    expect(bad.status).toBe(401);
    expect(bad.body.code).toBe('unauthenticated');
  });

  it('settles who calls before it reads the body; a body it will not read keeps its 413 or 415', async () => {
    // node:http rather than fetch, to say how large a body is without sending it all: a server
    // that refuses a large body answers before it has all of it and closes, and a client still
    // writing then races that answer (EPIPE, or a reset that takes the answer with it).
    const post = async (
      body: string | { declaredBytes: number },
      headers: Record<string, string>,
    ): Promise<{ status: number; body: Record<string, unknown> }> => {
      return await new Promise((resolve, reject) => {
        const req = request(`${server.url}rpc/usage.pendingMine`, {
          method: 'POST',
          headers:
            typeof body === 'string'
              ? headers
              : { ...headers, 'content-length': String(body.declaredBytes) },
        });
        req.on('response', (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            resolve({
              status: res.statusCode ?? 0,
              body: JSON.parse(text) as Record<string, unknown>,
            });
            req.destroy();
          });
        });
        req.on('error', reject);
        if (typeof body === 'string') req.end(body);
        else req.flushHeaders();
      });
    };
    const json = { 'content-type': 'application/json' };
    // A body that is not JSON, from no one: refused for who sent it, unread (a deep or large
    // body from anyone on the network would otherwise cost the server its parse).
    for (const headers of [json, { ...json, authorization: 'Bearer not.a.jwt' }]) {
      const broken = await post('{"no": ', headers);
      expect(broken.status).toBe(401);
      expect(broken.body.code).toBe('unauthenticated');
    }
    const jwt = { ...json, authorization: `Bearer ${await jwtFor(ALICE)}` };
    expect((await post('{"no": ', jwt)).status).toBe(400);
    const large = await post({ declaredBytes: 9 * 1024 * 1024 }, jwt);
    expect(large.status).toBe(413);
    expect(large.body).toMatchObject({ code: 'bad_request', detail: large.body.message });
    const xml = await post('<a/>', { ...jwt, 'content-type': 'application/xml' });
    expect(xml.status).toBe(415);
    expect(xml.body.code).toBe('bad_request');
  });

  it('answers unknown calls with 404 and bad arguments with 400', async () => {
    const jwt = await jwtFor(ALICE);
    expect((await rpc('toolControl.enable', {}, jwt)).status).toBe(404);
    const bad = await rpc('usage.completePendingServer', { usage: pendingUuid }, jwt);
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('bad_request');
    // Each key left out is named as required.
    expect(bad.body.details).toEqual({
      problems: ['answers: is required', 'version: is required'],
    });
  });

  it("answers another method on a call with 405 in the calls' shape, {code, message}", async () => {
    // A client of /rpc reads `code`, as from every other refusal of these calls.
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await fetch(`${server.url}rpc/usage.pendingMine`, { method });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow'), method).toBe('POST');
      const body = (await res.json()) as Record<string, unknown>;
      expect(body, method).toEqual({
        code: 'bad_request',
        message: `${method} is not allowed here (allowed: POST)`,
        detail: `${method} is not allowed here (allowed: POST)`,
      });
    }
    // The API's own paths keep FastAPI's shape.
    const api = await fetch(`${server.url}api/users/`, { method: 'POST' });
    expect(api.status).toBe(405);
    expect(await api.json()).toEqual({ detail: 'Method "POST" not allowed.' });
  });

  it('lets another user neither see nor answer the pending form, nor learn it exists: 404', async () => {
    const jwt = await jwtFor(BOB);
    const mine = await rpc('usage.pendingMine', {}, jwt);
    expect(mine.status).toBe(200);
    expect(mine.body.pending).toEqual([]);
    const form = await rpc('usage.pendingForm', { usage: pendingUuid }, jwt);
    expect(form.status).toBe(404);
    expect(form.body.code).toBe('not_found');
    // The same answer as for an event that does not exist.
    const none = await rpc(
      'usage.pendingForm',
      { usage: '01900000-0000-7000-8000-000000000999' },
      jwt,
    );
    expect(none.status).toBe(404);
    expect(form.body.message).toBe(
      String(none.body.message).replace('01900000-0000-7000-8000-000000000999', pendingUuid),
    );
    const version = serverEvent(pendingUuid)!.form_version;
    const done = await rpc(
      'usage.completePendingServer',
      { usage: pendingUuid, answers: { problem: 'No' }, version },
      jwt,
    );
    expect(done.status).toBe(404);
    expect(serverEvent(pendingUuid)!.post_usage_pending).toBe(1);
  });

  it('rejects invalid answers with 422 and their problems, and a stale version with 409', async () => {
    const jwt = await jwtFor(ALICE);
    const before = serverEvent(pendingUuid)!;
    const invalid = await rpc(
      'usage.completePendingServer',
      { usage: pendingUuid, answers: { problem: 'Perhaps' }, version: before.form_version },
      jwt,
    );
    expect(invalid.status).toBe(422);
    expect(invalid.body.code).toBe('validation_failed');
    const problems = (invalid.body.details as { problems: { path: string[] }[] }).problems;
    expect(problems.map((p) => p.path)).toContainEqual(['problem']);

    const stale = await rpc(
      'usage.completePendingServer',
      { usage: pendingUuid, answers: { problem: 'No' }, version: before.form_version - 1 },
      jwt,
    );
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe('conflict');
    expect(String(stale.body.message)).toMatch(/changed since this form was loaded/);
    expect(serverEvent(pendingUuid)).toEqual(before);
  });

  it('lets the user complete her own pending form; the answers reach run_data and the NEMO API', async () => {
    const jwt = await jwtFor(ALICE);
    const me = await rpc('account.me', {}, jwt);
    expect(me.body.account).toMatchObject({ email: ALICE.email, role: 'user' });
    const mine = await rpc('usage.pendingMine', {}, jwt);
    const pending = mine.body.pending as {
      usage: { uuid: string };
      version: number;
      questions: { name: string }[];
    }[];
    expect(pending).toHaveLength(1);
    expect(pending[0].usage.uuid).toBe(pendingUuid);
    expect(pending[0].questions.map((q) => q.name)).toEqual(['problem', 'notes']);
    const version = pending[0].version;

    const done = await rpc(
      'usage.completePendingServer',
      { usage: pendingUuid, answers: { problem: 'No', notes: 'answered on the web' }, version },
      jwt,
    );
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.version).toBe(version + 1);
    const row = serverEvent(pendingUuid)!;
    expect(row).toMatchObject({ post_usage_pending: 0, reminder_due: 0 });
    // The station may already have pushed the answers back: that moves the event's version, not
    // the form's, which its answers moved once.
    expect(row.form_version).toBe(version + 1);
    const runData = JSON.parse(row.run_data) as Record<string, unknown>;
    expect(runData).toMatchObject({ problem: 'No', notes: 'answered on the web' });

    // A second submit of the same form is stale now.
    const again = await rpc(
      'usage.completePendingServer',
      { usage: pendingUuid, answers: { problem: 'No' }, version },
      jwt,
    );
    expect(again.status).toBe(409);
    const recent = await rpc('usage.mine', {}, jwt);
    expect((recent.body.events as { uuid: string }[]).map((e) => e.uuid)).toContain(pendingUuid);
    expect((await rpc('usage.pendingMine', {}, jwt)).body.pending).toEqual([]);

    const token = await runCli([
      'admin',
      'token',
      'create',
      '--data',
      serverDir,
      '--user',
      SAM.email,
    ]);
    expect(token.code).toBe(0);
    const api = await fetch(`${server.url}api/usage_events/${row.id}/`, {
      headers: { authorization: `Token ${lastLine(token.stdout)}` },
    });
    expect(api.status).toBe(200);
    const event = (await api.json()) as { run_data: string };
    expect(event.run_data).toBe(row.run_data);
  });

  it('the station takes the answers given on the server as its own; a late push undoes nothing', async () => {
    const stationDb = new Database(join(stationDir, 'labstation.db'), { readonly: true });
    try {
      const answered = serverEvent(pendingUuid)!;
      // The station completes its pending form with the server's answers and pushes it back.
      await waitFor('the station to take the answers', () => {
        const local = stationDb
          .prepare('SELECT post_usage_pending, run_data FROM usage_events WHERE uuid = ?')
          .get(pendingUuid) as { post_usage_pending: number; run_data: string };
        return local.post_usage_pending === 0 && local.run_data === answered.run_data
          ? true
          : undefined;
      });
      await waitFor('the server to see them pushed back', () =>
        serverDb
          .prepare('SELECT answer_acked FROM usage_events WHERE uuid = ?')
          .pluck()
          .get(pendingUuid) === 1
          ? true
          : undefined,
      );
      const session = await stationOk('session.logon', { login: 'alice', pin: '1234' });
      expect((session.pending as unknown[]).length).toBe(0);
      await stationOk('session.logoff', {});

      // What the station pushed when it force-ended the usage, resent late.
      const row = serverEvent(pendingUuid)!;
      const refs = serverDb
        .prepare(
          `SELECT u.uuid AS user_uuid, o.uuid AS operator_uuid, p.uuid AS project_uuid,
             t.uuid AS tool_uuid, f.uuid AS force_ended_by_uuid, e.start, e."end",
             e.pre_run_data, e.station_version
           FROM usage_events e JOIN users u ON u.id = e.user_id JOIN users o ON o.id = e.operator_id
             JOIN projects p ON p.id = e.project_id JOIN tools t ON t.id = e.tool_id
             LEFT JOIN users f ON f.id = e.force_ended_by_id
           WHERE e.uuid = ?`,
        )
        .get(pendingUuid) as Record<string, unknown> & { station_version: number };
      const { station_version: stationVersion, ...fields } = refs;
      const res = await fetch(`${server.url}sync/push`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Station ${stationKey}` },
        body: JSON.stringify({
          records: [
            {
              id: 999_999,
              kind: 'usage_event',
              uuid: pendingUuid,
              payload: {
                uuid: pendingUuid,
                ...fields,
                validated_by_uuid: null,
                validated: 0,
                remote_work: 0,
                run_data: '',
                post_usage_pending: 1,
                reminder_due: 0,
                version: stationVersion - 1,
              },
            },
          ],
        }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ acked: [999_999], stale: [999_999], error: null });
      expect(serverEvent(pendingUuid)).toEqual(row);

      // Staff validate the event at the station: the server gets that, and keeps the answers.
      await stationOk('session.logon', { login: 'sam', pin: '9999' });
      await stationOk('toolControl.validate', { usage: pendingUuid });
      await stationOk('session.logoff', {});
      await waitFor('the validation on the server', () =>
        serverDb
          .prepare('SELECT validated FROM usage_events WHERE uuid = ?')
          .pluck()
          .get(pendingUuid) === 1
          ? true
          : undefined,
      );
      expect(serverEvent(pendingUuid)!.run_data).toBe(answered.run_data);
    } finally {
      stationDb.close();
    }
  });

  it('staff answer another person’s pending form; a reported problem shuts the tool down on both sides', async () => {
    await stationOk('session.logon', { login: 'alice', pin: '1234' });
    const enabled = await stationOk('toolControl.enable', {
      tool: 'SEM',
      project: 'Cathodes',
      answers: goodPreAnswers,
    });
    const uuid = (enabled.usage as { uuid: string }).uuid;
    await stationOk('session.logoff', {});
    await stationOk('session.logon', { login: 'sam', pin: '9999' });
    await stationOk('toolControl.forceEnd', { tool: 'SEM' });
    await stationOk('session.logoff', {});
    const pending = await waitFor('the second force-ended usage', () => {
      const r = serverEvent(uuid);
      return r?.end && r.post_usage_pending === 1 ? r : undefined;
    });
    const jwt = await jwtFor(SAM);
    const done = await rpc(
      'usage.completePendingServer',
      { usage: uuid, answers: { problem: 'Yes', notes: 'arcing' }, version: pending.version },
      jwt,
    );
    expect(done.status, JSON.stringify(done.body)).toBe(200);

    // The station records the answer's effects itself: the report, the shutdown.
    await waitFor('the tool shut down at the station', async () => {
      const status = await station!.rpc('toolControl.status', { tool: 'SEM' });
      return (status.body as { state: string }).state === 'shutdown' ? true : undefined;
    });
    const report = await waitFor(
      'the problem report on the server',
      () =>
        serverDb
          .prepare(
            `SELECT r.description, r.force_shutdown, e.uuid AS usage_uuid FROM problem_reports r
           JOIN usage_events e ON e.id = r.usage_event_id WHERE e.uuid = ?`,
          )
          .get(uuid) as { description: string; force_shutdown: number } | undefined,
    );
    expect(report).toMatchObject({ description: 'Vacuum fault', force_shutdown: 1 });
    const token = lastLine(
      (await runCli(['admin', 'token', 'create', '--data', serverDir, '--user', SAM.email])).stdout,
    );
    const operational = async (): Promise<boolean> => {
      const res = await fetch(`${server.url}api/tools/?name=SEM`, {
        headers: { authorization: `Token ${token}` },
      });
      const list = (await res.json()) as { results: { name: string; operational: boolean }[] };
      return list.results.find((t) => t.name === 'SEM')!.operational;
    };
    await waitFor('SEM not operational on the server', async () =>
      (await operational()) ? undefined : true,
    );

    // Staff bring it back at the station; the server follows.
    await stationOk('session.logon', { login: 'sam', pin: '9999' });
    await stationOk('toolControl.clearShutdown', { tool: 'SEM' });
    await stationOk('session.logoff', {});
    await waitFor('SEM operational again on the server', async () =>
      (await operational()) ? true : undefined,
    );
  });

  // Mutation: no usage.clearShutdownServer (a report whose station was replaced held the tool
  // "not operational" for good), or a station that leaves the server's resolution aside.
  it('staff bring a tool back on the server; the station that shut it down takes it', async () => {
    await stationOk('session.logon', { login: 'alice', pin: '1234' });
    await stationOk('toolControl.enable', {
      tool: 'SEM',
      project: 'Cathodes',
      answers: goodPreAnswers,
    });
    await stationOk('toolControl.disable', { tool: 'SEM', answers: { problem: 'Yes' } });
    await stationOk('session.logoff', {});
    const semId = serverDb.prepare("SELECT id FROM tools WHERE name = 'SEM'").pluck().get();
    const shutdown = () =>
      serverDb.prepare('SELECT shutdown FROM tools WHERE id = ?').pluck().get(semId);
    await waitFor('SEM shut down on the server', () => (shutdown() === 1 ? true : undefined));

    // A plain user may not; staff may.
    const alice = await rpc('usage.clearShutdownServer', { tool: semId }, await jwtFor(ALICE));
    expect(alice.status).toBe(403);
    const jwt = await jwtFor(SAM);
    const cleared = await rpc('usage.clearShutdownServer', { tool: semId }, jwt);
    expect(cleared).toEqual({ status: 200, body: { resolved: 1 } });
    expect(shutdown()).toBe(0);
    const report = () =>
      serverDb
        .prepare(
          `SELECT r.resolved_at IS NOT NULL AS resolved, u.username AS resolver,
             r.resolution_acked AS acked
           FROM problem_reports r JOIN users u ON u.id = r.resolved_by_id
           WHERE r.tool_id = ? ORDER BY r.id DESC LIMIT 1`,
        )
        .get(semId) as { resolved: number; resolver: string; acked: number } | undefined;
    expect(report()).toMatchObject({ resolved: 1, resolver: 'sam' });

    // The station takes it at its next pull: the tool is back there, and it says so back.
    await waitFor('SEM back in service at the station', async () => {
      const status = await station!.rpc('toolControl.status', { tool: 'SEM' });
      return (status.body as { state: string }).state === 'idle' ? true : undefined;
    });
    await waitFor('the resolution pushed back', () => (report()?.acked === 1 ? true : undefined));
    expect(report()).toMatchObject({ resolved: 1, resolver: 'sam' });
    // Nothing left to resolve: no error, nothing changed; an unknown tool is named.
    expect(await rpc('usage.clearShutdownServer', { tool: semId }, jwt)).toEqual({
      status: 200,
      body: { resolved: 0 },
    });
    const unknown = await rpc('usage.clearShutdownServer', { tool: 999_999 }, jwt);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ message: 'tool: no tool with id 999999' });
  });
});
