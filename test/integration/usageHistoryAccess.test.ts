/**
 * Who may read whose usage history at a station. The events hold people's answers (experiment
 * titles, samples, notes to staff): as on the server, where usage.recent is for staff and
 * usage.mine for anyone, staff see every event and everyone else only their own, whether or not
 * they are qualified on the tool.
 */
import { describe, expect, it } from 'vitest';
import type { UsageEventView } from '../../shared/api.js';
import type { Station } from '../../electron/core/station/station.js';
import { facilityBundle, goodPreAnswers } from '../fixtures/facility.js';
import { expectCode, openStation } from './stationFixture.js';

let now = Date.parse('2026-11-20T09:00:00Z');
const clock = (): number => now;

const pins = { alice: '1234', bob: '2345', sam: '9999' } as const;
type Login = keyof typeof pins;

async function logOnAs(st: Station, login: Login): Promise<void> {
  await st.call('session.logoff', {});
  await st.call('session.logon', { login, pin: pins[login] });
}

async function history(st: Station, args: Record<string, unknown> = {}): Promise<UsageEventView[]> {
  const { events } = (await st.call('usage.history', { tool: 'SEM', ...args })) as {
    events: UsageEventView[];
  };
  return events;
}

/** The usernames of the people the events bill, in the list's order. */
async function whose(st: Station, args: Record<string, unknown> = {}): Promise<string[]> {
  const username = st.db.prepare('SELECT username FROM users WHERE id = ?').pluck();
  return (await history(st, args)).map((e) => username.get(e.user_id) as string);
}

/** One ended usage of SEM by alice with her answers, and one by sam: two people's events. */
async function twoPeoplesUsage(): Promise<Station> {
  const st = await openStation({ ...facilityBundle(), station: { tool: 'SEM' } }, clock);
  for (const [login, project] of [
    ['alice', 'Cathodes'],
    ['sam', 'Other'],
  ] as const) {
    await logOnAs(st, login);
    await st.call('toolControl.enable', { tool: 'SEM', project, answers: goodPreAnswers });
    now += 60_000;
    await st.call('toolControl.disable', {
      tool: 'SEM',
      answers: { problem: 'No', notes: `${login}'s note to staff` },
    });
    now += 60_000;
  }
  return st;
}

describe('usage.history at a station', () => {
  it("refuses a person who is not staff someone else's usage, named in any way", async () => {
    const st = await twoPeoplesUsage();
    const aliceId = st.db
      .prepare("SELECT id FROM users WHERE username = 'alice'")
      .pluck()
      .get() as number;
    // bob is not even qualified on the tool.
    await logOnAs(st, 'bob');
    for (const user of ['alice', aliceId, '100200', 'sam']) {
      const refused = await expectCode(history(st, { user }), 'forbidden');
      expect(refused.message).toBe("only staff can see someone else's usage");
    }
    // A name nobody has is refused the same way: the answer tells nobody who exists.
    const unknown = await expectCode(history(st, { user: 'nobody' }), 'forbidden');
    expect(unknown.message).toBe("only staff can see someone else's usage");
    // Qualified, with usage of her own, alice may not read sam's either.
    await logOnAs(st, 'alice');
    await expectCode(history(st, { user: 'sam' }), 'forbidden');
    await expectCode(history(st, { user: 'sam', from: '2026-11-20' }), 'forbidden');
  });

  it('gives a person who is not staff only their own events when no user is asked for', async () => {
    const st = await twoPeoplesUsage();
    await logOnAs(st, 'bob');
    expect(await history(st)).toEqual([]);
    expect(await history(st, { user: 'bob' })).toEqual([]);
    await logOnAs(st, 'alice');
    const own = await history(st);
    expect(await whose(st)).toEqual(['alice']);
    expect(own[0]?.run_data).toContain("alice's note to staff");
    expect(JSON.stringify(own)).not.toContain("sam's note to staff");
    // Asking for herself, by name or badge, and with dates, is the same list.
    expect(await history(st, { user: 'alice' })).toEqual(own);
    expect(await history(st, { user: '100200', from: '2026-11-20', to: '2026-11-20' })).toEqual(
      own,
    );
  });

  it('gives staff every event, or those of the person asked for', async () => {
    const st = await twoPeoplesUsage();
    await logOnAs(st, 'sam');
    expect(await whose(st)).toEqual(['sam', 'alice']);
    expect((await history(st)).map((e) => e.run_data).join()).toContain("alice's note to staff");
    expect(await whose(st, { user: 'alice' })).toEqual(['alice']);
    expect(await whose(st, { user: 'bob' })).toEqual([]);
    await expectCode(history(st, { user: 'nobody' }), 'not_found');
  });
});
