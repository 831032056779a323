// What answers set in motion: tool problem reports and consumable withdrawals.

import { groupFields, usableQuestions } from './usable.js';
import { isPlainObject, ownValue } from './json.js';
import { choicesOf, questionLabel } from './label.js';
import type { Answers, ConsumableDraft, ProblemReportDraft, Question } from './types.js';

/**
 * One draft per radio_report_problem question answered with its first choice ("Yes").
 * The description is options.problem_description, else the question's title (or name).
 * Expects canonical answers (see normalizeAnswers). Never throws.
 */
export function problemReportsFrom(questions: Question[], answers: Answers): ProblemReportDraft[] {
  try {
    if (!isPlainObject(answers)) return [];
    const drafts: ProblemReportDraft[] = [];
    for (const question of usableQuestions(questions)) {
      if (question.type !== 'radio_report_problem') continue;
      if (ownValue(answers, question.name) !== choicesOf(question)[0]) continue;
      const options = isPlainObject(question.options) ? question.options : {};
      const description =
        typeof options.problem_description === 'string' && options.problem_description.trim() !== ''
          ? options.problem_description
          : questionLabel(question);
      drafts.push({
        question: question.name,
        description,
        force_shutdown: options.force_shutdown === true,
        safety_hazard: options.safety_hazard === true,
      });
    }
    return drafts;
  } catch {
    return [];
  }
}

function isPositiveQuantity(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

/**
 * One draft per number or number_float question with a `consumable` answered with a number
 * greater than 0; inside a group, one per repetition. Expects canonical answers. Never throws.
 */
export function consumablesFrom(questions: Question[], answers: Answers): ConsumableDraft[] {
  try {
    if (!isPlainObject(answers)) return [];
    const drafts: ConsumableDraft[] = [];
    const charge = (question: Question, value: unknown): void => {
      if (question.type !== 'number' && question.type !== 'number_float') return;
      if (typeof question.consumable !== 'string' || question.consumable === '') return;
      if (!isPositiveQuantity(value)) return;
      drafts.push({ question: question.name, consumable: question.consumable, quantity: value });
    };
    for (const question of usableQuestions(questions)) {
      if (question.type !== 'group') {
        charge(question, ownValue(answers, question.name));
        continue;
      }
      const repetitions = ownValue(answers, question.name);
      if (!Array.isArray(repetitions)) continue;
      for (const repetition of repetitions as unknown[]) {
        if (!isPlainObject(repetition)) continue;
        for (const field of groupFields(question)) charge(field, ownValue(repetition, field.name));
      }
    }
    return drafts;
  } catch {
    return [];
  }
}

/**
 * The names of the questions of `questions` whose answers can have an effect: consumables
 * (number fields with a consumable, in groups too) and problem reports. Tells the effects of
 * one form (the post-usage one) from those of another (the pre-usage one) on the same usage.
 */
export function effectQuestionNames(questions: Question[]): Set<string> {
  const names = new Set<string>();
  const look = (question: Question): void => {
    const consumable =
      (question.type === 'number' || question.type === 'number_float') &&
      typeof question.consumable === 'string' &&
      question.consumable !== '';
    if (consumable || question.type === 'radio_report_problem') names.add(question.name);
  };
  for (const question of usableQuestions(questions)) {
    if (question.type === 'group') groupFields(question).forEach(look);
    else look(question);
  }
  return names;
}
