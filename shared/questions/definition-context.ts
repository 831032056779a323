// Where a question sits in a definition list, how problems about it are worded, and how its
// "type" is read.

import { quote } from './json.js';
import type { JsonObject } from './json.js';
import { canonicalTypeName, isQuestionType } from './properties.js';
import { QUESTION_TYPES } from './types.js';
import type { DefinitionProblem, QuestionType } from './types.js';

/** Where a question sits, for problem paths and messages. */
export interface QuestionContext {
  /** "sample_name", "sample_group.sample_name", "[3]" or "sample_group.questions[2]". */
  path: string;
  /** "question \"sample_name\" in group \"sample_group\"" or "question 4". */
  label: string;
  inGroup: boolean;
}

export class ProblemList {
  readonly problems: DefinitionProblem[] = [];

  add(context: QuestionContext, property: string | null, message: string): void {
    const path = property === null ? context.path : `${context.path}.${property}`;
    const label = context.label.charAt(0).toUpperCase() + context.label.slice(1);
    this.problems.push({ path, message: `${label}: ${message}` });
  }
}

export function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'text';
  if (typeof value === 'number') return Number.isFinite(value) ? 'a number' : String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return typeof value;
}

/** Reads "type": the canonical type name, or null after reporting a problem. */
export function readType(
  raw: JsonObject,
  context: QuestionContext,
  problems: ProblemList,
): QuestionType | null {
  if (!Object.prototype.hasOwnProperty.call(raw, 'type')) {
    problems.add(context, 'type', 'property "type" is missing');
    return null;
  }
  const type = raw['type'];
  if (typeof type !== 'string') {
    problems.add(context, 'type', `property "type" must be text, not ${describeJsonType(type)}`);
    return null;
  }
  const canonical = canonicalTypeName(type);
  if (!isQuestionType(canonical, QUESTION_TYPES)) {
    problems.add(
      context,
      'type',
      `unknown type ${quote(type)}; valid types are ${QUESTION_TYPES.join(', ')}`,
    );
    return null;
  }
  if (context.inGroup && canonical === 'group') {
    problems.add(context, 'type', 'a group cannot contain another group');
    return null;
  }
  if (context.inGroup && canonical === 'radio_report_problem') {
    problems.add(context, 'type', 'a radio_report_problem question cannot be inside a group');
    return null;
  }
  return canonical;
}
