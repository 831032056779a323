/**
 * Rules of usage events that a hand-mutation review found held by no other test: each test
 * here failed with one mutation of the station's tool control (named in the test).
 */
import { describe, expect, it } from 'vitest';
import type { ToolStatus, UsageEventView } from '../../shared/api.js';
import type { Station } from '../../electron/core/station/station.js';
import { facilityBundle, goodPreAnswers } from '../fixtures/facility.js';
import { expectCode, openStation } from './stationFixture.js';

const now = Date.parse('2026-11-20T09:00:00Z');
const clock = (): number => now;

/** A station of SEM whose post-usage note is required. */
async function station(): Promise<Station> {
  const bundle = facilityBundle() as { tools: { name: string; post_usage_questions: unknown }[] };
  const sem = bundle.tools.find((t) => t.name === 'SEM')!;
  sem.post_usage_questions = [
    ...(sem.post_usage_questions as object[]).filter(
      (q) => (q as { name: string }).name !== 'notes',
    ),
    { type: 'textarea', name: 'notes', required: true },
  ];
  return openStation({ ...bundle, station: { tool: 'SEM' } }, clock);
}

const rows = (st: Station, sql: string): unknown[] => st.db.prepare(sql).all();

const pins = { alice: '1234', bob: '2345', sam: '9999' } as const;

/** Logs `login` on with their PIN. */
async function logOn(st: Station, login: keyof typeof pins): Promise<void> {
  await st.call('session.logon', { login, pin: pins[login] });
}

/** Logs whoever is on off, and `login` on. */
async function handOver(st: Station, login: keyof typeof pins): Promise<void> {
  await st.call('session.logoff', {});
  await logOn(st, login);
}

/**
 * Starts alice's usage of SEM on project Cathodes with good pre-usage answers, and returns it:
 * alice logs on and enables SEM, or, with `enabledBy: 'sam'`, staff logs on and enables it for her.
 */
async function aliceUsesSem(
  st: Station,
  { enabledBy = 'alice' }: { enabledBy?: 'alice' | 'sam' } = {},
): Promise<UsageEventView> {
  await logOn(st, enabledBy);
  const { usage } = (await st.call('toolControl.enable', {
    tool: 'SEM',
    project: 'Cathodes',
    answers: goodPreAnswers,
    ...(enabledBy === 'sam' ? { user: 'alice' } : {}),
  })) as { usage: UsageEventView };
  return usage;
}

describe('usage rules', () => {
  // Mutation: disableTool storing the post-usage answers unchecked.
  it('ends a usage only with its post-usage questions answered, and valid', async () => {
    const st = await station();
    await aliceUsesSem(st);
    const outboxBefore = rows(st, 'SELECT id FROM outbox');
    const missing = await expectCode(
      st.call('toolControl.disable', { tool: 'SEM', answers: { problem: 'No' } }),
      'validation_failed',
    );
    expect(missing.details).toMatchObject({
      problems: [expect.objectContaining({ path: ['notes'], rule: 'required' })],
    });
    await expectCode(
      st.call('toolControl.disable', { tool: 'SEM', answers: { problem: 'Maybe', notes: 'x' } }),
      'validation_failed',
    );
    const status = (await st.call('toolControl.status', { tool: 'SEM' })) as ToolStatus;
    expect(status.state).toBe('in_use');
    expect(status.active?.end).toBeNull();
    expect(status.active?.run_data).toBe('');
    expect(rows(st, 'SELECT id FROM outbox')).toEqual(outboxBefore);
    expect(rows(st, 'SELECT id FROM problem_reports')).toEqual([]);

    const done = (await st.call('toolControl.disable', {
      tool: 'SEM',
      answers: { problem: 'No', notes: 'fine' },
    })) as { usage: UsageEventView };
    expect(done.usage.end).not.toBeNull();
    expect(JSON.parse(done.usage.run_data)).toEqual({ problem: 'No', notes: 'fine' });
  });

  // Mutation: disableTool letting anyone logged on end the usage.
  it("refuses to end someone else's usage to a user who is neither its user nor staff", async () => {
    const st = await station();
    await aliceUsesSem(st);
    await handOver(st, 'bob');
    const outboxBefore = rows(st, 'SELECT id FROM outbox');
    const e = await expectCode(
      st.call('toolControl.disable', { tool: 'SEM', answers: { problem: 'No', notes: 'x' } }),
      'forbidden',
    );
    expect(e.message).toMatch(/Alice Martin is using SEM/);
    const status = (await st.call('toolControl.status', { tool: 'SEM' })) as ToolStatus;
    expect(status.state).toBe('in_use');
    expect(status.active?.user_name).toBe('Alice Martin');
    expect(rows(st, 'SELECT id FROM outbox')).toEqual(outboxBefore);
  });

  // Mutation: completePending taking the answers of anyone logged on.
  it("refuses to answer another person's pending form to a user who is not staff", async () => {
    const st = await station();
    await aliceUsesSem(st, { enabledBy: 'sam' });
    const { usage } = (await st.call('toolControl.forceEnd', { tool: 'SEM' })) as {
      usage: UsageEventView;
    };
    expect(usage.post_usage_pending).toBe(true);
    await handOver(st, 'bob');
    await expectCode(
      st.call('usage.completePending', {
        usage: usage.id,
        answers: { problem: 'Yes', notes: 'not mine' },
      }),
      'forbidden',
    );
    expect(rows(st, 'SELECT post_usage_pending, run_data FROM usage_events')).toEqual([
      { post_usage_pending: 1, run_data: '' },
    ]);
    expect(rows(st, 'SELECT id FROM problem_reports')).toEqual([]);
  });

  // Mutation: enableTool letting a user who is not staff mark the usage as remote work.
  it('lets only staff mark a usage as remote work', async () => {
    const st = await station();
    await logOn(st, 'alice');
    const e = await expectCode(
      st.call('toolControl.enable', {
        tool: 'SEM',
        project: 'Cathodes',
        answers: goodPreAnswers,
        remoteWork: true,
      }),
      'forbidden',
    );
    expect(e.message).toMatch(/remote work/);
    expect(rows(st, 'SELECT id FROM usage_events')).toEqual([]);
    expect(rows(st, 'SELECT id FROM outbox')).toEqual([]);
  });

  // Mutation: enableTool billing a user whose account is not active (staff enabling for them).
  it('refuses staff to enable the tool for a user whose account is not active', async () => {
    const st = await station();
    st.db.prepare("UPDATE users SET is_active = 0 WHERE username = 'alice'").run();
    await logOn(st, 'sam');
    const e = await expectCode(
      st.call('toolControl.enable', {
        tool: 'SEM',
        project: 'Cathodes',
        answers: goodPreAnswers,
        user: 'alice',
      }),
      'forbidden',
    );
    expect(e.message).toMatch(/not active/);
    expect(rows(st, 'SELECT id FROM usage_events')).toEqual([]);
  });

  // Mutations: validateUsage taking an active usage, or not queuing the validation.
  it('validates an ended usage only, and queues the validation for the server', async () => {
    const st = await station();
    const usage = await aliceUsesSem(st, { enabledBy: 'sam' });
    await expectCode(st.call('toolControl.validate', { usage: usage.id }), 'conflict');
    expect(rows(st, 'SELECT validated, validated_by_id FROM usage_events')).toEqual([
      { validated: 0, validated_by_id: null },
    ]);
    await st.call('toolControl.forceEnd', { tool: 'SEM' });
    const before = st.db.prepare('SELECT max(id) FROM outbox').pluck().get() as number;
    await st.call('toolControl.validate', { usage: usage.id });
    const queued = (
      st.db
        .prepare("SELECT payload FROM outbox WHERE id > ? AND kind = 'usage_event'")
        .pluck()
        .all(before) as string[]
    ).map((p) => JSON.parse(p) as Record<string, unknown>);
    const sam = st.db.prepare("SELECT uuid FROM users WHERE username = 'sam'").pluck().get();
    expect(queued).toEqual([
      expect.objectContaining({ uuid: usage.uuid, validated: 1, validated_by_uuid: sam }),
    ]);
  });

  // Mutation: forceEndTool without its staff check.
  it('lets only staff force-end a usage', async () => {
    const st = await station();
    await aliceUsesSem(st);
    await handOver(st, 'bob');
    await expectCode(st.call('toolControl.forceEnd', { tool: 'SEM' }), 'forbidden');
    const status = (await st.call('toolControl.status', { tool: 'SEM' })) as ToolStatus;
    expect(status.state).toBe('in_use');
    expect(rows(st, 'SELECT "end", post_usage_pending FROM usage_events')).toEqual([
      { end: null, post_usage_pending: 0 },
    ]);
  });

  // Mutation: recordEffects shutting the tool down but leaving its active usage running.
  it('a shutdown reported in a pending form answered later ends the usage running then', async () => {
    const st = await station();
    const first = await aliceUsesSem(st, { enabledBy: 'sam' });
    await st.call('toolControl.forceEnd', { tool: 'SEM' });
    const second = (
      (await st.call('toolControl.enable', {
        tool: 'SEM',
        project: 'Other',
        answers: goodPreAnswers,
      })) as { usage: UsageEventView }
    ).usage;
    await handOver(st, 'alice');
    await st.call('usage.completePending', {
      usage: first.id,
      answers: { problem: 'Yes', notes: 'vacuum lost' },
    });
    const status = (await st.call('toolControl.status', { tool: 'SEM' })) as ToolStatus;
    expect(status.state).toBe('shutdown');
    expect(status.active).toBeNull();
    const ended = st.db
      .prepare('SELECT "end", post_usage_pending FROM usage_events WHERE id = ?')
      .get(second.id) as { end: string | null; post_usage_pending: number };
    expect(ended.end).not.toBeNull();
    expect(ended.post_usage_pending).toBe(1);
    const queued = st.db
      .prepare("SELECT payload FROM outbox WHERE kind = 'usage_event' ORDER BY id DESC LIMIT 1")
      .pluck()
      .get() as string;
    const payload = JSON.parse(queued) as { uuid: string; end: string | null };
    expect(payload).toMatchObject({ uuid: second.uuid, post_usage_pending: 1 });
    expect(payload.end).not.toBeNull();
  });

  // Mutation: forceEndTool marking the answers pending on a tool that has no post-usage form.
  it('leaves nothing pending when a tool with no post-usage questions is force-ended', async () => {
    const st = await openStation({ ...facilityBundle(), station: { tool: 'AFM' } }, clock);
    await logOn(st, 'sam');
    await st.call('toolControl.enable', {
      tool: 'AFM',
      project: 'Other',
      answers: { broken: 'No' },
    });
    const { usage } = (await st.call('toolControl.forceEnd', { tool: 'AFM' })) as {
      usage: UsageEventView;
    };
    expect(usage.end).not.toBeNull();
    expect(usage.post_usage_pending).toBe(false);
    expect(usage.reminder_due).toBe(false);
    expect(usage.run_data).toBe('{}');
    const s = (await st.call('usage.pending', {})) as { pending: unknown[] };
    expect(s.pending).toEqual([]);
  });
});
