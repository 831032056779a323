import { describe, expect, it } from 'vitest';
import { elapsedClock, monotonicMs } from '../../../electron/core/util/clock.js';

/** A monotonic clock and an uptime the test moves. */
function clocks() {
  const t = { mono: 5_000, up: 90_000 };
  const clock = elapsedClock(
    () => t.mono,
    () => t.up,
    1_000_000,
  );
  return { t, clock };
}

describe('elapsedClock', () => {
  it('follows the monotonic clock while the PC is awake, whatever small gap the uptime shows', () => {
    const { t, clock } = clocks();
    expect(clock()).toBe(1_005_000);
    t.mono += 1_500;
    t.up += 1_510; // /proc/uptime's 10 ms steps
    expect(clock()).toBe(1_006_500);
    t.mono += 60_000;
    t.up += 59_990;
    expect(clock()).toBe(1_066_500);
  });

  // Mutation: monotonicMs as performance.now() alone: a PC asleep for the night did not count
  // it, and the session of whoever walked away was still open in the morning.
  it('counts the time the PC slept, from the first reading after it woke', () => {
    const { t, clock } = clocks();
    clock();
    t.mono += 2_000;
    t.up += 2_000 + 8 * 3_600_000; // asleep for eight hours
    expect(clock()).toBe(1_007_000 + 8 * 3_600_000);
    // Counted once: an awake minute later, a minute more.
    t.mono += 60_000;
    t.up += 60_000;
    expect(clock()).toBe(1_067_000 + 8 * 3_600_000);
  });

  it('reads the uptime at most once a second, and an unreadable one adds nothing', () => {
    let reads = 0;
    let mono = 0;
    const clock = elapsedClock(
      () => mono,
      () => {
        reads += 1;
        return Number.NaN;
      },
      0,
    );
    for (let i = 0; i < 100; i++) {
      mono += 50;
      clock();
    }
    expect(reads).toBe(1 + 5);
    expect(clock()).toBe(5_000);
  });

  it('is the process clock: near the wall clock at the start, never going back', () => {
    const first = monotonicMs();
    expect(Math.abs(first - Date.now())).toBeLessThan(60_000);
    expect(monotonicMs()).toBeGreaterThanOrEqual(first);
  });
});
