/**
 * The arrow keys of a number question with NEMO's `step`, as a browser's stepUp and stepDown
 * go: to the next value of the grid min (or 0) plus whole steps, from a value off it too, never
 * past min, nor past the last value of the grid at or below max. What they give, the core takes
 * (shared/questions/validate.ts, rule "step").
 */
import { cleanComputedNumber } from '../../../../shared/questions/decimal.js';

export interface SteppedNumber {
  min?: number;
  max?: number;
  step: number;
}

/** The next value up (or down) from `value`; from no value, min (or 0). */
export function nextOnStep(
  value: number | null,
  up: boolean,
  { min, max, step }: SteppedNumber,
): number {
  const base = min ?? 0;
  if (value === null) return base;
  // Steps from the base, binary noise taken out (0.3 / 0.1 is 3): a value on the grid moves
  // one step, one between two points to the next point that way.
  const steps = cleanComputedNumber((value - base) / step);
  const to = up ? Math.floor(steps) + 1 : Math.ceil(steps) - 1;
  let next = cleanComputedNumber(base + to * step);
  if (min !== undefined && next < min) next = min;
  if (max !== undefined && next > max) {
    next = cleanComputedNumber(base + Math.floor(cleanComputedNumber((max - base) / step)) * step);
  }
  return next;
}
