// Which properties each question type accepts (spec 000, "Question definition"), in the
// order the canonical serialization writes them.

import type { QuestionType } from './types.js';

export const COMMON_PROPERTIES = [
  'type',
  'name',
  'title',
  'title_html',
  'required',
  'help',
  'max-width',
] as const;

const TYPE_PROPERTIES: Record<QuestionType, readonly string[]> = {
  radio: ['choices', 'labels', 'default_value', 'inline'],
  radio_report_problem: ['choices', 'labels', 'options'],
  checkbox: ['choices', 'labels', 'default_value', 'inline'],
  textbox: ['maxlength', 'pattern', 'placeholder', 'prefix', 'suffix'],
  textarea: ['rows', 'maxlength', 'pattern', 'placeholder'],
  number: ['min', 'max', 'consumable', 'prefix', 'suffix', 'placeholder'],
  number_float: ['min', 'max', 'precision', 'consumable', 'prefix', 'suffix', 'placeholder'],
  dropdown: ['choices', 'labels', 'default_value'],
  group: ['questions', 'max_number'],
  formula: ['formula', 'precision', 'suffix'],
};

/** Canonical property order of a serialized question. */
export const PROPERTY_ORDER: readonly string[] = [
  ...COMMON_PROPERTIES,
  'choices',
  'labels',
  'default_value',
  'inline',
  'options',
  'maxlength',
  'rows',
  'pattern',
  'placeholder',
  'prefix',
  'suffix',
  'min',
  'max',
  'precision',
  'consumable',
  'formula',
  'max_number',
  'questions',
];

export const REPORT_PROBLEM_OPTIONS = [
  'problem_description',
  'force_shutdown',
  'safety_hazard',
] as const;

export function allowedProperties(type: QuestionType): readonly string[] {
  return [...COMMON_PROPERTIES, ...TYPE_PROPERTIES[type]];
}

export function isAllowedProperty(type: QuestionType, property: string): boolean {
  return (
    (COMMON_PROPERTIES as readonly string[]).includes(property) ||
    TYPE_PROPERTIES[type].includes(property)
  );
}

/** NEMO's own spelling of a type, mapped to the spec's. */
export function canonicalTypeName(type: string): string {
  return type === 'float' ? 'number_float' : type;
}

export function isQuestionType(type: string, types: readonly string[]): type is QuestionType {
  return types.includes(type);
}

export const NUMERIC_TYPES: readonly QuestionType[] = ['number', 'number_float', 'formula'];
