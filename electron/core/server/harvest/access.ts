/**
 * UserInstrumentAccess: the grants that let a regular user read an instrument's files and
 * their transfers. Admins manage them; admins need none.
 */
import { z } from 'zod';
import type { Db } from '../../db/open.js';
import { NotFound, ValidationProblems, parseBody, problem } from './problems.js';
import { idSchema } from './resource.js';

export const grantOut = z
  .object({ user_id: z.number().int(), granted_at: z.string() })
  .meta({ id: 'AccessGrant' });
export type GrantOut = z.infer<typeof grantOut>;
export const grantIn = z.object({ user_id: idSchema }).strict();

function requireInstrument(db: Db, instrumentId: number): void {
  if (!db.prepare('SELECT 1 FROM instruments WHERE id = ?').get(instrumentId)) {
    throw new NotFound(`no instrument with id ${instrumentId}`);
  }
}

export function listGrants(db: Db, instrumentId: number): GrantOut[] {
  requireInstrument(db, instrumentId);
  return db
    .prepare(
      `SELECT user_id, granted_at FROM user_instrument_access WHERE instrument_id = ?
       ORDER BY user_id`,
    )
    .all(instrumentId) as GrantOut[];
}

/** Grants access; a grant that exists is returned as it is (`created` false). */
export function grant(
  db: Db,
  instrumentId: number,
  body: unknown,
  grantedBy: number,
  now: string,
): { grant: GrantOut; created: boolean } {
  requireInstrument(db, instrumentId);
  const { user_id: userId } = parseBody(grantIn, body);
  if (!db.prepare('SELECT 1 FROM users WHERE id = ?').get(userId)) {
    throw new ValidationProblems([
      problem(['body', 'user_id'], `no user with id ${userId}`, 'missing_reference'),
    ]);
  }
  const inserted = db
    .prepare(
      `INSERT INTO user_instrument_access (instrument_id, user_id, granted_at, granted_by_id)
       VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .run(instrumentId, userId, now, grantedBy).changes;
  const row = db
    .prepare(
      'SELECT user_id, granted_at FROM user_instrument_access WHERE instrument_id = ? AND user_id = ?',
    )
    .get(instrumentId, userId) as GrantOut;
  return { grant: row, created: inserted > 0 };
}

export function revoke(db: Db, instrumentId: number, userId: number): void {
  requireInstrument(db, instrumentId);
  const removed = db
    .prepare('DELETE FROM user_instrument_access WHERE instrument_id = ? AND user_id = ?')
    .run(instrumentId, userId).changes;
  if (!removed) {
    throw new NotFound(`user ${userId} has no access to instrument ${instrumentId}`);
  }
}
