import { describe, expect, it } from 'vitest';
import {
  clientKey,
  FailureLimiter,
  MAX_ADDRESSES,
} from '../../../electron/core/server/rateLimit.js';

describe('FailureLimiter', () => {
  it('refuses an address after the limit within the window, until the oldest ages out', () => {
    let now = 0;
    const limiter = new FailureLimiter(3, 60_000, () => now);
    for (let i = 0; i < 3; i++) {
      expect(limiter.blocked('a')).toBe(false);
      limiter.fail('a');
      now += 1_000;
    }
    expect(limiter.blocked('a')).toBe(true);
    expect(limiter.blocked('b')).toBe(false);
    expect(limiter.retryAfter('a')).toBe(57);
    now = 60_001;
    expect(limiter.blocked('a')).toBe(false);
  });

  it('holds checks under way to the places failures leave; the others wait for a place', async () => {
    const now = 0;
    const limiter = new FailureLimiter(3, 60_000, () => now);
    limiter.fail('a');
    expect(await limiter.enter('a')).toBe(true);
    expect(await limiter.enter('a')).toBe(true);
    // One failure and two under way fill the three places: the next waits.
    let third: boolean | null = null;
    const thirdDone = limiter.enter('a').then((got) => (third = got));
    await new Promise((resolve) => setImmediate(resolve));
    expect(third).toBeNull();
    expect(limiter.retryAfter('a')).toBe(1);
    expect(await limiter.enter('b')).toBe(true);
    // A success gives its place to the one waiting, and is not counted.
    expect(limiter.end('a', false)).toBe(1);
    await thirdDone;
    expect(third).toBe(true);
    let fourth: boolean | null = null;
    const fourthDone = limiter.enter('a').then((got) => (fourth = got));
    // Failures take the places for good: the one waiting is refused once they fill them.
    expect(limiter.end('a', true)).toBe(2);
    expect(limiter.end('a', true)).toBe(3);
    await fourthDone;
    expect(fourth).toBe(false);
    expect(await limiter.enter('a')).toBe(false);
    expect(limiter.retryAfter('a')).toBe(60);
  });

  it('refuses a check at once when ten per place wait already', async () => {
    const limiter = new FailureLimiter(1, 60_000, () => 0);
    expect(await limiter.enter('c')).toBe(true);
    const waiting = Array.from({ length: 10 }, () => limiter.enter('c'));
    expect(await limiter.enter('c')).toBe(false);
    // Each success hands the place on: all ten get in, one after another.
    for (const next of waiting) {
      limiter.end('c', false);
      expect(await next).toBe(true);
    }
    limiter.end('c', false);
    expect(limiter.retryAfter('c')).toBe(0);
  });

  it('names at least a second to wait while an address is refused, rounding up', () => {
    let now = 0;
    const limiter = new FailureLimiter(1, 60_000, () => now);
    limiter.fail('a');
    now = 58_200;
    expect(limiter.retryAfter('a')).toBe(2);
    now = 59_999;
    expect(limiter.blocked('a')).toBe(true);
    expect(limiter.retryAfter('a')).toBe(1);
  });

  it('keeps at most MAX_ADDRESSES addresses, the most recently failing ones', () => {
    let now = 0;
    const limiter = new FailureLimiter(2, 60_000, () => now);
    limiter.fail('first');
    limiter.fail('first');
    for (let i = 0; i < MAX_ADDRESSES + 500; i++) {
      now += 1;
      limiter.fail(`10.0.${i >> 8}.${i & 255}`);
    }
    // The oldest went; the newest is still counted.
    expect(limiter.blocked('first')).toBe(false);
    const last = `10.0.${(MAX_ADDRESSES + 499) >> 8}.${(MAX_ADDRESSES + 499) & 255}`;
    limiter.fail(last);
    expect(limiter.blocked(last)).toBe(true);
    expect(
      (limiter as unknown as { failures: Map<string, number[]> }).failures.size,
    ).toBeLessThanOrEqual(MAX_ADDRESSES);
  });

  it('counts an IPv6 address by its /64 and an IPv4-mapped one as its IPv4 address', () => {
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('0:0:0:0:0:FFFF:cb00:7107')).toBe('203.0.113.7');
    for (const address of ['2001:db8:7:1::1', '2001:0db8:0007:0001:aaaa:bbbb:cccc:dddd']) {
      expect(clientKey(address), address).toBe('2001:db8:7:1::/64');
    }
    expect(clientKey('2001:db8::7:1:0:0:1')).toBe('2001:db8:0:7::/64');
    expect(clientKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
    const limiter = new FailureLimiter(2, 60_000, () => 0);
    limiter.fail('2001:db8:7:1::1');
    limiter.fail('2001:db8:7:1::2');
    expect(limiter.blocked('2001:db8:7:1::3')).toBe(true);
    expect(limiter.blocked('2001:db8:7:2::1')).toBe(false);
  });
});
