/**
 * API token use is recorded in `api_tokens.last_used_at`, at most once a minute per token, so
 * that reading the API does not commit a write on every request.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../electron/core/db/open.js';
import { createAccount } from '../../electron/core/server/accounts.js';
import {
  authenticate,
  createApiToken,
  LAST_USED_RESOLUTION_MS,
} from '../../electron/core/server/auth.js';
import { openServerData } from '../../electron/core/server/dataDir.js';
import { createLogger } from '../../electron/core/util/log.js';
import { tempDir } from './helpers.js';

let db: Db | undefined;
afterEach(() => db?.close());

describe('API token use', () => {
  it('records last_used_at on first use, then at most once a minute', async () => {
    db = openServerData(join(tempDir(), 'server'));
    const { id } = await createAccount(db, {
      email: 'sam@example.org',
      password: 'staff password 1',
      role: 'staff',
    });
    const { token } = createApiToken(db, id);
    const lastUsed = (): string | null =>
      db!.prepare('SELECT last_used_at FROM api_tokens').pluck().get() as string | null;
    let now = Date.parse('2026-11-22T10:00:00Z');
    const deps = { db, log: createLogger('silent'), jwtSecret: 'x'.repeat(32), clock: () => now };

    expect(lastUsed()).toBeNull();
    const first = authenticate(deps, `Token ${token}`);
    expect(first).not.toBe('invalid');
    expect(first && first !== 'invalid' && first.account.email).toBe('sam@example.org');
    expect(lastUsed()).toBe('2026-11-22T10:00:00.000Z');

    now += LAST_USED_RESOLUTION_MS - 1;
    expect(authenticate(deps, `Token ${token}`)).not.toBe('invalid');
    expect(lastUsed()).toBe('2026-11-22T10:00:00.000Z');

    now += 1;
    expect(authenticate(deps, `Token ${token}`)).not.toBe('invalid');
    expect(lastUsed()).toBe('2026-11-22T10:01:00.000Z');

    expect(authenticate(deps, 'Token not-a-token')).toBe('invalid');
  });
});
