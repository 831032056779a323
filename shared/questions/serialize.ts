// Canonical plain-JSON form of question definitions: known properties only, in a fixed
// order, "number_float" (never NEMO's "float"). parseQuestions(serializeQuestions(q)) gives q
// back for any q that parseQuestions produced.

import { isPlainObject } from './json.js';
import type { JsonObject } from './json.js';
import {
  PROPERTY_ORDER,
  REPORT_PROBLEM_OPTIONS,
  canonicalTypeName,
  isAllowedProperty,
  isQuestionType,
} from './properties.js';
import { QUESTION_TYPES } from './types.js';
import type { Question } from './types.js';

/** Copies a JSON value; drops what JSON cannot hold (functions, undefined, non-finite numbers). */
function copyJson(value: unknown, depth = 0): unknown {
  if (depth > 50) return undefined;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (Array.isArray(value)) {
    return value.map((item) => copyJson(item, depth + 1)).filter((item) => item !== undefined);
  }
  if (isPlainObject(value)) {
    const out: JsonObject = {};
    for (const key of Object.keys(value)) {
      const item = copyJson(value[key], depth + 1);
      if (item !== undefined) out[key] = item;
    }
    return out;
  }
  return undefined;
}

function serializeQuestion(question: unknown): JsonObject | null {
  if (!isPlainObject(question) || typeof question['type'] !== 'string') return null;
  const type = canonicalTypeName(question['type']);
  if (!isQuestionType(type, QUESTION_TYPES)) return null;
  const out: JsonObject = {};
  for (const property of PROPERTY_ORDER) {
    if (
      !isAllowedProperty(type, property) ||
      !Object.prototype.hasOwnProperty.call(question, property)
    ) {
      continue;
    }
    const value = question[property];
    if (value === undefined) continue;
    if (property === 'type') {
      out['type'] = type;
    } else if (property === 'questions') {
      out['questions'] = Array.isArray(value)
        ? value.map(serializeQuestion).filter((field): field is JsonObject => field !== null)
        : [];
    } else if (property === 'options' && isPlainObject(value)) {
      const options: JsonObject = {};
      for (const key of REPORT_PROBLEM_OPTIONS) {
        if (value[key] !== undefined) options[key] = copyJson(value[key]);
      }
      out['options'] = options;
    } else {
      const copy = copyJson(value);
      if (copy !== undefined) out[property] = copy;
    }
  }
  return out;
}

/** Canonical plain JSON of question definitions; never throws (anything unreadable is left out). */
export function serializeQuestions(questions: Question[]): unknown[] {
  try {
    if (!Array.isArray(questions)) return [];
    return (questions as unknown[])
      .map(serializeQuestion)
      .filter((question): question is JsonObject => question !== null);
  } catch {
    return [];
  }
}
