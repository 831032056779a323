/**
 * A notebook entry's version the server refuses for good (a usage link its rules do not
 * allow: the owner is staff at this station only) never reaches it, and the versions made after
 * it name it as the one they were made from. The server took them for a data dir restored
 * from a backup and refused every one, the one that mends the entry too. They now go as made
 * from what the server holds (entryChain.ts), and the refused one, offered again, is stale.
 * The station's push (pushRecords, as the push loop sends) and answer handling against the
 * real server ingest, both on real SQLite files; HTTP left out.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../../electron/core/db/open.js';
import { attachUsage, createEntry, updateEntry } from '../../electron/core/notebook/entries.js';
import { findUser } from '../../electron/core/station/records.js';
import type { Station } from '../../electron/core/station/station.js';
import { enableTool } from '../../electron/core/station/toolControl.js';
import { MADE_FROM_SQL } from '../../electron/core/sync/entryChain.js';
import { HeldRecords, RELEASE_SUPERSEDED_SQL } from '../../electron/core/sync/heldRecords.js';
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
        post_usage_questions: [],
      },
    ],
    users: [
      { username: 'alice', pin: '1234', projects: ['Cathodes'], qualified_tools: ['SEM'] },
      { username: 'bob', pin: '1234', projects: ['Cathodes'], qualified_tools: ['SEM'] },
    ],
  };
  pair = await syncPair('labstation-entry-refused-', bundle);
  ({ server, station, log } = pair);
}, 60_000);

afterAll(() => pair?.close());

/** Pushes what the outbox offers now, batch after batch, as the push loop does. */
const pushAll = (held: HeldRecords): void => pushEverything(pair, held);

// Mutation: pushRecords sending payloads as stored (JSON.parse, not pushedPayload), or the
// server taking a later version only as the next number: version 3 was refused as conflict.
// Without releaseSuperseded (pushAnswer.ts) the refused version 2 stayed set aside.
it('a version of an entry refused for good does not hold back the later ones that mend it', () => {
  const db = station.db;
  const held = new HeldRecords(db, log, 60_000);
  const at = (s: number): string => new Date(Date.UTC(2026, 11, 6, 9, 0, s)).toISOString();
  // Staff here, not on the server (made staff there later, or demoted there since).
  db.prepare("UPDATE users SET is_staff = 1 WHERE username = 'bob'").run();
  const alice = findUser(db, 'alice');
  const bob = findUser(db, 'bob');
  const usage = enableTool(db, alice, { tool: 'SEM', project: 'Cathodes', answers: {} }, at(1));
  const entry = createEntry(db, bob, { kind: 'experiment', title: 'Grain size' }, at(2));
  pushAll(held);
  // Staff link an experiment to anyone's usage here; the server's rule refuses it for bob.
  attachUsage(db, bob, { id: entry.id, usage: usage.id }, 'SEM', at(3));
  pushAll(held);
  const refused = db
    .prepare("SELECT refusal_code FROM outbox WHERE kind = 'notebook_entry'")
    .pluck()
    .all();
  expect(refused).toEqual(['forbidden']);
  // The link taken off again, and the title changed: both reach the server.
  attachUsage(db, bob, { id: entry.id, usage: null }, 'SEM', at(4));
  updateEntry(db, bob, { id: entry.id, version: 3, title: 'Grain size, 2nd' }, at(5));
  pushAll(held);
  const onServer = (): Record<string, unknown> =>
    server
      .prepare('SELECT version, title, usage_event_id FROM notebook_entries WHERE uuid = ?')
      .get(entry.uuid) as Record<string, unknown>;
  // The refused version, offered again once a later one was taken (not at its hold's end), is
  // older than what the server holds: dropped, no longer counted among the refused.
  expect(db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);
  expect(onServer()).toEqual({ version: 4, title: 'Grain size, 2nd', usage_event_id: null });
});

// Mutation: the walk by updated_at alone (not by id, down): it looped on two versions saved in
// the same millisecond.
it('walks back over several refused versions, two of them saved in the same millisecond', () => {
  const db = station.db;
  const held = new HeldRecords(db, log, 60_000);
  const at = (s: number): string => new Date(Date.UTC(2026, 11, 6, 10, 0, s)).toISOString();
  const bob = findUser(db, 'bob');
  // alice's usage from the test above, still in progress.
  const usage = {
    id: db.prepare('SELECT id FROM usage_events WHERE "end" IS NULL').pluck().get() as number,
  };
  const entry = createEntry(db, bob, { kind: 'experiment', title: 'Lattice' }, at(2));
  pushAll(held);
  attachUsage(db, bob, { id: entry.id, usage: usage.id }, 'SEM', at(3));
  updateEntry(db, bob, { id: entry.id, version: 2, title: 'Lattice, linked' }, at(3));
  pushAll(held);
  held.releaseHeld();
  pushAll(held);
  expect(
    db.prepare("SELECT refusal_code FROM outbox WHERE kind = 'notebook_entry'").pluck().all(),
  ).toEqual(['forbidden', 'forbidden']);
  attachUsage(db, bob, { id: entry.id, usage: null }, 'SEM', at(4));
  pushAll(held);
  held.releaseHeld();
  pushAll(held);
  expect(
    server
      .prepare('SELECT version, title, usage_event_id FROM notebook_entries WHERE uuid = ?')
      .get(entry.uuid),
  ).toEqual({ version: 4, title: 'Lattice, linked', usage_event_id: null });
  expect(db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);
});

// Mutation: the walk without the version (updated_at alone): version 4, made from version 3
// taken in the same millisecond as the refused version 2, went as made from version 1.
it('a version made from one taken in the same millisecond as a refused one goes as made from it', () => {
  const db = station.db;
  const held = new HeldRecords(db, log, 60_000);
  const at = (s: number): string => new Date(Date.UTC(2026, 11, 6, 11, 0, s)).toISOString();
  const bob = findUser(db, 'bob');
  const usage = {
    id: db.prepare('SELECT id FROM usage_events WHERE "end" IS NULL').pluck().get() as number,
  };
  const entry = createEntry(db, bob, { kind: 'experiment', title: 'Twins' }, at(1));
  pushAll(held);
  attachUsage(db, bob, { id: entry.id, usage: usage.id }, 'SEM', at(2));
  pushAll(held);
  attachUsage(db, bob, { id: entry.id, usage: null }, 'SEM', at(2));
  updateEntry(db, bob, { id: entry.id, version: 3, title: 'Twins, 2nd' }, at(3));
  pushAll(held);
  expect(
    server.prepare('SELECT version, title FROM notebook_entries WHERE uuid = ?').get(entry.uuid),
  ).toEqual({ version: 4, title: 'Twins, 2nd' });
  expect(db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);
});

// Mutation: the walk ending on a version without previous_updated_at sending null: the server
// took that for "made from none" and refused the version that mends the entry.
it('a refused version that went without naming its previous one (a resend) leaves the later ones without it too', () => {
  const db = station.db;
  const held = new HeldRecords(db, log, 60_000);
  const at = (s: number): string => new Date(Date.UTC(2026, 11, 6, 12, 0, s)).toISOString();
  const bob = findUser(db, 'bob');
  const usage = {
    id: db.prepare('SELECT id FROM usage_events WHERE "end" IS NULL').pluck().get() as number,
  };
  const entry = createEntry(db, bob, { kind: 'experiment', title: 'Resent' }, at(1));
  pushAll(held);
  attachUsage(db, bob, { id: entry.id, usage: usage.id }, 'SEM', at(2));
  // As resend.ts queueAgain writes a version sent again to a server restored from a backup.
  db.prepare(
    `UPDATE outbox SET payload = json_remove(payload, '$.previous_updated_at')
     WHERE kind = 'notebook_entry' AND record_uuid = ?`,
  ).run(entry.uuid);
  pushAll(held);
  expect(
    db.prepare('SELECT refusal_code FROM outbox WHERE record_uuid = ?').pluck().all(entry.uuid),
  ).toEqual(['forbidden']);
  attachUsage(db, bob, { id: entry.id, usage: null }, 'SEM', at(3));
  pushAll(held);
  expect(
    server
      .prepare('SELECT version, usage_event_id FROM notebook_entries WHERE uuid = ?')
      .get(entry.uuid),
  ).toEqual({ version: 3, usage_event_id: null });
  expect(db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);
});

// Mutation: the lookups without `refusals > 0` (and without the index on kind and record_uuid,
// migration 50): each a scan of the whole outbox, at each push of an entry and each usage event
// or entry taken, while a long harvest's records wait there.
it('finds refused versions through an index, not by a scan of the outbox', () => {
  for (const sql of [MADE_FROM_SQL, RELEASE_SUPERSEDED_SQL]) {
    const plan = station.db
      .prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .all(...(sql === MADE_FROM_SQL ? ['u', 1, 1, 't'] : ['u', 'usage_event', 1])) as {
      detail: string;
    }[];
    const detail = plan.map((p) => p.detail).join('; ');
    expect(detail).toMatch(/^SEARCH outbox USING (COVERING )?INDEX outbox_re(fused|cord) /);
    expect(detail).not.toMatch(/SCAN/);
  }
});
