import { describe, expect, it } from 'vitest';
import { accountKey, AccountLoginLimit } from '../../../electron/core/server/accountLimit.js';

const DAY = 24 * 3600_000;

describe('AccountLoginLimit', () => {
  it('holds an account after the limit of failures from many addresses, in any case', async () => {
    let now = 0;
    const limit = new AccountLoginLimit(3, 60_000, () => now);
    for (let i = 1; i <= 3; i++) {
      const pass = await limit.enter('kim@example.org', `198.51.100.${i}`);
      expect(pass).toBe('entered');
      expect(limit.end('kim@example.org', pass!, true)).toBe(i);
      now += 1_000;
    }
    expect(await limit.enter('KIM@example.org ', '198.51.100.9')).toBeNull();
    expect(limit.retryAfter('kim@example.org')).toBe(57);
    // Another account is not held.
    expect(await limit.enter('root@example.org', '198.51.100.9')).toBe('entered');
    now = 60_001;
    expect(await limit.enter('kim@example.org', '198.51.100.9')).toBe('entered');
  });

  it('lets an address the account logged in from through, and counts its failures', async () => {
    let now = 0;
    const limit = new AccountLoginLimit(2, 60_000, () => now);
    const first = await limit.enter('kim@example.org', '203.0.113.5');
    expect(limit.end('kim@example.org', first!, false)).toBe(0);
    limit.succeeded('kim@example.org', '203.0.113.5');
    for (const address of ['198.51.100.1', '198.51.100.2']) {
      limit.end('kim@example.org', (await limit.enter('kim@example.org', address))!, true);
    }
    expect(await limit.enter('kim@example.org', '198.51.100.3')).toBeNull();
    expect(await limit.enter('kim@example.org', '203.0.113.5')).toBe('known');
    expect(limit.end('kim@example.org', 'known', true)).toBe(3);
    // Known for the account only, and by the IPv6 /64 as addresses are counted.
    expect(await limit.enter('root@example.org', '203.0.113.5')).toBe('entered');
    limit.succeeded('Kim@Example.org', '2001:db8:1:2::10');
    expect(await limit.enter('kim@example.org', '2001:db8:1:2::99')).toBe('known');
    // Forgotten 30 days after its last log-in.
    now += 30 * DAY + 1;
    expect(await limit.enter('kim@example.org', '203.0.113.5')).toBe('entered');
  });

  it('remembers the ten addresses an account logged in from most recently', async () => {
    let now = 0;
    const limit = new AccountLoginLimit(1, 60_000, () => now);
    for (let i = 0; i <= 10; i++) {
      limit.succeeded('kim@example.org', `198.51.100.${i}`);
      now += 1;
    }
    limit.end('kim@example.org', (await limit.enter('kim@example.org', '203.0.113.1'))!, true);
    expect(await limit.enter('kim@example.org', '198.51.100.0')).toBeNull();
    expect(await limit.enter('kim@example.org', '198.51.100.1')).toBe('known');
    expect(await limit.enter('kim@example.org', '198.51.100.10')).toBe('known');
  });

  it('counts an account under its address trimmed and in lower case', () => {
    expect(accountKey('  Kim@Example.ORG ')).toBe('kim@example.org');
  });
});
