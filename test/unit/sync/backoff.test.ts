import { describe, expect, it } from 'vitest';
import { Backoff } from '../../../electron/core/sync/backoff.js';

// The station retries an unreachable server through these delays: too short, and a facility's
// stations hammer a server coming back; never capped, and a station back online waits hours.
describe('Backoff', () => {
  it('doubles the wait after each failure, up to the cap, and starts over after a reset', () => {
    const highest = new Backoff(500, 30_000, () => 1);
    const ceilings = Array.from({ length: 10 }, () => highest.fail());
    expect(ceilings).toEqual([500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000, 30_000]);
    expect(highest.attempts).toBe(10);
    highest.reset();
    expect(highest.attempts).toBe(0);
    expect(highest.fail()).toBe(500);
  });

  it('waits between half and all of the ceiling, so stations that lost the server together part', () => {
    const lowest = new Backoff(500, 30_000, () => 0);
    expect([lowest.fail(), lowest.fail(), lowest.fail()]).toEqual([250, 500, 1000]);
    const any = new Backoff(500, 30_000);
    for (let n = 0; n < 40; n += 1) {
      const ceiling = Math.min(30_000, 500 * 2 ** n);
      const delay = any.fail();
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });
});
