import type { Db } from '../db/open.js';
import { AppError } from '../util/errors.js';
import { verifySecret } from '../util/pin.js';
import type { UserRow } from './records.js';

export const MAX_PIN_FAILURES = 5;
/** The longest lock, however many came before it. */
export const MAX_LOCK_MINUTES = 24 * 60;
/** How long after the last wrong PIN the count of locks is kept: longer than the longest lock. */
const LOCKS_KEPT_MS = 2 * MAX_LOCK_MINUTES * 60_000;
/**
 * Wrong PINs at this station within STATION_WINDOW_MS, counted across logins (stationWide),
 * that lock every log-on at it: one PIN tried on every login ("spraying") never reaches five on
 * any one of them, and five on one login after another only locked each in turn. Over a day
 * rather than an hour: an hour's budget, spent every hour, let through hundreds a day.
 */
export const MAX_STATION_FAILURES = 30;
/** How far back wrong PINs count towards the station's lock. */
const STATION_WINDOW_MS = 24 * 60 * 60_000;
/**
 * Wrong PINs this long before their login's right PIN are taken for its typos and forgotten;
 * older ones, which may be another's guesses, still count.
 */
const TYPOS_FORGOTTEN_MS = 10 * 60_000;
/** The station's own row in login_failures, beside the logins' `user:ID` and `login:NAME`. */
const STATION_KEY = 'station';

interface FailureState {
  failures: number;
  locked_until: string | null;
  last_failure_at: string;
  locks: number;
}

/** What a lock is of: one login, or every log-on at the station. */
export interface LockNotice {
  scope: 'login' | 'station';
  user: string | null;
  until: string;
  locks: number;
}

/**
 * A hash to verify against where there is none (an unknown login, an account without a PIN or
 * password), so the answer takes as long as for a real one and timing does not tell which
 * usernames, badges or e-mails exist. argon2id with argon2.ts's parameters, of 32 random bytes
 * that were thrown away once hashed: no PIN or password that anyone knows matches it, should a
 * caller forget to refuse such an account. A constant rather than one made at each start, which
 * cost every station and server 0.3 CPU s and a worker; a test checks that its parameters are
 * still the ones argon2Hash uses (a decoy with cheaper ones would answer faster).
 */
export const DECOY_HASH =
  '$argon2id$v=19$m=19456,t=2,p=1$EoPdwtT+UtvrYFx42CTO/w$dtQiC8o8e5FBr5BTP6GCIKeV1VhKNmLClF//w9mTgUc';

function findByLogin(db: Db, login: string): UserRow | undefined {
  return db
    .prepare(
      'SELECT * FROM users WHERE username = ? OR badge_number = ? ORDER BY username = ? DESC LIMIT 1',
    )
    .get(login, login, login) as UserRow | undefined;
}

/**
 * How long the next lock of a login lasts that has been locked `locks` times since its last
 * right PIN: `lockMinutes`, then twice that each time, up to a day. With a lock that never
 * grew, five guesses every five minutes found a four-digit PIN in days.
 */
export function lockLength(lockMinutes: number, locks: number): number {
  return Math.min(lockMinutes * 2 ** Math.min(locks, 20), Math.max(lockMinutes, MAX_LOCK_MINUTES));
}

/** The key of a login's row in login_failures: its user's, else the login as typed. */
function loginKey(login: string, user: UserRow | undefined): string {
  return user ? `user:${user.id}` : `login:${login.toLowerCase()}`;
}

/**
 * A login's (or the station's) row of login_failures, as the PC's clock reads it now. One
 * written later than now was written before the clock was set back: its times are moved back
 * with it, so that a lock lasts at most the time it was given (from the first read after the
 * clock went back: how long before that it began, the clock cannot tell), not that and as long
 * again as the clock went back (a 5-minute lock, the clock set back 3 hours, lasted 3 hours).
 */
function failureState(db: Db, key: string, now: Date): FailureState | undefined {
  const state = db.prepare('SELECT * FROM login_failures WHERE login_key = ?').get(key) as
    FailureState | undefined;
  if (!state || state.last_failure_at <= now.toISOString()) return state;
  const back = Date.parse(state.last_failure_at) - now.getTime();
  const moved: FailureState = {
    ...state,
    last_failure_at: now.toISOString(),
    locked_until:
      state.locked_until === null
        ? null
        : new Date(Date.parse(state.locked_until) - back).toISOString(),
  };
  saveFailureState(db, key, moved);
  return moved;
}

/** Writes a login's (or the station's) row of login_failures as it is now. */
function saveFailureState(db: Db, key: string, state: FailureState): void {
  db.prepare(
    `INSERT INTO login_failures (login_key, failures, locked_until, last_failure_at, locks)
     VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (login_key) DO UPDATE SET failures = excluded.failures,
       locked_until = excluded.locked_until, last_failure_at = excluded.last_failure_at,
       locks = excluded.locks`,
  ).run(key, state.failures, state.locked_until, state.last_failure_at, state.locks);
}

/** The end of the row's lock, when it is locked now. */
function lockedNow(state: FailureState | undefined, now: Date): string | null {
  const until = state?.locked_until ?? null;
  return until !== null && until > now.toISOString() ? until : null;
}

/** When a lock made now ends, the row having had `locks` before it (lockLength). */
function lockEnd(now: Date, lockMinutes: number, locks: number): string {
  return new Date(now.getTime() + lockLength(lockMinutes, locks) * 60_000).toISOString();
}

/** The locks counted so far, unless the last wrong PIN is two days old. */
function locksKept(state: FailureState | undefined, now: Date): number {
  if (!state) return 0;
  return now.getTime() - Date.parse(state.last_failure_at) < LOCKS_KEPT_MS ? state.locks : 0;
}

function lockedError(until: string, scope: LockNotice['scope']): AppError {
  return new AppError(
    'locked',
    scope === 'station'
      ? `too many wrong PINs at this station: log-on here is locked until ${until}`
      : `too many wrong PINs: this login is locked until ${until}`,
    { locked_until: until, scope },
  );
}

/** The end of the lock on every log-on at the station, when there is one now. */
export function stationLockedUntil(db: Db, now: Date): string | null {
  return lockedNow(failureState(db, STATION_KEY, now), now);
}

/**
 * After a wrong PIN (noted in wrong_pins): the station's lock, when the wrong PINs of the last
 * day, since its last lock ended, add up to MAX_STATION_FAILURES across logins. Each login
 * counts at most MAX_PIN_FAILURES: one person who forgot their PIN, locked again and again,
 * does not lock everyone out; guessing on one login is its own lock's business. A right PIN
 * takes its login's wrong ones of the minutes before out (typos that end in it count for
 * nothing). The station's locks grow as a login's do (lockLength), their count kept two days
 * after the last. Null when the station stays open.
 */
function stationWide(
  db: Db,
  now: Date,
  lockMinutes: number,
): { until: string; locks: number } | null {
  const station = failureState(db, STATION_KEY, now);
  const since = Math.max(
    now.getTime() - STATION_WINDOW_MS,
    station?.locked_until ? Date.parse(station.locked_until) : 0,
  );
  const wrong = db
    .prepare(
      `SELECT coalesce(sum(min(n, ?)), 0) FROM (
         SELECT count(*) AS n FROM wrong_pins WHERE at >= ? AND at <= ? GROUP BY login_key)`,
    )
    .pluck()
    .get(MAX_PIN_FAILURES, new Date(since).toISOString(), now.toISOString()) as number;
  if (wrong < MAX_STATION_FAILURES) return null;
  const locks = locksKept(station, now);
  const until = lockEnd(now, lockMinutes, locks);
  saveFailureState(db, STATION_KEY, {
    failures: 0,
    locked_until: until,
    last_failure_at: now.toISOString(),
    locks: locks + 1,
  });
  return { until, locks: locks + 1 };
}

/** Notes a wrong PIN for the station's count, and lets go of those older than it reads. */
function noteWrongPin(db: Db, key: string, now: Date): void {
  db.prepare('DELETE FROM wrong_pins WHERE at <= ?').run(
    new Date(now.getTime() - STATION_WINDOW_MS).toISOString(),
  );
  db.prepare('INSERT INTO wrong_pins (login_key, at) VALUES (?, ?)').run(key, now.toISOString());
}

/**
 * Checks a username or badge number and PIN. Five wrong PINs in a row lock that login, for
 * `lockMinutes` the first time and twice as long each time after (lockLength) until a right
 * PIN, a new PIN or two days without a wrong one; the lock is kept in the database, so a restart
 * does not lift it. Wrong PINs across logins lock every log-on at the station the same way
 * (stationWide), until the lock ends or is lifted (liftLock): no right PIN lifts it, or
 * guessing would go on through one's own login. Callers must not run two checks at once (the
 * Station queues them): the counts are read before the slow hash and written after it, in one
 * commit. `onLock` hears of each lock, for the log.
 */
export async function checkLogon(
  db: Db,
  login: string,
  pin: string,
  now: Date,
  lockMinutes: number,
  onLock?: (lock: LockNotice) => void,
): Promise<UserRow> {
  const stationUntil = stationLockedUntil(db, now);
  if (stationUntil !== null) throw lockedError(stationUntil, 'station');
  const user = findByLogin(db, login);
  const key = loginKey(login, user);
  const state = failureState(db, key, now);
  const loginUntil = lockedNow(state, now);
  if (loginUntil !== null) throw lockedError(loginUntil, 'login');
  const hash = user?.pin_hash ?? DECOY_HASH;
  const good =
    (await verifySecret(pin, hash)) &&
    user !== undefined &&
    user.is_active === 1 &&
    user.pin_hash !== null;
  if (good) {
    db.transaction(() => {
      db.prepare('DELETE FROM login_failures WHERE login_key = ?').run(key);
      db.prepare('DELETE FROM wrong_pins WHERE login_key = ? AND at >= ?').run(
        key,
        new Date(now.getTime() - TYPOS_FORGOTTEN_MS).toISOString(),
      );
    })();
    return user;
  }
  const failures = (state && !state.locked_until ? state.failures : 0) + 1;
  // Two days without a wrong PIN start the locks' count again: a lock grows only for guesses
  // that go on.
  const locks = locksKept(state, now);
  const lockedUntil = failures >= MAX_PIN_FAILURES ? lockEnd(now, lockMinutes, locks) : null;
  const stationLock = db.transaction(() => {
    saveFailureState(db, key, {
      failures: lockedUntil ? 0 : failures,
      locked_until: lockedUntil,
      last_failure_at: now.toISOString(),
      locks: locks + (lockedUntil ? 1 : 0),
    });
    noteWrongPin(db, key, now);
    return stationWide(db, now, lockMinutes);
  })();
  if (lockedUntil) {
    // The login typed is not logged: it may be a PIN typed into the wrong field.
    onLock?.({
      scope: 'login',
      user: user?.username ?? null,
      until: lockedUntil,
      locks: locks + 1,
    });
  }
  if (stationLock) {
    onLock?.({ scope: 'station', user: null, ...stationLock });
    throw lockedError(stationLock.until, 'station');
  }
  if (lockedUntil) throw lockedError(lockedUntil, 'login');
  const left = MAX_PIN_FAILURES - failures;
  throw new AppError(
    'unauthenticated',
    `unknown login or wrong PIN (${left} ${left === 1 ? 'try' : 'tries'} left before a lock)`,
  );
}

/**
 * Lifts the lock of every log-on at the station (`login` undefined) or of one login (a
 * username or badge number), as its end would: it ends now, and its count of locks stays, so
 * a next lock lasts as long as it would have. For the person in charge of the station PC
 * (`labstation unlock`) when wrong PINs keep people out. The lock's end as it was, or null
 * when there was no lock to lift.
 */
export function liftLock(db: Db, now: Date, login?: string): string | null {
  let key = STATION_KEY;
  if (login !== undefined) {
    key = loginKey(login, findByLogin(db, login));
  }
  const at = now.toISOString();
  // Read and ended in one write transaction: the running station may lock again meanwhile.
  return db
    .transaction(() => {
      const until = lockedNow(failureState(db, key, now), now);
      if (until === null) return null;
      // Ended now rather than taken away: the station counts the wrong PINs since its end.
      db.prepare('UPDATE login_failures SET locked_until = ? WHERE login_key = ?').run(at, key);
      return until;
    })
    .immediate();
}
