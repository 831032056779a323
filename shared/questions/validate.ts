// validateAnswers: every rule a definition states, enforced on the canonical answers (NEMO
// itself enforces only `required`, and only in the first group repetition).

import { normalizeWithProblems } from './answers.js';
import { groupFields, groupHasRequiredField, usableQuestions } from './usable.js';
import { runFormulas } from './compute.js';
import type { FormulaFailure } from './compute.js';
import { decimalPlaces } from './decimal.js';
import { listInWords, ownValue, quote } from './json.js';
import { choicesOf, questionLabel } from './label.js';
import { compileHtmlPattern } from './pattern.js';
import { onStep } from './step.js';
import type {
  AnswerProblem,
  AnswerRule,
  GroupQuestion,
  Question,
  ValidateAnswersResult,
} from './types.js';

type Path = (string | number)[];

/** Where an answer is, in words: "Sample name" or "Sample name" in entry 2 of "Samples". */
function where(question: Question, group: GroupQuestion | null, index: number | null): string {
  const label = quote(questionLabel(question));
  if (group === null || index === null) return label;
  return `${label} in entry ${index + 1} of ${quote(questionLabel(group))}`;
}

function isAnswered(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (Array.isArray(value)) return value.length > 0;
  return !(typeof value === 'string' && value.trim() === '');
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

class AnswerChecker {
  readonly problems: AnswerProblem[] = [];

  private add(question: Question, path: Path, rule: AnswerRule, message: string): void {
    this.problems.push({ path, question: question.name, rule, message });
  }

  field(
    question: Question,
    value: unknown,
    path: Path,
    group: GroupQuestion | null,
    index: number | null,
  ): void {
    const subject = where(question, group, index);
    if (question.type === 'formula' || question.type === 'group') return;
    if (!isAnswered(value)) {
      if (question.required === true) {
        const message =
          question.type === 'checkbox'
            ? `${subject} needs at least one choice.`
            : `${subject} is required.`;
        this.add(question, path, 'required', message);
      }
      return;
    }
    switch (question.type) {
      case 'textbox':
      case 'textarea':
        if (typeof value === 'string') this.text(question, value, path, subject);
        return;
      case 'radio':
      case 'dropdown':
      case 'radio_report_problem':
        if (typeof value === 'string' && !choicesOf(question).includes(value)) {
          this.add(
            question,
            path,
            'choices',
            `${subject}: ${quote(value)} is not one of the choices (${listInWords(choicesOf(question).map(quote), 'or')}).`,
          );
        }
        return;
      case 'checkbox':
        if (Array.isArray(value)) this.checkbox(question, value as unknown[], path, subject);
        return;
      case 'number':
      case 'number_float':
        this.number(question, value, path, subject);
        return;
    }
  }

  private text(
    question: Question & { type: 'textbox' | 'textarea' },
    value: string,
    path: Path,
    subject: string,
  ): void {
    const length = answerLength(value);
    if (typeof question.maxlength === 'number' && length > question.maxlength) {
      this.add(
        question,
        path,
        'maxlength',
        `${subject} must be at most ${plural(question.maxlength, 'character', 'characters')} long; it has ${length}.`,
      );
    }
    if (typeof question.pattern === 'string') {
      const compiled = compileHtmlPattern(question.pattern);
      if (compiled.ok && !compiled.regexp.test(value)) {
        // The form's own example when it has one; else the rule itself, which at least says
        // what is wanted.
        const example =
          typeof question.placeholder === 'string' && question.placeholder.trim() !== ''
            ? ` (for example: ${question.placeholder})`
            : ` (it must match the pattern ${question.pattern})`;
        this.add(
          question,
          path,
          'pattern',
          `${subject} does not have the expected format${example}.`,
        );
      }
    }
  }

  private checkbox(question: Question, value: unknown[], path: Path, subject: string): void {
    const choices = choicesOf(question);
    const seen = new Set<unknown>();
    for (const item of value) {
      if (typeof item !== 'string' || !choices.includes(item)) {
        this.add(
          question,
          path,
          'choices',
          `${subject}: ${quote(String(item))} is not one of the choices (${listInWords(choices.map(quote), 'or')}).`,
        );
      } else if (seen.has(item)) {
        this.add(question, path, 'choices', `${subject}: ${quote(item)} is chosen more than once.`);
      }
      seen.add(item);
    }
  }

  private number(
    question: Question & { type: 'number' | 'number_float' },
    value: unknown,
    path: Path,
    subject: string,
  ): void {
    if (typeof value !== 'number') {
      if (question.type === 'number') {
        this.add(
          question,
          path,
          'integer',
          `${subject} must be a whole number; ${quote(String(value))} is not one.`,
        );
      } else {
        this.add(
          question,
          path,
          'number',
          `${subject} must be a number; ${quote(String(value))} is not one.`,
        );
      }
      return;
    }
    if (question.type === 'number' && !Number.isSafeInteger(value)) {
      const reason = Number.isInteger(value) ? ' (it is too large to store exactly)' : '';
      this.add(
        question,
        path,
        'integer',
        `${subject} must be a whole number; ${value} is not one${reason}.`,
      );
      return;
    }
    if (question.type === 'number_float' && typeof question.precision === 'number') {
      const places = decimalPlaces(value);
      if (places > question.precision) {
        const allowed =
          question.precision === 0
            ? 'must be a whole number'
            : `can have at most ${plural(question.precision, 'decimal place', 'decimal places')}`;
        this.add(
          question,
          path,
          'precision',
          `${subject} ${allowed}; ${value} has ${plural(places, 'decimal place', 'decimal places')}.`,
        );
      }
    }
    if (typeof question.step === 'number' && !onStep(value, { ...question, step: question.step })) {
      this.add(
        question,
        path,
        'step',
        `${subject} goes in steps of ${question.step} from ${question.min ?? 0}; ${value} is not one of them.`,
      );
    }
    if (typeof question.min === 'number' && value < question.min) {
      this.add(
        question,
        path,
        'min',
        `${subject} must be at least ${question.min}; ${value} is too small.`,
      );
    }
    if (typeof question.max === 'number' && value > question.max) {
      this.add(
        question,
        path,
        'max',
        `${subject} must be at most ${question.max}; ${value} is too large.`,
      );
    }
  }

  group(question: GroupQuestion, value: unknown): void {
    const repetitions = Array.isArray(value) ? (value as unknown[]) : [];
    const subject = quote(questionLabel(question));
    const fields = groupFields(question);
    const filled = repetitions.filter(
      (entry) =>
        typeof entry === 'object' &&
        entry !== null &&
        fields.some((field) => field.type !== 'formula' && isAnswered(ownValue(entry, field.name))),
    );
    if (question.required === true && filled.length === 0) {
      this.add(question, [question.name], 'required', `${subject} needs at least one entry.`);
    }
    const limit = typeof question.max_number === 'number' ? question.max_number : 1;
    if (repetitions.length > limit) {
      this.add(
        question,
        [question.name],
        'max_number',
        `${subject} allows at most ${plural(limit, 'entry', 'entries')}; there are ${repetitions.length}.`,
      );
    }
    // A group with a required field needs an entry (usable.ts): an answer without one is checked
    // as one empty entry, naming the fields it lacks.
    const checked =
      repetitions.length === 0 && groupHasRequiredField(question) ? [{}] : repetitions;
    checked.forEach((entry, index) => {
      const record =
        typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>) : {};
      for (const field of fields) {
        this.field(
          field,
          ownValue(record, field.name),
          [question.name, index, field.name],
          question,
          index,
        );
      }
    });
  }

  formulaFailure(failure: FailureWithPlace): void {
    const { question } = failure.failure;
    if (question.required !== true) return;
    const subject = where(question, failure.group, failure.index);
    const reason =
      failure.missing.length > 0
        ? `answer ${listInWords(failure.missing.map(quote))} first`
        : failure.failure.error;
    this.add(
      question,
      failure.failure.path,
      'formula',
      `${subject} cannot be calculated: ${reason}.`,
    );
  }
}

interface FailureWithPlace {
  failure: FormulaFailure;
  group: GroupQuestion | null;
  index: number | null;
  /** Labels of the unanswered inputs. */
  missing: string[];
}

function placeFailure(questions: Question[], failure: FormulaFailure): FailureWithPlace {
  const labels = new Map<string, string>();
  for (const question of questions) {
    labels.set(question.name, questionLabel(question));
    if (question.type === 'group')
      for (const field of groupFields(question)) labels.set(field.name, questionLabel(field));
  }
  const [first, index] = failure.path;
  const group =
    failure.path.length === 3
      ? (questions.find((q): q is GroupQuestion => q.type === 'group' && q.name === first) ?? null)
      : null;
  return {
    failure,
    group,
    index: typeof index === 'number' ? index : null,
    missing: failure.missing.map((name) => labels.get(name) ?? name),
  };
}

function validateUnchecked(questionsInput: Question[], raw: unknown): ValidateAnswersResult {
  const questions = usableQuestions(questionsInput);
  const normalized = normalizeWithProblems(questions, raw);
  const { answers, failures } = runFormulas(questions, normalized.answers);
  const checker = new AnswerChecker();
  for (const question of questions) {
    const value = ownValue(answers, question.name);
    if (question.type === 'group') checker.group(question, value);
    else checker.field(question, value, [question.name], null, null);
  }
  for (const failure of failures) checker.formulaFailure(placeFailure(questions, failure));

  // Report in form order: by top-level question, then by repetition.
  const order = new Map(questions.map((question, index) => [question.name, index]));
  const rank = (problem: AnswerProblem): number => {
    const head = problem.path[0];
    return typeof head === 'string' ? (order.get(head) ?? -1) : -1;
  };
  // An answer of the wrong kind is that one problem: it was given, so not also "required".
  const unreadable = new Set(normalized.problems.map((problem) => JSON.stringify(problem.path)));
  const checked = checker.problems.filter(
    (problem) => !(problem.rule === 'required' && unreadable.has(JSON.stringify(problem.path))),
  );
  const problems = [...normalized.problems, ...checked]
    .map((problem, position) => ({ problem, position }))
    .sort(
      (a, b) =>
        rank(a.problem) - rank(b.problem) ||
        compareRepetition(a.problem, b.problem) ||
        a.position - b.position,
    )
    .map(({ problem }) => problem);
  return problems.length > 0 ? { ok: false, answers, problems } : { ok: true, answers };
}

function compareRepetition(a: AnswerProblem, b: AnswerProblem): number {
  const ia = typeof a.path[1] === 'number' ? a.path[1] : -1;
  const ib = typeof b.path[1] === 'number' ? b.path[1] : -1;
  return ia - ib;
}

/**
 * Normalizes the answers (see normalizeAnswers), checks every rule of the definitions, and
 * computes formulas. `answers` is what gets stored. A formula that cannot be computed is a
 * problem only when the formula question is required. Never throws.
 */
/**
 * A text answer's length as maxlength counts it: in characters (code points: an emoji is one),
 * a line break once, as a browser counts it in the field: a form sends it as CRLF, and NEMO
 * stores it so, which must not put an answer typed to the limit over it.
 */
export function answerLength(value: string): number {
  return [...value.replaceAll('\r\n', '\n')].length;
}

export function validateAnswers(questions: Question[], raw: unknown): ValidateAnswersResult {
  try {
    return validateUnchecked(questions, raw);
  } catch {
    return {
      ok: false,
      answers: {},
      problems: [
        { path: [], question: '', rule: 'type', message: 'The answers could not be read.' },
      ],
    };
  }
}
