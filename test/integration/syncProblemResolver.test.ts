/**
 * A report's resolution names who resolved it. Refused for a person the server lacks (a staff
 * member known at this station only, or gone from the server), it kept the tool shut down on
 * the server (NEMO's `operational: false`) while the station had it back in service. The
 * resolution now goes on without the name, and the named one waits for the person. The
 * station's push answer handling (pushAnswer.ts, heldRecords.ts) against the real server ingest
 * (server/sync/ingest.ts), both on real SQLite files; HTTP left out.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../../electron/core/db/open.js';
import { findUser } from '../../electron/core/station/records.js';
import type { Station } from '../../electron/core/station/station.js';
import { clearShutdown, disableTool, enableTool } from '../../electron/core/station/toolControl.js';
import { HeldRecords } from '../../electron/core/sync/heldRecords.js';
import type { Logger } from '../../electron/core/util/log.js';
import { pushAll as pushEverything, syncPair, type SyncPair } from './syncPair.js';

let pair: SyncPair;
let server: Db;
let station: Station;
let log: Logger;

beforeAll(async () => {
  const bundle = {
    projects: [{ name: 'Cathodes', application_identifier: 'PRJ-1', active: true }],
    tools: [
      {
        name: 'SEM',
        pre_usage_questions: [],
        post_usage_questions: [
          {
            type: 'radio_report_problem',
            name: 'problem',
            title: 'Anything wrong?',
            options: { problem_description: 'Vacuum fault', force_shutdown: true },
          },
        ],
      },
    ],
    users: [{ username: 'alice', pin: '1234', projects: ['Cathodes'], qualified_tools: ['SEM'] }],
  };
  pair = await syncPair('labstation-problem-resolver-', bundle);
  ({ server, station, log } = pair);
}, 60_000);

afterAll(() => pair?.close());

/** Pushes what the outbox offers now, batch after batch, as the push loop does. */
const pushAll = (held: HeldRecords): void => pushEverything(pair, held);

// Mutation: holdRecord without resolveWithoutResolver: the server's SEM stayed shut down.
// Without the look into outbox_sent: a copy was queued and pushed at each refusal.
it('a resolution refused for a resolver the server lacks still brings the tool back into service there; the resolver follows', () => {
  const db = station.db;
  const held = new HeldRecords(db, log, 60_000);
  const zedUuid = '0190aaaa-0000-7000-8000-000000000001';
  // A staff member known at this station only.
  db.prepare(
    `INSERT INTO users (uuid, username, email, first_name, last_name, is_staff, is_active,
       updated_at, created_at)
     VALUES (?, 'zed', '', 'Zed', '', 1, 1, ?, ?)`,
  ).run(zedUuid, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
  const now = (): string => new Date().toISOString();
  const alice = findUser(db, 'alice');
  const zed = findUser(db, 'zed');
  enableTool(db, alice, { tool: 'SEM', project: 'Cathodes', answers: {} }, now());
  disableTool(db, alice, { tool: 'SEM', answers: { problem: 'Yes' } }, now());
  pushAll(held);
  const serverTool = (): { shutdown: number; shutdown_reason: string } =>
    server.prepare("SELECT shutdown, shutdown_reason FROM tools WHERE name = 'SEM'").get() as {
      shutdown: number;
      shutdown_reason: string;
    };
  expect(serverTool()).toEqual({ shutdown: 1, shutdown_reason: 'Vacuum fault' });

  clearShutdown(db, zed, 'SEM', now());
  pushAll(held);
  expect(serverTool()).toEqual({ shutdown: 0, shutdown_reason: '' });
  const report = (): { resolved_at: string | null; resolver: string | null } =>
    server
      .prepare(
        `SELECT r.resolved_at, u.username AS resolver FROM problem_reports r
         LEFT JOIN users u ON u.id = r.resolved_by_id`,
      )
      .get() as { resolved_at: string | null; resolver: string | null };
  expect(report().resolved_at).not.toBeNull();
  expect(report().resolver).toBeNull();
  // The resolution naming zed waits for zed, counted among the refused, and is not queued twice
  // when refused again.
  const waiting = (): { kind: string; waits_for: string | null; refusal_code: string }[] =>
    db.prepare('SELECT kind, waits_for, refusal_code FROM outbox ORDER BY id').all() as {
      kind: string;
      waits_for: string | null;
      refusal_code: string;
    }[];
  expect(waiting()).toEqual([
    { kind: 'problem_report', waits_for: zedUuid, refusal_code: 'unknown_reference' },
  ]);
  const copies = (): number =>
    db
      .prepare(
        `SELECT count(*) FROM (SELECT payload FROM outbox UNION ALL SELECT payload FROM outbox_sent)
         WHERE json_extract(payload, '$.resolved_at') IS NOT NULL
           AND json_extract(payload, '$.resolved_by_uuid') IS NULL`,
      )
      .pluck()
      .get() as number;
  expect(copies()).toBe(1);
  for (let offer = 0; offer < 2; offer++) {
    held.releaseHeld();
    pushAll(held);
  }
  expect(waiting()).toHaveLength(1);
  expect(copies()).toBe(1);
  expect(serverTool().shutdown).toBe(0);

  // The person reaches the server (an admin adds zed): the report gets its resolver.
  server
    .prepare(
      `INSERT INTO users (uuid, username, email, first_name, last_name, is_staff, is_active,
         created_at, updated_at)
       VALUES (?, 'zed', 'zed@example.org', 'Zed', '', 1, 1, ?, ?)`,
    )
    .run(zedUuid, now(), now());
  held.releaseHeld();
  pushAll(held);
  expect(report().resolver).toBe('zed');
  expect(serverTool().shutdown).toBe(0);
  expect(db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);
});
