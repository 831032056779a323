/**
 * The real `labstation` process: CLI commands, the HTTP carrier, and a process killed in the
 * middle of enabling or disabling a tool. Needs `npm run build` first (npm test does it).
 */
import { existsSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { UI_CSP_HEADER } from '../../electron/core/http/securityHeaders.js';
import { facilityBundle, goodPreAnswers } from '../fixtures/facility.js';
import { runCli, startStation, tempDir, writeJson, type StationProcess } from './helpers.js';

const running: StationProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function preparedDataDir(): Promise<string> {
  const dir = tempDir();
  const bundle = writeJson(dir, 'facility.json', facilityBundle());
  const result = await runCli(['import', '--data', join(dir, 'data'), bundle]);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(/imported 3 users, 3 projects, 2 tools; this station runs SEM/);
  return join(dir, 'data');
}

async function start(dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<StationProcess> {
  const station = await startStation(dataDir, env);
  running.push(station);
  return station;
}

/** Alice logs on at `st` and enables the SEM for Cathodes with good answers. */
async function aliceEnablesSem(st: StationProcess): Promise<void> {
  await st.rpc('session.logon', { login: 'alice', pin: '1234' });
  const enabled = await st.rpc('toolControl.enable', {
    tool: 'SEM',
    project: 'Cathodes',
    answers: goodPreAnswers,
  });
  expect(enabled.status).toBe(200);
}

describe('labstation import', () => {
  it('names unknown keys and bad questions, and imports nothing then', async () => {
    const dir = tempDir();
    const bundle = facilityBundle();
    const bad = {
      ...bundle,
      colour: 'red',
      tools: [{ name: 'X', pre_usage_questions: [{ type: 'slider', name: 'a' }] }],
    };
    const r1 = await runCli(['import', '--data', join(dir, 'd'), writeJson(dir, 'b1.json', bad)]);
    expect(r1.code).toBe(1);
    expect(r1.stderr).toMatch(/unknown key "colour"/);
    // The question problems are named with the schema's, not after they are fixed.
    expect(r1.stderr).toMatch(/tools\[0\] \(X\)\.pre_usage_questions\.a\.type: .*slider/);
    const mixed = {
      ...bundle,
      tools: [
        {
          name: 'Y',
          colour: 'red',
          post_usage_questions: [{ type: 'number', name: 'n', min: 'a' }],
        },
        { name: 'Z', pre_usage_questions: {} },
      ],
    };
    const r3 = await runCli(['import', '--data', join(dir, 'd'), writeJson(dir, 'b3.json', mixed)]);
    expect(r3.code).toBe(1);
    const lines = r3.stderr.trim().split('\n');
    expect(lines).toContainEqual(expect.stringMatching(/^tools\[0\]: unknown key "colour"$/));
    expect(lines).toContainEqual(
      expect.stringMatching(/^tools\[0\] \(Y\)\.post_usage_questions\.n\.min: .*"min"/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^tools\[1\] \(Z\)\.pre_usage_questions: .*must be a list/),
    );
    const r2 = await runCli([
      'import',
      '--data',
      join(dir, 'd'),
      writeJson(dir, 'b2.json', { ...bundle, tools: bad.tools, station: { tool: 'X' } }),
    ]);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toMatch(/tools\[0\] \(X\)\.pre_usage_questions\.a\.type: .*slider/);
    // Nothing stored: the new data dir was not even left behind.
    expect(existsSync(join(dir, 'd'))).toBe(false);
  });
});

describe('labstation import: one-line fields', () => {
  it('refuses control characters in names, as named problems, and stores nothing', async () => {
    const dir = tempDir();
    const bundle = facilityBundle();
    const users = bundle.users as Record<string, unknown>[];
    const bad = {
      ...bundle,
      users: [...users, { username: 'carol', last_name: 'Smith\r\nX' }],
      projects: [...(bundle.projects as object[]), { name: 'P\u0000Q' }],
    };
    const r = await runCli(['import', '--data', join(dir, 'd'), writeJson(dir, 'b.json', bad)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/users\[3\]\.last_name: must not hold control characters/);
    expect(r.stderr).toMatch(/projects\[\d+\]\.name: must not hold control characters/);
    expect(existsSync(join(dir, 'd'))).toBe(false);
  });
});

describe('labstation import: names listed twice', () => {
  it('refuses a project or tool listed twice, naming each, and imports nothing', async () => {
    const dir = tempDir();
    const bundle = {
      projects: [
        { name: 'P', application_identifier: 'A-1' },
        { name: 'P', application_identifier: 'B-2', active: false },
      ],
      tools: [
        {
          name: 'T',
          pre_usage_questions: [{ type: 'textbox', name: 'x', title: 'X', required: true }],
        },
        { name: 'T', pre_usage_questions: [] },
      ],
      station: { tool: 'T' },
    };
    const r = await runCli(['import', '--data', join(dir, 'd'), writeJson(dir, 'b.json', bundle)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/projects\[1\]\.name: P is listed twice/);
    expect(r.stderr).toMatch(/tools\[1\]\.name: T is listed twice/);
    expect(existsSync(join(dir, 'd'))).toBe(false);
  });

  it('takes usernames as the database compares them: A to Z in either case are one, other letters not', async () => {
    const dir = tempDir();
    const people = (names: string[]) => ({
      users: names.map((username, i) => ({ username, email: `person${i}@example.org` })),
    });
    const twice = await runCli([
      'import',
      '--data',
      join(dir, 'a'),
      writeJson(dir, 'a.json', people(['Ann', 'ann'])),
    ]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/users\[1\]\.username: ann is listed twice/);
    // Imported one bundle at a time they are two people; so they are in one bundle too.
    const two = await runCli([
      'import',
      '--data',
      join(dir, 'b'),
      writeJson(dir, 'b.json', people(['\u00c9mile', '\u00e9mile'])),
    ]);
    expect(two.code, two.stderr).toBe(0);
    const db = new Database(join(dir, 'b', 'labstation.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT username FROM users ORDER BY id').pluck().all()).toEqual([
        '\u00c9mile',
        '\u00e9mile',
      ]);
    } finally {
      db.close();
    }
  });
});

describe("labstation import: the harvest's settings", () => {
  it('sets copies at once, the rescan and the retry backoff; refuses bad values, naming them, and keeps what was stored', async () => {
    const data = await preparedDataDir();
    const dir = tempDir();
    const settings = (): Record<string, unknown> => {
      const db = new Database(join(data, 'labstation.db'), { readonly: true });
      try {
        const rows = db
          .prepare(`SELECT key, value FROM settings WHERE key IN (?, ?, ?, ?)`)
          .all(
            'harvest.concurrency',
            'harvest.rescanMinutes',
            'harvest.retryBaseSeconds',
            'harvest.retryMaxSeconds',
          ) as { key: string; value: string }[];
        return Object.fromEntries(rows.map((r) => [r.key, JSON.parse(r.value) as unknown]));
      } finally {
        db.close();
      }
    };
    const tuning = {
      tool: 'SEM',
      harvest_concurrency: 4,
      rescan_minutes: 15,
      retry_base_seconds: 10,
      retry_max_seconds: 600,
    };
    const ok = await runCli([
      'import',
      '--data',
      data,
      writeJson(dir, 'ok.json', { station: tuning }),
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    const stored = {
      'harvest.concurrency': 4,
      'harvest.rescanMinutes': 15,
      'harvest.retryBaseSeconds': 10,
      'harvest.retryMaxSeconds': 600,
    };
    expect(settings()).toEqual(stored);

    const bad = await runCli([
      'import',
      '--data',
      data,
      writeJson(dir, 'bad.json', {
        station: { tool: 'SEM', harvest_concurrency: 0, rescan_minutes: 'often' },
      }),
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/station\.harvest_concurrency: .*1/);
    expect(bad.stderr).toMatch(/station\.rescan_minutes: /);
    const crossed = await runCli([
      'import',
      '--data',
      data,
      writeJson(dir, 'crossed.json', {
        station: { tool: 'SEM', retry_base_seconds: 120, retry_max_seconds: 60 },
      }),
    ]);
    expect(crossed.code).toBe(1);
    expect(crossed.stderr).toContain(
      'station.retry_max_seconds: must be at least the first wait, retry_base_seconds (120)',
    );
    // One of the two against the other as stored (the most, 600 s).
    const alone = await runCli([
      'import',
      '--data',
      data,
      writeJson(dir, 'alone.json', { station: { tool: 'SEM', retry_base_seconds: 7200 } }),
    ]);
    expect(alone.code).toBe(1);
    expect(alone.stderr).toContain(
      'station.retry_base_seconds: must be at most the longest wait, retry_max_seconds (600)',
    );
    expect(settings()).toEqual(stored);
  });
});

describe('labstation import: badges name one person', () => {
  it('refuses a badge used twice or equal to a username, as named problems', async () => {
    const dir = tempDir();
    const bundle = facilityBundle();
    const users = bundle.users as Record<string, unknown>[];
    const twice = { ...bundle, users: [...users, { username: 'carol', badge_number: '100200' }] };
    const r1 = await runCli(['import', '--data', join(dir, 'd'), writeJson(dir, 'b1.json', twice)]);
    expect(r1.code).toBe(1);
    expect(r1.stderr).toMatch(
      /users\[3\] \(carol\)\.badge_number: 100200 already belongs to alice/,
    );
    const asName = { ...bundle, users: [...users, { username: 'dave', badge_number: 'bob' }] };
    const r2 = await runCli([
      'import',
      '--data',
      join(dir, 'd'),
      writeJson(dir, 'b2.json', asName),
    ]);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toMatch(/users\[3\] \(dave\)\.badge_number: bob is someone's username/);
    // against what is already stored, too
    expect(
      (await runCli(['import', '--data', join(dir, 'd'), writeJson(dir, 'ok.json', bundle)])).code,
    ).toBe(0);
    const later = { users: [{ username: 'erin', badge_number: '100200' }] };
    const r3 = await runCli(['import', '--data', join(dir, 'd'), writeJson(dir, 'b3.json', later)]);
    expect(r3.code).toBe(1);
    expect(r3.stderr).toMatch(/100200 already belongs to alice/);
    expect(r3.stderr).not.toMatch(/at .*\.js:\d+/); // a named problem, not a stack trace
  });
});

describe('labstation usage', () => {
  it('refuses a data dir that holds no Labstation data instead of creating one', async () => {
    const dir = join(tempDir(), 'typo');
    const result = await runCli(['usage', '--data', dir, '--json']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/holds no Labstation data/);
    expect(() => statSync(dir)).toThrow();
  });

  it('refuses --json with --csv as wrong usage, naming both, instead of printing one of them', async () => {
    const dataDir = await preparedDataDir();
    const result = await runCli(['usage', '--data', dataDir, '--json', '--csv']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')[0]).toBe(
      'labstation: --json and --csv cannot be used together; choose one',
    );
  });
});

describe('labstation <command> --help', () => {
  it('prints the usage and exits 0 for every command, as station --help does, touching nothing', async () => {
    const commands = [
      ['serve'],
      ['import'],
      ['usage'],
      ['harvest', '--once'],
      ['files'],
      ['transfers'],
      ['unlock'],
      ['experiment'],
      ['questions', 'check'],
      ['metadata', 'convert'],
      ['admin', 'user', 'create'],
      ['mail'],
      ['mail', 'list'],
    ];
    for (const command of commands) {
      for (const flag of ['--help', '-h']) {
        const result = await runCli([...command, flag]);
        expect(result.code, `${command.join(' ')} ${flag}`).toBe(0);
        expect(result.stderr).toBe('');
        expect(result.stdout).toMatch(/^labstation — instrument station and facility server\n/);
      }
    }
    // After --, it is a value as any other: a file named --help.
    const file = await runCli(['metadata', 'check', '--', '--help']);
    expect(file.code).toBe(1);
    expect(file.stdout).toBe('');
  });
});

describe('labstation station and serve --port', () => {
  it('refuses a port not written in digits or past 65535, naming the flag, and makes no data dir', async () => {
    const root = tempDir();
    // 0x50 and 1e3 are numbers to JavaScript (80 and 1000), and an empty value was port 0.
    for (const command of ['station', 'serve']) {
      for (const value of ['0x50', '1e3', '', '65536', '-1']) {
        const dataDir = join(root, `${command}-data`);
        const result = await runCli([command, '--data', dataDir, `--port=${value}`]);
        expect(result.code).toBe(2);
        expect(result.stderr.split('\n')[0]).toBe(
          'labstation: --port must be a whole number from 0 to 65535',
        );
        expect(existsSync(dataDir)).toBe(false);
      }
    }
  });
});

describe('labstation transfers --file', () => {
  it('takes a file id written in digits, and refuses anything else naming the flag and its rule', async () => {
    const dataDir = await preparedDataDir();
    const ok = await runCli(['transfers', '--data', dataDir, '--file', '7']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe('');
    // 0x10 and 1e1 are numbers to JavaScript (16 and 10), not file ids.
    for (const value of ['0', '0x10', '1e1', ' 7', 'seven']) {
      const result = await runCli(['transfers', '--data', dataDir, '--file', value]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.split('\n')[0]).toBe(
        `labstation: --file must be a file id, a whole number from 1 (not ${JSON.stringify(value)})`,
      );
    }
  });
});

describe('labstation station over HTTP', () => {
  it('serves /health, guards /rpc with the token in <data>/rpc-token, and speaks the contract', async () => {
    const dataDir = await preparedDataDir();
    const st = await start(dataDir);
    expect((statSync(join(dataDir, 'rpc-token')).mode & 0o777).toString(8)).toBe('600');
    // One station per data dir: a second is refused, and the first goes on.
    const second = await runCli(['station', '--data', dataDir, '--port', '0']);
    expect(second.code).toBe(1);
    expect(second.stderr).toBe(
      `another Labstation station or server runs on ${dataDir}; stop it first (one per data dir)\n`,
    );
    const health = await fetch(`${st.url}health`);
    expect(await health.json()).toEqual({ status: 'ok', role: 'station' });
    const noToken = await fetch(`${st.url}rpc/toolControl.status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"tool":"SEM"}',
    });
    expect(noToken.status).toBe(401);
    expect(await noToken.json()).toMatchObject({ code: 'unauthenticated' });
    const wrongToken = await fetch(`${st.url}rpc/toolControl.status`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${st.token.slice(1)}x`,
      },
      body: '{"tool":"SEM"}',
    });
    expect(wrongToken.status).toBe(401);
    expect((await fetch(`${st.url}events`)).status).toBe(401);
    // Every answer carries the security headers: the UI, refusals and unknown paths too.
    const page = await fetch(st.url);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    // The page's scripts and their maps (for the desktop window's developer tools), not the
    // page of `npm run bench:forms`.
    const script = /<script[^>]* src="(?:\.?\/)?([^"]+\.js)"/.exec(await page.clone().text())?.[1];
    expect(script).toMatch(/^assets\//);
    expect((await fetch(`${st.url}${script}`)).status).toBe(200);
    expect((await fetch(`${st.url}${script}.map`)).status).toBe(200);
    expect((await fetch(`${st.url}bench.html`)).status).toBe(404);
    // The page's policy as a header too, which alone can refuse another site's frame.
    expect(page.headers.get('content-security-policy')).toBe(UI_CSP_HEADER);
    expect((await fetch(`${st.url}${script}`)).headers.get('content-security-policy')).toBe(
      UI_CSP_HEADER,
    );
    // The event stream, which fastify hands over to it (hijack), carries them as well.
    const stream = new AbortController();
    const eventStream = await fetch(`${st.url}events`, {
      headers: { authorization: `Bearer ${st.token}` },
      signal: stream.signal,
    });
    expect(eventStream.headers.get('content-type')).toBe('text/event-stream');
    stream.abort();
    for (const answer of [
      page,
      health,
      noToken,
      wrongToken,
      eventStream,
      await fetch(`${st.url}nothing`),
    ]) {
      expect(answer.headers.get('x-content-type-options'), answer.url).toBe('nosniff');
      expect(answer.headers.get('x-frame-options'), answer.url).toBe('DENY');
      expect(answer.headers.get('referrer-policy'), answer.url).toBe('no-referrer');
    }
    // fetch() cannot set Host, so ask with node:http as a DNS-rebound browser would
    const rebound = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(`${st.url}health`, { headers: { host: 'evil.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      req.end();
    });
    expect(rebound).toBe(403);
    expect((statSync(dataDir).mode & 0o777).toString(8)).toBe('700');
    expect((statSync(join(dataDir, 'labstation.db')).mode & 0o777).toString(8)).toBe('600');

    expect(await st.rpc('toolControl.status', { tool: 'SEM' })).toMatchObject({
      status: 200,
      body: { state: 'idle', tool: { name: 'SEM' } },
    });
    // A call without arguments may come with no body and still say JSON (curl -H on every call).
    const bodiless = await fetch(`${st.url}rpc/harvest.status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${st.token}` },
    });
    expect(bodiless.status, await bodiless.clone().text()).toBe(200);
    expect(await st.rpc('toolControl.status', { tool: 'Nope' })).toMatchObject({
      status: 404,
      body: { code: 'not_found' },
    });
    expect(await st.rpc('session.logon', { login: 'alice', pin: '1234' })).toMatchObject({
      status: 200,
    });
    const bad = await st.rpc('toolControl.enable', {
      tool: 'SEM',
      project: 'Cathodes',
      answers: {},
    });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ code: 'validation_failed' });
    const ok = await st.rpc('toolControl.enable', {
      tool: 'SEM',
      project: 'Cathodes',
      answers: goodPreAnswers,
    });
    expect(ok.status).toBe(200);
    expect(
      await st.rpc('toolControl.enable', {
        tool: 'SEM',
        project: 'Cathodes',
        answers: goodPreAnswers,
      }),
    ).toMatchObject({
      status: 409,
      body: { code: 'tool_in_use' },
    });
    /** A call whose body is sent as written, under the content type given. */
    const rpcText = async (name: string, text: string, type = 'application/json') =>
      await fetch(`${st.url}rpc/${name}`, {
        method: 'POST',
        headers: { 'content-type': type, authorization: `Bearer ${st.token}` },
        body: text,
      });
    const malformed = await rpcText('session.logon', '{not json');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ code: 'bad_request' });
    // A notebook field may be named __proto__ (or constructor, with a prototype): kept as a
    // plain field, and the entry saved back in the form notebook.get gives it.
    const created = await rpcText(
      'notebook.create',
      '{"kind":"item","title":"p","metadata":{"extra_fields":{"__proto__":{"value":"kept"},' +
        '"constructor":{"value":"c","prototype":"p"}}}}',
    );
    expect(created.status, await created.clone().text()).toBe(200);
    const entryText = await created.text();
    expect(entryText).toContain('"__proto__":{"type":"text","value":"kept"}');
    const entryId = (JSON.parse(entryText) as { entry: { id: number } }).entry.id;
    const updated = await rpcText(
      'notebook.update',
      `{"id":${entryId},"version":1,"metadata":{"extra_fields":{"__proto__":{"value":"changed"}}}}`,
    );
    expect(updated.status, await updated.clone().text()).toBe(200);
    expect(await updated.text()).toContain('"__proto__":{"type":"text","value":"changed"}');
    // Fastify's own refusals keep their status: a body that is not JSON is 415, and a method
    // the path has no route for is 405 naming the one it has.
    const plain = await rpcText('session.logon', '<login>alice</login>', 'application/xml');
    expect(plain.status).toBe(415);
    expect(await plain.json()).toMatchObject({ code: 'bad_request' });
    const wrongMethod = await fetch(`${st.url}rpc/session.logon`, {
      headers: { authorization: `Bearer ${st.token}` },
    });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    expect(await wrongMethod.json()).toEqual({
      code: 'bad_request',
      message: 'GET is not allowed here (allowed: POST)',
    });
    const extraKey = await st.rpc('session.logon', { login: 'sam', pin: '9999', x: 1 });
    expect(extraKey).toMatchObject({
      status: 400,
      body: {
        code: 'bad_request',
        message: 'session.logon: (arguments): unknown key "x"',
        details: { problems: ['(arguments): unknown key "x"'] },
      },
    });

    await st.stop();
    const usage = await runCli(['usage', '--data', dataDir, '--json']);
    expect(usage.code).toBe(0);
    const events = JSON.parse(usage.stdout) as { end: string | null; pre_run_data: string }[];
    expect(events).toHaveLength(1);
    expect(events[0].end).toBeNull();
    expect(JSON.parse(events[0].pre_run_data)).toMatchObject({ total: 5 });
  });

  it('stops on SIGTERM even while a UI holds an event stream open', async () => {
    const dataDir = await preparedDataDir();
    const st = await start(dataDir);
    const stream = await fetch(`${st.url}events`, {
      headers: { authorization: `Bearer ${st.token}` },
    });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    await reader.read(); // the stream is open and flowing
    st.child.kill('SIGTERM');
    // Bounded wait for the exit, so a hang fails the test instead of stalling the run.
    const outcome = await Promise.race([
      st.exited,
      new Promise((resolve) => setTimeout(() => resolve('still running'), 15_000)),
    ]);
    expect(outcome).toEqual({ code: 0, signal: null });
  });

  for (const point of ['enable.after-insert', 'enable.before-commit']) {
    it(`leaves the database consistent when the process is killed at ${point}`, async () => {
      const dataDir = await preparedDataDir();
      const st = await start(dataDir, { LABSTATION_FAILPOINT: point });
      await st.rpc('session.logon', { login: 'alice', pin: '1234' });
      await expect(
        st.rpc('toolControl.enable', { tool: 'SEM', project: 'Cathodes', answers: goodPreAnswers }),
      ).rejects.toThrow();
      expect(await st.exited).toMatchObject({ signal: 'SIGKILL' });

      const db = new Database(join(dataDir, 'labstation.db'));
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.pragma('foreign_key_check')).toEqual([]);
      for (const table of ['usage_events', 'consumable_withdrawals', 'problem_reports', 'outbox']) {
        expect(db.prepare(`SELECT count(*) FROM ${table}`).pluck().get(), table).toBe(0);
      }
      db.close();

      await aliceEnablesSem(await start(dataDir));
    });
  }

  // Ending a usage writes its end, its outbox row and the effects of its answers (here a problem
  // report that shuts the tool down) in one transaction: a crash anywhere inside leaves the usage
  // as it was, active and queued as before, never ended without the row that tells the server.
  for (const point of ['disable.after-update', 'disable.before-commit']) {
    it(`keeps the usage active and its outbox as it was when killed at ${point}`, async () => {
      const dataDir = await preparedDataDir();
      const st = await start(dataDir, { LABSTATION_FAILPOINT: point });
      await aliceEnablesSem(st);
      const snapshot = (): Record<string, unknown> => {
        const db = new Database(join(dataDir, 'labstation.db'), { readonly: true });
        try {
          return {
            usage: db.prepare('SELECT "end", run_data, version FROM usage_events').all(),
            outbox: db.prepare('SELECT id, kind, record_uuid, payload FROM outbox').all(),
            reports: db.prepare('SELECT count(*) FROM problem_reports').pluck().get(),
            withdrawals: db.prepare('SELECT count(*) FROM consumable_withdrawals').pluck().get(),
            shutdown: db.prepare("SELECT shutdown FROM tools WHERE name = 'SEM'").pluck().get(),
          };
        } finally {
          db.close();
        }
      };
      const before = snapshot();
      expect(before).toMatchObject({ usage: [{ end: null, run_data: '' }], shutdown: 0 });
      expect((before.outbox as unknown[]).length).toBeGreaterThan(0);

      await expect(
        st.rpc('toolControl.disable', { tool: 'SEM', answers: { problem: 'Yes', notes: 'x' } }),
      ).rejects.toThrow();
      expect(await st.exited).toMatchObject({ signal: 'SIGKILL' });
      expect(snapshot()).toEqual(before);

      const again = await start(dataDir);
      await again.rpc('session.logon', { login: 'alice', pin: '1234' });
      const ended = await again.rpc('toolControl.disable', {
        tool: 'SEM',
        answers: { problem: 'No', notes: 'after the restart' },
      });
      expect(ended.status).toBe(200);
      await again.stop();
      const after = snapshot() as { usage: { end: string | null }[]; outbox: unknown[] };
      expect(after.usage[0].end).not.toBeNull();
      expect(after.outbox.length).toBe((before.outbox as unknown[]).length + 1);
    });
  }
});

describe('labstation station --demo', () => {
  it('fills an empty data dir with the demo facility, whose forms follow the spec conventions', async () => {
    const dataDir = join(tempDir(), 'demo');
    const st = await startStation(dataDir, {}, ['--demo']);
    running.push(st);
    const status = await st.rpc('toolControl.status', { tool: 'Demo SEM' });
    expect(status.status).toBe(200);
    const names = (
      status.body as { tool: { pre_usage_questions: { name: string }[] } }
    ).tool.pre_usage_questions.map((q) => q.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'data_consent',
        'experiment_title',
        'experiment_purpose',
        'project_id',
        'sample_group',
      ]),
    );
  });

  it('refuses to run a station without a tool, saying how to give it one', async () => {
    const result = await runCli(['station', '--data', join(tempDir(), 'empty')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/labstation import --data DIR FILE\.json/);
  });

  it('refuses a --server that is not an http(s) address as wrong usage, naming the flag, and makes no data dir', async () => {
    const dataDir = join(tempDir(), 'typo');
    for (const [server, rule] of [
      ['notaurl', 'must be an address such as http://labstation.example.org:8080/'],
      ['ftp://host/', 'must start with http:// or https://'],
    ] as const) {
      const result = await runCli(['station', '--data', dataDir, '--server', server, '--key', 'k']);
      expect(result.code).toBe(2);
      expect(result.stderr.split('\n')[0]).toBe(`labstation: --server ${rule}`);
    }
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe('labstation questions', () => {
  it('check: exit 0 for a good list, exit 1 with one line per problem', async () => {
    const dir = tempDir();
    const good = writeJson(
      dir,
      'good.json',
      (facilityBundle().tools as { pre_usage_questions: unknown }[])[0].pre_usage_questions,
    );
    const r1 = await runCli(['questions', 'check', good]);
    expect(r1.code).toBe(0);
    const bad = writeJson(dir, 'bad.json', [
      { type: 'radio', name: 'a', choices: ['x', 'y'], labels: ['only one'] },
      { type: 'textbox', name: 'a' },
    ]);
    const r2 = await runCli(['questions', 'check', bad]);
    expect(r2.code).toBe(1);
    const lines = r2.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(r2.stdout).toMatch(/labels/);
    expect(r2.stdout).toMatch(/name "a" is already used/);
  });

  it('answer: prints canonical answers with formula results, or the problems', async () => {
    const dir = tempDir();
    const questions = writeJson(dir, 'q.json', [
      { type: 'number', name: 'a', required: true },
      { type: 'number', name: 'b' },
      { type: 'formula', name: 'c', formula: 'a * 2 + b' },
    ]);
    const r1 = await runCli([
      'questions',
      'answer',
      questions,
      writeJson(dir, 'a.json', { a: '3', b: 4 }),
    ]);
    expect(r1.code).toBe(0);
    expect(JSON.parse(r1.stdout)).toEqual({ a: 3, b: 4, c: 10 });
    const r2 = await runCli([
      'questions',
      'answer',
      questions,
      writeJson(dir, 'b.json', { a: 1.5 }),
    ]);
    expect(r2.code).toBe(1);
    expect(r2.stdout).toMatch(/^a: /m);
    const r3 = await runCli(['questions', 'nonsense']);
    expect(r3.code).toBe(2);
  });

  it('takes -- before its files, as every other command, and refuses an option before it', async () => {
    const dir = tempDir();
    const questions = writeJson(dir, 'q.json', [{ type: 'number', name: 'a', required: true }]);
    const r1 = await runCli(['questions', 'check', '--', questions]);
    expect(r1).toEqual({ code: 0, stdout: 'ok: 1 question\n', stderr: '' });
    const answers = writeJson(dir, 'a.json', { a: '3' });
    const r2 = await runCli(['questions', 'answer', '--', questions, answers]);
    expect(r2.stderr).toBe('');
    expect(r2.code).toBe(0);
    expect(JSON.parse(r2.stdout)).toEqual({ a: 3 });
    // After --, a name that starts with dashes is a file's, here one that is not there.
    const r3 = await runCli(['questions', 'check', '--', '--help']);
    expect(r3.code).toBe(1);
    expect(r3.stderr).toMatch(/^question list --help: /);
    // Before it, such a word is an option, which questions has none of.
    const r4 = await runCli(['questions', 'check', '--strict', questions]);
    expect(r4.code).toBe(2);
    expect(r4.stderr).toMatch(/^labstation: Unknown option '--strict'/);
  });

  it('prints a problem about the whole list or answer object without a path', async () => {
    const dir = tempDir();
    const notList = writeJson(dir, 'obj.json', {});
    const r1 = await runCli(['questions', 'check', notList]);
    expect(r1.code).toBe(1);
    expect(r1.stdout).toMatch(/^The question definitions must be a list/);
    const r2 = await runCli(['questions', 'answer', notList, writeJson(dir, 'a.json', {})]);
    expect(r2.code).toBe(1);
    expect(r2.stdout).toMatch(/^The question definitions must be a list/);
    const questions = writeJson(dir, 'q.json', [{ type: 'number', name: 'a' }]);
    const r3 = await runCli(['questions', 'answer', questions, writeJson(dir, 'l.json', [1])]);
    expect(r3.code).toBe(1);
    expect(r3.stdout).toMatch(/^The answers must be an object/);
    expect(r3.stdout).not.toMatch(/^:/m);
  });
});
