/**
 * The station checks the server's history pages and push answers before it stores or deletes
 * anything (sync/answerSchema.ts). A real server app on a real SQLite file, listening on
 * loopback: its history page parses to exactly what it sent. Stations run in the test process
 * talk to it through an HTTP proxy that spoils those answers: a spoiled history page leaves no
 * file record and the instrument still waiting, a spoiled push answer deletes no outbox row;
 * each is named in lastError (field and rule) and retried, and the good answer afterwards is
 * taken as usual. A 404 page of a proxy in between fails the history fetch as a spoiled page
 * does; only the server's own not-found answer says it has no history to send. A spoiled
 * reservation form reaches the caller as `unavailable`, naming the question and rule.
 */
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { createStationAccount } from '../../electron/core/server/accounts.js';
import { createServerApp } from '../../electron/core/server/app.js';
import { Station } from '../../electron/core/station/station.js';
import { enqueue } from '../../electron/core/station/outbox.js';
import { syncCursor } from '../../electron/core/sync/apply.js';
import { historyPageSchema, reservationFormSchema } from '../../electron/core/sync/answerSchema.js';
import { parseAnswer } from '../../electron/core/sync/parseAnswer.js';
import { SyncClient } from '../../electron/core/sync/client.js';
import {
  SYNC_RESERVATION_FORM_PATH,
  type PushResult,
  type SyncHistoryPage,
} from '../../electron/core/sync/protocol.js';
import { AppError } from '../../electron/core/util/errors.js';
import { newUuid } from '../../electron/core/util/ids.js';
import { createLogger } from '../../electron/core/util/log.js';
import { tempDir, waitFor } from './helpers.js';
import { forwardTo, passOn, startHttpProxy, type HttpProxy } from './httpForward.js';
import { usagePayload } from './usagePushFixtures.js';

const T0 = '2026-01-01T00:00:00.000Z';
const SEM = 1;
const AFM = 2;
const id = {
  alice: newUuid(),
  project: newUuid(),
  sem: newUuid(),
  afm: newUuid(),
  location: newUuid(),
  instrument: newUuid(),
  usage: newUuid(),
  files: [newUuid(), newUuid(), newUuid()],
  transfers: [newUuid(), newUuid()],
};
let db: Db;
let app: FastifyInstance;
let serverUrl: URL;
let semKey = '';
let afmKey = '';

beforeAll(async () => {
  db = openDatabase(join(tempDir('labstation-sync-answer-check-'), 'server.db'));
  db.exec(`INSERT INTO settings (key, value) VALUES ('mode', '"server"');
    INSERT INTO users (id, uuid, username, email, first_name, last_name, badge_number, pin_hash,
        is_staff, created_at, updated_at)
      VALUES (1, '${id.alice}', 'alice', 'alice@example.org', 'Alice', 'Liddell', '100200',
                'pin-a', 0, '${T0}', '${T0}');
    INSERT INTO projects (id, uuid, name, application_identifier, created_at, updated_at)
      VALUES (1, '${id.project}', 'Cathodes', 'PRJ-1', '${T0}', '${T0}');
    INSERT INTO tools (id, uuid, name, pre_usage_questions, post_usage_questions, category,
        created_at, updated_at)
      VALUES (${SEM}, '${id.sem}', 'SEM', '[]', '[]', '', '${T0}', '${T0}'),
             (${AFM}, '${id.afm}', 'AFM', '[]', '[]', '', '${T0}', '${T0}');
    INSERT INTO qualifications (user_id, tool_id) VALUES (1, ${SEM}), (1, ${AFM});
    INSERT INTO user_projects (user_id, project_id) VALUES (1, 1);`);
  const sem = createStationAccount(db, { name: 'sem-pc', tool: SEM });
  const afm = createStationAccount(db, { name: 'afm-pc', tool: AFM });
  semKey = sem.key;
  afmKey = afm.key;
  // The SEM station runs an instrument whose files another station harvested before: one
  // transferred, one whose transfer failed (not verified), one gone, during alice's usage.
  db.exec(`
    INSERT INTO storage_locations (id, uuid, name, type, base_path, created_at, updated_at)
      VALUES (1, '${id.location}', 'sem-store', 'local', '/sem', '${T0}', '${T0}');
    INSERT INTO instruments (id, uuid, name, description, tool_id, station_id, watch,
        storage_location_id, destination_template, created_at, updated_at)
      VALUES (1, '${id.instrument}', 'sem-camera', '', ${SEM}, ${sem.id},
        '[{"path":"/in","include":["*.tif"],"exclude":[]}]', 1, '{filename}', '${T0}', '${T0}');
    INSERT INTO usage_events (id, uuid, user_id, operator_id, project_id, tool_id, start, "end",
        updated_at)
      VALUES (1, '${id.usage}', 1, 1, 1, ${SEM}, '${T0}', '${T0}', '${T0}');
    INSERT INTO harvest_files (id, uuid, instrument_id, persistent_id, watch_path,
        relative_path, source_path, filename, size, mtime_ms, xxhash, first_discovered_at,
        usage_event_id, metadata_, state, updated_at)
      VALUES (1, '${id.files[0]}', 1, 'ark:99999/fk4a1', '/in', 'a.tif', '/in/a.tif', 'a.tif',
                10, 1e12, 'aa', '${T0}', 1, '{"file_info":{"mime_type":"image/tiff"}}', 'done',
                '${T0}'),
             (2, '${id.files[1]}', 1, 'ark:99999/fk4b2', '/in', 'b.tif', '/in/b.tif', 'b.tif',
                20, 1e12, NULL, '${T0}', NULL, '{}', 'failed', '${T0}'),
             (3, '${id.files[2]}', 1, 'ark:99999/fk4c3', '/in', 'c.tif', '/in/c.tif', 'c.tif',
                30, 1e12, NULL, '${T0}', NULL, '{}', 'gone', '${T0}');
    INSERT INTO harvest_transfers (uuid, file_id, status, storage_location_id, destination_path,
        bytes_transferred, dest_checksum, checksum_verified, started_at, completed_at, error)
      VALUES ('${id.transfers[0]}', 1, 'completed', 1, '/sem/a.tif', 10, 'aa', 1, '${T0}',
                '${T0}', ''),
             ('${id.transfers[1]}', 2, 'failed', 1, NULL, 0, NULL, 0, '${T0}', NULL,
                'disk full');`);
  app = await createServerApp({
    db,
    log: createLogger('silent'),
    jwtSecret: 'sync-answer-check-secret-0123456789',
    timeZone: () => 'UTC',
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  serverUrl = new URL(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/`);
});

afterAll(async () => {
  await app.close();
  db.close();
});

/** A proxy to the server that hands each 200 answer to `path` to `spoil` (if set) on its way. */
async function spoilingProxy(
  path: string,
  spoil: () => ((answer: Record<string, unknown>) => void) | null,
  counted: () => void,
): Promise<HttpProxy> {
  return startHttpProxy(
    forwardTo(serverUrl, (answer, response, request) => {
      const change = spoil();
      if (change === null || !request.url?.startsWith(path) || answer.statusCode !== 200) {
        passOn(answer, response, request);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
        change(body);
        counted();
        const text = JSON.stringify(body);
        response.writeHead(200, {
          ...answer.headers,
          'content-length': String(Buffer.byteLength(text)),
        });
        response.end(text);
      });
    }),
  );
}

/** A station in this process, its warnings collected, syncing through `proxy`. */
function stationVia(
  proxy: HttpProxy,
  key: string,
): { station: Station; client: SyncClient; warnings: { msg: string; problems?: string[] }[] } {
  const warnings: { msg: string; problems?: string[] }[] = [];
  const log = pino(
    { level: 'warn', base: undefined },
    { write: (line: string) => warnings.push(JSON.parse(line) as (typeof warnings)[number]) },
  );
  const station = Station.open({ dataDir: tempDir(), log });
  const client = new SyncClient({
    station,
    server: proxy.url,
    key,
    waitSeconds: 1,
    tickMs: 200,
    backoffBaseMs: 50,
    backoffCapMs: 200,
  });
  return { station, client, warnings };
}

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe("the server's history page", () => {
  it('parses to exactly what the server sent, every field filled', async () => {
    const res = await app.inject({
      method: 'GET',
      url: `/sync/harvest/history?instrument=${id.instrument}`,
      headers: { authorization: `Station ${semKey}` },
    });
    expect(res.statusCode).toBe(200);
    const sent = res.json<SyncHistoryPage>();
    expect(sent.files).toHaveLength(3);
    expect(sent.files[0].usage_context).toMatchObject({ usage_event: id.usage });
    expect(parseAnswer(historyPageSchema, sent, 'a', 'b')).toEqual(sent);
  });

  it('spoiled, leaves no record and the instrument waiting; the good page is then taken', async () => {
    /** What the proxy does to each history page; null: passed on as it came. */
    let spoil: ((page: SyncHistoryPage) => void) | null = (page) => {
      // A flag as text: taken as it came, a failed, unverified copy would read as verified.
      for (const file of page.files) {
        for (const t of file.transfers) {
          Object.assign(t, { checksum_verified: String(t.checksum_verified) });
        }
      }
    };
    let spoiled = 0;
    const proxy = await spoilingProxy(
      '/sync/harvest/history',
      () => spoil as ((answer: Record<string, unknown>) => void) | null,
      () => (spoiled += 1),
    );
    cleanup.push(() => proxy.close());
    const { station, client, warnings } = stationVia(proxy, semKey);
    cleanup.push(() => station.close());
    cleanup.push(() => client.stop());
    const count = (sql: string): number => station.db.prepare(sql).pluck().get() as number;
    client.start();

    // The facility arrives; the instrument's history, spoiled, is fetched after each pull.
    const pending = (): number => count('SELECT count(*) FROM harvest_history_pending');
    await waitFor('a spoiled page answered', () =>
      spoiled >= 1 && (client.state.lastError !== null || pending() === 0) ? true : undefined,
    );
    expect(count('SELECT count(*) FROM harvest_files')).toBe(0);
    // Tried again after the next pull, from where it stopped.
    await waitFor('a second spoiled page', () => (spoiled >= 2 ? true : undefined));
    expect(syncCursor(station.db)).toBeGreaterThan(0);
    expect(count('SELECT count(*) FROM instruments')).toBe(1);
    expect(count('SELECT count(*) FROM harvest_files')).toBe(0);
    expect(count('SELECT count(*) FROM harvest_transfers')).toBe(0);
    expect(pending()).toBe(1);
    expect(client.state.lastError).toBe(
      "the records of sem-camera harvested before: the server's history page does not parse, " +
        'nothing of it taken: files[0].transfers[0].checksum_verified: Invalid input: expected ' +
        'boolean, received string (and 1 more)',
    );
    expect(warnings.some((w) => w.msg === 'sync: history')).toBe(true);

    // Passed on as it came: the records are taken, as the server holds them.
    spoil = null;
    await waitFor('the history', () => (pending() === 0 ? true : undefined));
    expect(
      station.db
        .prepare('SELECT persistent_id, state FROM harvest_files ORDER BY persistent_id')
        .all(),
    ).toEqual([
      { persistent_id: 'ark:99999/fk4a1', state: 'done' },
      { persistent_id: 'ark:99999/fk4b2', state: 'waiting' },
      { persistent_id: 'ark:99999/fk4c3', state: 'gone' },
    ]);
    expect(
      station.db
        .prepare('SELECT status, checksum_verified FROM harvest_transfers ORDER BY status')
        .all(),
    ).toEqual([
      { status: 'completed', checksum_verified: 1 },
      { status: 'failed', checksum_verified: 0 },
    ]);
    await waitFor('no error', () => (client.state.lastError === null ? true : undefined));
  });
});

describe('a history route answered 404', () => {
  /** An instrument of the SEM tool, on a station of its own, with one file harvested before. */
  function instrumentWithHistory(name: string): { key: string; ark: string } {
    const account = createStationAccount(db, { name: `${name}-pc`, tool: SEM });
    const instrument = newUuid();
    const ark = `ark:99999/fk4${name.length}d${account.id}`;
    db.prepare(
      `INSERT INTO instruments (uuid, name, description, tool_id, station_id, watch,
         storage_location_id, destination_template, created_at, updated_at)
       VALUES (?, ?, '', ?, ?, '[{"path":"/in-${name}","include":["*.tif"],"exclude":[]}]', 1,
         '{filename}', ?, ?)`,
    ).run(instrument, name, SEM, account.id, T0, T0);
    const instrumentId = db
      .prepare('SELECT id FROM instruments WHERE uuid = ?')
      .pluck()
      .get(instrument);
    db.prepare(
      `INSERT INTO harvest_files (uuid, instrument_id, persistent_id, watch_path, relative_path,
         source_path, filename, size, mtime_ms, xxhash, first_discovered_at, metadata_, state,
         updated_at)
       VALUES (?, ?, ?, '/in', 'd.tif', '/in/d.tif', 'd.tif', 40, 1e12, 'dd', ?, '{}', 'gone', ?)`,
    ).run(newUuid(), instrumentId, ark, T0, T0);
    return { key: account.key, ark };
  }

  /** A proxy that answers the history route itself with `page` while `own()`, else forwards. */
  async function historyAnsweredBy(
    own: () => boolean,
    page: { type: string; body: string },
    answered: () => void,
  ): Promise<HttpProxy> {
    const forward = forwardTo(serverUrl);
    return startHttpProxy((request, response) => {
      if (own() && request.url?.startsWith('/sync/harvest/history')) {
        answered();
        response.writeHead(404, { 'content-type': page.type });
        response.end(page.body);
        return;
      }
      forward(request, response);
    });
  }

  it("by a proxy's page, not the server's: the instrument waits, the error is named, then its history is taken", async () => {
    // A reverse proxy that does not pass this route on: taken as a server with no history,
    // the station would record the instrument's files again, under new ARKs.
    const { key, ark } = instrumentWithHistory('sem-proxied');
    let own = true;
    let answered = 0;
    const proxy = await historyAnsweredBy(
      () => own,
      {
        type: 'text/html',
        body: '<html><head><title>404 Not Found</title></head><body><h1>404 Not Found</h1><hr>nginx</body></html>',
      },
      () => (answered += 1),
    );
    cleanup.push(() => proxy.close());
    const { station, client, warnings } = stationVia(proxy, key);
    cleanup.push(() => station.close());
    cleanup.push(() => client.stop());
    const count = (sql: string): number => station.db.prepare(sql).pluck().get() as number;
    const pending = (): number => count('SELECT count(*) FROM harvest_history_pending');
    client.start();

    await waitFor('the history asked for twice', () => (answered >= 2 ? true : undefined));
    expect(pending()).toBe(1);
    expect(count('SELECT count(*) FROM harvest_files')).toBe(0);
    expect(client.state.lastError).toBe(
      'the records of sem-proxied harvested before: server answered 404: Request failed with status code 404',
    );
    expect(warnings.some((w) => w.msg === 'sync: history')).toBe(true);
    expect(warnings.some((w) => w.msg === 'sync: the server sends no history')).toBe(false);

    own = false;
    await waitFor('the history', () => (pending() === 0 ? true : undefined));
    expect(station.db.prepare('SELECT persistent_id FROM harvest_files').pluck().all()).toEqual([
      ark,
    ]);
  });

  it("by the server's own not-found answer (a server older than the route): no history to wait for", async () => {
    const { key } = instrumentWithHistory('sem-older');
    let answered = 0;
    const proxy = await historyAnsweredBy(
      () => true,
      { type: 'application/json; charset=utf-8', body: JSON.stringify({ detail: 'Not found.' }) },
      () => (answered += 1),
    );
    cleanup.push(() => proxy.close());
    const { station, client, warnings } = stationVia(proxy, key);
    cleanup.push(() => station.close());
    cleanup.push(() => client.stop());
    const count = (sql: string): number => station.db.prepare(sql).pluck().get() as number;
    client.start();

    await waitFor('the instrument no longer waiting', () =>
      answered >= 1 && count('SELECT count(*) FROM harvest_history_pending') === 0
        ? true
        : undefined,
    );
    expect(count('SELECT count(*) FROM harvest_files')).toBe(0);
    expect(warnings.some((w) => w.msg === 'sync: the server sends no history')).toBe(true);
  });
});

describe("the server's push answer", () => {
  it('spoiled, deletes no outbox row and says which field; the good answer then acks', async () => {
    let spoil: ((result: PushResult) => void) | null = null;
    let spoiled = 0;
    const proxy = await spoilingProxy(
      '/sync/push',
      () => spoil as ((answer: Record<string, unknown>) => void) | null,
      () => (spoiled += 1),
    );
    cleanup.push(() => proxy.close());
    const { station, client, warnings } = stationVia(proxy, afmKey);
    cleanup.push(() => station.close());
    cleanup.push(() => client.stop());
    const waiting = (): number =>
      station.db
        .prepare("SELECT count(*) FROM outbox WHERE kind = 'usage_event'")
        .pluck()
        .get() as number;
    client.start();
    await waitFor('the facility', () => (station.stationTool === 'AFM' ? true : undefined));

    // The ids as text: no row is deleted, and the answer is named, not "acknowledged nothing".
    spoil = (result) => {
      Object.assign(result, { acked: result.acked.map(String) });
    };
    const refs = { user_uuid: id.alice, project_uuid: id.project, tool_uuid: id.afm };
    const usages = [newUuid(), newUuid()];
    station.db.transaction(() => {
      for (const uuid of usages) {
        enqueue(station.db, 'usage_event', uuid, usagePayload(refs, uuid, T0));
      }
    })();
    client.nudge();
    await waitFor('two spoiled answers', () => (spoiled >= 2 ? true : undefined));
    expect(waiting()).toBe(2);
    expect(client.state.lastError).toBe(
      "the server's push answer does not parse, no outbox row deleted: acked[0]: Invalid " +
        'input: expected number, received string (and 1 more)',
    );
    // The server took them: a push sent again changes nothing there.
    expect(db.prepare('SELECT count(*) FROM usage_events WHERE tool_id = ?').pluck().get(AFM)).toBe(
      2,
    );

    // The ids fine, another field not: the answer is not trusted, its ids delete nothing.
    spoil = (result) => {
      Object.assign(result, { acked_before: String(result.acked_before) });
    };
    const before = spoiled;
    await waitFor('a spoiled answer read', () =>
      spoiled > before && (/acked_before/.test(client.state.lastError ?? '') || waiting() < 2)
        ? true
        : undefined,
    );
    expect(waiting()).toBe(2);
    await waitFor('two more spoiled answers', () => (spoiled >= before + 2 ? true : undefined));
    expect(waiting()).toBe(2);
    expect(client.state.lastError).toContain(
      'acked_before: Invalid input: expected number, received string',
    );
    // Said once per reason, not at each retry.
    expect(
      warnings.filter((w) => /push answer does not parse/.test(w.msg)).map((w) => w.problems),
    ).toEqual([
      [
        'acked[0]: Invalid input: expected number, received string',
        'acked[1]: Invalid input: expected number, received string',
      ],
      ['acked_before: Invalid input: expected number, received string'],
    ]);

    // Good again: acknowledged, deleted, no error.
    spoil = null;
    await waitFor('the rows acknowledged', () => (waiting() === 0 ? true : undefined));
    await waitFor('no error', () => (client.state.lastError === null ? true : undefined));
    expect(db.prepare('SELECT count(*) FROM usage_events WHERE tool_id = ?').pluck().get(AFM)).toBe(
      2,
    );
  });
});

describe("the server's answers to booking at a station", () => {
  it('spoiled, reach the caller as unavailable naming the field; the good one as it came', async () => {
    let spoil: ((form: Record<string, unknown>) => void) | null = (form) => {
      form.questions = [{ type: 'radio', name: 'data_consent', title: 'May we?' }];
    };
    const proxy = await spoilingProxy(
      SYNC_RESERVATION_FORM_PATH,
      () => spoil,
      () => undefined,
    );
    cleanup.push(() => proxy.close());
    // A key of its own: the SEM one is held by the station of the history test.
    const account = createStationAccount(db, { name: 'sem-bench', tool: SEM });
    const { station, client, warnings } = stationVia(proxy, account.key);
    cleanup.push(() => station.close());
    cleanup.push(() => client.stop());
    const form = (): Promise<unknown> =>
      client.request('GET', SYNC_RESERVATION_FORM_PATH, {
        params: { project_uuid: id.project },
        schema: reservationFormSchema,
      });

    const refused = await form().then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('unavailable');
    expect((refused as AppError).message).toBe(
      "the server's answer to GET /sync/reservations/form does not parse, nothing of it used: " +
        'questions: data_consent.choices: Question "data_consent": property "choices" is ' +
        'missing; a radio question needs at least one choice; try again later',
    );
    expect(warnings.map((w) => w.msg)).toContain(
      "sync: the server's answer does not parse; nothing of it was used",
    );

    spoil = null;
    expect(await form()).toEqual({ sets: [], questions: [] });
  });
});
