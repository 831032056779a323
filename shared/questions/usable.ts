// Functions on answers take question lists from callers that may not have checked them;
// these helpers pick out the questions that can be read, so that nothing throws.

import { isPlainObject } from './json.js';
import type { GroupFieldQuestion, GroupQuestion, Question } from './types.js';

/** Question objects with a text type and a usable name ("__proto__" never is). */
export function usableQuestions(questions: unknown): Question[] {
  if (!Array.isArray(questions)) return [];
  return (questions as unknown[]).filter(
    (question): question is Question =>
      isPlainObject(question) &&
      typeof question['name'] === 'string' &&
      question['name'] !== '__proto__' &&
      typeof question['type'] === 'string',
  );
}

/** The usable fields of a group. */
export function groupFields(group: GroupQuestion): GroupFieldQuestion[] {
  return usableQuestions(group.questions) as GroupFieldQuestion[];
}

/**
 * Whether a group has a required field, so needs an entry even when the group itself is not
 * required: NEMO's form always shows a group's first entry and checks its required fields
 * there (validate.ts checks an answer without one as one empty entry; the form keeps its last).
 */
export function groupHasRequiredField(group: GroupQuestion): boolean {
  return groupFields(group).some((field) => field.required === true);
}
