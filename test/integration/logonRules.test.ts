/**
 * The log-on at a station (electron/core/station/logon.ts): a rule a hand-mutation review
 * found held by no other test.
 */
import { describe, expect, it } from 'vitest';
import type { CoreEvent } from '../../shared/api.js';
import type { AppError } from '../../electron/core/util/errors.js';
import type { Station } from '../../electron/core/station/station.js';
import { facilityBundle } from '../fixtures/facility.js';
import { expectCode, openStation } from './stationFixture.js';

const clock = (): number => Date.parse('2026-11-20T09:00:00Z');

async function station(): Promise<Station> {
  return openStation(facilityBundle(), clock);
}

describe('log-on', () => {
  // Mutation: checkLogon keeping the count of wrong PINs after a right one.
  it('counts only wrong PINs in a row: a right one starts the count again', async () => {
    const st = await station();
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 4; i++) {
        await expectCode(
          st.call('session.logon', { login: 'alice', pin: '0000' }),
          'unauthenticated',
        );
      }
      await st.call('session.logon', { login: 'alice', pin: '1234' });
      await st.call('session.logoff', {});
    }
    expect(st.db.prepare('SELECT login_key FROM login_failures').all()).toEqual([]);
  });

  // Mutation: every lock `security.lockMinutes` long, as it was: five guesses every five
  // minutes, unattended, found a four-digit PIN in days.
  it('locks a login twice as long each time, until a right PIN, at most a day', async () => {
    let now = Date.parse('2026-11-20T09:00:00Z');
    const st = await openStation(facilityBundle(), () => now);
    const fiveWrong = async (): Promise<number> => {
      let error: AppError | undefined;
      for (let i = 0; i < 5; i++) {
        error = await expectCode(
          st.call('session.logon', { login: 'alice', pin: '0000' }),
          i < 4 ? 'unauthenticated' : 'locked',
        );
      }
      const until = (error?.details as { locked_until: string }).locked_until;
      return (Date.parse(until) - now) / 60_000;
    };
    const lengths: number[] = [];
    for (let lock = 0; lock < 11; lock++) {
      lengths.push(await fiveWrong());
      // Locked: even the right PIN is refused until the lock ends.
      await expectCode(st.call('session.logon', { login: 'alice', pin: '1234' }), 'locked');
      now += lengths[lengths.length - 1] * 60_000 + 1000;
    }
    expect(lengths).toEqual([5, 10, 20, 40, 80, 160, 320, 640, 1280, 1440, 1440]);
    // A right PIN after a lock starts the count again.
    await st.call('session.logon', { login: 'alice', pin: '1234' });
    await st.call('session.logoff', {});
    expect(await fiveWrong()).toBe(5);
    now += 5 * 60_000 + 1000;
    expect(await fiveWrong()).toBe(10);
    // So do two days without a wrong PIN.
    now += 48 * 60 * 60_000;
    expect(await fiveWrong()).toBe(5);
    // And a new PIN (an admin's, synced from the server) lifts the lock at once: someone kept
    // out by another's guesses gets back in with it.
    const pinHash = st.db
      .prepare("SELECT pin_hash FROM users WHERE username = 'bob'")
      .pluck()
      .get();
    st.db.prepare("UPDATE users SET pin_hash = ? WHERE username = 'alice'").run(pinHash);
    await st.call('session.logon', { login: 'alice', pin: '2345' });
  });

  // Mutation: the time of input taken before the call ran, as it was: refused calls, which
  // any program on the machine can make, kept the session of whoever was logged on open.
  it('counts only calls that did something as input against the idle log-off', async () => {
    let now = Date.parse('2026-11-20T09:00:00Z');
    const st = await openStation(facilityBundle(), () => now);
    await st.call('session.logon', { login: 'alice', pin: '1234' });
    for (let minute = 0; minute < 11; minute++) {
      now += 60_000;
      // Forbidden to alice; once she is logged off, "log on first".
      await st.call('settings.get', {}).then(
        () => expect.fail('settings.get answered'),
        (error: AppError) => expect(['forbidden', 'unauthenticated']).toContain(error.code),
      );
      await st.call('session.logon', { login: 'nobody', pin: '0000' }).catch(() => undefined);
      st.checkIdle();
    }
    expect(((await st.call('session.current', {})) as { session: unknown }).session).toBeNull();
  });

  // Mutation: the harvest and reservation calls reading the session as it was, unchecked:
  // an account the server turned off still saw the files' usage answers until its next action.
  it('logs off an account turned off since, at any call that reads who is logged on', async () => {
    const st = await station();
    await st.call('session.logon', { login: 'alice', pin: '1234' });
    st.db.prepare("UPDATE users SET is_active = 0 WHERE username = 'alice'").run();
    const events: CoreEvent[] = [];
    st.events.on('event', (event) => events.push(event));
    await st.call('reservations.upcoming', {});
    expect(events).toContainEqual({ type: 'session.changed', reason: 'deactivated' });
  });
});
