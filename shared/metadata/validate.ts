// The rules a document's content must follow once its JSON shape is right: options for
// select and radio, groups that exist, and values that fit their field type. The JSON shape
// itself (property types) is checked while reading, in parse.ts.

import { describeJsonType, quote, showValue } from './json.js';
import { listInParens, notice, structural, valueError } from './problems.js';
import { unitKey } from './search.js';
import type { MetadataDoc, MetadataField, MetadataProblem, ProblemPath } from './types.js';
import {
  isEmptyValue,
  isValidDate,
  isValidDateTime,
  isValidEmail,
  isValidTime,
  numericValue,
  urlProblem,
} from './values.js';

export interface ValidateOptions {
  /** Also apply the builder's rules, as blocking problems. */
  builder?: boolean;
  /** The key the notebook object was read from ("notebook" or "elabftw"), for messages. */
  notebookKey?: string;
}

interface FieldContext {
  groupIds: ReadonlySet<number>;
  builder: boolean;
  notebookKey: string;
}

/** Every problem of a document that the parser accepted (or that an operation produced). */
export function validateMetadata(
  doc: MetadataDoc,
  options: ValidateOptions = {},
): MetadataProblem[] {
  const notebookKey = options.notebookKey ?? 'notebook';
  const problems: MetadataProblem[] = [];
  const groupIds = new Set<number>();
  (doc.notebook?.extra_fields_groups ?? []).forEach((group, index) => {
    if (groupIds.has(group.id)) {
      problems.push(
        structural(
          [notebookKey, 'extra_fields_groups', index, 'id'],
          'duplicate_group_id',
          `${group.id} is also the id of an earlier group; group ids must be unique`,
        ),
      );
    }
    groupIds.add(group.id);
  });
  const context: FieldContext = { groupIds, builder: options.builder === true, notebookKey };
  for (const field of doc.fields) problems.push(...validateField(field, context));
  return problems;
}

/** The problems of one field; `groupIds` are the ids of the document's groups. */
export function validateField(field: MetadataField, context: FieldContext): MetadataProblem[] {
  const at = (...rest: (string | number)[]): ProblemPath => ['extra_fields', field.name, ...rest];
  const problems: MetadataProblem[] = [];
  const { type } = field;
  const choice = type === 'select' || type === 'radio';

  if (choice && field.options === undefined) {
    problems.push(
      structural(
        at('options'),
        'missing_options',
        `a ${type} field needs "options", a list of choices`,
      ),
    );
  }
  if (context.builder && field.name.trim() === '') {
    problems.push(structural(at(), 'empty_name', 'a field needs a name'));
  }
  // Different options: ["a", "a"] offers one choice. The builder refuses fewer than 2 (spec
  // 001); a document written as JSON keeps them, as the notebook service does (one option can
  // be a box to tick), and an empty list, which offers nothing to choose, gets a notice.
  const distinct = new Set(field.options ?? []).size;
  if (choice && field.options !== undefined && distinct < 2 && context.builder) {
    problems.push(
      structural(
        at('options'),
        'too_few_options',
        `a ${type} field built in the builder needs at least 2 different options, not ${distinct}`,
      ),
    );
  } else if (choice && field.options !== undefined && distinct === 0) {
    problems.push(
      notice(at('options'), 'too_few_options', `a ${type} field with no options offers no choice`),
    );
  }
  const seen = new Set<string>();
  (field.options ?? []).forEach((option, index) => {
    if (seen.has(option)) {
      problems.push(
        notice(at('options', index), 'duplicate_option', `${quote(option)} is listed twice`),
      );
    }
    seen.add(option);
  });
  // Units are told apart as the search tells them (unitKey): "µm" with the micro sign and "μm"
  // with the Greek mu, or "mg " and "mg", are one unit listed twice, two choices that look
  // alike in the unit dropdown and are found as one.
  (field.units ?? []).forEach((unit, index) => {
    const earlier = listedUnit((field.units ?? []).slice(0, index), unit);
    if (earlier === undefined) return;
    const also = earlier === unit ? '' : ` (also as ${quote(earlier)}, the same unit)`;
    problems.push(
      notice(at('units', index), 'duplicate_unit', `${quote(unit)} is listed twice${also}`),
    );
  });
  if (field.group_id !== undefined && !context.groupIds.has(field.group_id)) {
    problems.push(
      structural(
        at('group_id'),
        'unknown_group',
        `${field.group_id} is not the id of a group in ${context.notebookKey}.extra_fields_groups`,
      ),
    );
  }
  problems.push(...notApplicable(field, at));
  problems.push(...valueProblems(field, at('value')));
  // A unit of spaces alone is none, as the search indexes it (unitKey).
  if (type === 'number' && field.unit !== undefined && unitKey(field.unit) !== '') {
    if (field.units === undefined) {
      problems.push(
        notice(
          at('unit'),
          'unit_without_units',
          `is ${quote(field.unit)}, but the field has no "units" to choose from`,
        ),
      );
    } else if (!hasUnit(field.units, field.unit)) {
      problems.push(
        valueError(
          at('unit'),
          'unit_not_in_units',
          `${quote(field.unit)} is not one of units ${listInParens(field.units)}`,
        ),
      );
    }
  }
  if (field.required === true && type !== 'checkbox' && isEmptyValue(field.value)) {
    problems.push(
      notice(
        at('value'),
        'required_empty',
        'is empty; the field is marked required (a reminder only)',
      ),
    );
  }
  return problems;
}

/**
 * The one of `units` that `unit` is, as the search finds it (unitKey): "Å" written "A" and
 * U+030A is the "Å" of units, "µm" with the micro sign the "μm" with the Greek mu, "mg " the
 * "mg". The unit as written when listed so, else the first listed with its unitKey; undefined
 * when it is none of them. Neither is rewritten: the unit dropdown shows this one selected for a
 * unit stored in the other form, and keeps the stored one until another is chosen.
 */
export function listedUnit(units: readonly string[], unit: string): string | undefined {
  if (units.includes(unit)) return unit;
  const key = unitKey(unit);
  return units.find((listed) => unitKey(listed) === key);
}

function hasUnit(units: readonly string[], unit: string): boolean {
  return listedUnit(units, unit) !== undefined;
}

/** Notices for properties set on a type they do not apply to (they are kept, and ignored). */
function notApplicable(
  field: MetadataField,
  at: (...rest: (string | number)[]) => ProblemPath,
): MetadataProblem[] {
  const { type } = field;
  const found: [string, boolean, string][] = [
    [
      'options',
      type !== 'select' && type !== 'radio' && (field.options?.length ?? 0) > 0,
      'select and radio',
    ],
    ['allow_multi_values', type !== 'select' && field.allow_multi_values === true, 'select'],
    ['units', type !== 'number' && (field.units?.length ?? 0) > 0, 'number'],
    ['unit', type !== 'number' && (field.unit ?? '') !== '', 'number'],
    ['open_in_current_tab', type !== 'url' && field.open_in_current_tab === true, 'url'],
  ];
  return found
    .filter(([, applies]) => applies)
    .map(([property, , types]) =>
      notice(
        at(property),
        'not_applicable',
        `applies only to ${types} fields; it is ignored for a ${type} field`,
      ),
    );
}

function optionProblem(
  value: string,
  options: readonly string[] | undefined,
  path: ProblemPath,
): MetadataProblem[] {
  // Compared in one Unicode form, as search compares them (fieldKey): "é" typed as e and a
  // combining accent (as macOS often writes it) is the option "é".
  const key = value.normalize('NFC');
  if (
    options === undefined ||
    value.trim() === '' ||
    options.some((option) => option.normalize('NFC') === key)
  ) {
    return [];
  }
  return [
    valueError(
      path,
      'not_an_option',
      `${quote(value)} is not one of options ${listInParens(options)}`,
    ),
  ];
}

function valueProblems(field: MetadataField, path: ProblemPath): MetadataProblem[] {
  const value = field.value;
  const wrongKind = (expected: string): MetadataProblem[] => [
    valueError(path, 'invalid_value', `must be ${expected}, not ${describeJsonType(value)}`),
  ];
  switch (field.type) {
    case 'checkbox':
      return typeof value === 'boolean'
        ? []
        : [
            valueError(
              path,
              'invalid_checkbox',
              `must be true or false (or "on", "off" or "" as the notebook service writes it), not ${showValue(value)}`,
            ),
          ];
    case 'number':
      if (typeof value === 'number') return [];
      if (typeof value !== 'string') return wrongKind('a number or numeric text');
      return isEmptyValue(value) || numericValue(value) !== null
        ? []
        : [valueError(path, 'not_a_number', `${quote(value)} is not a number`)];
    case 'select':
    case 'radio':
      if (Array.isArray(value)) {
        if (field.type === 'select' && field.allow_multi_values === true) {
          return value.flatMap((item, index) =>
            optionProblem(item, field.options, [...path, index]),
          );
        }
        return [
          valueError(
            path,
            'multiple_values',
            field.type === 'select'
              ? 'is a list, but allow_multi_values is not true'
              : 'is a list, but a radio field holds one choice',
          ),
        ];
      }
      if (typeof value !== 'string') return wrongKind('one of the options');
      return optionProblem(value, field.options, path);
    default:
      if (typeof value !== 'string') return wrongKind('text');
      return isEmptyValue(value) ? [] : textProblems(field.type, value, path);
  }
}

function textProblems(type: string, value: string, path: ProblemPath): MetadataProblem[] {
  const shown = quote(value);
  switch (type) {
    case 'email':
      return isValidEmail(value)
        ? []
        : [valueError(path, 'invalid_email', `${shown} is not a valid e-mail address`)];
    case 'url': {
      const problem = urlProblem(value);
      return problem === null ? [] : [valueError(path, 'invalid_url', `${shown} ${problem}`)];
    }
    case 'date':
      return isValidDate(value)
        ? []
        : [valueError(path, 'invalid_date', `${shown} is not a valid date (YYYY-MM-DD)`)];
    case 'datetime-local':
      return isValidDateTime(value)
        ? []
        : [
            valueError(
              path,
              'invalid_datetime',
              `${shown} is not a valid date and time (YYYY-MM-DDTHH:MM, seconds optional)`,
            ),
          ];
    case 'time':
      return isValidTime(value)
        ? []
        : [
            valueError(
              path,
              'invalid_time',
              `${shown} is not a valid time (HH:MM, seconds optional)`,
            ),
          ];
    default:
      return [];
  }
}
