// Rules that a hand-mutation review found no test holding: each test here fails with the
// mutation named above it and passes without it.

import { describe, expect, it } from 'vitest';
import {
  initialAnswers,
  normalizeAnswers,
  parseFormula,
  parseQuestions,
  roundHalfAwayFromZero,
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

describe('a pattern reads the value as typed', () => {
  // Mutation: testing the pattern against the trimmed value, so spaces around it pass.
  it('refuses spaces around a value that the pattern does not allow', () => {
    const qs = defs([{ type: 'textbox', name: 'code', pattern: '\\d{3}' }]);
    expect(problemsOf(qs, { code: '123' })).toEqual([]);
    for (const value of [' 123', '123 ']) {
      expect(problemsOf(qs, { code: value })).toMatchObject([{ rule: 'pattern', path: ['code'] }]);
    }
  });
});

describe('radio and dropdown choices', () => {
  // Mutation: comparing the chosen value with the choices after trimming it.
  it.each(['radio', 'dropdown'])('a %s takes a choice only as written', (type) => {
    const qs = defs([{ type, name: 'mode', choices: ['TEM', 'STEM'] }]);
    expect(problemsOf(qs, { mode: 'STEM' })).toEqual([]);
    expect(problemsOf(qs, { mode: 'STEM ' })).toMatchObject([{ rule: 'choices', path: ['mode'] }]);
  });
});

describe('problems in form order', () => {
  // Mutations: dropping the sort by question (problems then come in checking order: every
  // field first, formulas after, unreadable values before all), or by repetition.
  it('lists problems by question as the form shows them, then by repetition', () => {
    const qs = defs([
      { type: 'number', name: 'a' },
      { type: 'formula', name: 'half', formula: '10 / a', required: true },
      { type: 'textbox', name: 'b', required: true },
      {
        type: 'group',
        name: 'g',
        max_number: 3,
        questions: [
          { type: 'textbox', name: 'x', required: true },
          { type: 'number', name: 'y' },
        ],
      },
      { type: 'number', name: 'c', max: 1 },
    ]);
    const result = validateAnswers(qs, {
      a: 0,
      g: [{ y: 1 }, { x: 'ok', y: [1] }, { y: 2 }],
      c: 5,
    });
    expect(!result.ok && result.problems.map((p) => [p.path.join('.'), p.rule])).toEqual([
      ['half', 'formula'],
      ['b', 'required'],
      ['g.0.x', 'required'],
      ['g.1.y', 'type'],
      ['g.2.x', 'required'],
      ['c', 'max'],
    ]);
  });
});

describe('checkbox answers: always a list of choices', () => {
  const qs = defs([{ type: 'checkbox', name: 'gases', choices: ['N2', 'Ar', '5'] }]);

  // Mutation: dropping the reading of one choice given as text (a list of one).
  it('reads one choice given as text as a list of that choice', () => {
    expect(normalizeAnswers(qs, { gases: 'Ar' })).toEqual({ gases: ['Ar'] });
    expect(normalizeAnswers(qs, { gases: { name: 'gases', user_input: '  ' } })).toEqual({
      gases: [],
    });
  });

  // Mutation: keeping blank items of the list (then reported as choices that do not exist).
  it('drops blank items of the list', () => {
    expect(validateAnswers(qs, { gases: ['N2', '', ' '] })).toEqual({
      ok: true,
      answers: { gases: ['N2'] },
    });
  });

  // Mutation: refusing a number in the list instead of reading it as the choice it writes.
  it('reads a number in the list as the choice it writes', () => {
    expect(validateAnswers(qs, { gases: ['N2', 5] })).toEqual({
      ok: true,
      answers: { gases: ['N2', '5'] },
    });
  });
});

describe('group answers: always a list of entries', () => {
  const qs = defs([
    { type: 'group', name: 'g', max_number: 2, questions: [{ type: 'textbox', name: 'x' }] },
  ]);

  // Mutation: taking an object without "0", "1", ... keys as an answer of the wrong kind even
  // when it is empty (NEMO's group from which every entry was removed).
  it('reads an empty keyed object as no entries, not as an answer of the wrong kind', () => {
    expect(validateAnswers(qs, { g: {} })).toEqual({ ok: true, answers: { g: [] } });
    const wrapped = { g: { type: 'group', name: 'g', user_input: {} } };
    expect(validateAnswers(qs, wrapped)).toEqual({ ok: true, answers: { g: [] } });
    expect(problemsOf(qs, { g: { x: 'a' } }).map((problem) => problem.rule)).toEqual(['type']);
  });

  // Mutation: keeping the entries under numbers and dropping the others without a word (an
  // entry under "a" was lost, and the answers stored).
  it('refuses an entry under a key that is not a number, naming the key', () => {
    const cases: [unknown, string][] = [
      [{ '0': { x: 'kept' }, a: { x: 'lost' } }, 'a'],
      [
        { type: 'group', name: 'g', user_input: { '0': { x: 'kept' }, second: { x: 'lost' } } },
        'second',
      ],
    ];
    for (const [g, key] of cases) {
      const problems = problemsOf(qs, { g });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatchObject({ question: 'g', rule: 'type' });
      expect(problems[0]?.path).toEqual(['g', key]);
      expect(problems[0]?.message).toBe(
        `"g" has an entry under "${key}": a group's entries are a list, or an object keyed by their numbers (0, 1, 2, ...).`,
      );
    }
  });
});

describe('numbers', () => {
  // Mutation: keeping -0 as given (it would show as "-0" and does not survive JSON).
  it('stores -0 as 0', () => {
    const qs = defs([
      { type: 'number', name: 'n' },
      { type: 'number_float', name: 'f' },
    ]);
    const answers = normalizeAnswers(qs, { n: -0, f: '-0.0' });
    expect(Object.is(answers['n'], 0)).toBe(true);
    expect(Object.is(answers['f'], 0)).toBe(true);
  });
});

describe('an untouched form', () => {
  // Mutation: applying default_value of radio questions only, not of dropdowns.
  it('starts a dropdown at its default value', () => {
    const qs = defs([
      { type: 'dropdown', name: 'mode', choices: ['fast', 'slow'], default_value: 'slow' },
    ]);
    expect(initialAnswers(qs)).toEqual({ mode: 'slow' });
  });
});

describe('function arity', () => {
  // Mutations: letting floor (or another one-argument function) take more arguments, or max
  // and min take none (max() then fails only when computed, not when the form is saved).
  it.each(['floor', 'ceil', 'abs', 'trunc', 'sqrt'])('%s() takes exactly one argument', (name) => {
    expect(parseFormula(`${name}(4)`).ok).toBe(true);
    for (const call of [`${name}()`, `${name}(4, 1)`]) {
      const parsed = parseFormula(call);
      expect(parsed.ok).toBe(false);
      expect(!parsed.ok && parsed.error).toContain('exactly 1 argument');
    }
  });

  it.each(['sum', 'max', 'min'])('%s() needs at least one argument', (name) => {
    const parsed = parseFormula(`${name}()`);
    expect(!parsed.ok && parsed.error).toContain('at least 1 argument');
  });
});

describe('rounding a value below the last place kept', () => {
  // Mutation: dropping the early answer 0 when the first digit lies two or more places past
  // the last one kept; the digits then slice from the end, and 0.0055 rounded to 1 place gave 0.5.
  it('gives 0 (or the value of the last place) whatever the digits further on', () => {
    expect(roundHalfAwayFromZero(0.0055, 1)).toBe(0);
    expect(roundHalfAwayFromZero(-0.00987, 1)).toBe(0);
    expect(roundHalfAwayFromZero(0.055, 1)).toBe(0.1);
    expect(roundHalfAwayFromZero(12345, -6)).toBe(0);
  });
});

describe('a group field outside its group is a list', () => {
  const group = {
    type: 'group',
    name: 'g',
    max_number: 3,
    questions: [{ type: 'number', name: 'x' }],
  };

  // Mutations: letting a list stand as one number under a unary minus, on the right of an
  // operator, or as an index (each is refused only where it is the left operand).
  it.each(['-x', '1 + x', '2 * x', 'x[0] + g_list[x]'])(
    'refuses %j, which uses the list as one number',
    (formula) => {
      const result = parseQuestions([
        group,
        {
          type: 'group',
          name: 'h',
          max_number: 3,
          questions: [{ type: 'number', name: 'g_list' }],
        },
        { type: 'formula', name: 'c', formula },
      ]);
      expect(result.ok).toBe(false);
      expect(!result.ok && result.problems.map((problem) => problem.message)).toContainEqual(
        expect.stringContaining('use sum(x)'),
      );
    },
  );
});

describe('question names', () => {
  // Mutation: dropping the check of the name "__proto__", which the name pattern allows.
  it('refuses the name "__proto__"', () => {
    const result = parseQuestions([{ type: 'textbox', name: '__proto__' }]);
    expect(!result.ok && result.problems.map((problem) => problem.message)).toEqual([
      expect.stringContaining('reserved'),
    ]);
  });
});

describe('choices', () => {
  // Mutation: refusing an empty choice but not one of spaces alone, which no one could tell
  // from an empty one (and a blank answer is no answer).
  it('refuses a choice of spaces alone', () => {
    const result = parseQuestions([{ type: 'radio', name: 'mode', choices: ['TEM', '  '] }]);
    expect(!result.ok && result.problems.map((problem) => problem.message)).toEqual([
      expect.stringContaining('choice 2 in property "choices" is empty'),
    ]);
  });
});

describe('precision places', () => {
  // Mutation: reading a number_float's precision without its upper bound (20 places, as for
  // formulas and round()).
  it('refuses a precision of a number_float above 20 places', () => {
    expect(parseQuestions([{ type: 'number_float', name: 'f', precision: 20 }]).ok).toBe(true);
    const result = parseQuestions([{ type: 'number_float', name: 'f', precision: 21 }]);
    expect(!result.ok && result.problems.map((problem) => problem.path)).toEqual(['f.precision']);
  });
});
