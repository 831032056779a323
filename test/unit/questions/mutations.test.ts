// Rules that a hand-mutation review found no test holding: each test here fails with the
// mutation named above it and passes without it.

import { describe, expect, it } from 'vitest';
import {
  normalizeAnswers,
  parseQuestions,
  validateAnswers,
} from '../../../shared/questions/index.js';
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

describe('pattern: the whole value, as HTML5 reads it', () => {
  // Mutation: compiling `^${pattern}$` instead of `^(?:${pattern})$`, which anchors only the
  // first and the last alternative.
  it('anchors every alternative of the pattern, not only the first and the last', () => {
    const qs = defs([{ type: 'textbox', name: 'kind', pattern: 'cat|dog' }]);
    expect(problemsOf(qs, { kind: 'cat' })).toEqual([]);
    expect(problemsOf(qs, { kind: 'dog' })).toEqual([]);
    for (const value of ['catalog', 'hotdog']) {
      expect(problemsOf(qs, { kind: value }).map((p) => p.rule)).toEqual(['pattern']);
    }
  });

  // Mutation: checking the pattern of textbox questions only.
  it('holds the pattern of a textarea too', () => {
    const qs = defs([{ type: 'textarea', name: 'notes', pattern: '[A-Z]{2}\\d+' }]);
    expect(problemsOf(qs, { notes: 'AB12' })).toEqual([]);
    expect(problemsOf(qs, { notes: 'ab12' })).toMatchObject([{ rule: 'pattern', path: ['notes'] }]);
  });
});

describe("NEMO's stored shape", () => {
  const qs = defs([
    { type: 'textbox', name: 'title' },
    { type: 'checkbox', name: 'gases', choices: ['N2', 'Ar'] },
    { type: 'number', name: 'count' },
    { type: 'textbox', name: 'operator', required: true },
    { type: 'group', name: 'samples', questions: [{ type: 'textbox', name: 'sample' }] },
  ]);

  // Mutation: reading a wrapper as one only when it has user_input, so that a wrapper without
  // one (NEMO's unanswered optional question) is an answer of the wrong kind.
  it('takes a wrapper without user_input as unanswered, not as an answer of the wrong kind', () => {
    const nemo = {
      title: { type: 'textbox', name: 'title', title: 'Title' },
      gases: { type: 'checkbox', name: 'gases', choices: ['N2', 'Ar'] },
      count: { type: 'number', name: 'count' },
      operator: { type: 'textbox', name: 'operator', required: true, user_input: 'Ada' },
      samples: { type: 'group', name: 'samples', questions: [] },
    };
    expect(validateAnswers(qs, nemo)).toEqual({
      ok: true,
      answers: { gases: [], operator: 'Ada', samples: [] },
    });
    const unanswered = { ...nemo, operator: { type: 'textbox', name: 'operator' } };
    expect(problemsOf(qs, unanswered)).toMatchObject([{ rule: 'required', path: ['operator'] }]);
  });
});

describe('group repetitions', () => {
  // The bug this found: each repetition was unwrapped as if it were NEMO's answer wrapper, so a
  // repetition of fields named "type" and "name" read as a wrapper without user_input, and its
  // answers were dropped (a required one then reported as unanswered).
  it('keeps the answers of fields named "type" and "name"', () => {
    const qs = defs([
      {
        type: 'group',
        name: 'parts',
        max_number: 3,
        questions: [
          { type: 'textbox', name: 'name', required: true },
          { type: 'textbox', name: 'type' },
        ],
      },
    ]);
    const answers = { parts: [{ name: 'Lens', type: 'optic' }, { name: 'Stage' }] };
    expect(normalizeAnswers(qs, answers)).toEqual(answers);
    expect(validateAnswers(qs, answers)).toEqual({ ok: true, answers });
    const keyed = {
      parts: { type: 'group', name: 'parts', user_input: { '0': answers.parts[0] } },
    };
    expect(normalizeAnswers(qs, keyed)).toEqual({ parts: [answers.parts[0]] });
  });
});

describe('a required group', () => {
  // Mutation: counting a repetition as filled when only a formula of it has a value.
  it('needs an entry with an answer, not only a computed formula', () => {
    const qs = defs([
      { type: 'number', name: 'base' },
      {
        type: 'group',
        name: 'runs',
        title: 'Runs',
        required: true,
        questions: [
          { type: 'textbox', name: 'label' },
          { type: 'formula', name: 'twice', formula: 'base * 2' },
        ],
      },
    ]);
    expect(problemsOf(qs, { base: 2, runs: [{}] })).toMatchObject([
      { rule: 'required', path: ['runs'] },
    ]);
    expect(problemsOf(qs, { base: 2, runs: [{ label: 'a' }] })).toEqual([]);
  });
});

describe('definitions', () => {
  // Mutation: reading the precision of a number_float without asking for a whole number.
  it('refuses a precision of a number_float that is not a whole number of places', () => {
    const result = parseQuestions([{ type: 'number_float', name: 'f', precision: 1.5 }]);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems.map((problem) => problem.path)).toEqual(['f.precision']);
  });
});

describe('number_float bounds', () => {
  // Mutation: checking min (or max) of number questions only.
  it('holds min and max for a number_float as for a number', () => {
    const qs = defs([{ type: 'number_float', name: 'v', min: 0.5, max: 2.5 }]);
    expect(problemsOf(qs, { v: 0.5 })).toEqual([]);
    expect(problemsOf(qs, { v: 2.5 })).toEqual([]);
    expect(problemsOf(qs, { v: 0.2 })).toMatchObject([{ rule: 'min', path: ['v'] }]);
    expect(problemsOf(qs, { v: '2.6' })).toMatchObject([{ rule: 'max', path: ['v'] }]);
  });
});

describe('checkbox choices', () => {
  // Mutation: comparing a chosen item with the choices after trimming it.
  it('takes a choice only as written, not with spaces around it', () => {
    const qs = defs([{ type: 'checkbox', name: 'gases', choices: ['N2', 'Ar'] }]);
    expect(problemsOf(qs, { gases: ['N2', ' Ar'] })).toMatchObject([
      { rule: 'choices', path: ['gases'] },
    ]);
  });
});
