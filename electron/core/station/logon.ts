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

/**
 * Checks a username or badge number and PIN. Five wrong PINs in a row lock that login, for
 * `lockMinutes` the first time and twice as long each time after (lockLength) until a right
 * PIN, a new PIN or two days without a wrong one; the lock is kept in the database, so a restart
 * does not lift it. Callers must not run two checks at once (the Station queues them): the
 * count is read before the slow hash and written after it. `onLock` hears of each lock, for
 * the log.
 */
export async function checkLogon(
  db: Db,
  login: string,
  pin: string,
  now: Date,
  lockMinutes: number,
  onLock?: (lock: { user: string | null; until: string; locks: number }) => void,
): Promise<UserRow> {
  const user = findByLogin(db, login);
  const key = user ? `user:${user.id}` : `login:${login.toLowerCase()}`;
  const state = db.prepare('SELECT * FROM login_failures WHERE login_key = ?').get(key) as
    | { failures: number; locked_until: string | null; last_failure_at: string; locks: number }
    | undefined;
  if (state?.locked_until && state.locked_until > now.toISOString()) {
    throw new AppError(
      'locked',
      `too many wrong PINs: this login is locked until ${state.locked_until}`,
      { locked_until: state.locked_until },
    );
  }
  const hash = user?.pin_hash ?? DECOY_HASH;
  const good =
    (await verifySecret(pin, hash)) &&
    user !== undefined &&
    user.is_active === 1 &&
    user.pin_hash !== null;
  if (good) {
    db.prepare('DELETE FROM login_failures WHERE login_key = ?').run(key);
    return user;
  }
  const failures = (state && !state.locked_until ? state.failures : 0) + 1;
  // Two days without a wrong PIN start the locks' count again: a lock grows only for guesses
  // that go on.
  const lastFailure = state ? Date.parse(state.last_failure_at) : Number.NaN;
  const locks = state && now.getTime() - lastFailure < LOCKS_KEPT_MS ? state.locks : 0;
  const lockedUntil =
    failures >= MAX_PIN_FAILURES
      ? new Date(now.getTime() + lockLength(lockMinutes, locks) * 60_000).toISOString()
      : null;
  db.prepare(
    `INSERT INTO login_failures (login_key, failures, locked_until, last_failure_at, locks)
     VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (login_key) DO UPDATE SET failures = excluded.failures,
       locked_until = excluded.locked_until, last_failure_at = excluded.last_failure_at,
       locks = excluded.locks`,
  ).run(
    key,
    lockedUntil ? 0 : failures,
    lockedUntil,
    now.toISOString(),
    locks + (lockedUntil ? 1 : 0),
  );
  if (lockedUntil) {
    // The login typed is not logged: it may be a PIN typed into the wrong field.
    onLock?.({ user: user?.username ?? null, until: lockedUntil, locks: locks + 1 });
    throw new AppError('locked', `too many wrong PINs: this login is locked until ${lockedUntil}`, {
      locked_until: lockedUntil,
    });
  }
  const left = MAX_PIN_FAILURES - failures;
  throw new AppError(
    'unauthenticated',
    `unknown login or wrong PIN (${left} ${left === 1 ? 'try' : 'tries'} left before a lock)`,
  );
}
