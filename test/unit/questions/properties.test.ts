// Property tests: round-trips and never-throws over generated inputs.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  evaluateFormula,
  normalizeAnswers,
  parseFormula,
  parseQuestions,
  sanitizeTitleHtml,
  serializeQuestions,
  validateAnswers,
} from '../../../shared/questions/index.js';
import type { Question } from '../../../shared/questions/index.js';

// ---- a generator of valid question definitions ----

type Raw = Record<string, unknown>;

const text = fc.string({ maxLength: 10 });
const choiceText = fc.string({ minLength: 1, maxLength: 6 }).filter((s) => s.trim() !== '');
const number = fc.double({ min: -1e6, max: 1e6, noNaN: true });
const VALID_PATTERNS = ['[a-z]+', '\\d{3}', '.*', '[A-Z]{2}[0-9]+', '(foo|bar)?', '\\p{Lu}+'];

const common = fc.record(
  {
    title: text,
    title_html: fc.constantFrom('<b>x</b>', 'plain', ''),
    required: fc.boolean(),
    help: text,
    'max-width': fc.integer({ min: 1, max: 2000 }),
  },
  { requiredKeys: [] },
);

/** Choice questions: labels match the choices, default values are among them. */
const choiceQuestion = fc
  .record({
    type: fc.constantFrom('radio', 'checkbox', 'dropdown'),
    choices: fc.uniqueArray(choiceText, { minLength: 1, maxLength: 5 }),
    withLabels: fc.boolean(),
    defaultPick: fc.option(fc.nat(), { nil: undefined }),
    inline: fc.option(fc.boolean(), { nil: undefined }),
  })
  .map(({ type, choices, withLabels, defaultPick, inline }) => {
    const raw: Raw = { type, choices };
    if (withLabels) raw['labels'] = choices.map((c) => `${c}!`);
    if (defaultPick !== undefined) {
      const pick = choices[defaultPick % choices.length];
      raw['default_value'] = type === 'checkbox' ? (defaultPick % 2 === 0 ? [pick] : pick) : pick;
    }
    if (inline !== undefined && type !== 'dropdown') raw['inline'] = inline;
    return raw;
  });

const textQuestion = fc
  .record(
    {
      type: fc.constantFrom('textbox', 'textarea'),
      maxlength: fc.nat({ max: 500 }),
      pattern: fc.constantFrom(...VALID_PATTERNS),
      placeholder: text,
    },
    { requiredKeys: ['type'] },
  )
  .chain((raw) =>
    raw.type === 'textbox'
      ? fc
          .record({ prefix: text, suffix: text }, { requiredKeys: [] })
          .map((extra) => ({ ...raw, ...extra }))
      : fc
          .option(fc.integer({ min: 1, max: 20 }), { nil: undefined })
          .map((rows) => (rows === undefined ? raw : { ...raw, rows })),
  );

const numberQuestion = fc
  .record({
    type: fc.constantFrom('number', 'number_float', 'float'),
    bounds: fc.option(fc.tuple(number, number), { nil: undefined }),
    precision: fc.option(fc.nat({ max: 6 }), { nil: undefined }),
    consumable: fc.option(choiceText, { nil: undefined }),
    suffix: fc.option(text, { nil: undefined }),
  })
  .map(({ type, bounds, precision, consumable, suffix }) => {
    const raw: Raw = { type };
    if (bounds) {
      raw['min'] = Math.min(...bounds);
      raw['max'] = Math.max(...bounds);
    }
    if (precision !== undefined && type !== 'number') raw['precision'] = precision;
    if (consumable !== undefined) raw['consumable'] = consumable;
    if (suffix !== undefined) raw['suffix'] = suffix;
    return raw;
  });

const reportQuestion = fc.record(
  {
    type: fc.constant('radio_report_problem'),
    labels: fc.tuple(text, text),
    options: fc.record(
      { problem_description: text, force_shutdown: fc.boolean(), safety_hazard: fc.boolean() },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['type'] },
);

/** A formula placeholder: the names are filled in once the earlier questions are known. */
const formulaQuestion = fc.record({
  type: fc.constant('formula'),
  picks: fc.array(fc.nat(), { maxLength: 3 }),
  shape: fc.constantFrom('plus', 'sum', 'round'),
  precision: fc.option(fc.nat({ max: 4 }), { nil: undefined }),
});

const fieldQuestion = fc.oneof(choiceQuestion, textQuestion, numberQuestion, formulaQuestion);

const groupQuestion = fc.record({
  type: fc.constant('group'),
  fields: fc.array(fc.tuple(common, fieldQuestion), { minLength: 1, maxLength: 4 }),
  max_number: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
});

const topQuestion = fc.oneof(
  { weight: 4, arbitrary: fieldQuestion },
  { weight: 1, arbitrary: reportQuestion },
  { weight: 1, arbitrary: groupQuestion },
);

/** Names that exercise object-key corner cases. */
const TRICKY_NAMES = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '_'];

function formulaText(picks: number[], shape: string, available: string[], lists: string[]): string {
  const names = picks.flatMap((p) =>
    available.length > 0 ? [available[p % available.length]] : [],
  );
  const listNames = picks.flatMap((p) => (lists.length > 0 ? [lists[p % lists.length]] : []));
  const scalars = names.length > 0 ? names.join(' + ') : '1';
  if (shape === 'sum' && listNames.length > 0) return `sum(${listNames.join(', ')}) * 2`;
  if (shape === 'round') return `round((${scalars}) / 3, 2)`;
  return `${scalars} + 0.5`;
}

function isNumericRaw(raw: Raw): boolean {
  return ['number', 'number_float', 'float', 'formula'].includes(String(raw['type']));
}

/** Assembles generated parts into a valid definition list with unique names. */
const validDefinitions = fc
  .tuple(fc.array(fc.tuple(common, topQuestion), { maxLength: 8 }), fc.boolean())
  .map(([parts, tricky]) => {
    let counter = 0;
    const nextName = (): string => {
      const i = counter++;
      return tricky && i < TRICKY_NAMES.length ? TRICKY_NAMES[i] : `q${i}`;
    };
    const topNumeric: string[] = [];
    const groupNumeric: string[] = [];
    const build = (base: Raw, part: Raw, scalars: string[], lists: string[]): Raw => {
      const name = nextName();
      if (part['type'] === 'formula') {
        const { picks, shape, precision } = part as {
          picks: number[];
          shape: string;
          precision?: number;
        };
        const raw: Raw = {
          ...base,
          type: 'formula',
          name,
          formula: formulaText(picks, shape, scalars, lists),
        };
        if (precision !== undefined) raw['precision'] = precision;
        return raw;
      }
      return { ...base, ...part, name };
    };
    return parts.map(([base, part]) => {
      if (part['type'] === 'group') {
        const { fields, max_number } = part as { fields: [Raw, Raw][]; max_number?: number };
        const inGroup: string[] = [];
        const questions = fields.map(([fieldBase, field]) => {
          const built = build(fieldBase, field, [...topNumeric, ...inGroup], []);
          if (isNumericRaw(built)) inGroup.push(String(built['name']));
          return built;
        });
        groupNumeric.push(...inGroup);
        const raw: Raw = { ...base, type: 'group', name: nextName(), questions };
        if (max_number !== undefined) raw['max_number'] = max_number;
        return raw;
      }
      const built = build(base, part, topNumeric, groupNumeric);
      if (isNumericRaw(built)) topNumeric.push(String(built['name']));
      return built;
    });
  });

function parsed(raw: unknown): Question[] {
  const result = parseQuestions(raw);
  if (!result.ok)
    throw new Error(`generator made invalid definitions: ${JSON.stringify(result.problems)}`);
  return result.questions;
}

describe('properties of definitions', () => {
  it('parseQuestions(serializeQuestions(q)) gives q back, also through JSON text', () => {
    fc.assert(
      fc.property(validDefinitions, (raw) => {
        const questions = parsed(raw);
        const serialized = serializeQuestions(questions);
        expect(parseQuestions(serialized)).toEqual({ ok: true, questions });
        expect(parseQuestions(JSON.stringify(serialized))).toEqual({ ok: true, questions });
        expect(JSON.stringify(serialized)).not.toContain('"float"');
      }),
      { numRuns: 300 },
    );
  });

  it('parseQuestions never throws and always explains itself, on anything', () => {
    const mutated = fc
      .tuple(validDefinitions, fc.nat(), fc.string({ maxLength: 12 }), fc.anything())
      .map(([raw, index, key, value]) => {
        if (raw.length === 0) return raw;
        const copy = raw.map((q) => ({ ...q }));
        copy[index % copy.length][key] = value;
        return copy;
      });
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.array(fc.anything()), mutated), (input) => {
        const result = parseQuestions(input);
        if (result.ok) {
          expect(Array.isArray(result.questions)).toBe(true);
        } else {
          expect(result.problems.length).toBeGreaterThan(0);
          for (const problem of result.problems) {
            expect(typeof problem.path).toBe('string');
            expect(problem.message).not.toBe('The question definitions could not be read.');
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

// ---- answers ----

const answerValue = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.constantFrom('', ' ', '1', '1.5', '1e400', 'Yes', 'true', 'a'),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant(null)), {
    maxLength: 3,
  }),
  fc.anything(),
);

function answersFor(questions: Question[]): fc.Arbitrary<Record<string, unknown>> {
  const names = questions.flatMap((q) =>
    q.type === 'group' ? [q.name, ...q.questions.map((f) => f.name)] : [q.name],
  );
  if (names.length === 0) return fc.constant({});
  const repetition = fc.dictionary(fc.constantFrom(...names), answerValue, { maxKeys: 4 });
  const value = fc.oneof(
    answerValue,
    fc.array(repetition, { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('0', '1', '5', 'x'), repetition, { maxKeys: 3 }),
    repetition.map((r) => ({ type: 'textbox', name: 'x', user_input: r })),
    answerValue.map((v) => ({ type: 'textbox', name: 'x', user_input: v })),
  );
  return fc.dictionary(fc.constantFrom(...names), value, { maxKeys: names.length });
}

describe('properties of answers', () => {
  it('validateAnswers never throws on fc.anything(), and its answers survive JSON', () => {
    const questions = parsed([
      { type: 'textbox', name: 'constructor', required: true, maxlength: 5, pattern: '[a-z]+' },
      { type: 'textarea', name: 'toString' },
      { type: 'radio', name: 'valueOf', choices: ['a', 'b'], required: true },
      { type: 'radio_report_problem', name: 'problem' },
      { type: 'checkbox', name: 'c', choices: ['x', 'y'], required: true },
      { type: 'dropdown', name: 'd', choices: ['1', '2'] },
      { type: 'number', name: 'n', min: 0, max: 10, consumable: 'Gloves' },
      { type: 'number_float', name: 'f', precision: 2 },
      {
        type: 'group',
        name: 'g',
        required: true,
        max_number: 2,
        questions: [
          { type: 'number', name: 'x', required: true },
          { type: 'formula', name: 'y', formula: 'x * n' },
        ],
      },
      { type: 'formula', name: 'total', formula: 'sum(y) + f', required: true },
    ]);
    fc.assert(
      fc.property(fc.anything(), (raw) => {
        const result = validateAnswers(questions, raw);
        expect(JSON.parse(JSON.stringify(result.answers))).toEqual(result.answers);
        if (!result.ok) {
          for (const problem of result.problems)
            expect(problem.message).not.toBe('The answers could not be read.');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('validateAnswers never throws on answer-shaped input, is idempotent, and reports in plain words', () => {
    const cases = validDefinitions.chain((raw) => {
      const questions = parsed(raw);
      return fc.tuple(fc.constant(questions), answersFor(questions));
    });
    fc.assert(
      fc.property(cases, ([questions, raw]) => {
        const first = validateAnswers(questions, raw);
        expect(JSON.parse(JSON.stringify(first.answers))).toEqual(first.answers);
        const second = validateAnswers(questions, first.answers);
        expect(second.answers).toEqual(first.answers);
        expect(normalizeAnswers(questions, raw)).toEqual(first.answers);
        if (!first.ok) {
          for (const problem of first.problems) {
            expect(problem.message).not.toBe('The answers could not be read.');
            expect(problem.message.length).toBeGreaterThan(0);
            expect(typeof problem.path[0]).toBe('string');
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

// ---- formulas ----

const FORMULA_TOKENS = [
  '1',
  '2.5',
  '0',
  '.5',
  '1e3',
  '1e400',
  'a',
  'b',
  'g',
  'zz',
  '(',
  ')',
  '[',
  ']',
  '+',
  '-',
  '*',
  '/',
  '%',
  '**',
  '^',
  ',',
  'sum(',
  'max(',
  'min(',
  'round(',
  'sqrt(',
  'abs(',
  'floor(',
  ' ',
  'e',
  '.',
  '//',
  '$',
];

const formulaLike = fc
  .array(fc.constantFrom(...FORMULA_TOKENS), { maxLength: 40 })
  .map((tokens) => tokens.join(''));

const scopeValue = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.double(), { maxLength: 4 }),
);
const scope = fc.record({ a: scopeValue, b: scopeValue, g: scopeValue }, { requiredKeys: [] });

function checkResult(result: ReturnType<typeof evaluateFormula>): void {
  if (result.ok) {
    expect(Number.isFinite(result.value)).toBe(true);
  } else {
    expect(typeof result.error).toBe('string');
    expect(result.error.length).toBeGreaterThan(0);
    expect(result.error).not.toBe('the formula could not be evaluated');
  }
}

describe('properties of formulas', () => {
  it('evaluateFormula never throws on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), scope, (source, values) => {
        checkResult(evaluateFormula(source, values));
      }),
      { numRuns: 500 },
    );
  });

  it('evaluateFormula never throws on formula-like token strings, and parse errors point inside the text', () => {
    fc.assert(
      fc.property(formulaLike, scope, (source, values) => {
        checkResult(evaluateFormula(source, values));
        const parsedFormula = parseFormula(source);
        if (!parsedFormula.ok) {
          expect(parsedFormula.position).toBeGreaterThanOrEqual(0);
          expect(parsedFormula.position).toBeLessThanOrEqual(source.length);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('evaluateFormula never throws on anything as scope', () => {
    fc.assert(
      fc.property(formulaLike, fc.anything(), (source, anyScope) => {
        checkResult(evaluateFormula(source, anyScope as Record<string, number>));
      }),
      { numRuns: 300 },
    );
  });
});

// ---- title_html ----

const SOUP = [
  '<',
  '>',
  '/',
  '</',
  '<!--',
  '-->',
  '<!',
  '<?',
  'script',
  'SCRIPT',
  'ScRiPt',
  'a',
  'b',
  'img',
  'svg',
  'style',
  'iframe',
  'p',
  'li',
  ' ',
  '\n',
  '\t',
  '\u0000',
  '=',
  '"',
  "'",
  '`',
  'href',
  'src',
  'onerror',
  'onclick',
  'ONLOAD',
  'javascript:',
  'JaVaScRiPt:',
  'java\tscript:',
  '&#106;',
  '&#x6A;',
  '&colon;',
  '&amp;',
  '&',
  '#',
  ';',
  'http://',
  'https://e.org',
  'mailto:',
  'data:',
  'alert(1)',
  'x',
  'style=',
  'rel',
  'target',
];

const tagSoup = fc
  .array(fc.constantFrom(...SOUP), { maxLength: 60 })
  .map((parts) => parts.join(''));

const ALLOWED_TAG =
  /^<(?:\/?(?:b|i|em|strong|u|s|sub|sup|p|span|small|code|ul|ol|li|a)|br|a href="(?:https?:\/\/|mailto:)[^"<>]+" rel="noopener noreferrer" target="_blank")>$/i;

describe('properties of sanitizeTitleHtml', () => {
  it('outputs only allowed tags, safe links and escaped text, idempotently', () => {
    fc.assert(
      fc.property(fc.oneof(tagSoup, fc.string()), (input) => {
        const output = sanitizeTitleHtml(input);
        expect(output.toLowerCase()).not.toContain('<script');
        const tags = output.match(/<[^>]*>?/g) ?? [];
        for (const tag of tags) {
          expect(tag).toMatch(ALLOWED_TAG);
          expect(tag.toLowerCase()).not.toContain('javascript:');
          expect(tag).not.toMatch(/\son[a-z]*\s*=/i);
        }
        // Outside tags, no markup character is left unescaped.
        expect(output.replace(/<[^>]*>/g, '')).not.toMatch(/[<>"]/);
        expect(sanitizeTitleHtml(output)).toBe(output);
      }),
      { numRuns: 1000 },
    );
  });
});
