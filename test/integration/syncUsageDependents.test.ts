/**
 * A usage event's version the server refuses (it names a person the server does not know: a
 * staff member known at this station only, from before it was connected) is set aside, and so
 * are the consumable withdrawals and problem reports its answers made after it: stored on the
 * server against the version it holds (still in progress, no answers), they would bill and
 * report a usage the server does not show as ended. They go once the server has taken the
 * usage. The station's push answer handling (pushAnswer.ts, heldRecords.ts) against the real
 * server ingest (server/sync/ingest.ts), both on real SQLite files; HTTP left out.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../../electron/core/db/open.js';
import { completePending } from '../../electron/core/station/pendingForms.js';
import { findUser } from '../../electron/core/station/records.js';
import type { Station } from '../../electron/core/station/station.js';
import { enableTool, forceEndTool } from '../../electron/core/station/toolControl.js';
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
            options: { problem_description: 'Vacuum fault', force_shutdown: false },
          },
          { type: 'number', name: 'ln2', title: 'LN2 (l)', min: 0, consumable: 'LN2' },
        ],
      },
    ],
    users: [{ username: 'alice', pin: '1234', projects: ['Cathodes'], qualified_tools: ['SEM'] }],
  };
  pair = await syncPair('labstation-usage-dependents-', bundle);
  ({ server, station, log } = pair);
}, 60_000);

afterAll(() => pair?.close());

/** Pushes what the outbox offers now, batch after batch, as the push loop does. */
const pushAll = (held: HeldRecords): void => pushEverything(pair, held);

it("a usage's ending refused for a person the server lacks holds back the withdrawals and problem reports of its answers, until the server takes it", () => {
  const db = station.db;
  const held = new HeldRecords(db, log, 60_000);
  // A staff member known at this station only.
  db.prepare(
    `INSERT INTO users (uuid, username, email, first_name, last_name, is_staff, is_active,
       updated_at, created_at)
     VALUES ('0190aaaa-0000-7000-8000-000000000001', 'zed', '', 'Zed', '', 1, 1, ?, ?)`,
  ).run('2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
  const now = (): string => new Date().toISOString();
  const alice = findUser(db, 'alice');
  const zed = findUser(db, 'zed');
  const usage = enableTool(db, alice, { tool: 'SEM', project: 'Cathodes', answers: {} }, now());
  pushAll(held);
  forceEndTool(db, zed, 'SEM', now());
  completePending(db, alice, { usage: usage.id, answers: { problem: 'Yes', ln2: 5 } }, now());
  pushAll(held);

  const serverUsage = server
    .prepare('SELECT id, "end" FROM usage_events WHERE uuid = ?')
    .get(usage.uuid) as { id: number; end: string | null };
  // The server still holds the usage in progress: nothing billed or reported against it yet.
  expect(serverUsage.end).toBeNull();
  const count = (table: string): number =>
    server
      .prepare(`SELECT count(*) FROM ${table} WHERE usage_event_id = ?`)
      .pluck()
      .get(serverUsage.id) as number;
  expect(count('consumable_withdrawals')).toBe(0);
  expect(count('problem_reports')).toBe(0);
  const waiting = db
    .prepare('SELECT kind, waits_for FROM outbox WHERE held_until IS NOT NULL ORDER BY id')
    .all() as { kind: string; waits_for: string | null }[];
  expect(waiting.filter((r) => r.kind !== 'usage_event')).toEqual([
    { kind: 'consumable_withdrawal', waits_for: usage.uuid },
    { kind: 'problem_report', waits_for: usage.uuid },
  ]);

  // The person reaches the server (an admin adds zed): the usage is taken, then what it waited
  // for, once each.
  server
    .prepare(
      `INSERT INTO users (uuid, username, email, first_name, last_name, is_staff, is_active,
         created_at, updated_at)
       VALUES ('0190aaaa-0000-7000-8000-000000000001', 'zed', 'zed@example.org', 'Zed', '', 1, 1,
         ?, ?)`,
    )
    .run(now(), now());
  held.releaseHeld();
  pushAll(held);
  expect(
    server.prepare('SELECT "end" FROM usage_events WHERE id = ?').pluck().get(serverUsage.id),
  ).not.toBeNull();
  expect(count('consumable_withdrawals')).toBe(1);
  expect(count('problem_reports')).toBe(1);
  expect(db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);
});
