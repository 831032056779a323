import { describe, expect, it } from 'vitest';
import { validate, version } from 'uuid';
import { newUuid } from '../../electron/core/util/ids.js';
import { randomBelow, randomPoolBytes } from '../../electron/core/util/random.js';

/** The 48-bit millisecond time at the head of a v7 UUID. */
function timeOf(uuid: string): number {
  return parseInt(uuid.replace(/-/g, '').slice(0, 12), 16);
}

describe('newUuid (v7, RFC 9562)', () => {
  it('is a valid version 7 UUID with the RFC variant', () => {
    for (let i = 0; i < 1000; i++) {
      const id = newUuid();
      expect(validate(id)).toBe(true);
      expect(version(id)).toBe(7);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });

  it('carries the clock in milliseconds', () => {
    // A time later than any made so far by this process, so it is taken as it is.
    const at = Date.now() + 10_000_000_123;
    expect(timeOf(newUuid(() => at))).toBe(at);
  });

  it('sorts in the order made, within one millisecond and when the clock steps back', () => {
    const base = Date.now() + 20_000_000_000;
    const clock = [base, base, base, base - 5_000, base - 5_000, base + 1, base + 1];
    const made: string[] = [];
    for (const at of clock) made.push(newUuid(() => at));
    for (let n = 0; n < 5000; n++) made.push(newUuid(() => base + 2));
    expect([...made].sort()).toEqual(made);
    expect(new Set(made).size).toBe(made.length);
    // A clock that went back keeps the last time it gave.
    expect(timeOf(made[3])).toBe(base);
  });

  it('counts up within one millisecond, from a start that leaves room for 2^30 more', () => {
    const at = Date.now() + 30_000_000_000;
    let previous = newUuid(() => at);
    // The counter (31 bits: rand_a and the top 19 bits of rand_b) starts below 2^30, so at
    // least 2^30 UUIDs fit in one millisecond before it moves on to the next.
    const counterOf = (u: string) => {
      const hex = u.replace(/-/g, '');
      const bits = BigInt(`0x${hex}`);
      const randA = (bits >> 64n) & 0xfffn;
      const randB = (bits >> 0n) & ((1n << 62n) - 1n);
      return Number((randA << 19n) | (randB >> 43n));
    };
    expect(counterOf(previous)).toBeLessThan(2 ** 30);
    for (let n = 0; n < 10; n++) {
      const next = newUuid(() => at);
      expect(counterOf(next)).toBe(counterOf(previous) + 1);
      expect(next > previous).toBe(true);
      expect(timeOf(next)).toBe(at);
      previous = next;
    }
  });

  it('is unique over many', () => {
    const ids = new Set(Array.from({ length: 100_000 }, () => newUuid()));
    expect(ids.size).toBe(100_000);
  });
});

describe('random pool', () => {
  it('gives bytes that differ between calls', () => {
    const a = Buffer.from(randomPoolBytes(32));
    const b = Buffer.from(randomPoolBytes(32));
    expect(a.equals(b)).toBe(false);
    expect(() => randomPoolBytes(5000)).toThrow(/at most 4096/);
  });

  it('randomBelow is uniform over its range (chi-squared, 29 values)', () => {
    const n = 29;
    const counts = new Array<number>(n).fill(0);
    const draws = 290_000;
    for (let i = 0; i < draws; i++) counts[randomBelow(n)] += 1;
    const expected = draws / n;
    const chi2 = counts.reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
    // 28 degrees of freedom: p = 1e-6 at about 74. A modulo bias (256 % 29 = 24 values
    // drawn more often) would give a chi-squared in the thousands.
    expect(chi2).toBeLessThan(74);
    expect(Math.min(...counts)).toBeGreaterThan(0);
  });

  it('randomBelow refuses a range it cannot draw evenly from a byte', () => {
    expect(() => randomBelow(0)).toThrow(/1 to 256/);
    expect(() => randomBelow(257)).toThrow(/1 to 256/);
    expect(() => randomBelow(2.5)).toThrow(/1 to 256/);
    expect(randomBelow(1)).toBe(0);
  });
});
