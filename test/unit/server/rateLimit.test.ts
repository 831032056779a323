import { describe, expect, it } from 'vitest';
import { FailureLimiter, MAX_ADDRESSES } from '../../../electron/core/server/rateLimit.js';

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
});
