import { describe, expect, it } from 'vitest';
import { CLOCK_SKEW_WARN_SECONDS, clockSkewWarning } from '../../../shared/clock.js';

describe('clockSkewWarning', () => {
  it('says nothing within a minute either way, or before a measure', () => {
    expect(clockSkewWarning(null)).toBeNull();
    for (const skew of [0, 1, -1, CLOCK_SKEW_WARN_SECONDS - 1, -(CLOCK_SKEW_WARN_SECONDS - 1)]) {
      expect(clockSkewWarning(skew), String(skew)).toBeNull();
    }
  });

  it('names the way and the span, in the unit a person reads', () => {
    const cases: [number, string][] = [
      [60, '60 s ahead of'],
      [-119, '119 s behind'],
      [600, '10 min ahead of'],
      [-629, '10 min behind'],
      [5340, '89 min ahead of'],
      [5400, '1 h 30 min ahead of'],
      [-7200, '2 h behind'],
      [47 * 3600 + 59 * 60, '47 h 59 min ahead of'],
      [48 * 3600, '2 days ahead of'],
      [-86_400 * 366, '366 days behind'],
    ];
    for (const [skew, words] of cases) {
      expect(clockSkewWarning(skew), String(skew)).toBe(
        `this station's clock is ${words} the server's: usage and file times are recorded ` +
          'from it; set the clock (or turn on time sync)',
      );
    }
  });
});
