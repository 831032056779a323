/**
 * The log-on at a station (electron/core/station/logon.ts): a rule a hand-mutation review
 * found held by no other test.
 */
import { describe, expect, it } from 'vitest';
import type { CoreEvent } from '../../shared/api.js';
import type { AppError } from '../../electron/core/util/errors.js';
import { MAX_STATION_FAILURES } from '../../electron/core/station/logon.js';
import { importBundle } from '../../electron/core/station/facility.js';
import { Station } from '../../electron/core/station/station.js';
import { createLogger } from '../../electron/core/util/log.js';
import { facilityBundle } from '../fixtures/facility.js';
import { runCli, tempDir } from './helpers.js';
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

  // A lock's end was compared with the PC's clock as it was when the lock began: set back 3
  // hours since, it kept a 5-minute lock for 3 hours.
  it('keeps a lock no longer than its length, when the PC clock is set back meanwhile', async () => {
    let now = Date.parse('2026-11-20T09:00:00Z');
    const st = await openStation(facilityBundle(), () => now);
    for (let i = 0; i < 5; i++) {
      await expectCode(
        st.call('session.logon', { login: 'alice', pin: '0000' }),
        i < 4 ? 'unauthenticated' : 'locked',
      );
    }
    // A minute later the clock is set back 3 hours. How long ago the lock began cannot be told
    // by the clock: it lasts its 5 minutes from now, not 3 hours and 4 minutes.
    now += 60_000 - 3 * 3_600_000;
    const locked = await expectCode(
      st.call('session.logon', { login: 'alice', pin: '1234' }),
      'locked',
    );
    expect((locked.details as { locked_until: string }).locked_until).toBe(
      new Date(now + 5 * 60_000).toISOString(),
    );
    now += 5 * 60_000 + 1000;
    await st.call('session.logon', { login: 'alice', pin: '1234' });
  });

  // Mutation: no lock across logins, as it was: one PIN tried on every login ("spraying")
  // never reached five wrong on any one of them, and five on one login after another only
  // locked each in turn.
  it('locks log-on at the station after wrong PINs across logins, longer each time', async () => {
    let now = Date.parse('2026-11-20T09:00:00Z');
    const st = await openStation(facilityBundle(), () => now);
    const guess = (login: string): Promise<unknown> =>
      st.call('session.logon', { login, pin: '0000' }).then(
        () => expect.fail(`${login} logged on`),
        (error: AppError) => error,
      );
    const code = async (login: string): Promise<string> => ((await guess(login)) as AppError).code;
    /** `count` wrong PINs on logins named `prefix0`, `prefix1`, ...: the codes answered. */
    const spray = async (prefix: string, count: number): Promise<string[]> => {
      const codes: string[] = [];
      for (let i = 0; i < count; i++) codes.push(await code(`${prefix}${i}`));
      return codes;
    };
    const unauthenticated = (n: number): string[] => Array<string>(n).fill('unauthenticated');
    const lockEnd = (error: unknown): number =>
      Date.parse(((error as AppError).details as { locked_until: string }).locked_until);
    // Typos that end in a right PIN count for nothing.
    for (let i = 0; i < 4; i++) expect(await code('bob')).toBe('unauthenticated');
    await st.call('session.logon', { login: 'bob', pin: '2345' });
    await st.call('session.logoff', {});
    // Wrong PINs more than ten minutes before the right one, maybe another's guesses, count.
    for (let i = 0; i < 4; i++) expect(await code('alice')).toBe('unauthenticated');
    now += 11 * 60_000;
    await st.call('session.logon', { login: 'alice', pin: '1234' });
    await st.call('session.logoff', {});
    // One login counts at most five, however often it is locked: sam forgot his PIN.
    for (let lock = 0; lock < 3; lock++) {
      for (let i = 0; i < 5; i++)
        expect(await code('sam')).toBe(i < 4 ? 'unauthenticated' : 'locked');
      now = lockEnd(await guess('sam')) + 1000;
    }
    // Five on one login after another: the station locks at the thirtieth that counts.
    expect(MAX_STATION_FAILURES).toBe(30);
    for (let i = 0; i < 20; i++)
      expect(await code(`one${Math.floor(i / 5)}`)).toBe(
        i % 5 === 4 ? 'locked' : 'unauthenticated',
      );
    const first = (await guess('one4')) as AppError;
    expect(first.code).toBe('locked');
    expect(first.details).toMatchObject({ scope: 'station' });
    expect(first.message).toMatch(/at this station: log-on here is locked until/);
    expect(lockEnd(first) - now).toBe(5 * 60_000);
    // Every log-on waits, a right PIN too, until the lock ends.
    now += 4 * 60_000;
    const refused = await expectCode(
      st.call('session.logon', { login: 'alice', pin: '1234' }),
      'locked',
    );
    expect(refused.details).toMatchObject({ scope: 'station' });
    now += 60_000 + 1000;
    await st.call('session.logon', { login: 'alice', pin: '1234' });
    await st.call('session.logoff', {});
    // Only guesses after the lock count, on the logins it locked too (their own locks over).
    // The thirtieth also locks its login: the station's lock is the one answered. It is twice
    // as long as the first.
    for (let i = 0; i < 29; i++)
      expect(
        await code(i < 20 ? `one${Math.floor(i / 5)}` : `two${Math.floor((i - 20) / 5)}`),
      ).toBe(i % 5 === 4 ? 'locked' : 'unauthenticated');
    const second = (await guess('two1')) as AppError;
    expect(second.details).toMatchObject({ scope: 'station' });
    expect(lockEnd(second) - now).toBe(10 * 60_000);
    // A day spreads the count out: twenty-nine a day lock nothing.
    now = lockEnd(second) + 1000;
    for (let day = 0; day < 2; day++) {
      expect(await spray(`slow${day}-`, MAX_STATION_FAILURES - 1)).toEqual(
        unauthenticated(MAX_STATION_FAILURES - 1),
      );
      now += 24 * 60 * 60_000 + 1000;
    }
    await st.call('session.logon', { login: 'alice', pin: '1234' });
  });

  // `labstation unlock`, run as the person in charge of the station PC runs it, beside the
  // running station (the built command; needs `npm run build`).
  it("lifts the station's lock and a login's from the command line, keeping their counts", async () => {
    const dataDir = tempDir();
    const st = Station.open({ dataDir, log: createLogger('silent') });
    await importBundle(st.db, facilityBundle());
    const wrong = (login: string): Promise<string> =>
      st.call('session.logon', { login, pin: '0000' }).then(
        () => expect.fail(`${login} logged on`),
        (error: AppError) => error.code,
      );
    for (let i = 0; i < MAX_STATION_FAILURES; i++) await wrong(`guess${i}`);
    await expectCode(st.call('session.logon', { login: 'alice', pin: '1234' }), 'locked');
    const lifted = await runCli(['unlock', '--data', dataDir]);
    expect(lifted.stderr).toBe('');
    expect(lifted.stdout).toMatch(
      /^log-on at this station unlocked \(it was locked until \S+\)\n$/,
    );
    expect(lifted.code).toBe(0);
    await st.call('session.logon', { login: 'alice', pin: '1234' });
    await st.call('session.logoff', {});
    expect(await runCli(['unlock', '--data', dataDir])).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'log-on at this station is not locked\n',
    });
    // The guesses before the lifted lock do not count again; its count of locks stays.
    for (let i = 0; i < MAX_STATION_FAILURES - 1; i++)
      expect(await wrong(`guess${i}`)).toBe('unauthenticated');
    const next = await expectCode(
      st.call('session.logon', { login: 'again', pin: '0000' }),
      'locked',
    );
    const until = Date.parse((next.details as { locked_until: string }).locked_until);
    const minutes = (until - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(9);
    expect(minutes).toBeLessThanOrEqual(10);
    // One login, by its badge or its username (as typed at the screen, spaces around); the
    // station's lock stays, and the answer says so.
    await runCli(['unlock', '--data', dataDir]);
    for (let i = 0; i < 5; i++) await wrong('alice');
    for (let i = 0; i < MAX_STATION_FAILURES - 5; i++) await wrong(`more${i}`);
    await expectCode(st.call('session.logon', { login: 'bob', pin: '2345' }), 'locked');
    expect(await runCli(['unlock', '--data', dataDir, '--login', ' 100200 '])).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(
        /^the login "100200" unlocked \(it was locked until \S+\); log-on at this station stays locked until \S+\n$/,
      ) as string,
    });
    await runCli(['unlock', '--data', dataDir]);
    await st.call('session.logon', { login: 'alice', pin: '1234' });
    await st.call('session.logoff', {});
    for (let i = 0; i < 5; i++) await wrong('bob');
    for (let i = 0; i < 5; i++) await wrong('sam');
    await expectCode(st.call('session.logon', { login: 'bob', pin: '2345' }), 'locked');
    expect(await runCli(['unlock', '--data', dataDir, '--login', 'bob'])).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(
        /^the login "bob" unlocked \(it was locked until \S+\)\n$/,
      ) as string,
    });
    // Its count of locks stays: five more wrong lock it for ten minutes.
    for (let i = 0; i < 4; i++) await wrong('bob');
    const bobAgain = await expectCode(
      st.call('session.logon', { login: 'bob', pin: '0000' }),
      'locked',
    );
    const bobMinutes =
      (Date.parse((bobAgain.details as { locked_until: string }).locked_until) - Date.now()) /
      60_000;
    expect(bobMinutes).toBeGreaterThan(9);
    await runCli(['unlock', '--data', dataDir, '--login', 'bob']);
    await st.call('session.logon', { login: 'bob', pin: '2345' });
    // Others' locks stay.
    await expectCode(st.call('session.logon', { login: 'sam', pin: '9999' }), 'locked');
    expect(await runCli(['unlock', '--data', dataDir, '--login', 'nobody'])).toMatchObject({
      code: 1,
      stderr: 'the login "nobody" is not locked\n',
    });
    expect(await runCli(['unlock', '--data', dataDir, '--login', ' '])).toMatchObject({ code: 2 });
    st.close();
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
