import { describe, expect, it } from 'vitest';
import {
  evaluateFormula,
  FORMULA_MAX_DEPTH,
  FORMULA_MAX_LENGTH,
  parseFormula,
  roundHalfAwayFromZero,
} from '../../../shared/questions/index.js';
import type { FormulaValue } from '../../../shared/questions/index.js';

function value(
  source: string,
  scope: Record<string, FormulaValue | null | undefined> = {},
): number {
  const result = evaluateFormula(source, scope);
  if (!result.ok) throw new Error(`expected a value for ${source}, got error: ${result.error}`);
  return result.value;
}

function error(
  source: string,
  scope: Record<string, FormulaValue | null | undefined> = {},
): string {
  const result = evaluateFormula(source, scope);
  if (result.ok) throw new Error(`expected an error for ${source}, got ${result.value}`);
  return result.error;
}

describe('parseFormula', () => {
  it('lists the names used, once each, in order of appearance', () => {
    const parsed = parseFormula('b * a + sum(c) - b + round(a, 2)');
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.names).toEqual(['b', 'a', 'c']);
  });

  it('does not count function names as question names', () => {
    const parsed = parseFormula('max(x, 1) + min(y)');
    expect(parsed.ok && parsed.names).toEqual(['x', 'y']);
  });

  it('reads number forms: integer, decimal, leading dot, exponent', () => {
    expect(value('12')).toBe(12);
    expect(value('1.5')).toBe(1.5);
    expect(value('.5')).toBe(0.5);
    expect(value('1.')).toBe(1);
    expect(value('1e3')).toBe(1000);
    expect(value('2.5E-3')).toBe(0.0025);
    expect(value('1e+2')).toBe(100);
  });

  it('rejects ^ with a message pointing to **', () => {
    const parsed = parseFormula('2 ^ 3');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.error).toContain('**');
      expect(parsed.position).toBe(2);
    }
  });

  it('gives the position of the error', () => {
    const cases: [string, number][] = [
      ['1 +', 3],
      ['(1 + 2', 6],
      ['1 + 2)', 5],
      ['a b', 2],
      ['foo(1)', 0],
      ['1 $ 2', 2],
      ['', 0],
      ['2x', 1],
      ['1 // 2', 2],
    ];
    for (const [source, position] of cases) {
      const parsed = parseFormula(source);
      expect(parsed.ok, source).toBe(false);
      if (!parsed.ok) expect(parsed.position, source).toBe(position);
    }
  });

  it('names the unknown function and lists the available ones', () => {
    const parsed = parseFormula('avg(a)');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.error).toContain("'avg'");
      expect(parsed.error).toContain('round, floor, ceil, abs, trunc, sqrt, sum, max, min');
    }
  });

  it('checks function arity', () => {
    expect(parseFormula('round()').ok).toBe(false);
    expect(parseFormula('round(1, 2, 3)').ok).toBe(false);
    expect(parseFormula('sqrt(1, 2)').ok).toBe(false);
    expect(parseFormula('sum()').ok).toBe(false);
    expect(parseFormula('max(1, 2, 3, 4)').ok).toBe(true);
  });

  it('rejects a number too large for a double', () => {
    const parsed = parseFormula('1e400 + 1');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain('too large');
  });

  it('limits the length', () => {
    const long = '1+'.repeat(FORMULA_MAX_LENGTH / 2) + '1';
    const parsed = parseFormula(long);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain('too long');
    expect(parseFormula('1+'.repeat(999) + '1').ok).toBe(true);
  });

  it('limits nesting with an error instead of a stack overflow', () => {
    const deep = '('.repeat(FORMULA_MAX_DEPTH + 5) + '1' + ')'.repeat(FORMULA_MAX_DEPTH + 5);
    const parsed = parseFormula(deep);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain('nested too deeply');
    const unary = '-'.repeat(500) + '1';
    expect(parseFormula(unary).ok).toBe(false);
    const powers = Array.from({ length: 300 }, () => '2').join('**');
    expect(parseFormula(powers).ok).toBe(false);
    const shallow = '('.repeat(50) + '1' + ')'.repeat(50);
    expect(parseFormula(shallow).ok).toBe(true);
  });

  it('never throws on non-string input', () => {
    expect(parseFormula(undefined as unknown as string).ok).toBe(false);
    expect(parseFormula(42 as unknown as string).ok).toBe(false);
  });
});

describe('evaluateFormula: arithmetic', () => {
  it('follows the usual precedence', () => {
    expect(value('1 + 2 * 3')).toBe(7);
    expect(value('(1 + 2) * 3')).toBe(9);
    expect(value('10 - 4 - 3')).toBe(3);
    expect(value('24 / 4 / 3')).toBe(2);
    expect(value('7 % 4 * 2')).toBe(6);
  });

  it('makes ** right-associative and tighter than a unary minus on its left (Python)', () => {
    expect(value('2 ** 3 ** 2')).toBe(512);
    expect(value('-2 ** 2')).toBe(-4);
    expect(value('(-2) ** 2')).toBe(4);
    expect(value('2 ** -1')).toBe(0.5);
    expect(value('-2 ** -2')).toBe(-0.25);
    expect(value('+3')).toBe(3);
    expect(value('--3')).toBe(3);
  });

  it('uses floored modulo like Python', () => {
    expect(value('7 % 3')).toBe(1);
    expect(value('-7 % 3')).toBe(2);
    expect(value('7 % -3')).toBe(-2);
    expect(value('-7 % -3')).toBe(-1);
    expect(value('5.5 % 2')).toBe(1.5);
  });

  it('reports errors instead of NaN or Infinity', () => {
    expect(error('1 / 0')).toContain('division by zero');
    expect(error('1 % 0')).toContain('modulo by zero');
    expect(error('sqrt(-1)')).toContain('sqrt');
    expect(error('0 ** -1')).toContain('0');
    expect(error('(-8) ** 0.5')).toContain('fractional');
    expect(error('10 ** 308 * 10')).toContain('too large');
    expect(error('max(g)', { g: [] })).toContain('empty');
    expect(error('min(g)', { g: [] })).toContain('empty');
  });
});

describe('evaluateFormula: functions', () => {
  it('computes the one-argument functions', () => {
    expect(value('floor(-1.5)')).toBe(-2);
    expect(value('ceil(1.2)')).toBe(2);
    expect(value('abs(-3)')).toBe(3);
    expect(value('trunc(-1.7)')).toBe(-1);
    expect(value('sqrt(16)')).toBe(4);
  });

  it('rounds half away from zero, also on decimal representations like 1.005', () => {
    expect(value('round(2.5)')).toBe(3);
    expect(value('round(-2.5)')).toBe(-3);
    expect(value('round(0.5)')).toBe(1);
    expect(value('round(1.005, 2)')).toBe(1.01);
    expect(value('round(2.675, 2)')).toBe(2.68);
    expect(value('round(1234.5, -2)')).toBe(1200);
    expect(value('round(x, 1)', { x: 0.05 })).toBe(0.1);
    expect(error('round(1, 0.5)')).toContain('whole number');
  });

  it('rounds, floors, ceils and truncates computed values without their binary noise', () => {
    // 0.15 * 3 = 0.44999999999999996, 4.35 * 100 = 434.99999999999994, 0.1 * 3 * 10 =
    // 3.0000000000000004 as doubles; a calculator shows 0.45, 435 and 3.
    expect(value('round(m * 3, 1)', { m: 0.15 })).toBe(0.5);
    expect(value('round(1.005 * 100)')).toBe(101);
    expect(value('floor(4.35 * 100)')).toBe(435);
    expect(value('ceil(0.1 * 3 * 10)')).toBe(3);
    expect(value('trunc(-4.35 * 100)')).toBe(-435);
    expect(value('floor(2.7)')).toBe(2);
    expect(value('ceil(-2.7)')).toBe(-2);
  });

  it('takes lists or several arguments in sum, max and min, flattening lists', () => {
    expect(value('sum(g)', { g: [1, 2, 3] })).toBe(6);
    expect(value('sum(g, 4, h)', { g: [1, 2], h: [10] })).toBe(17);
    expect(value('sum(g)', { g: [] })).toBe(0);
    expect(value('max(1, 7, 3)')).toBe(7);
    expect(value('min(g, 0)', { g: [4, -2] })).toBe(-2);
    expect(value('max(g)', { g: [4, 9, 2] })).toBe(9);
  });

  it('indexes lists, negative indexes from the end', () => {
    expect(value('g[0] + g[-1]', { g: [1, 2, 5] })).toBe(6);
    expect(error('g[3]', { g: [1, 2, 5] })).toContain('out of range');
    expect(error('x[0]', { x: 1 })).toContain('cannot be indexed');
    expect(error('g[0.5]', { g: [1] })).toContain('whole number');
  });
});

describe('evaluateFormula: names and scope', () => {
  it('reads names from the scope', () => {
    expect(value('a * b', { a: 3, b: 4 })).toBe(12);
    expect(value('_x1 + 1', { _x1: 1 })).toBe(2);
  });

  it('reports unanswered and unknown names', () => {
    expect(error('a + 1', { a: null })).toContain("'a' is not answered");
    expect(error('a + 1', {})).toContain("unknown name 'a'");
    expect(error('a + 1', { a: undefined })).toContain("unknown name 'a'");
  });

  it('does not look names up on the prototype chain', () => {
    expect(error('constructor + 1', {})).toContain('unknown name');
    expect(error('toString', {})).toContain('unknown name');
    expect(error('__proto__', {})).toContain('unknown name');
  });

  it('rejects a list where one number is needed, naming it', () => {
    const message = error('g + 1', { g: [1, 2] });
    expect(message).toContain("'g'");
    expect(message).toContain('sum()');
    expect(error('g', { g: [1, 2] })).toContain('list');
  });

  it('rejects bad scope values without throwing', () => {
    expect(error('a', { a: 'x' as unknown as number })).toContain('not a number');
    expect(error('a', { a: Number.NaN })).toContain('not a finite number');
    expect(error('sum(a)', { a: [1, 'x'] as unknown as number[] })).toContain('not a number');
    expect(evaluateFormula('1 + 1', null as unknown as Record<string, number>)).toEqual({
      ok: true,
      value: 2,
    });
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('boom');
        },
        getOwnPropertyDescriptor() {
          throw new Error('boom');
        },
        has() {
          throw new Error('boom');
        },
      },
    );
    const result = evaluateFormula('a + 1', hostile);
    expect(result.ok).toBe(false);
  });

  it('gives syntax errors with a 1-based character position', () => {
    expect(error('1 + * 2')).toContain('at character 5');
  });
});

describe('roundHalfAwayFromZero', () => {
  it('rounds on the decimal representation', () => {
    expect(roundHalfAwayFromZero(1.005, 2)).toBe(1.01);
    expect(roundHalfAwayFromZero(1.0049, 2)).toBe(1);
    expect(roundHalfAwayFromZero(-1.005, 2)).toBe(-1.01);
    expect(roundHalfAwayFromZero(0.0005, 3)).toBe(0.001);
    expect(roundHalfAwayFromZero(0.00049, 3)).toBe(0);
    expect(roundHalfAwayFromZero(999.5, 0)).toBe(1000);
    expect(roundHalfAwayFromZero(1.23e-7, 8)).toBe(1.2e-7);
    expect(roundHalfAwayFromZero(1.5e21, 0)).toBe(1.5e21);
    expect(roundHalfAwayFromZero(-0.4, 0)).toBe(0);
    expect(Object.is(roundHalfAwayFromZero(-0.4, 0), -0)).toBe(false);
    expect(roundHalfAwayFromZero(0.1 + 0.2, 2)).toBe(0.3);
    expect(roundHalfAwayFromZero(0.15 * 3, 1)).toBe(0.5);
    expect(roundHalfAwayFromZero(0.1 + 0.2, 20)).toBe(0.3);
  });
});
