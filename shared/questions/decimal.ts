// Rounding on the decimal representation of a number, not on its binary value.
//
// We round half AWAY FROM ZERO (2.5 -> 3, -2.5 -> -3, 1.005 -> 1.01 at 2 places), which is
// what facility users expect from a calculator. NEMO evaluates formulas with Python, whose
// round() uses banker's rounding (2.5 -> 2) on the binary value (1.005 -> 1.0); we
// deliberately differ. Rounding works on the value's decimal digits, 15 significant ones at
// most (as cleanComputedNumber keeps them), so values typed as "1.005" round as written, and
// so do computed ones: 0.15 * 3 is the double 0.44999999999999996, which rounds to 0.5 at one
// place as 0.45 does, not to 0.4.

interface DecimalParts {
  /** Significant digits without leading zeros, e.g. "1005" for 1.005. */
  digits: string;
  /** Position of the decimal point relative to the start of digits: value = 0.digits * 10^point. */
  point: number;
}

function decimalParts(abs: number): DecimalParts {
  const text = String(abs);
  const e = text.indexOf('e');
  const mantissa = e < 0 ? text : text.slice(0, e);
  const exponent = e < 0 ? 0 : Number(text.slice(e + 1));
  const dot = mantissa.indexOf('.');
  const intLength = dot < 0 ? mantissa.length : dot;
  let digits = mantissa.replace('.', '');
  let point = intLength + exponent;
  // Strip leading zeros ("0.005" -> digits "5", point -2).
  let lead = 0;
  while (lead < digits.length - 1 && digits[lead] === '0') lead++;
  digits = digits.slice(lead);
  point -= lead;
  return { digits, point };
}

/** Adds one to a string of decimal digits ("199" -> "200", "99" -> "100"). */
function incrementDigits(digits: string): string {
  const out = digits.split('');
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i] === '9') {
      out[i] = '0';
    } else {
      out[i] = String(Number(out[i]) + 1);
      return out.join('');
    }
  }
  return '1' + out.join('');
}

/**
 * Rounds to `places` decimal places (negative places round to tens, hundreds, ...), half away
 * from zero, on the value without its binary noise (see cleanComputedNumber). Non-finite input
 * is returned unchanged; -0 becomes 0.
 */
export function roundHalfAwayFromZero(input: number, places: number): number {
  if (!Number.isFinite(input) || input === 0) return input === 0 ? 0 : input;
  const value = cleanComputedNumber(input);
  const whole = Math.trunc(places);
  const negative = value < 0;
  const { digits, point } = decimalParts(Math.abs(value));
  const keep = point + whole;
  if (keep >= digits.length) return value;
  if (keep < 0) return 0;
  let kept = digits.slice(0, keep);
  const next = digits.charAt(keep);
  if (next >= '5') kept = incrementDigits(kept === '' ? '0' : kept);
  if (kept === '') kept = '0';
  const result = Number(`${kept}e${-whole}`);
  if (result === 0) return 0;
  return negative ? -result : result;
}

/** Number of decimal places in the shortest decimal form of a finite number (1.50 -> 1). */
export function decimalPlaces(value: number): number {
  if (!Number.isFinite(value) || value === 0) return 0;
  const { digits, point } = decimalParts(Math.abs(value));
  let significant = digits.length;
  while (significant > 1 && digits[significant - 1] === '0') significant--;
  return Math.max(0, significant - point);
}

/**
 * Removes binary noise from a computed value (0.1 + 0.2 -> 0.3) by keeping 15 significant
 * digits, the most a double always holds exactly; a safe integer is kept whole. Used for
 * formulas without a precision, and before rounding (roundHalfAwayFromZero, floor, ceil,
 * trunc), where the noise would otherwise decide the result.
 */
export function cleanComputedNumber(value: number): number {
  if (!Number.isFinite(value) || value === 0) return value === 0 ? 0 : value;
  // A whole number a double holds exactly (up to 2^53 - 1) has no noise to remove; cut to 15
  // digits, 1234567890123456 + 1 would come out as 1234567890123460 (Python gives ...457).
  if (Number.isSafeInteger(value)) return value;
  return Number(value.toPrecision(15));
}

/**
 * The text of a number with exactly `places` decimals (0 to 100), padded with zeros, from its
 * decimal digits: toFixed writes the binary value's digits past the 17th (0.1 at 20 places is
 * 0.10000000000000000555), which is not the value a form stores. A number with more decimals
 * than `places` is rounded as roundHalfAwayFromZero rounds; one with as many or fewer is
 * written as it is, all its digits kept (1234567890123.455 at 3 places). Non-finite input, or
 * a rounding that overflows, gives its String.
 */
export function fixedText(input: number, places: number): string {
  if (!Number.isFinite(input)) return String(input);
  const whole = Math.max(0, Math.min(100, Math.trunc(places)));
  const value = decimalPlaces(input) <= whole ? input : roundHalfAwayFromZero(input, whole);
  if (!Number.isFinite(value)) return String(value);
  if (value === 0) return whole === 0 ? '0' : `0.${'0'.repeat(whole)}`;
  const { digits, point } = decimalParts(Math.abs(value));
  const sign = value < 0 ? '-' : '';
  const integer = point <= 0 ? '0' : digits.slice(0, point).padEnd(point, '0');
  const fraction = (point < 0 ? '0'.repeat(-point) + digits : digits.slice(Math.max(point, 0)))
    .slice(0, whole)
    .padEnd(whole, '0');
  return whole === 0 ? `${sign}${integer}` : `${sign}${integer}.${fraction}`;
}
