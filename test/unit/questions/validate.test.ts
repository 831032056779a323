import { describe, expect, it } from 'vitest';
import { parseQuestions, validateAnswers } from '../../../shared/questions/index.js';
import type { AnswerProblem, Question } from '../../../shared/questions/index.js';

function defs(input: unknown[]): Question[] {
  const result = parseQuestions(input);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.questions;
}

function problemsOf(questions: Question[], raw: unknown): AnswerProblem[] {
  const result = validateAnswers(questions, raw);
  return result.ok ? [] : result.problems;
}

function only(questions: Question[], raw: unknown): AnswerProblem {
  const found = problemsOf(questions, raw);
  expect(found, JSON.stringify(found)).toHaveLength(1);
  return found[0];
}

function accepts(questions: Question[], raw: unknown): void {
  const result = validateAnswers(questions, raw);
  expect(result.ok ? [] : result.problems).toEqual([]);
}

describe('validateAnswers: required', () => {
  const qs = defs([
    { type: 'textbox', name: 'title', title: 'Experiment title', required: true },
    {
      type: 'radio',
      name: 'consent',
      title: 'Consent',
      choices: ['Agree', 'Disagree'],
      required: true,
    },
    { type: 'checkbox', name: 'gases', title: 'Gases', choices: ['N2', 'Ar'], required: true },
    { type: 'number', name: 'n', required: true },
    { type: 'textbox', name: 'optional' },
  ]);

  it('reports each unanswered required question, naming its title (or name)', () => {
    const found = problemsOf(qs, {});
    expect(found.map((p) => [p.path, p.rule])).toEqual([
      [['title'], 'required'],
      [['consent'], 'required'],
      [['gases'], 'required'],
      [['n'], 'required'],
    ]);
    expect(found[0]?.message).toBe('"Experiment title" is required.');
    expect(found[0]?.question).toBe('title');
    expect(found[2]?.message).toContain('at least one choice');
    expect(found[3]?.message).toContain('"n"');
  });

  it('counts empty and blank strings as unanswered', () => {
    const found = problemsOf(qs, { title: '  ', consent: '', gases: [], n: '' });
    expect(found.map((p) => p.rule)).toEqual(['required', 'required', 'required', 'required']);
  });

  it('accepts complete answers and returns the canonical answers', () => {
    const result = validateAnswers(qs, { title: 'T', consent: 'Agree', gases: ['Ar'], n: '3' });
    expect(result).toEqual({
      ok: true,
      answers: { title: 'T', consent: 'Agree', gases: ['Ar'], n: 3 },
    });
  });
});

describe('validateAnswers: text', () => {
  const qs = defs([
    {
      type: 'textbox',
      name: 'code',
      title: 'Code',
      maxlength: 5,
      pattern: '[A-Z]{2}[0-9]+',
      placeholder: 'AB12',
    },
    { type: 'textarea', name: 'notes', maxlength: 3 },
  ]);

  it('counts characters, not UTF-16 units, for maxlength', () => {
    accepts(qs, { notes: '😀😀😀' });
    const p = only(qs, { notes: '😀😀😀😀' });
    expect(p).toMatchObject({ path: ['notes'], rule: 'maxlength' });
    expect(p.message).toContain('at most 3 characters');
    expect(p.message).toContain('it has 4');
  });

  it('counts a line break once for maxlength, sent as CRLF or LF, as a browser counts it', () => {
    accepts(qs, { notes: 'a\r\nb' });
    accepts(qs, { notes: 'a\nb' });
    expect(only(qs, { notes: 'a\r\nbc' }).message).toContain('it has 4');
  });

  it('matches the pattern against the whole value', () => {
    accepts(qs, { code: 'AB12' });
    const p = only(qs, { code: 'xAB12' });
    expect(p.rule).toBe('pattern');
    expect(p.message).toContain('"Code"');
    expect(p.message).toContain('AB12');
    expect(only(qs, { code: 'AB12x' }).rule).toBe('pattern');
    // Without an example in the form, the message gives the rule itself.
    const bare = defs([{ type: 'textbox', name: 't', pattern: 'PRJ-\\d+' }]);
    expect(only(bare, { t: 'x' }).message).toBe(
      '"t" does not have the expected format (it must match the pattern PRJ-\\d+).',
    );
  });

  it('does not check the pattern of an empty optional answer', () => {
    accepts(qs, { code: '' });
  });

  it('reports both maxlength and pattern when both fail', () => {
    const rules = problemsOf(qs, { code: 'abcdefg' }).map((p) => p.rule);
    expect(rules).toEqual(['maxlength', 'pattern']);
  });

  it('uses v-flag semantics like browsers', () => {
    const q = defs([{ type: 'textbox', name: 'word', pattern: '[\\p{L}--[a-z]]+' }]);
    accepts(q, { word: 'ÉCOLE' });
    expect(only(q, { word: 'école' }).rule).toBe('pattern');
  });

  it('falls back to u-flag semantics for a pattern the v flag refuses', () => {
    const q = defs([{ type: 'textbox', name: 'sample', pattern: '[A-Za-z0-9_-]+' }]);
    accepts(q, { sample: 'Fe_2O3-a' });
    expect(only(q, { sample: 'Fe 2O3' }).rule).toBe('pattern');
    expect(only(q, { sample: 'x-y!' }).rule).toBe('pattern');
  });

  it('checks nothing with a pattern valid only wrapped, as a browser ignores it', () => {
    // Saved before such patterns were refused: read back as stored lists are.
    const parsed = parseQuestions([{ type: 'textbox', name: 'code', pattern: 'a)|(b' }], {
      stored: true,
    });
    if (!parsed.ok) throw new Error('the saved list should load');
    expect(validateAnswers(parsed.questions, { code: 'zzz' }).ok).toBe(true);
    expect(validateAnswers(parsed.questions, { code: 'azzz' }).ok).toBe(true);
  });
});

describe('validateAnswers: numbers', () => {
  const qs = defs([
    { type: 'number', name: 'count', title: 'Count', min: 1, max: 10 },
    { type: 'number_float', name: 'dose', title: 'Dose', min: -0.5, max: 2.5, precision: 2 },
    { type: 'number_float', name: 'free' },
    { type: 'number_float', name: 'whole', precision: 0 },
  ]);

  it('accepts values in range', () => {
    accepts(qs, { count: 1, dose: 2.5, free: 1.23456 });
    accepts(qs, { count: '10', dose: '-0.50', whole: 3 });
  });

  it('requires whole numbers for number', () => {
    expect(only(qs, { count: 1.5 })).toMatchObject({ rule: 'integer', path: ['count'] });
    expect(only(qs, { count: '1.5' }).rule).toBe('integer');
    const huge = only(qs, { count: '1e400' });
    expect(huge.rule).toBe('integer');
    expect(huge.message).toContain('1e400');
    expect(only(qs, { count: 'three' }).message).toContain('"Count" must be a whole number');
  });

  it('rejects whole numbers too large to store exactly', () => {
    const q = defs([{ type: 'number', name: 'n' }]);
    expect(only(q, { n: 2 ** 60 }).rule).toBe('integer');
    accepts(q, { n: 1e3 });
  });

  it('requires a finite number for number_float', () => {
    expect(only(qs, { free: 'abc' })).toMatchObject({ rule: 'number', path: ['free'] });
    expect(only(qs, { free: '1e400' }).rule).toBe('number');
    expect(only(qs, { free: Number.POSITIVE_INFINITY }).rule).toBe('type');
    expect(only(qs, { free: true }).rule).toBe('type');
  });

  it('checks min and max', () => {
    const low = only(qs, { count: 0 });
    expect(low.rule).toBe('min');
    expect(low.message).toContain('at least 1');
    const high = only(qs, { dose: 3 });
    expect(high.rule).toBe('max');
    expect(high.message).toContain('"Dose" must be at most 2.5');
  });

  it('checks decimal places against precision', () => {
    const p = only(qs, { dose: 1.234 });
    expect(p.rule).toBe('precision');
    expect(p.message).toContain('at most 2 decimal places');
    expect(only(qs, { whole: 1.5 }).message).toContain('must be a whole number');
    // The count says what it counts, also where the rule says "a whole number".
    expect(only(qs, { whole: 1.25 }).message).toMatch(
      /must be a whole number; 1\.25 has 2 decimal places\.$/,
    );
    expect(p.message).toMatch(/1\.234 has 3 decimal places\.$/);
    accepts(qs, { dose: '1.20' });
  });
});

describe("validateAnswers: NEMO's step", () => {
  const qs = defs([
    { type: 'number', name: 'stubs', title: 'Stubs', min: 1, step: 2 },
    { type: 'number_float', name: 'dose', title: 'Dose', step: 0.1 },
  ]);

  // Mutation: step kept but not checked (what a browser refuses, the core stored).
  it('takes min (or 0) plus a whole number of steps, and names the rule for others', () => {
    accepts(qs, { stubs: 1, dose: 0.3 });
    accepts(qs, { stubs: 7, dose: -1.2 });
    expect(only(qs, { stubs: 4 })).toMatchObject({
      rule: 'step',
      path: ['stubs'],
      message: '"Stubs" goes in steps of 2 from 1; 4 is not one of them.',
    });
    expect(only(qs, { dose: 0.35 })).toMatchObject({
      rule: 'step',
      message: '"Dose" goes in steps of 0.1 from 0; 0.35 is not one of them.',
    });
  });
});

describe('validateAnswers: choices', () => {
  const qs = defs([
    { type: 'radio', name: 'r', title: 'Radio', choices: ['a', 'b'] },
    { type: 'dropdown', name: 'd', choices: ['x', 'y'] },
    { type: 'checkbox', name: 'c', title: 'Boxes', choices: ['1', '2', '3'] },
    { type: 'radio_report_problem', name: 'p' },
  ]);

  it('accepts listed choices', () => {
    accepts(qs, { r: 'b', d: 'x', c: ['3', '1'], p: 'No' });
  });

  it('rejects values outside the choices', () => {
    const r = only(qs, { r: 'c' });
    expect(r).toMatchObject({ rule: 'choices', path: ['r'] });
    expect(r.message).toContain('"c" is not one of the choices ("a" or "b")');
    expect(only(qs, { d: 'X' }).rule).toBe('choices');
    expect(only(qs, { p: 'maybe' }).rule).toBe('choices');
    expect(only(qs, { c: ['1', '4'] }).message).toContain('"4"');
  });

  it('rejects a choice picked twice in a checkbox', () => {
    expect(only(qs, { c: ['1', '1'] }).message).toContain('more than once');
  });

  it('reports values of the wrong kind', () => {
    expect(only(qs, { r: ['a'] })).toMatchObject({ rule: 'type', path: ['r'] });
    expect(only(qs, { c: [{}] })).toMatchObject({ rule: 'type', path: ['c'] });
    expect(only(qs, { c: 5 }).rule).toBe('type');
    // The item at fault is named: "needs a list of choices, but the answer is a list" says nothing.
    expect(only(qs, { c: ['1', null] }).message).toBe(
      '"Boxes" needs a list of choices (texts), but item 2 of the answer is nothing.',
    );
    expect(only(qs, { c: [['1']] }).message).toBe(
      '"Boxes" needs a list of choices (texts), but item 1 of the answer is a list.',
    );
    expect(only(qs, { r: { a: 1 } }).message).toContain('"Radio" needs text');
    // A required question answered with the wrong kind is told so once, not also "required".
    const required = defs([{ type: 'textbox', name: 'title', title: 'Title', required: true }]);
    expect(only(required, { title: ['a'] })).toMatchObject({ rule: 'type', path: ['title'] });
    expect(only(required, {})).toMatchObject({ rule: 'required', path: ['title'] });
  });
});

describe('validateAnswers: groups', () => {
  const qs = defs([
    {
      type: 'group',
      name: 'sample_group',
      title: 'Samples',
      max_number: 3,
      questions: [
        { type: 'textbox', name: 'sample_name', title: 'Sample name', required: true },
        { type: 'number', name: 'count', min: 1 },
      ],
    },
    { type: 'group', name: 'single', questions: [{ type: 'textbox', name: 'note' }] },
    {
      type: 'group',
      name: 'needed',
      title: 'Needed',
      required: true,
      max_number: 2,
      questions: [{ type: 'textbox', name: 'item' }],
    },
  ]);

  it('checks required fields in every repetition, with the repetition in the path', () => {
    const found = problemsOf(qs, {
      sample_group: [{ sample_name: 'a' }, { count: 2 }, { sample_name: 'c', count: 0 }],
      needed: [{ item: 'x' }],
    });
    expect(found.map((p) => [p.path, p.rule])).toEqual([
      [['sample_group', 1, 'sample_name'], 'required'],
      [['sample_group', 2, 'count'], 'min'],
    ]);
    expect(found[0]?.message).toBe('"Sample name" in entry 2 of "Samples" is required.');
  });

  it('limits repetitions to max_number, and to 1 without max_number', () => {
    const tooMany = only(qs, {
      sample_group: [
        { sample_name: 'a' },
        { sample_name: 'b' },
        { sample_name: 'c' },
        { sample_name: 'd' },
      ],
      needed: [{ item: 'x' }],
    });
    expect(tooMany).toMatchObject({ rule: 'max_number', path: ['sample_group'] });
    expect(tooMany.message).toContain('at most 3 entries');
    const single = only(qs, {
      sample_group: [{ sample_name: 'a' }],
      single: [{ note: 'a' }, { note: 'b' }],
      needed: [{ item: 'x' }],
    });
    expect(single.rule).toBe('max_number');
    expect(single.message).toContain('at most 1 entry');
  });

  it('requires at least one filled repetition in a required group', () => {
    const samples = { sample_group: [{ sample_name: 'a' }] };
    expect(only(qs, samples)).toMatchObject({ rule: 'required', path: ['needed'] });
    expect(only(qs, { ...samples, needed: [{}] }).message).toBe(
      '"Needed" needs at least one entry.',
    );
    accepts(qs, { ...samples, needed: [{}, { item: 'x' }] });
  });

  it("checks a group with a required field given no entry as one empty entry (NEMO's first)", () => {
    const needed = { needed: [{ item: 'x' }] };
    for (const none of [{}, { sample_group: [] }, { sample_group: null }]) {
      const problem = only(qs, { ...none, ...needed });
      expect(problem).toMatchObject({ rule: 'required', path: ['sample_group', 0, 'sample_name'] });
      expect(problem.message).toBe('"Sample name" in entry 1 of "Samples" is required.');
    }
    // A group whose fields are all optional may be left without an entry.
    accepts(qs, { sample_group: [{ sample_name: 'a' }], single: [], ...needed });
    accepts(qs, { sample_group: [{ sample_name: 'a' }], ...needed });
  });

  it('reports a repetition that is not an object', () => {
    const found = problemsOf(qs, { sample_group: ['oops'], needed: [{ item: 'x' }] });
    expect(found.map((p) => [p.path, p.rule])).toEqual([
      [['sample_group', 0], 'type'],
      [['sample_group', 0, 'sample_name'], 'required'],
    ]);
  });
});

describe('validateAnswers: formulas', () => {
  const qs = defs([
    { type: 'number', name: 'a', title: 'A' },
    { type: 'number', name: 'b', title: 'B' },
    {
      type: 'formula',
      name: 'ratio',
      title: 'Ratio',
      formula: 'a / b',
      required: true,
      precision: 1,
    },
    { type: 'formula', name: 'optional_ratio', formula: 'a / b' },
  ]);

  it('computes formulas into the answers and ignores client values', () => {
    const result = validateAnswers(qs, { a: 1, b: 3, ratio: 42, optional_ratio: 'x' });
    expect(result).toEqual({
      ok: true,
      answers: { a: 1, b: 3, ratio: 0.3, optional_ratio: 0.333333333333333 },
    });
  });

  it('keeps whole numbers up to 2^53 - 1 exact (Python gives them so)', () => {
    const big = defs([
      { type: 'number', name: 'a' },
      { type: 'formula', name: 'same', formula: 'a' },
      { type: 'formula', name: 'next', formula: 'a + 1' },
      { type: 'formula', name: 'whole', formula: 'round(a / 2)' },
    ]);
    expect(validateAnswers(big, { a: 1234567890123456 })).toEqual({
      ok: true,
      answers: {
        a: 1234567890123456,
        same: 1234567890123456,
        next: 1234567890123457,
        whole: 617283945061728,
      },
    });
    const max = validateAnswers(big, { a: Number.MAX_SAFE_INTEGER - 1 });
    expect(max.ok && max.answers['same']).toBe(9007199254740990);
    expect(max.ok && max.answers['next']).toBe(Number.MAX_SAFE_INTEGER);
    // Fractions still lose their binary noise.
    expect(validateAnswers(big, { a: 3 })).toMatchObject({ answers: { whole: 2 } });
  });

  it('reports a required formula that cannot be computed, naming the missing inputs', () => {
    const p = only(qs, { a: 1 });
    expect(p).toMatchObject({ rule: 'formula', path: ['ratio'], question: 'ratio' });
    expect(p.message).toBe('"Ratio" cannot be calculated: answer "B" first.');
    const zero = only(qs, { a: 1, b: 0 });
    expect(zero.message).toContain('division by zero');
  });
});

describe('validateAnswers: robustness', () => {
  const qs = defs([{ type: 'textbox', name: 't', required: true }]);

  it('reports answers that are not an object', () => {
    expect(problemsOf(qs, [1, 2]).map((p) => p.rule)).toEqual(['type', 'required']);
    expect(problemsOf(qs, '{bad json').map((p) => p.rule)).toEqual(['type', 'required']);
  });

  it('never throws on broken definitions', () => {
    const broken = [
      null,
      { type: 'group', name: 'g' },
      { type: 'checkbox', name: 'c' },
      { name: 'x' },
    ] as unknown as Question[];
    const result = validateAnswers(broken, { g: [{}, 1], c: ['a'], x: 1 });
    expect(result.ok).toBe(false);
    expect(validateAnswers(undefined as unknown as Question[], {})).toEqual({
      ok: true,
      answers: {},
    });
  });
});
