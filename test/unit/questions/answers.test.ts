import { describe, expect, it } from 'vitest';
import {
  computeFormulas,
  initialAnswers,
  normalizeAnswers,
  parseQuestions,
} from '../../../shared/questions/index.js';
import type { Question } from '../../../shared/questions/index.js';

function defs(input: unknown[]): Question[] {
  const result = parseQuestions(input);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.questions;
}

const questions = defs([
  { type: 'textbox', name: 'experiment_title', title: 'Experiment title' },
  { type: 'radio', name: 'data_consent', choices: ['Agree', 'Disagree'], default_value: 'Agree' },
  { type: 'radio_report_problem', name: 'problem', title: 'Any problem?' },
  { type: 'checkbox', name: 'gases', choices: ['N2', 'Ar', 'O2'], default_value: ['N2'] },
  { type: 'dropdown', name: 'mode', choices: ['fast', 'slow'] },
  { type: 'number', name: 'count' },
  { type: 'number_float', name: 'hours', precision: 2 },
  {
    type: 'group',
    name: 'sample_group',
    max_number: 5,
    questions: [
      { type: 'textbox', name: 'sample_name' },
      {
        type: 'radio',
        name: 'sample_or_pid',
        choices: ['Sample Name', 'PID'],
        default_value: 'Sample Name',
      },
      { type: 'number_float', name: 'mass' },
      { type: 'checkbox', name: 'sample_elements', choices: ['C', 'Si'] },
      { type: 'formula', name: 'mass_mg', formula: 'mass * 1000' },
    ],
  },
  { type: 'formula', name: 'total_mass', formula: 'sum(mass)', precision: 3 },
]);

describe('normalizeAnswers: canonical shape', () => {
  it('keeps canonical answers and drops unknown keys', () => {
    const answers = normalizeAnswers(questions, {
      experiment_title: 'Run 1',
      data_consent: 'Agree',
      gases: ['Ar'],
      count: 3,
      hours: 1.25,
      sample_group: [{ sample_name: 'S1', mass: 0.5, unknown: 'x' }],
      not_a_question: 1,
    });
    expect(answers).toEqual({
      experiment_title: 'Run 1',
      data_consent: 'Agree',
      gases: ['Ar'],
      count: 3,
      hours: 1.25,
      sample_group: [{ sample_name: 'S1', mass: 0.5, sample_elements: [], mass_mg: 500 }],
      total_mass: 0.5,
    });
  });

  it('omits unanswered simple questions, keeps checkbox as [] and groups as lists', () => {
    const answers = normalizeAnswers(questions, { experiment_title: '   ', mode: null, count: '' });
    expect(answers).toEqual({ gases: [], sample_group: [] });
    expect('experiment_title' in answers).toBe(false);
  });

  it('turns numbers written as text into numbers only when they read cleanly', () => {
    const answers = normalizeAnswers(questions, { count: ' 12 ', hours: '1e-2' });
    expect(answers['count']).toBe(12);
    expect(answers['hours']).toBe(0.01);
    expect(normalizeAnswers(questions, { count: '12abc' })['count']).toBe('12abc');
    expect(normalizeAnswers(questions, { count: '0x10' })['count']).toBe('0x10');
    expect(normalizeAnswers(questions, { count: '1e400' })['count']).toBe('1e400');
    expect(normalizeAnswers(questions, { hours: '-.5' })['hours']).toBe(-0.5);
  });

  it('reads numbers given for text questions as text', () => {
    expect(normalizeAnswers(questions, { experiment_title: 42 })['experiment_title']).toBe('42');
  });

  it('ignores formula answers sent by the client and recomputes them', () => {
    const answers = normalizeAnswers(questions, {
      total_mass: 999,
      sample_group: [{ mass: 2, mass_mg: 1 }],
    });
    expect(answers['total_mass']).toBe(2);
    expect(answers['sample_group']).toEqual([{ mass: 2, sample_elements: [], mass_mg: 2000 }]);
  });

  it('accepts JSON text', () => {
    expect(normalizeAnswers(questions, '{"count":"4"}')['count']).toBe(4);
    expect(normalizeAnswers(questions, 'not json')).toEqual({
      gases: [],
      sample_group: [],
    });
  });

  it('never throws', () => {
    for (const raw of [
      undefined,
      null,
      1,
      'x',
      [],
      [1],
      { gases: { a: 1 } },
      { sample_group: 'x' },
    ]) {
      expect(() => normalizeAnswers(questions, raw)).not.toThrow();
    }
    expect(normalizeAnswers(null as unknown as Question[], { a: 1 })).toEqual({});
  });
});

describe("normalizeAnswers: NEMO's stored shape", () => {
  it('unwraps {...definition, user_input} and treats a wrapper without user_input as unanswered', () => {
    const nemo = {
      experiment_title: {
        type: 'textbox',
        name: 'experiment_title',
        title: 'Experiment title',
        user_input: 'Run 7',
      },
      data_consent: { type: 'radio', name: 'data_consent', choices: ['Agree', 'Disagree'] },
      gases: { type: 'checkbox', name: 'gases', choices: ['N2', 'Ar'], user_input: ['N2', 'Ar'] },
      count: { type: 'number', name: 'count', user_input: '5' },
      hours: { type: 'float', name: 'hours', user_input: '2.50' },
    };
    expect(normalizeAnswers(questions, nemo)).toEqual({
      experiment_title: 'Run 7',
      gases: ['N2', 'Ar'],
      count: 5,
      hours: 2.5,
      sample_group: [],
    });
  });

  it('reads groups keyed "0", "1", ... in numeric order, with gaps', () => {
    const nemo = {
      sample_group: {
        type: 'group',
        name: 'sample_group',
        questions: [],
        user_input: {
          '10': { sample_name: 'third', mass: '3' },
          '0': { sample_name: 'first', mass: '1', sample_or_pid: 'PID' },
          '2': { sample_name: 'second', mass: null },
        },
      },
    };
    const answers = normalizeAnswers(questions, nemo);
    expect(answers['sample_group']).toEqual([
      { sample_name: 'first', mass: 1, sample_or_pid: 'PID', sample_elements: [], mass_mg: 1000 },
      { sample_name: 'second', sample_elements: [] },
      { sample_name: 'third', mass: 3, sample_elements: [], mass_mg: 3000 },
    ]);
    expect(answers['total_mass']).toBe(4);
  });

  it('also reads a keyed group without the wrapper, and wrapped values inside repetitions', () => {
    const answers = normalizeAnswers(questions, {
      sample_group: { '1': { sample_name: { user_input: 'b' } }, '0': { sample_name: 'a' } },
    });
    expect(answers['sample_group']).toEqual([
      { sample_name: 'a', sample_elements: [] },
      { sample_name: 'b', sample_elements: [] },
    ]);
  });

  it("reads NEMO's true/false answers of radio_report_problem as Yes/No", () => {
    expect(normalizeAnswers(questions, { problem: { user_input: 'true' } })['problem']).toBe('Yes');
    expect(normalizeAnswers(questions, { problem: 'false' })['problem']).toBe('No');
    expect(normalizeAnswers(questions, { problem: true })['problem']).toBe('Yes');
    expect(normalizeAnswers(questions, { problem: 'Yes' })['problem']).toBe('Yes');
  });
});

describe('initialAnswers', () => {
  it('applies default values, gives groups one repetition and computes formulas', () => {
    expect(initialAnswers(questions)).toEqual({
      data_consent: 'Agree',
      gases: ['N2'],
      sample_group: [{ sample_or_pid: 'Sample Name', sample_elements: [] }],
    });
  });

  it('computes formulas that need no answers', () => {
    const qs = defs([{ type: 'formula', name: 'k', formula: '2 ** 10' }]);
    expect(initialAnswers(qs)).toEqual({ k: 1024 });
  });

  it('returns copies of default lists', () => {
    const first = initialAnswers(questions);
    (first['gases'] as string[]).push('O2');
    expect(initialAnswers(questions)['gases']).toEqual(['N2']);
  });
});

describe('computeFormulas', () => {
  const qs = defs([
    { type: 'number', name: 'a' },
    { type: 'number_float', name: 'b' },
    { type: 'formula', name: 'ratio', formula: 'a / b', precision: 2 },
    { type: 'formula', name: 'twice', formula: 'ratio * 2' },
    { type: 'formula', name: 'noise', formula: 'b + 0.2' },
    {
      type: 'group',
      name: 'g',
      max_number: 3,
      questions: [
        { type: 'number', name: 'x' },
        { type: 'formula', name: 'xa', formula: 'x * a' },
      ],
    },
    { type: 'formula', name: 'sum_xa', formula: 'sum(xa)' },
    { type: 'formula', name: 'first_x', formula: 'x[0]' },
  ]);

  it('computes in dependency order with rounding to precision', () => {
    const out = computeFormulas(qs, { a: 2, b: 3, g: [{ x: 1 }, { x: 5 }] });
    expect(out['ratio']).toBe(0.67);
    expect(out['twice']).toBe(1.34);
    expect(out['g']).toEqual([
      { x: 1, xa: 2 },
      { x: 5, xa: 10 },
    ]);
    expect(out['sum_xa']).toBe(12);
    expect(out['first_x']).toBe(1);
  });

  it("gives a formula in one group another group's field as the list of its values", () => {
    const groups = defs([
      {
        type: 'group',
        name: 'samples',
        max_number: 5,
        questions: [{ type: 'number', name: 'mass' }],
      },
      {
        type: 'group',
        name: 'runs',
        max_number: 5,
        questions: [
          { type: 'number', name: 'count' },
          { type: 'formula', name: 'share', formula: 'count * sum(mass)' },
          { type: 'formula', name: 'first', formula: 'mass[0] + share' },
        ],
      },
    ]);
    const out = computeFormulas(groups, {
      samples: [{ mass: 2 }, { mass: 3 }],
      runs: [{ count: 2 }, { count: 1 }],
    });
    expect(out['runs']).toEqual([
      { count: 2, share: 10, first: 12 },
      { count: 1, share: 5, first: 7 },
    ]);
    // No sample answered: the list is unanswered, and so are the formulas that use it.
    expect(computeFormulas(groups, { samples: [], runs: [{ count: 2 }] })['runs']).toEqual([
      { count: 2 },
    ]);
  });

  it('removes binary noise when there is no precision', () => {
    expect(computeFormulas(qs, { a: 1, b: 0.1 })['noise']).toBe(0.3);
  });

  it('rounds to precision what the formula computes, not its binary noise', () => {
    // 0.15 * 3 is the double 0.44999999999999996: shown as 0.45 without a precision, it must
    // round half away from zero to 0.5 at one place, not fall to 0.4.
    const rounded = defs([
      { type: 'number_float', name: 'm' },
      { type: 'formula', name: 'plain', formula: 'm * 3' },
      { type: 'formula', name: 'one_place', formula: 'm * 3', precision: 1 },
      { type: 'formula', name: 'percent', formula: 'm * 100', precision: 0 },
    ]);
    expect(computeFormulas(rounded, { m: 0.15 })).toEqual({
      m: 0.15,
      plain: 0.45,
      one_place: 0.5,
      percent: 15,
    });
    // 1.005 * 100 is the double 100.49999999999999.
    expect(computeFormulas(rounded, { m: 1.005 })['percent']).toBe(101);
  });

  it('leaves a formula unset when an input is unanswered or the result is not finite', () => {
    const out = computeFormulas(qs, { a: 2, b: 0, g: [{ x: null }, {}] });
    expect('ratio' in out).toBe(false); // division by zero
    expect('twice' in out).toBe(false); // depends on an unset formula
    expect(out['g']).toEqual([{ x: null }, {}]);
    expect('sum_xa' in out).toBe(false); // no repetition has a value: unanswered, not 0
    expect('first_x' in out).toBe(false);
    expect('ratio' in computeFormulas(qs, { b: 2 })).toBe(false);
    expect('ratio' in computeFormulas(qs, { a: 'x', b: 2 })).toBe(false);
  });

  it('skips unanswered repetitions in lists, as NEMO does', () => {
    const out = computeFormulas(qs, { a: 1, g: [{ x: 4 }, {}, { x: 6 }] });
    expect(out['sum_xa']).toBe(10);
  });

  it('does not modify its input', () => {
    const input = { a: 2, b: 4, ratio: 123, g: [{ x: 1, xa: 99 }] };
    const snapshot = structuredClone(input);
    computeFormulas(qs, input);
    expect(input).toEqual(snapshot);
  });

  it('overwrites formula values given in the input', () => {
    expect(computeFormulas(qs, { a: 2, b: 4, ratio: 123 })['ratio']).toBe(0.5);
    expect('ratio' in computeFormulas(qs, { ratio: 123 })).toBe(false);
  });

  it('never throws on unchecked definitions', () => {
    const broken = [
      { type: 'formula', name: 'a', formula: 'a + 1' },
      { type: 'formula', name: 'b', formula: ')' },
      { type: 'formula', name: 'c' },
      { type: 'group', name: 'g' },
      { type: 'group', name: 'h', questions: [null, { type: 'formula', name: 'z', formula: 'q' }] },
    ] as unknown as Question[];
    expect(computeFormulas(broken, { g: [{}], h: [{}] })).toEqual({ g: [{}], h: [{}] });
  });
});
