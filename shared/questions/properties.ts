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
  // NEMO's place of a question in its form's grid (row, then cell): kept, so a list taken from
  // NEMO goes back as it came.
  'form_row',
  'row_cell',
] as const;

const TYPE_PROPERTIES: Record<QuestionType, readonly string[]> = {
  // default_choice: NEMO's older name of default_value, read as it where that is absent.
  radio: ['choices', 'labels', 'default_value', 'default_choice', 'inline'],
  radio_report_problem: ['choices', 'labels', 'options'],
  checkbox: ['choices', 'labels', 'default_value', 'default_choice', 'inline'],
  textbox: ['maxlength', 'pattern', 'placeholder', 'prefix', 'suffix'],
  textarea: ['rows', 'auto_resize', 'maxlength', 'pattern', 'placeholder'],
  number: ['min', 'max', 'step', 'consumable', 'prefix', 'suffix', 'placeholder'],
  number_float: [
    'min',
    'max',
    'step',
    'precision',
    'consumable',
    'prefix',
    'suffix',
    'placeholder',
  ],
  dropdown: ['choices', 'labels', 'default_value', 'default_choice'],
  group: ['questions', 'max_number', 'group_add_button_name'],
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
  'auto_resize',
  'pattern',
  'placeholder',
  'prefix',
  'suffix',
  'min',
  'max',
  'step',
  'precision',
  'consumable',
  'formula',
  'max_number',
  'group_add_button_name',
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
