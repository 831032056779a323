import { beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import type { CoreEvent, SessionInfo, ToolStatus, UsageEventView } from '../../shared/api.js';
import { importBundle } from '../../electron/core/station/facility.js';
import { adoptServerAnswers } from '../../electron/core/station/pendingForms.js';
import { Station } from '../../electron/core/station/station.js';
import type { AppError } from '../../electron/core/util/errors.js';
import { createLogger } from '../../electron/core/util/log.js';
import { facilityBundle, goodPreAnswers } from '../fixtures/facility.js';
import { tempDir } from './helpers.js';
import { expectCode, openStation } from './stationFixture.js';

let now = Date.parse('2026-11-20T09:00:00Z');
const clock = (): number => now;

async function station(tool = 'SEM'): Promise<Station> {
  return openStation({ ...facilityBundle(), station: { tool } }, clock);
}

const logon = (st: Station, login: string, pin: string): Promise<SessionInfo> =>
  st.call('session.logon', { login, pin }) as Promise<SessionInfo>;
const enable = (st: Station, args: Record<string, unknown>): Promise<{ usage: UsageEventView }> =>
  st.call('toolControl.enable', { tool: 'SEM', ...args }) as Promise<{ usage: UsageEventView }>;
const count = (st: Station, table: string): number =>
  st.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;

describe('log-on', () => {
  beforeEach(() => {
    now = Date.parse('2026-11-20T09:00:00Z');
  });

  it('accepts username or badge with the PIN, and lists active projects only', async () => {
    const st = await station();
    const s = await logon(st, 'alice', '1234');
    expect(s.user.username).toBe('alice');
    expect(s.projects.map((p) => p.name)).toEqual(['Cathodes']);
    expect(s.qualified).toBe(true);
    await st.call('session.logoff', {});
    expect((await logon(st, '100200', '1234')).user.username).toBe('alice');
    expect(
      st.db.prepare("SELECT pin_hash FROM users WHERE username = 'alice'").pluck().get(),
    ).toMatch(/^\$argon2id\$/);
  });

  it('locks a login after five wrong PINs, across badge and username, until the lock ends', async () => {
    const st = await station();
    for (let i = 0; i < 4; i++) await expectCode(logon(st, 'alice', '0000'), 'unauthenticated');
    await expectCode(logon(st, '100200', '0000'), 'locked');
    await expectCode(logon(st, 'alice', '1234'), 'locked');
    now += 6 * 60_000;
    expect((await logon(st, 'alice', '1234')).user.username).toBe('alice');
  });

  it('refuses an unknown login with the same answer as a wrong PIN', async () => {
    const st = await station();
    const unknown = await expectCode(logon(st, 'nobody', '1234'), 'unauthenticated');
    const wrong = await expectCode(logon(st, 'alice', '0000'), 'unauthenticated');
    expect(unknown.message).toMatch(/unknown login or wrong PIN/);
    expect(unknown.message).toBe(wrong.message);
  });

  it('counts wrong PINs sent in parallel: they cannot slip past the lock', async () => {
    const st = await station();
    const results = await Promise.allSettled([
      ...Array.from({ length: 9 }, () => logon(st, 'alice', '0000')),
      logon(st, 'alice', '1234'),
    ]);
    const codes = results.map((r) =>
      r.status === 'rejected' ? (r.reason as AppError).code : 'ok',
    );
    expect(codes.filter((c) => c === 'unauthenticated')).toHaveLength(4);
    expect(codes.filter((c) => c === 'locked')).toHaveLength(6);
    expect(codes).not.toContain('ok');
  });
});

describe('tool control', () => {
  it('needs a session, qualification, an active project of the user, and valid answers', async () => {
    const st = await station();
    await expectCode(
      enable(st, { project: 'Cathodes', answers: goodPreAnswers }),
      'unauthenticated',
    );
    await logon(st, 'bob', '2345');
    await expectCode(enable(st, { project: 'Other', answers: goodPreAnswers }), 'not_qualified');
    await st.call('session.logoff', {});
    await logon(st, 'alice', '1234');
    await expectCode(enable(st, { project: 'Old', answers: goodPreAnswers }), 'forbidden');
    await expectCode(enable(st, { project: 'Other', answers: goodPreAnswers }), 'forbidden');
    const bad = await expectCode(
      enable(st, {
        project: 'Cathodes',
        answers: { ...goodPreAnswers, project_id: 'x', sample_group: [{ stubs: 1 }] },
      }),
      'validation_failed',
    );
    const problems = (bad.details as { problems: { path: unknown[]; rule: string }[] }).problems;
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: ['project_id'], rule: 'pattern' }),
        expect.objectContaining({ path: ['sample_group', 0, 'sample_name'], rule: 'required' }),
      ]),
    );
    expect(count(st, 'usage_events')).toBe(0);
  });

  it("never dates a usage inside the tool's last one when the PC clock went back", async () => {
    const before = now;
    now = Date.parse('2026-11-20T09:00:00Z');
    onTestFinished(() => {
      now = before;
    });
    const st = await station();
    await logon(st, 'alice', '1234');
    await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    now += 3_600_000;
    await st.call('toolControl.disable', { tool: 'SEM', answers: { problem: 'No' } });
    // NTP sets the clock back half an hour; the next usage starts where the last one ended,
    // so no time of the tool is billed twice.
    now -= 1_800_000;
    const { usage } = await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    expect(usage.start).toBe('2026-11-20T10:00:00.000Z');
    now += 900_000;
    const done = (await st.call('toolControl.disable', {
      tool: 'SEM',
      answers: { problem: 'No' },
    })) as { usage: UsageEventView };
    expect(done.usage.end).toBe('2026-11-20T10:00:00.000Z');
    const overlapping = st.db
      .prepare(
        `SELECT count(*) FROM usage_events a JOIN usage_events b
           ON a.tool_id = b.tool_id AND a.id < b.id AND b.start < a."end" AND a.start < b."end"`,
      )
      .pluck()
      .get();
    expect(overlapping).toBe(0);
  });

  it('ends, answers pending, the usage in progress when a bundle moves the station to another tool', async () => {
    const st = await station();
    await logon(st, 'alice', '1234');
    const { usage } = await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    const summary = await importBundle(st.db, { ...facilityBundle(), station: { tool: 'AFM' } });
    expect(summary).toMatchObject({ station: 'AFM', usages_ended: 1 });
    const ended = st.db
      .prepare('SELECT "end", post_usage_pending, reminder_due FROM usage_events WHERE uuid = ?')
      .get(usage.uuid) as { end: string | null };
    // Ended when the bundle came (by the PC's clock, as an import dates what it changes).
    expect(ended).toMatchObject({ post_usage_pending: 1, reminder_due: 1 });
    expect(ended.end! >= usage.start).toBe(true);
    // Its post-usage answers are asked of alice at her next log-on, as after a force-end.
    await st.call('session.logoff', {});
    const s = await logon(st, 'alice', '1234');
    expect(s.pending.map((p) => p.usage.uuid)).toEqual([usage.uuid]);
    await st.call('usage.completePending', { usage: usage.id, answers: { problem: 'No' } });
    // The same tool again ends nothing.
    expect(
      (await importBundle(st.db, { ...facilityBundle(), station: { tool: 'AFM' } })).usages_ended,
    ).toBe(0);
  });

  it('disables with the usage named by its UUID in any case', async () => {
    const st = await station();
    await logon(st, 'alice', '1234');
    const { usage } = await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    await expectCode(
      st.call('toolControl.disable', { tool: 'SEM', answers: { problem: 'No' }, usage: '12' }),
      'bad_request',
    );
    const done = (await st.call('toolControl.disable', {
      tool: 'SEM',
      answers: { problem: 'No' },
      usage: usage.uuid.toUpperCase(),
    })) as { usage: UsageEventView };
    expect(done.usage.end).not.toBeNull();
  });

  it('starts where the last usage ended only after a clock set back at most an hour', async () => {
    const before = now;
    onTestFinished(() => {
      now = before;
    });
    // The PC's clock a year ahead (a bad RTC, before NTP), then set right.
    now = Date.parse('2027-11-20T09:00:00Z');
    const st = await station();
    await logon(st, 'alice', '1234');
    await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    now += 600_000;
    await st.call('toolControl.disable', { tool: 'SEM', answers: { problem: 'No' } });
    now = Date.parse('2026-11-20T09:00:00Z');
    const { usage } = await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    expect(usage.start).toBe('2026-11-20T09:00:00.000Z');
    now += 1_800_000;
    const done = (await st.call('toolControl.disable', {
      tool: 'SEM',
      answers: { problem: 'No' },
    })) as { usage: UsageEventView };
    // Its own half hour, not none a year ahead.
    expect(done.usage.end).toBe('2026-11-20T09:30:00.000Z');
    // An hour back is still taken back: the next starts where this one ended.
    now -= 3_600_000;
    const next = await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    expect(next.usage.start).toBe('2026-11-20T09:30:00.000Z');
  });

  it('enables with canonical answers and formulas, refuses a second enable, disables', async () => {
    const st = await station();
    await logon(st, 'alice', '1234');
    const { usage } = await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    expect(usage.end).toBeNull();
    expect(usage.start).toBe('2026-11-20T09:00:00.000Z');
    expect(usage.operator_id).toBe(usage.user_id);
    expect(JSON.parse(usage.pre_run_data)).toMatchObject({ ...goodPreAnswers, total: 5 });
    const status = (await st.call('toolControl.status', { tool: 'SEM' })) as ToolStatus;
    expect(status.state).toBe('in_use');
    expect(status.active?.user_name).toBe('Alice Martin');
    await expectCode(enable(st, { project: 'Cathodes', answers: goodPreAnswers }), 'tool_in_use');
    // consumables: one purchase per group repetition that names a quantity
    expect(
      st.db.prepare('SELECT consumable, quantity FROM consumable_withdrawals ORDER BY id').all(),
    ).toEqual([
      { consumable: 'SEM stub', quantity: 2 },
      { consumable: 'SEM stub', quantity: 3 },
    ]);
    now += 3_600_000;
    const done = (await st.call('toolControl.disable', {
      tool: 'SEM',
      answers: { problem: 'No', notes: 'fine' },
    })) as { usage: UsageEventView };
    expect(done.usage.end).toBe('2026-11-20T10:00:00.000Z');
    expect(JSON.parse(done.usage.run_data)).toEqual({ problem: 'No', notes: 'fine' });
    expect(((await st.call('toolControl.status', { tool: 'SEM' })) as ToolStatus).state).toBe(
      'idle',
    );
    // every change went to the outbox with its record, a usage event before what names it
    expect(st.db.prepare('SELECT kind FROM outbox ORDER BY id').pluck().all()).toEqual([
      'usage_event',
      'consumable_withdrawal',
      'consumable_withdrawal',
      'usage_event',
    ]);
  });

  // Mutation: disableTool without the usage check: the usage begun after alice's ended on
  // another screen was ended with the answers typed for the first.
  it('takes post-usage answers only for the usage they were given for', async () => {
    const st = await station();
    await logon(st, 'alice', '1234');
    const { usage: first } = await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    now += 60_000;
    await st.call('toolControl.disable', {
      tool: 'SEM',
      answers: { problem: 'No' },
      usage: first.uuid,
    });
    // She begins anew (or someone else does).
    const { usage: second } = await enable(st, {
      project: 'Cathodes',
      answers: goodPreAnswers,
    });
    // The form of alice's usage, still open on another screen, sent late.
    const stale = await expectCode(
      st.call('toolControl.disable', {
        tool: 'SEM',
        answers: { problem: 'No', notes: 'for the first' },
        usage: first.uuid,
      }),
      'conflict',
    );
    expect(stale.message).toMatch(
      /^the usage these answers were for has ended, and .* is using SEM now/,
    );
    expect(
      ((await st.call('toolControl.status', { tool: 'SEM' })) as ToolStatus).active?.uuid,
    ).toBe(second.uuid);
  });

  it('lets staff enable for a user, force-end, and the user completes the pending answers', async () => {
    const st = await station();
    await logon(st, 'alice', '1234');
    await expectCode(
      enable(st, { project: 'Cathodes', answers: goodPreAnswers, user: 'bob' }),
      'forbidden',
    );
    await st.call('session.logoff', {});
    await logon(st, 'sam', '9999');
    const { usage } = await enable(st, {
      project: 'Cathodes',
      answers: goodPreAnswers,
      user: 'alice',
      remoteWork: true,
    });
    expect(usage.user_name).toBe('Alice Martin');
    expect(usage.operator_name).toBe('sam');
    expect(usage.remote_work).toBe(true);
    now += 60_000;
    const ended = (
      (await st.call('toolControl.forceEnd', { tool: 'SEM' })) as { usage: UsageEventView }
    ).usage;
    expect(ended.end).not.toBeNull();
    expect(ended.post_usage_pending).toBe(true);
    expect(ended.reminder_due).toBe(true);
    expect(ended.run_data).toBe('');
    await st.call('session.logoff', {});

    const s = await logon(st, 'alice', '1234');
    expect(s.pending.map((p) => p.usage.id)).toEqual([ended.id]);
    await expectCode(
      st.call('usage.completePending', { usage: ended.id, answers: { problem: 'maybe' } }),
      'validation_failed',
    );
    const completed = (
      (await st.call('usage.completePending', { usage: ended.id, answers: { problem: 'No' } })) as {
        usage: UsageEventView;
      }
    ).usage;
    expect(completed.post_usage_pending).toBe(false);
    expect(completed.reminder_due).toBe(false);
    expect(JSON.parse(completed.run_data)).toEqual({ problem: 'No' });
    await expectCode(
      st.call('usage.completePending', { usage: ended.id, answers: {} }),
      'conflict',
    );
    await expectCode(st.call('toolControl.validate', { usage: ended.id }), 'forbidden');
    await st.call('session.logoff', {});
    await logon(st, 'sam', '9999');
    const validated = (
      (await st.call('toolControl.validate', { usage: ended.id })) as { usage: UsageEventView }
    ).usage;
    expect(validated.validated).toBe(true);
    expect(validated.validated_by_name).toBe('sam');
    // Validated again by other staff: left as it is, and nothing queued for the server
    // (mutation: a second validation replaced the validator, here and on the server).
    const queued = st.db.prepare('SELECT count(*) FROM outbox').pluck().get();
    await st.call('session.logoff', {});
    st.db.prepare("UPDATE users SET is_staff = 1 WHERE username = 'alice'").run();
    await logon(st, 'alice', '1234');
    const again = (
      (await st.call('toolControl.validate', { usage: ended.id })) as { usage: UsageEventView }
    ).usage;
    expect(again).toEqual(validated);
    expect(st.db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(queued);
  });

  it('shuts the tool down on a problem report with force_shutdown, until staff clear it', async () => {
    const st = await station();
    await logon(st, 'alice', '1234');
    await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    await st.call('toolControl.disable', { tool: 'SEM', answers: { problem: 'Yes' } });
    const status = (await st.call('toolControl.status', { tool: 'SEM' })) as ToolStatus;
    expect(status.state).toBe('shutdown');
    expect(status.shutdown?.reason).toBe('Vacuum fault');
    expect(st.db.prepare('SELECT description, force_shutdown FROM problem_reports').all()).toEqual([
      { description: 'Vacuum fault', force_shutdown: 1 },
    ]);
    await expectCode(enable(st, { project: 'Cathodes', answers: goodPreAnswers }), 'tool_shutdown');
    await expectCode(st.call('toolControl.clearShutdown', { tool: 'SEM' }), 'forbidden');
    await st.call('session.logoff', {});
    await logon(st, 'sam', '9999');
    expect(
      ((await st.call('toolControl.clearShutdown', { tool: 'SEM' })) as ToolStatus).state,
    ).toBe('idle');
    expect(st.db.prepare('SELECT resolved_at FROM problem_reports').pluck().get()).not.toBeNull();
    const payloads = (
      st.db
        .prepare("SELECT payload FROM outbox WHERE kind = 'problem_report' ORDER BY id")
        .pluck()
        .all() as string[]
    ).map(
      (p) =>
        JSON.parse(p) as {
          user_uuid: string;
          resolved_at: string | null;
          resolved_by_uuid: string | null;
        },
    );
    expect(payloads).toHaveLength(2);
    expect(payloads[0]).toMatchObject({ resolved_at: null, resolved_by_uuid: null });
    expect(payloads[0].user_uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(payloads[1].resolved_at).not.toBeNull();
    expect(payloads[1].resolved_by_uuid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('controls its own tool only', async () => {
    const st = await station('SEM');
    await logon(st, 'sam', '9999');
    for (const [name, args, doing] of [
      [
        'toolControl.enable',
        { tool: 'AFM', project: 'Other', answers: { broken: 'No' } },
        'enable',
      ],
      ['toolControl.forceEnd', { tool: 'AFM' }, 'force-end'],
      ['toolControl.clearShutdown', { tool: 'AFM' }, 'bring back'],
    ] as const) {
      const e = await expectCode(st.call(name, args), 'forbidden');
      expect(e.message).toBe(`tool: this station runs "SEM"; ${doing} "AFM" at its own station`);
    }
    expect(count(st, 'usage_events')).toBe(0);
    expect(count(st, 'outbox')).toBe(0);
    // A usage it recorded on a tool it ran before can still be force-ended here.
    await logon(st, 'alice', '1234');
    await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    st.db.prepare("UPDATE settings SET value = '\"AFM\"' WHERE key = 'station.tool'").run();
    await logon(st, 'sam', '9999');
    const ended = (await st.call('toolControl.forceEnd', { tool: 'SEM' })) as {
      usage: { end: string | null };
    };
    expect(ended.usage.end).not.toBeNull();
    await expectCode(st.call('toolControl.forceEnd', { tool: 'SEM' }), 'forbidden');
    // Another tool's state can still be read.
    expect(((await st.call('toolControl.status', { tool: 'AFM' })) as ToolStatus).state).toBe(
      'idle',
    );
  });

  it('refuses an enable whose pre-usage answers report a shutdown problem, keeping the report', async () => {
    const st = await station('AFM');
    await logon(st, 'sam', '9999');
    const events: CoreEvent[] = [];
    st.events.on('event', (event) => events.push(event));
    // The tool named by its id, as the contract allows: the screens, which match the event's
    // tool by name, hear of the shutdown all the same (mutation: the event said "2").
    const afm = st.db.prepare("SELECT id FROM tools WHERE name = 'AFM'").pluck().get() as number;
    const e = await expectCode(
      st.call('toolControl.enable', { tool: afm, project: 'Other', answers: { broken: 'Yes' } }),
      'tool_shutdown',
    );
    expect(events).toContainEqual({ type: 'tool.changed', tool: 'AFM' });
    expect(e.message).toMatch(/Tip holder broken/);
    expect(count(st, 'usage_events')).toBe(0);
    expect(
      st.db.prepare('SELECT description, usage_event_id, safety_hazard FROM problem_reports').all(),
    ).toEqual([{ description: 'Tip holder broken', usage_event_id: null, safety_hazard: 1 }]);
    expect(((await st.call('toolControl.status', { tool: 'AFM' })) as ToolStatus).state).toBe(
      'shutdown',
    );
    expect(st.db.prepare('SELECT kind FROM outbox').pluck().all()).toEqual(['problem_report']);
  });

  it('filters the history by user and by local date', async () => {
    const st = await station();
    await logon(st, 'alice', '1234');
    await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    await st.call('toolControl.disable', { tool: 'SEM', answers: { problem: 'No' } });
    const all = (await st.call('usage.history', { tool: 'SEM' })) as { events: UsageEventView[] };
    expect(all.events).toHaveLength(1);
    // Someone else's usage is for staff to read (usageHistoryAccess.test.ts).
    await st.call('session.logoff', {});
    await logon(st, 'sam', '9999');
    const none = (await st.call('usage.history', { tool: 'SEM', user: 'bob' })) as {
      events: UsageEventView[];
    };
    expect(none.events).toHaveLength(0);
    const later = (await st.call('usage.history', { tool: 'SEM', from: '2026-11-22' })) as {
      events: UsageEventView[];
    };
    expect(later.events).toHaveLength(0);
    // As every bad argument: details.problems, one per broken rule, with its path.
    const notADay = await expectCode(
      st.call('usage.history', { tool: 'SEM', from: '2026-02-30' }),
      'bad_request',
    );
    expect(notADay.details).toEqual({ problems: ['from: 2026-02-30 is not a real date'] });
    const notATime = await expectCode(
      st.call('usage.history', { tool: 'SEM', to: '2026-02-30T10:00' }),
      'bad_request',
    );
    expect(notATime.details).toEqual({
      problems: ['to: 2026-02-30T10:00 is not a real date-time'],
    });
    await expectCode(st.call('usage.history', { tool: 'SEM', from: 'yesterday' }), 'bad_request');
  });

  it('reads a date alone as that whole day in the station time zone, both ends included', async () => {
    const saved = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      now = Date.parse('2026-11-20T03:00:00Z'); // 22:00 on the 19th in New York
      const st = await station();
      await logon(st, 'alice', '1234');
      await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
      const found = async (args: Record<string, string>): Promise<number> =>
        ((await st.call('usage.history', { tool: 'SEM', ...args })) as { events: unknown[] }).events
          .length;
      expect(await found({ from: '2026-11-19', to: '2026-11-19' })).toBe(1);
      expect(await found({ to: '2026-11-19' })).toBe(1);
      expect(await found({ from: '2026-11-20' })).toBe(0);
      expect(await found({ to: '2026-11-18' })).toBe(0);
      expect(await found({ from: '2026-11-20T02:59:59Z', to: '2026-11-20T03:00:01Z' })).toBe(1);
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
      now = Date.parse('2026-11-20T09:00:00Z');
    }
  });

  /**
   * Alice's usage on a station whose idle rule force-ends after 30 minutes, measured on its own
   * clock: `idleFor` moves that clock by `ms` and the PC's by `wallMs` (as much, unless set on
   * or back meanwhile), then runs the idle check.
   */
  async function idleUsage() {
    let elapsed = 0;
    const st = await openStation(
      { ...facilityBundle(), station: { tool: 'SEM' } },
      clock,
      () => elapsed,
    );
    st.db.prepare("INSERT INTO settings VALUES ('idle.forceEndMinutes', '30')").run();
    await logon(st, 'alice', '1234');
    const { usage } = await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    return {
      st,
      idleFor: (ms: number, wallMs = ms): void => {
        elapsed += ms;
        now += wallMs;
        st.checkIdle();
      },
      end: () =>
        st.db.prepare('SELECT "end" FROM usage_events WHERE uuid = ?').pluck().get(usage.uuid),
    };
  }

  // Mutation: checkIdle measuring on the wall clock (this.clock) again. The PC's time set on
  // three hours force-ended the usage at once, billed with the three hours; set back an hour,
  // it kept whoever walked away logged on for that hour.
  it('measures idle time on a clock that only goes forward, not on the PC time', async () => {
    try {
      const { st, idleFor, end } = await idleUsage();
      idleFor(60_000, 3 * 3_600_000);
      expect(
        ((await st.call('session.current', {})) as { session: unknown }).session,
      ).not.toBeNull();
      expect(((await st.call('toolControl.status', { tool: 'SEM' })) as ToolStatus).state).toBe(
        'in_use',
      );
      // Set back an hour: ten minutes without input still log off.
      idleFor(10 * 60_000, -3_600_000);
      expect(((await st.call('session.current', {})) as { session: unknown }).session).toBeNull();
      // Twenty more: the usage is force-ended, dated by the PC's time when the 30 minutes
      // passed (a minute before this check).
      idleFor(20 * 60_000);
      expect(end()).toBe(new Date(now - 60_000).toISOString());
    } finally {
      now = Date.parse('2026-11-20T09:00:00Z');
    }
  });

  it('ends a usage force-ended after the PC slept when its idle limit passed, not at the wake', async () => {
    try {
      const { idleFor, end } = await idleUsage();
      // Five minutes on, the PC sleeps four hours; the idle clock counts the sleep.
      idleFor(5 * 60_000 + 4 * 3_600_000);
      expect(end()).toBe('2026-11-20T09:30:00.000Z');
    } finally {
      now = Date.parse('2026-11-20T09:00:00Z');
    }
  });

  it('logs the UI session off after the idle time and force-ends usage after the longer one', async () => {
    const st = await station();
    st.db.prepare("INSERT INTO settings VALUES ('idle.forceEndMinutes', '30')").run();
    await logon(st, 'alice', '1234');
    await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    // What a screen reads on its own (the Data tab while files arrive, each open screen on a
    // change) is not someone at the station: it does not hold the session open.
    for (let minute = 0; minute < 11; minute++) {
      now += 60_000;
      for (const [name, args] of [
        ['harvest.status', {}],
        ['harvest.files', {}],
        ['usage.history', { tool: 'SEM' }],
        ['usage.pending', {}],
        ['notebook.list', {}],
        ['sync.status', {}],
      ] as const) {
        // Once logged off, the calls made for a person answer "log on first", as at the screen.
        await st.call(name, args).catch((error: unknown) => {
          if ((error as AppError).code !== 'unauthenticated') throw error;
        });
      }
      st.checkIdle();
    }
    expect(((await st.call('session.current', {})) as { session: unknown }).session).toBeNull();
    expect(((await st.call('toolControl.status', { tool: 'SEM' })) as ToolStatus).state).toBe(
      'in_use',
    );
    now += 20 * 60_000;
    st.checkIdle();
    const status = (await st.call('toolControl.status', { tool: 'SEM' })) as ToolStatus;
    expect(status.state).toBe('idle');
    const [event] = (
      (await (async () => {
        await logon(st, 'alice', '1234');
        return st.call('usage.history', { tool: 'SEM' });
      })()) as { events: UsageEventView[] }
    ).events;
    expect(event?.post_usage_pending).toBe(true);
    expect(event?.force_ended_by_id).toBeNull();
    // Input at the screen (session.touch) and a change keep it open.
    now += 9 * 60_000;
    await st.call('session.touch', {});
    now += 9 * 60_000;
    st.checkIdle();
    expect(((await st.call('session.current', {})) as { session: unknown }).session).not.toBeNull();
  });

  it('a usage force-ended by the idle rule while its person is still logged on says so to the screen, which then asks for its post-usage answers', async () => {
    const st = await station();
    st.db.prepare("INSERT INTO settings VALUES ('idle.forceEndMinutes', '5')").run();
    await logon(st, 'alice', '1234');
    const { usage } = await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    const events: CoreEvent[] = [];
    st.events.on('event', (event) => events.push(event));
    now += 6 * 60_000;
    st.checkIdle();
    // Still logged on (the log-off comes after 10 minutes), with the usage's form pending:
    // the screen re-reads the person's pending forms on usage.changed.
    const current = (await st.call('session.current', {})) as { session: SessionInfo | null };
    expect(current.session?.pending.map((p) => p.usage.uuid)).toEqual([usage.uuid]);
    expect(events).toContainEqual({ type: 'usage.changed', usage: usage.uuid });
    expect(events).toContainEqual({ type: 'tool.changed', tool: 'SEM' });
  });

  it('a standalone station reports no server and what it keeps for one', async () => {
    const st = await station();
    expect(await st.call('sync.status', {})).toEqual({
      configured: false,
      online: false,
      lastSyncAt: null,
      waiting: 0,
      refused: 0,
      refusedReason: null,
      lastError: null,
      keyRefused: null,
      clockSkewSeconds: null,
    });
    await logon(st, 'alice', '1234');
    await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    expect(await st.call('sync.status', {})).toMatchObject({ configured: false, waiting: 3 });
  });

  it('rejects malformed arguments with the field named, before any handler runs', async () => {
    const st = await station();
    const e = await expectCode(st.call('session.logon', { login: 'alice' }), 'bad_request');
    expect(e.message).toMatch(/pin/);
    const extra = await expectCode(
      st.call('session.logon', { login: 'a', pin: '1', extra: 1 }),
      'bad_request',
    );
    expect(extra.message).toBe('session.logon: (arguments): unknown key "extra"');
    await expectCode(st.call('nope.nothing', {}), 'not_found');
    // A key left out is said to be required, not "Invalid input" (a tool is an id or a name)
    // or "expected nonoptional, received undefined" (answers may be any JSON).
    const missing = await expectCode(st.call('toolControl.enable', { project: 1 }), 'bad_request');
    expect(missing.message).toBe('toolControl.enable: tool: is required; answers: is required');
    expect(missing.details).toEqual({ problems: ['tool: is required', 'answers: is required'] });
    // A key given with a wrong value keeps the rule it breaks.
    const wrong = await expectCode(
      st.call('toolControl.disable', { tool: 0, answers: {} }),
      'bad_request',
    );
    expect(wrong.message).toBe('toolControl.disable: tool: must be an id above 0');
    const neither = await expectCode(st.call('toolControl.status', { tool: 2.5 }), 'bad_request');
    expect(neither.message).toBe(
      'toolControl.status: tool: must be an id (a whole number above 0), a UUID or a name',
    );
  });
});

describe('a pending form answered on the server and at the station, offline', () => {
  /** A station whose SEM form also withdraws LN2, and a pending form answered on both sides. */
  async function answeredTwice(preAnswers: object = goodPreAnswers) {
    const bundle = facilityBundle();
    const sem = (bundle.tools as Record<string, unknown>[])[0];
    const ln2 = { type: 'number', name: 'ln2', title: 'LN2 (litres)', consumable: 'LN2' };
    sem.post_usage_questions = [...(sem.post_usage_questions as unknown[]), ln2];
    // The same names at enable: LN2 counted before too, and a problem seen then.
    sem.pre_usage_questions = [
      ...(sem.pre_usage_questions as unknown[]),
      ln2,
      {
        type: 'radio_report_problem',
        name: 'problem',
        options: { problem_description: 'Stage noisy', force_shutdown: false },
      },
    ];
    const st = Station.open({ dataDir: tempDir(), log: createLogger('silent'), clock });
    await importBundle(st.db, { ...bundle, station: { tool: 'SEM' } });
    const pending = async (): Promise<UsageEventView> => {
      await logon(st, 'sam', '9999');
      await enable(st, { project: 'Cathodes', answers: preAnswers, user: 'alice' });
      now += 60_000;
      const { usage } = (await st.call('toolControl.forceEnd', { tool: 'SEM' })) as {
        usage: UsageEventView;
      };
      await st.call('session.logoff', {});
      return usage;
    };
    const effects = (usage: UsageEventView) => ({
      ln2: st.db
        .prepare(
          "SELECT sum(quantity) FROM consumable_withdrawals WHERE usage_event_id = ? AND consumable = 'LN2'",
        )
        .pluck()
        .get(usage.id) as number | null,
      reports: st.db
        .prepare('SELECT question FROM problem_reports WHERE usage_event_id = ?')
        .pluck()
        .all(usage.id),
    });
    const offer = (usage: UsageEventView, there: object) =>
      adoptServerAnswers(
        st.db,
        { usage_uuid: usage.uuid, run_data: JSON.stringify(there), answered_by_uuid: null },
        new Date(now).toISOString(),
      );
    const answerBoth = async (usage: UsageEventView, here: object, there: object) => {
      await logon(st, 'alice', '1234');
      await st.call('usage.completePending', { usage: usage.id, answers: here });
      await st.call('session.logoff', {});
      return offer(usage, there);
    };
    return { st, pending, effects, offer, answerBoth };
  }

  it('leaves the server’s answers for a usage still in progress here until it has ended', async () => {
    const { st, effects, offer } = await answeredTwice();
    await logon(st, 'alice', '1234');
    const { usage } = await enable(st, { project: 'Cathodes', answers: goodPreAnswers });
    // A data dir restored from a backup made before this usage ended: the server holds the
    // answers to its post-usage form.
    expect(offer(usage, { problem: 'Yes', ln2: 7 })).toBeNull();
    const row = st.db
      .prepare('SELECT "end", run_data, post_usage_pending FROM usage_events WHERE id = ?')
      .get(usage.id);
    expect(row).toEqual({ end: null, run_data: '', post_usage_pending: 0 });
    expect(effects(usage)).toEqual({ ln2: null, reports: [] });
    expect(((await st.call('toolControl.status', { tool: 'SEM' })) as ToolStatus).state).toBe(
      'in_use',
    );
  });

  it('keeps the server’s answers, and records what they do beyond the station’s own', async () => {
    const { st, pending, effects, answerBoth } = await answeredTwice();

    // The server's answers report a problem and more LN2: both are recorded.
    const first = await pending();
    const taken = await answerBoth(first, { problem: 'No', ln2: 2 }, { problem: 'Yes', ln2: 7 });
    expect(taken).toEqual({
      tool: 'SEM',
      withdrawnBeyond: [],
      replaced: expect.any(String) as string,
    });
    // The station's own answers, which the server's replaced, are named (adoptAnswers logs them).
    expect(JSON.parse(taken!.replaced!)).toMatchObject({ problem: 'No', ln2: 2 });
    expect(effects(first)).toEqual({ ln2: 7, reports: ['problem'] });
    const row = st.db.prepare('SELECT run_data FROM usage_events WHERE id = ?').get(first.id);
    expect(JSON.parse((row as { run_data: string }).run_data)).toEqual({ problem: 'Yes', ln2: 7 });
    // Offered again (until the station's push reaches the server): nothing twice.
    adoptServerAnswers(
      st.db,
      {
        usage_uuid: first.uuid,
        run_data: JSON.stringify({ problem: 'Yes', ln2: 7 }),
        answered_by_uuid: null,
      },
      new Date(now).toISOString(),
    );
    expect(effects(first)).toEqual({ ln2: 7, reports: ['problem'] });

    // Less LN2 on the server: what was withdrawn stays, and is named for staff to settle.
    st.db.prepare('UPDATE tools SET shutdown = 0').run();
    const second = await pending();
    const fewer = await answerBoth(second, { problem: 'No', ln2: 3 }, { problem: 'No', ln2: 1 });
    expect(fewer).toEqual({
      tool: 'SEM',
      withdrawnBeyond: ['2 LN2 (ln2)'],
      replaced: expect.any(String) as string,
    });
    expect(effects(second)).toEqual({ ln2: 3, reports: [] });
  });

  it('tells the post-usage form’s effects from the pre-usage form’s of the same names', async () => {
    // At enable: 3 LN2 and a problem, on questions named as the post-usage form's.
    const { st, pending, answerBoth } = await answeredTwice({
      ...goodPreAnswers,
      ln2: 3,
      problem: 'Yes',
    });
    const usage = await pending();
    const taken = await answerBoth(usage, { problem: 'No', ln2: 2 }, { problem: 'Yes', ln2: 4 });
    // The kept answers withdraw 2 LN2 beyond the station's 2 (the 3 at enable are not theirs),
    // and their problem is reported beside the one seen at enable.
    expect(taken).toEqual({
      tool: 'SEM',
      withdrawnBeyond: [],
      replaced: expect.any(String) as string,
    });
    const rows = (sql: string) => st.db.prepare(sql).all(usage.id);
    expect(
      rows(
        `SELECT form, sum(quantity) AS quantity FROM consumable_withdrawals
         WHERE usage_event_id = ? AND consumable = 'LN2' GROUP BY form ORDER BY form`,
      ),
    ).toEqual([
      { form: 'post_usage', quantity: 4 },
      { form: 'pre_usage', quantity: 3 },
    ]);
    expect(
      rows('SELECT form, description FROM problem_reports WHERE usage_event_id = ? ORDER BY id'),
    ).toEqual([
      { form: 'pre_usage', description: 'Stage noisy' },
      { form: 'post_usage', description: 'Vacuum fault' },
    ]);
  });

  // Mutations of adoptServerAnswers that fail this test alone: recording a report again that
  // the station's answers made already; taking answers again that it holds (no early return);
  // not queueing the event it completed. Redoing the effects from the kept answers (the
  // station's own withdrawals and reports dropped first), or keeping the station's run_data,
  // fail this one and the one above.
  it('keeps what the station’s own answers did, and reports a problem once', async () => {
    const { st, pending, effects, offer, answerBoth } = await answeredTwice();
    const stored = (usage: UsageEventView) =>
      st.db
        .prepare('SELECT run_data, post_usage_pending, version FROM usage_events WHERE id = ?')
        .get(usage.id) as { run_data: string; post_usage_pending: number; version: number };
    const queued = (usage: UsageEventView) =>
      (
        st.db
          .prepare(
            `SELECT payload FROM outbox WHERE kind = 'usage_event' AND record_uuid = ?
             ORDER BY id`,
          )
          .pluck()
          .all(usage.uuid) as string[]
      ).map((payload) => JSON.parse(payload) as { run_data: string; post_usage_pending: number });
    const shutdown = () =>
      st.db.prepare("SELECT shutdown FROM tools WHERE name = 'SEM'").pluck().get();

    // The station's answers report a problem (it shuts the tool down) and withdraw LN2; the
    // server's, which reached it first, report none and withdraw less.
    const first = await pending();
    const here = { problem: 'Yes', ln2: 3 };
    const there = { problem: 'No', notes: 'answered in the browser', ln2: 1 };
    const taken = await answerBoth(first, here, there);
    expect(taken).toEqual({
      tool: 'SEM',
      withdrawnBeyond: ['2 LN2 (ln2)'],
      replaced: expect.any(String) as string,
    });
    // The server's answers are the event's now, not the station's own ...
    const adopted = stored(first);
    expect(JSON.parse(adopted.run_data)).toEqual(there);
    expect(adopted.post_usage_pending).toBe(0);
    // ... and are queued back, which tells the server the station holds them ...
    expect(queued(first).at(-1)).toMatchObject({
      run_data: adopted.run_data,
      post_usage_pending: 0,
    });
    // ... while what the station's own answers did stays recorded: the LN2, the report and the
    // shutdown it forced.
    expect(effects(first)).toEqual({ ln2: 3, reports: ['problem'] });
    expect(
      st.db
        .prepare('SELECT resolved_at FROM problem_reports WHERE usage_event_id = ?')
        .pluck()
        .all(first.id),
    ).toEqual([null]);
    expect(shutdown()).toBe(1);
    // Offered again before the server hears it back: taken already, nothing changes.
    const outboxBefore = count(st, 'outbox');
    expect(offer(first, there)).toBeNull();
    expect(stored(first)).toEqual(adopted);
    expect(count(st, 'outbox')).toBe(outboxBefore);
    expect(effects(first)).toEqual({ ln2: 3, reports: ['problem'] });

    // Both answers report the problem: it is reported once, by the station's answers.
    st.db.prepare('UPDATE tools SET shutdown = 0').run();
    const second = await pending();
    const both = await answerBoth(
      second,
      { problem: 'Yes', ln2: 2 },
      { problem: 'Yes', notes: 'arcing', ln2: 2 },
    );
    expect(both).toEqual({
      tool: 'SEM',
      withdrawnBeyond: [],
      replaced: expect.any(String) as string,
    });
    expect(JSON.parse(stored(second).run_data)).toEqual({
      problem: 'Yes',
      notes: 'arcing',
      ln2: 2,
    });
    expect(effects(second)).toEqual({ ln2: 2, reports: ['problem'] });
  });
});
