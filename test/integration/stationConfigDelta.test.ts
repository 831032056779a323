/**
 * What a station does with the server's config deltas (electron/core/sync/apply.ts) for the
 * people at it: a qualification, a project, a PIN or an account the server takes away is gone
 * at the station too, and a tool's changed forms are the ones enforced; a delta that fails
 * partway leaves nothing, its cursor included. Each test failed with a mutation of applyDelta
 * (named in the test).
 */
import { describe, expect, it } from 'vitest';
import type { ToolStatus, UsageEventView } from '../../shared/api.js';
import type { Station } from '../../electron/core/station/station.js';
import { applyDelta, syncCursor, syncCursorMark } from '../../electron/core/sync/apply.js';
import type {
  FacilityDelta,
  SyncProject,
  SyncTool,
  SyncUser,
} from '../../electron/core/sync/protocol.js';
import { hashSecret } from '../../electron/core/util/pin.js';
import { facilityBundle, goodPreAnswers } from '../fixtures/facility.js';
import { expectCode, openStation } from './stationFixture.js';

const clock = (): number => Date.parse('2026-11-20T09:00:00Z');

async function station(): Promise<Station> {
  return openStation(facilityBundle(), clock);
}

const uuids = (st: Station, sql: string, ...params: unknown[]): string[] =>
  st.db
    .prepare(sql)
    .pluck()
    .all(...params) as string[];

/** The user as the server would send it, from the station's own copy, with `changes`. */
function syncUser(st: Station, username: string, changes: Partial<SyncUser> = {}): SyncUser {
  const row = st.db.prepare('SELECT * FROM users WHERE username = ?').get(username) as {
    id: number;
    uuid: string;
    email: string;
    first_name: string;
    last_name: string;
    badge_number: string | null;
    pin_hash: string | null;
    is_staff: number;
    is_active: number;
  };
  return {
    uuid: row.uuid,
    username,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    badge_number: row.badge_number,
    pin_hash: row.pin_hash,
    is_staff: row.is_staff === 1,
    is_active: row.is_active === 1,
    projects: uuids(
      st,
      'SELECT p.uuid FROM projects p JOIN user_projects up ON up.project_id = p.id WHERE up.user_id = ?',
      row.id,
    ),
    qualified_tools: uuids(
      st,
      'SELECT t.uuid FROM tools t JOIN qualifications q ON q.tool_id = t.id WHERE q.user_id = ?',
      row.id,
    ),
    ...changes,
  };
}

function syncProject(st: Station, name: string, changes: Partial<SyncProject>): SyncProject {
  const row = st.db.prepare('SELECT * FROM projects WHERE name = ?').get(name) as {
    uuid: string;
    application_identifier: string;
    active: number;
  };
  return {
    uuid: row.uuid,
    name,
    application_identifier: row.application_identifier,
    active: row.active === 1,
    ...changes,
  };
}

function syncTool(st: Station, name: string, changes: Partial<SyncTool>): SyncTool {
  const row = st.db.prepare('SELECT * FROM tools WHERE name = ?').get(name) as {
    uuid: string;
    pre_usage_questions: string;
    post_usage_questions: string;
    category: string;
  };
  return {
    uuid: row.uuid,
    name,
    pre_usage_questions: row.pre_usage_questions,
    post_usage_questions: row.post_usage_questions,
    category: row.category,
    operational: true,
    visible: true,
    ...changes,
  };
}

let cursor = 0;
function delta(part: Partial<FacilityDelta>): FacilityDelta {
  cursor += 1;
  return {
    cursor,
    full: false,
    station: { uuid: '0190a3c4-0000-7000-8000-000000000001', name: 'sem-pc', tool: 'SEM' },
    users: [],
    projects: [],
    tools: [],
    deleted: { users: [], projects: [], tools: [] },
    ...part,
  };
}

const logon = (st: Station, login: string, pin: string): Promise<unknown> =>
  st.call('session.logon', { login, pin });
const enable = (st: Station, answers: unknown = goodPreAnswers): Promise<unknown> =>
  st.call('toolControl.enable', { tool: 'SEM', project: 'Cathodes', answers });

describe('config deltas at the station', () => {
  // Mutation: applyDelta keeping a user's old qualifications.
  it('refuses the tool to a user whose qualification the server took away', async () => {
    const st = await station();
    applyDelta(st.db, delta({ users: [syncUser(st, 'alice', { qualified_tools: [] })] }));
    await logon(st, 'alice', '1234');
    await expectCode(enable(st), 'not_qualified');
    expect(st.db.prepare('SELECT count(*) FROM usage_events').pluck().get()).toBe(0);
  });

  // Mutation: applyDelta keeping a user's old projects.
  it("refuses a project the server took off the user's projects", async () => {
    const st = await station();
    applyDelta(st.db, delta({ users: [syncUser(st, 'alice', { projects: [] })] }));
    await logon(st, 'alice', '1234');
    await expectCode(enable(st), 'forbidden');
  });

  // Mutation: applyDelta keeping a project active that the server made inactive.
  it('refuses a project the server made inactive', async () => {
    const st = await station();
    applyDelta(st.db, delta({ projects: [syncProject(st, 'Cathodes', { active: false })] }));
    await logon(st, 'alice', '1234');
    await expectCode(enable(st), 'forbidden');
  });

  // Mutation: applyDelta keeping the old PIN hash of a user.
  it('takes the new PIN the server sends, and no longer the old one', async () => {
    const st = await station();
    const pinHash = await hashSecret('8642');
    applyDelta(st.db, delta({ users: [syncUser(st, 'alice', { pin_hash: pinHash })] }));
    await expectCode(logon(st, 'alice', '1234'), 'unauthenticated');
    await logon(st, 'alice', '8642');
  });

  // Mutations: applyDelta keeping the tool operational; enableTool not looking at `operational`,
  // or refusing staff too.
  it('lets only staff start a usage on a tool the server marked not operational', async () => {
    const st = await station();
    applyDelta(st.db, delta({ tools: [syncTool(st, 'SEM', { operational: false })] }));
    await logon(st, 'alice', '1234');
    const status = (await st.call('toolControl.status', { tool: 'SEM' })) as ToolStatus;
    expect(status).toMatchObject({ state: 'idle', operational: false, shutdown: null });
    const e = await expectCode(enable(st), 'tool_shutdown');
    expect(e.message).toBe(
      'SEM is marked not operational by staff; only staff may start a usage on it',
    );
    expect(st.db.prepare('SELECT count(*) FROM usage_events').pluck().get()).toBe(0);
    expect(st.db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);
    await st.call('session.logoff', {});
    await logon(st, 'sam', '9999');
    await st.call('toolControl.enable', { tool: 'SEM', project: 'Other', answers: goodPreAnswers });
    await st.call('toolControl.disable', { tool: 'SEM', answers: { problem: 'No' } });
    await st.call('session.logoff', {});
    applyDelta(st.db, delta({ tools: [syncTool(st, 'SEM', { operational: true })] }));
    await logon(st, 'alice', '1234');
    expect(((await st.call('toolControl.status', { tool: 'SEM' })) as ToolStatus).operational).toBe(
      true,
    );
    await enable(st);
  });

  // Mutations: applyDelta not ending the usage of the tool left (endUsageOfToolsLeft), or
  // ending it on a rename.
  it('ends the usage in progress on the tool the server moved the station from, not on a rename', async () => {
    const st = await station();
    await logon(st, 'alice', '1234');
    const { usage } = (await enable(st)) as { usage: UsageEventView };
    // Renamed, the tool is the same: its usage goes on.
    const renamed = applyDelta(
      st.db,
      delta({
        station: { ...delta({}).station, tool: 'SEM-1' },
        tools: [syncTool(st, 'SEM', { name: 'SEM-1' })],
      }),
    );
    expect(renamed.usagesEnded).toEqual([]);
    expect(st.db.prepare('SELECT "end" FROM usage_events').pluck().get()).toBeNull();
    const moved = applyDelta(st.db, delta({ station: { ...delta({}).station, tool: 'AFM' } }));
    expect(moved).toMatchObject({ toolChanged: true, usagesEnded: [usage.uuid] });
    const ended = st.db
      .prepare('SELECT "end", post_usage_pending, reminder_due FROM usage_events')
      .get() as { end: string | null };
    // Ended when the delta came (by the PC's clock, as applyDelta dates what it changes).
    expect(ended).toMatchObject({ post_usage_pending: 1, reminder_due: 1 });
    expect(ended.end! >= usage.start).toBe(true);
    // Queued for the server as ended.
    const queued = st.db
      .prepare("SELECT payload FROM outbox WHERE kind = 'usage_event' ORDER BY id DESC")
      .pluck()
      .get() as string;
    expect(JSON.parse(queued)).toMatchObject({ uuid: usage.uuid, post_usage_pending: 1 });
    expect((JSON.parse(queued) as { end: string | null }).end).not.toBeNull();
  });

  // Mutations: applyDelta keeping a user active that the server deactivated, or deleted.
  it('refuses the log-on of a user the server deactivated or deleted', async () => {
    const st = await station();
    applyDelta(st.db, delta({ users: [syncUser(st, 'alice', { is_active: false })] }));
    await expectCode(logon(st, 'alice', '1234'), 'unauthenticated');
    // Nor does the station keep what would let her, from an older server that sent it
    // (mutation: the hash and badge stored as sent).
    expect(
      st.db.prepare("SELECT pin_hash, badge_number FROM users WHERE username = 'alice'").get(),
    ).toEqual({ pin_hash: null, badge_number: null });
    const bob = syncUser(st, 'bob').uuid;
    applyDelta(st.db, delta({ deleted: { users: [bob], projects: [], tools: [] } }));
    await expectCode(logon(st, 'bob', '2345'), 'unauthenticated');
  });

  // Mutation: Station.actor() not looking at is_active, as it was: sam kept staff rights.
  it('logs off someone logged on whom the server then turns off', async () => {
    const st = await station();
    const events: unknown[] = [];
    st.events.on('event', (event) => events.push(event));
    await logon(st, 'sam', '9999');
    applyDelta(st.db, delta({ users: [syncUser(st, 'sam', { is_active: false })] }));
    await expectCode(
      st.call('toolControl.enable', {
        tool: 'SEM',
        project: 'Cathodes',
        answers: goodPreAnswers,
        user: 'alice',
      }),
      'unauthenticated',
    );
    expect(events).toContainEqual({ type: 'session.changed', reason: 'deactivated' });
    expect(await st.call('session.current', {})).toEqual({ session: null });
    expect(st.db.prepare('SELECT count(*) FROM usage_events').pluck().get()).toBe(0);
  });

  // Mutation: applyDelta keeping a tool's old question lists.
  it("enforces the tool's forms as the server last sent them", async () => {
    const st = await station();
    const pre = [{ type: 'textbox', name: 'purpose', required: true }];
    const post = [{ type: 'number', name: 'hours', min: 0, required: true }];
    applyDelta(
      st.db,
      delta({
        tools: [
          syncTool(st, 'SEM', {
            pre_usage_questions: JSON.stringify(pre),
            post_usage_questions: JSON.stringify(post),
          }),
        ],
      }),
    );
    await logon(st, 'alice', '1234');
    await expectCode(enable(st, {}), 'validation_failed');
    const { usage } = (await enable(st, { purpose: 'imaging' })) as { usage: UsageEventView };
    expect(JSON.parse(usage.pre_run_data)).toEqual({ purpose: 'imaging' });
    await expectCode(
      st.call('toolControl.disable', { tool: 'SEM', answers: { problem: 'No' } }),
      'validation_failed',
    );
    await st.call('toolControl.disable', { tool: 'SEM', answers: { hours: 2 } });
  });

  // Mutations: applyDelta storing its cursor in a transaction of its own before the delta's
  // (the delta's fault then loses it: the next pull asks for what follows it), or without its
  // transaction (the part before the fault stays written, the rest is missing).
  it('keeps nothing of a delta failing partway, not even its cursor, then takes it whole', async () => {
    const st = await station();
    applyDelta(st.db, { ...delta({}), cursor_mark: 'mark before' });
    const before = syncCursor(st.db);
    const facility = () => ({
      projects: st.db.prepare('SELECT uuid, name, active FROM projects ORDER BY id').all(),
      users: st.db.prepare('SELECT uuid, username, pin_hash FROM users ORDER BY id').all(),
      qualifications: st.db
        .prepare(
          `SELECT u.username, t.name FROM qualifications q JOIN users u ON u.id = q.user_id
           JOIN tools t ON t.id = q.tool_id ORDER BY u.username, t.name`,
        )
        .all(),
    });
    const unchanged = facility();
    const sem = syncTool(st, 'SEM', {}).uuid;
    // The server renamed a project, gave alice a new PIN and qualified bob on the SEM.
    const change = {
      ...delta({
        projects: [syncProject(st, 'Other', { name: 'Anodes' })],
        users: [
          syncUser(st, 'alice', { pin_hash: await hashSecret('8642') }),
          syncUser(st, 'bob', { qualified_tools: [sem] }),
        ],
      }),
      cursor_mark: 'mark after',
    };
    // A write fails after the project and the users are written, at their qualifications (as a
    // full disk or a broken constraint would): SQLite aborts the statement.
    st.db.exec(
      `CREATE TEMP TRIGGER fault BEFORE INSERT ON qualifications
       BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
    );
    expect(() => applyDelta(st.db, change)).toThrow(/injected fault/);
    expect(syncCursor(st.db)).toBe(before);
    expect(syncCursorMark(st.db)).toBe('mark before');
    expect(facility()).toEqual(unchanged);

    // The next pull asks from the same cursor and gets the same delta: it is taken whole.
    st.db.exec('DROP TRIGGER fault');
    applyDelta(st.db, change);
    expect(syncCursor(st.db)).toBe(change.cursor);
    expect(syncCursorMark(st.db)).toBe('mark after');
    const changed = facility();
    expect(changed.projects).toContainEqual(expect.objectContaining({ name: 'Anodes' }));
    expect(changed.qualifications).toEqual([
      { username: 'alice', name: 'SEM' },
      { username: 'bob', name: 'SEM' },
    ]);
    await expectCode(logon(st, 'alice', '1234'), 'unauthenticated');
    await logon(st, 'alice', '8642');
  });

  // Mutation: applyDelta writing each user's address in its first pass, as it was: the delta
  // below failed on the unique address at every pull, and the station took no config again.
  it('takes addresses that move from one person to another in a delta, in any order', async () => {
    const st = await station();
    const emails = () => st.db.prepare('SELECT username, email FROM users ORDER BY username').all();
    applyDelta(
      st.db,
      delta({
        users: [
          syncUser(st, 'alice', { email: 'a@lab.example' }),
          syncUser(st, 'bob', { email: 'x@lab.example' }),
        ],
      }),
    );
    // sam is the station's own (from its bundle); the server gives his address to bob.
    st.db.prepare(`UPDATE users SET email = 'S@lab.example' WHERE username = 'sam'`).run();
    // On the server: alice takes the address bob gave up, bob takes sam's; alice comes first.
    const change = delta({
      users: [
        syncUser(st, 'alice', { email: 'x@lab.example' }),
        syncUser(st, 'bob', { email: 's@lab.example' }),
      ],
    });
    applyDelta(st.db, change);
    expect(syncCursor(st.db)).toBe(change.cursor);
    expect(emails()).toEqual([
      { username: 'alice', email: 'x@lab.example' },
      { username: 'bob', email: 's@lab.example' },
      { username: 'sam', email: '' },
    ]);
    // The other way round, bob listed first: he takes back the address alice gives up.
    applyDelta(
      st.db,
      delta({
        users: [
          syncUser(st, 'bob', { email: 'x@lab.example' }),
          syncUser(st, 'alice', { email: 'a@lab.example' }),
        ],
      }),
    );
    expect(emails().slice(0, 2)).toEqual([
      { username: 'alice', email: 'a@lab.example' },
      { username: 'bob', email: 'x@lab.example' },
    ]);
    // An address the server took away is gone here too.
    applyDelta(st.db, delta({ users: [syncUser(st, 'alice', { email: '' })] }));
    expect(emails()[0]).toEqual({ username: 'alice', email: '' });
  });

  // Mutation: parkNames without its second loop: the full delta below failed at the unique
  // name at every pull, and the station took no config again.
  it('takes the facility of a server restored from a backup, where a newer record holds a name', async () => {
    const st = await station();
    // After the backup, the server renamed "Cathodes" and alice, and gave both names to new
    // records; the station took that.
    const cathodes = syncProject(st, 'Cathodes', {});
    const alice = syncUser(st, 'alice');
    applyDelta(
      st.db,
      delta({
        projects: [
          { ...cathodes, name: 'Cathodes (old)' },
          { ...cathodes, uuid: '0190a3c4-0000-7000-8000-0000000000c1', name: 'Cathodes' },
        ],
        users: [
          { ...alice, username: 'alice.old' },
          {
            ...alice,
            uuid: '0190a3c4-0000-7000-8000-0000000000a1',
            username: 'alice',
            badge_number: null,
          },
        ],
      }),
    );
    // The restored server knows only the originals, by their old names: it sends everything.
    const restored = delta({
      full: true,
      projects: ['Other', 'Old'].map((name) => syncProject(st, name, {})).concat(cathodes),
      users: [alice, syncUser(st, 'bob'), syncUser(st, 'sam')],
      tools: ['SEM', 'AFM'].map((name) => syncTool(st, name, {})),
    });
    applyDelta(st.db, restored);
    expect(syncCursor(st.db)).toBe(restored.cursor);
    const project = (uuid: string) =>
      st.db.prepare('SELECT name, active FROM projects WHERE uuid = ?').get(uuid);
    expect(project(cathodes.uuid)).toEqual({ name: 'Cathodes', active: 1 });
    // The newer one, which the server no longer has, is put aside under its uuid, inactive.
    expect(project('0190a3c4-0000-7000-8000-0000000000c1')).toEqual({
      name: '0190a3c4-0000-7000-8000-0000000000c1',
      active: 0,
    });
    const user = (uuid: string) =>
      st.db.prepare('SELECT username, is_active FROM users WHERE uuid = ?').get(uuid);
    expect(user(alice.uuid)).toEqual({ username: 'alice', is_active: 1 });
    expect(user('0190a3c4-0000-7000-8000-0000000000a1')).toEqual({
      username: '0190a3c4-0000-7000-8000-0000000000a1',
      is_active: 0,
    });
    await logon(st, 'alice', '1234');
  });
});
