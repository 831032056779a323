// Computing formula answers. A formula is unset (its key absent) when a question it uses is
// unanswered, when evaluation fails (division by zero, ...) or when the definition is broken
// (unreadable formula, dependency cycle). Inputs that are lists (a group field seen from
// outside the group) hold the answered repetitions only, as in NEMO; a list with no answered
// value at all counts as unanswered (issue 2: an unanswered input leaves the result unset), so
// a total over an empty group stays blank instead of showing 0.

import { cleanComputedNumber, roundHalfAwayFromZero } from './decimal.js';
import { evaluateFormulaAst } from './formula-eval.js';
import { fieldTable, planFormulas, reach } from './formula-graph.js';
import type { FieldInfo, PlannedFormula } from './formula-graph.js';
import { parseFormulaCached } from './formula.js';
import { isPlainObject, ownValue } from './json.js';
import { usableQuestions } from './usable.js';
import type { AnswerGroup, Answers, FormulaQuestion, GroupQuestion, Question } from './types.js';

export interface FormulaFailure {
  question: FormulaQuestion;
  path: (string | number)[];
  /** Names of the questions left unanswered that the formula needs (empty for other failures). */
  missing: string[];
  /** Why the value is unset, in words. */
  error: string;
}

function groupsOf(questions: Question[]): GroupQuestion[] {
  return questions.filter(
    (q): q is GroupQuestion => q.type === 'group' && Array.isArray(q.questions),
  );
}

function isNumericField(info: FieldInfo): boolean {
  const type = info.question.type;
  return type === 'number' || type === 'number_float' || type === 'formula';
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** Copies answers deeply enough that computing formulas never touches the input. */
function copyAnswers(questions: Question[], answers: unknown): Answers {
  const out: Answers = isPlainObject(answers) ? { ...(answers as Answers) } : {};
  for (const question of questions) {
    if (question.type === 'formula') delete out[question.name];
    if (question.type !== 'group') continue;
    const repetitions = ownValue(out, question.name);
    if (!Array.isArray(repetitions)) continue;
    const formulaFields = usableQuestions(question.questions).filter(
      (field) => field.type === 'formula',
    );
    out[question.name] = (repetitions as unknown[]).map<AnswerGroup>((repetition) => {
      if (!isPlainObject(repetition)) return repetition as AnswerGroup;
      const copy: AnswerGroup = { ...(repetition as AnswerGroup) };
      for (const field of formulaFields) delete copy[field.name];
      return copy;
    });
  }
  return out;
}

function finish(question: FormulaQuestion, value: number): number {
  const precision = question.precision;
  if (typeof precision === 'number' && Number.isInteger(precision) && precision >= 0) {
    return roundHalfAwayFromZero(value, precision);
  }
  return cleanComputedNumber(value);
}

function evaluate(
  item: PlannedFormula,
  lookup: (name: string) => number | number[] | null | undefined,
): { ok: true; value: number } | { ok: false; missing: string[]; error: string } {
  const missing = item.names.filter((name) => lookup(name) === null);
  if (missing.length > 0) {
    return { ok: false, missing, error: 'a question it uses is not answered' };
  }
  const result = evaluateFormulaAst(item.ast, lookup);
  return result.ok
    ? { ok: true, value: finish(item.question, result.value) }
    : { ...result, missing: [] };
}

/** Computes every formula; also says why each unset formula is unset. */
export function runFormulas(
  questionsInput: Question[],
  answersInput: unknown,
): { answers: Answers; failures: FormulaFailure[] } {
  const questions = usableQuestions(questionsInput);
  const answers = copyAnswers(questions, answersInput);
  const failures: FormulaFailure[] = [];
  const table = fieldTable(questions);
  const plan = planFormulas(questions);
  const computed = new Set<FormulaQuestion>();

  const valueFor = (name: string, from: GroupQuestion | null, repetition: AnswerGroup | null) => {
    const info = table.get(name);
    if (!info || !isNumericField(info)) return undefined;
    const kind = reach(table, from, name);
    if (kind === 'scalar') {
      const source = info.group === null ? answers : repetition;
      return source ? numberOrNull(ownValue(source, name)) : null;
    }
    if (kind === 'list' && info.group) {
      const repetitions = ownValue(answers, info.group.name);
      if (!Array.isArray(repetitions)) return null;
      const list: number[] = [];
      for (const entry of repetitions as unknown[]) {
        if (!isPlainObject(entry)) continue;
        const value = numberOrNull(ownValue(entry, name));
        if (value !== null) list.push(value);
      }
      return list.length > 0 ? list : null;
    }
    return undefined;
  };

  for (const item of plan.order) {
    computed.add(item.question);
    const name = item.question.name;
    if (item.group === null) {
      const result = evaluate(item, (n) => valueFor(n, null, null));
      if (result.ok) answers[name] = result.value;
      else
        failures.push({
          question: item.question,
          path: [name],
          missing: result.missing,
          error: result.error,
        });
      continue;
    }
    const group = item.group;
    const repetitions = ownValue(answers, group.name);
    if (!Array.isArray(repetitions)) continue;
    (repetitions as unknown[]).forEach((entry, index) => {
      if (!isPlainObject(entry)) return;
      const repetition = entry as AnswerGroup;
      const result = evaluate(item, (n) => valueFor(n, group, repetition));
      if (result.ok) repetition[name] = result.value;
      else {
        failures.push({
          question: item.question,
          path: [group.name, index, name],
          missing: result.missing,
          error: result.error,
        });
      }
    });
  }

  // Formulas left out of the plan: unreadable, or part of a dependency cycle.
  const broken = (question: FormulaQuestion): string => {
    const parsed = parseFormulaCached(question.formula);
    return parsed.ok
      ? 'its formula depends on itself'
      : `its formula cannot be read (${parsed.error})`;
  };
  for (const question of questions) {
    if (question.type === 'formula' && !computed.has(question)) {
      failures.push({ question, path: [question.name], missing: [], error: broken(question) });
    }
  }
  for (const group of groupsOf(questions)) {
    const repetitions = ownValue(answers, group.name);
    if (!Array.isArray(repetitions)) continue;
    for (const field of usableQuestions(group.questions)) {
      if (field.type !== 'formula' || computed.has(field)) continue;
      repetitions.forEach((_entry, index) => {
        failures.push({
          question: field,
          path: [group.name, index, field.name],
          missing: [],
          error: broken(field),
        });
      });
    }
  }
  return { answers, failures };
}

/**
 * A copy of the answers with every formula (top level and in each group repetition)
 * computed, rounded to the question's precision (half away from zero) when it has one, or
 * else cleaned of binary noise (15 significant digits). Unset formulas are absent. Never throws.
 */
export function computeFormulas(questions: Question[], answers: Answers): Answers {
  try {
    return runFormulas(questions, answers).answers;
  } catch {
    return isPlainObject(answers) ? { ...answers } : {};
  }
}
