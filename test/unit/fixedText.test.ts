import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decimalPlaces, fixedText, roundHalfAwayFromZero } from '../../shared/questions/decimal.js';

describe('fixedText (a computed or stepped number shown with its precision)', () => {
  it('writes the decimal value, padded to the precision, without binary noise', () => {
    // The core stores a formula's 4 / 3 at precision 16 as 1.33333333333333 (15 digits).
    expect(fixedText(1.33333333333333, 16)).toBe('1.3333333333333300');
    expect(fixedText(4 / 3, 16)).toBe('1.3333333333333333');
    expect(fixedText(123456789.123, 10)).toBe('123456789.1230000000');
    expect(fixedText(0.1, 20)).toBe('0.10000000000000000000');
    expect(fixedText(1e-7, 8)).toBe('0.00000010');
    expect(fixedText(1e21, 2)).toBe('1000000000000000000000.00');
    expect(fixedText(-0.5, 3)).toBe('-0.500');
    expect(fixedText(0, 2)).toBe('0.00');
    expect(fixedText(-0, 0)).toBe('0');
    expect(fixedText(Number.NaN, 2)).toBe('NaN');
  });

  it('rounds half away from zero on the decimal value, as the core stores it', () => {
    expect(fixedText(2.5, 0)).toBe('3');
    expect(fixedText(-2.5, 0)).toBe('-3');
    expect(fixedText(1.005, 2)).toBe('1.01');
    expect(fixedText(0.15 * 3, 1)).toBe('0.5');
    expect(fixedText(9.995, 2)).toBe('10.00');
    expect(fixedText(0.0004, 3)).toBe('0.000');
  });

  it('keeps every digit of a number with no more decimals than the precision', () => {
    expect(fixedText(1234567890123.455, 3)).toBe('1234567890123.455');
    expect(fixedText(123456.7890123455, 10)).toBe('123456.7890123455');
  });

  it('writes the largest number as digits, not as Infinity', () => {
    expect(fixedText(Number.MAX_VALUE, 2)).toMatch(/^17976931348623157\d{292}\.00$/);
  });

  it('reads back as the value itself, or as the core rounds it when it has more decimals', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e15, max: 1e15, noNaN: true }),
        fc.integer({ min: 0, max: 20 }),
        (value, places) => {
          const text = fixedText(value, places);
          expect(text).toMatch(places === 0 ? /^-?\d+$/ : new RegExp(`^-?\\d+\\.\\d{${places}}$`));
          const expected =
            decimalPlaces(value) <= places ? value : roundHalfAwayFromZero(value, places);
          expect(Number(text)).toBe(expected || 0);
        },
      ),
    );
  });
});
