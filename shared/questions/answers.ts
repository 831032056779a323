// From any answer shape to canonical answers (see Answers in types.ts).
//
// Accepted input: the canonical shape; NEMO's stored shape, where each answer is the question
// definition plus "user_input" and groups are objects keyed "0", "1", ... (gaps allowed, read
// in numeric order); JSON text of either. Unknown keys are dropped. Values that cannot be read
// are dropped and reported (rule "type") to validateAnswers. Formula answers from the input
// are ignored and recomputed.

import { computeFormulas } from './compute.js';
import { hasOwn, isBlankString, isPlainObject, parseJsonText, quote } from './json.js';
import type { JsonObject } from './json.js';
import { questionLabel } from './label.js';
import { groupFields, usableQuestions } from './usable.js';
import type {
  AnswerGroup,
  AnswerProblem,
  Answers,
  GroupFieldQuestion,
  GroupQuestion,
  Question,
} from './types.js';

type Path = (string | number)[];
type FieldValue = string | number | string[];

/** A number written as text: 12, -1.5, .5, 1e3. Anything else stays text and fails validation. */
const NUMBER_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** NEMO wraps each answer as {...definition, user_input}; a wrapper without user_input is unanswered. */
function unwrap(value: unknown): unknown {
  if (
    isPlainObject(value) &&
    (hasOwn(value, 'user_input') || (hasOwn(value, 'type') && hasOwn(value, 'name')))
  ) {
    return hasOwn(value, 'user_input') ? value['user_input'] : undefined;
  }
  return value;
}

function describeValue(value: unknown): string {
  if (value === null) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'text';
  if (typeof value === 'number') return Number.isFinite(value) ? 'a number' : String(value);
  return typeof value === 'boolean' ? `${value}` : typeof value;
}

class Normalizer {
  readonly problems: AnswerProblem[] = [];

  private typeProblem(question: Question, path: Path, expected: string, value: unknown): void {
    this.problems.push({
      path,
      question: question.name,
      rule: 'type',
      message: `${quote(questionLabel(question))} needs ${expected}, but the answer is ${describeValue(value)}.`,
    });
  }

  /** The canonical value of one non-group question, or undefined when unanswered. */
  field(question: Question, raw: unknown, path: Path): FieldValue | undefined {
    const value = unwrap(raw);
    switch (question.type) {
      case 'formula':
      case 'group':
        return undefined;
      case 'checkbox':
        return this.checkbox(question, value, path);
      case 'number':
      case 'number_float':
        return this.number(question, value, path);
      default:
        return this.text(question, value, path);
    }
  }

  private text(question: Question, value: unknown, path: Path): string | undefined {
    if (value === undefined || value === null) return undefined;
    if (question.type === 'radio_report_problem') {
      // NEMO stores this question's answer as "true"/"false".
      if (value === true || (typeof value === 'string' && value.trim().toLowerCase() === 'true'))
        return 'Yes';
      if (value === false || (typeof value === 'string' && value.trim().toLowerCase() === 'false'))
        return 'No';
    }
    if (typeof value === 'string') return isBlankString(value) ? undefined : value;
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    this.typeProblem(question, path, 'text', value);
    return undefined;
  }

  private number(question: Question, value: unknown, path: Path): number | string | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'number') {
      if (Number.isFinite(value)) return value === 0 ? 0 : value;
      this.typeProblem(question, path, 'a finite number', value);
      return undefined;
    }
    if (typeof value === 'string') {
      const text = value.trim();
      if (text === '') return undefined;
      if (NUMBER_TEXT.test(text)) {
        const parsed = Number(text);
        if (Number.isFinite(parsed)) return parsed === 0 ? 0 : parsed;
      }
      return text; // kept so that validation can say what is wrong with it
    }
    this.typeProblem(question, path, 'a number', value);
    return undefined;
  }

  private checkbox(question: Question, value: unknown, path: Path): string[] {
    if (value === undefined || value === null) return [];
    if (typeof value === 'string') return isBlankString(value) ? [] : [value];
    if (Array.isArray(value)) {
      const chosen: string[] = [];
      for (const [index, item] of (value as unknown[]).entries()) {
        if (typeof item === 'string') {
          if (!isBlankString(item)) chosen.push(item);
        } else if (typeof item === 'number' && Number.isFinite(item)) {
          chosen.push(String(item));
        } else {
          // The item at fault, not the list: the list itself is of the right kind.
          this.problems.push({
            path,
            question: question.name,
            rule: 'type',
            message: `${quote(questionLabel(question))} needs a list of choices (texts), but item ${index + 1} of the answer is ${describeValue(item)}.`,
          });
          return [];
        }
      }
      return chosen;
    }
    this.typeProblem(question, path, 'a list of choices', value);
    return [];
  }

  group(question: GroupQuestion, raw: unknown, path: Path): AnswerGroup[] {
    const value = unwrap(raw);
    if (value === undefined || value === null || value === '') return [];
    let repetitions: unknown[];
    if (Array.isArray(value)) {
      repetitions = value as unknown[];
    } else if (isPlainObject(value)) {
      const keys: string[] = [];
      const others: string[] = [];
      for (const key of Object.keys(value)) (/^\d+$/.test(key) ? keys : others).push(key);
      if (keys.length === 0 && others.length > 0) {
        this.typeProblem(question, path, 'a list of entries', value);
        return [];
      }
      // An entry under another key is not dropped without a word: the answers are refused.
      for (const key of others) {
        this.problems.push({
          path: [...path, key],
          question: question.name,
          rule: 'type',
          message: `${quote(questionLabel(question))} has an entry under ${quote(key)}: a group's entries are a list, or an object keyed by their numbers (0, 1, 2, ...).`,
        });
      }
      keys.sort((a, b) => Number(a) - Number(b));
      repetitions = keys.map((key) => value[key]);
    } else {
      this.typeProblem(question, path, 'a list of entries', value);
      return [];
    }
    const fields = groupFields(question);
    return repetitions.map((entry, index) => {
      // A repetition is never a wrapper: NEMO stores it as the plain object of its fields'
      // values. Unwrapping it would take a repetition of fields named "type" and "name" for a
      // wrapper without user_input, and drop its answers.
      const out: AnswerGroup = {};
      if (entry !== undefined && entry !== null && !isPlainObject(entry)) {
        this.typeProblem(question, [...path, index], 'an object for each entry', entry);
      }
      const source: JsonObject = isPlainObject(entry) ? entry : {};
      for (const field of fields) {
        if (field.type === 'formula') continue;
        const fieldValue = this.field(
          field,
          hasOwn(source, field.name) ? source[field.name] : undefined,
          [...path, index, field.name],
        );
        if (fieldValue !== undefined) out[field.name] = fieldValue;
      }
      return out;
    });
  }
}

/** Reads the answer object itself: an object, or the JSON text of one. */
function answerObject(raw: unknown, problems: AnswerProblem[]): JsonObject {
  const json = parseJsonText(raw);
  if (!json.ok) {
    problems.push({
      path: [],
      question: '',
      rule: 'type',
      message: 'The answers are not valid JSON.',
    });
    return {};
  }
  if (json.value === undefined || json.value === null || json.value === '') return {};
  if (!isPlainObject(json.value)) {
    problems.push({
      path: [],
      question: '',
      rule: 'type',
      message: `The answers must be an object keyed by question name, not ${describeValue(json.value)}.`,
    });
    return {};
  }
  return json.value;
}

/** Canonical answers without formulas, plus the values that could not be read. */
export function normalizeWithProblems(
  questions: Question[],
  raw: unknown,
): { answers: Answers; problems: AnswerProblem[] } {
  const normalizer = new Normalizer();
  const input = answerObject(raw, normalizer.problems);
  const answers: Answers = {};
  for (const question of usableQuestions(questions)) {
    const value = hasOwn(input, question.name) ? input[question.name] : undefined;
    if (question.type === 'group') {
      answers[question.name] = normalizer.group(question, value, [question.name]);
      continue;
    }
    const fieldValue = normalizer.field(question, value, [question.name]);
    if (fieldValue !== undefined) answers[question.name] = fieldValue;
  }
  return { answers, problems: normalizer.problems };
}

/**
 * Canonical answers from the canonical or NEMO shape (or JSON text of either), with formulas
 * recomputed. Unanswered simple questions are absent; checkboxes are lists; groups are lists
 * of repetitions. Numbers written as text become numbers when they read cleanly; other text
 * is kept so that validateAnswers can report it. Never throws.
 */
export function normalizeAnswers(questions: Question[], raw: unknown): Answers {
  try {
    return computeFormulas(questions, normalizeWithProblems(questions, raw).answers);
  } catch {
    return {};
  }
}

function initialField(question: GroupFieldQuestion | Question): FieldValue | undefined {
  if (question.type === 'checkbox') {
    return Array.isArray(question.default_value) ? question.default_value.slice() : [];
  }
  if (
    (question.type === 'radio' || question.type === 'dropdown') &&
    typeof question.default_value === 'string'
  ) {
    return question.default_value;
  }
  return undefined;
}

/** Answers of an untouched form: default values, one empty repetition per group, formulas computed. */
export function initialAnswers(questions: Question[]): Answers {
  try {
    const answers: Answers = {};
    for (const question of usableQuestions(questions)) {
      if (question.type === 'group') {
        const repetition: AnswerGroup = {};
        for (const field of groupFields(question)) {
          const value = initialField(field);
          if (value !== undefined) repetition[field.name] = value;
        }
        answers[question.name] = [repetition];
        continue;
      }
      const value = initialField(question);
      if (value !== undefined) answers[question.name] = value;
    }
    return computeFormulas(questions, answers);
  } catch {
    return {};
  }
}
