/**
 * The grid of a number question with NEMO's `step`: min (or 0) plus whole steps, as a browser's
 * number input with min and step takes it. The answer check (validate.ts, rule "step") and the
 * form's arrow keys (renderer NumberField) both go by it, so what the keys give, the check takes.
 */
import { cleanComputedNumber } from './decimal.js';

export interface SteppedNumber {
  min?: number;
  max?: number;
  step: number;
}

/** How many steps `value` lies from the grid's base, binary noise taken out (0.3 / 0.1 is 3). */
function stepsFrom(value: number, { min, step }: SteppedNumber): number {
  return cleanComputedNumber((value - (min ?? 0)) / step);
}

/** Whether `value` is a point of the grid. */
export function onStep(value: number, grid: SteppedNumber): boolean {
  return Number.isInteger(stepsFrom(value, grid));
}

/**
 * The next point up (or down) from `value`, as stepUp and stepDown go: a value on the grid
 * moves one step, one between two points to the next point that way; never past min, nor past
 * the last point at or below max. From no value, min (or 0).
 */
export function nextOnStep(value: number | null, up: boolean, grid: SteppedNumber): number {
  const { min, max, step } = grid;
  const base = min ?? 0;
  if (value === null) return base;
  const steps = stepsFrom(value, grid);
  const to = up ? Math.floor(steps) + 1 : Math.ceil(steps) - 1;
  let next = cleanComputedNumber(base + to * step);
  if (min !== undefined && next < min) next = min;
  if (max !== undefined && next > max) {
    next = cleanComputedNumber(base + Math.floor(stepsFrom(max, grid)) * step);
  }
  return next;
}
