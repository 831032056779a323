/** The arrow keys of a number question with NEMO's step (shared/questions/step.ts). */
import { describe, expect, it } from 'vitest';
import { nextOnStep } from '../../../shared/questions/step.js';
import { parseQuestions, validateAnswers } from '../../../shared/questions/index.js';

describe('the arrow keys of a number with a step', () => {
  // Mutation: value plus or minus one step, clamped to max (from 9, min 0, max 10, step 3: 10,
  // which the answer check refuses), and an off-grid value kept off it (0.3 -> 0.55).
  it('go to the next point of the grid min (or 0) plus whole steps, never past the last one under max', () => {
    const threes = { min: 0, max: 10, step: 3 };
    expect(nextOnStep(null, true, threes)).toBe(0);
    expect(nextOnStep(0, true, threes)).toBe(3);
    expect(nextOnStep(9, true, threes)).toBe(9);
    expect(nextOnStep(10, false, threes)).toBe(9);
    expect(nextOnStep(4, true, threes)).toBe(6);
    expect(nextOnStep(4, false, threes)).toBe(3);
    expect(nextOnStep(0, false, threes)).toBe(0);
    const quarters = { step: 0.25 };
    expect(nextOnStep(0.3, true, quarters)).toBe(0.5);
    expect(nextOnStep(0.3, false, quarters)).toBe(0.25);
    expect(nextOnStep(0.5, false, quarters)).toBe(0.25);
    expect(nextOnStep(-0.5, true, quarters)).toBe(-0.25);
    const tenths = { min: 0.1, step: 0.1 };
    expect(nextOnStep(0.2, true, tenths)).toBe(0.3);
  });

  it('give only values the answer check takes', () => {
    const parsed = parseQuestions([
      { type: 'number_float', name: 'f', min: 0.1, max: 2, step: 0.3, precision: 1 },
    ]);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const step = { min: 0.1, max: 2, step: 0.3 };
    let value: number | null = null;
    for (let i = 0; i < 10; i += 1) {
      value = nextOnStep(value, true, step);
      expect(validateAnswers(parsed.questions, { f: value }).ok, String(value)).toBe(true);
    }
    expect(value).toBe(1.9);
  });
});
