// The search panel's condition rows and the MetadataQuery each one becomes (notebook.search).

import {
  metadataQuerySchema,
  numericValue,
  RANGE_PROBLEMS,
} from '../../../../shared/metadata/index.js';
import type { MetadataQuery } from '../../../../shared/metadata/index.js';

export type ConditionKind = MetadataQuery['kind'];

export const CONDITION_LABELS: Record<ConditionKind, string> = {
  equals: 'Field equals',
  contains: 'Field contains',
  numberBetween: 'Number between',
  dateBetween: 'Date between',
  checkbox: 'Checkbox is',
  anyFieldContains: 'Any field contains',
};

/** A condition's controls, each at the id conditionInputId gives it. */
export type ConditionInput = 'kind' | 'field' | 'text' | 'min' | 'max' | 'unit' | 'from' | 'to';

/** Why a row is not a query yet (in words), and the control to mend it in. */
export interface ConditionProblem {
  problem: string;
  input: ConditionInput;
}

export interface ConditionRow {
  key: number;
  kind: ConditionKind;
  field: string;
  text: string;
  min: string;
  max: string;
  unit: string;
  /** Bounds typed as dates or as dates with a time. */
  withTime: boolean;
  from: string;
  to: string;
  checked: boolean;
}

export function newCondition(key: number, kind: ConditionKind = 'equals'): ConditionRow {
  return {
    key,
    kind,
    field: '',
    text: '',
    min: '',
    max: '',
    unit: '',
    withTime: false,
    from: '',
    to: '',
    checked: true,
  };
}

function optional<K extends string, V>(key: K, value: V | null | undefined): Partial<Record<K, V>> {
  return value === null || value === undefined ? {} : ({ [key]: value } as Partial<Record<K, V>>);
}

function candidate(row: ConditionRow): unknown {
  const field = row.field.trim();
  switch (row.kind) {
    case 'equals':
      return { kind: 'equals', field, value: row.text };
    case 'contains':
      return { kind: 'contains', field, text: row.text };
    case 'numberBetween':
      return {
        kind: 'numberBetween',
        field,
        ...optional('min', row.min.trim() === '' ? null : numericValue(row.min)),
        ...optional('max', row.max.trim() === '' ? null : numericValue(row.max)),
        ...optional('unit', row.unit.trim() === '' ? null : row.unit.trim()),
      };
    case 'dateBetween':
      return {
        kind: 'dateBetween',
        field,
        ...optional('from', row.from === '' ? null : row.from),
        ...optional('to', row.to === '' ? null : row.to),
      };
    case 'checkbox':
      return { kind: 'checkbox', field, checked: row.checked };
    case 'anyFieldContains':
      return { kind: 'anyFieldContains', text: row.text };
  }
}

/** The control of a row that holds a query's property (the first of an issue's path). */
function inputOf(row: ConditionRow, property: unknown): ConditionInput {
  switch (property) {
    case 'field':
      return row.kind === 'anyFieldContains' ? 'text' : 'field';
    case 'value':
    case 'text':
      return 'text';
    case 'min':
    case 'max':
    case 'unit':
    case 'from':
    case 'to':
      return property;
    default:
      return 'kind';
  }
}

/** Each control's visible label: the editor shows it, and a problem names the control by it. */
const CONTROL_LABELS: Record<ConditionInput, string> = {
  kind: 'Condition',
  field: 'Field name',
  text: 'Text',
  min: 'From (minimum)',
  max: 'To (maximum)',
  unit: 'Unit (optional)',
  from: 'From',
  to: 'To',
};

/** The label of a condition's control, as the editor shows it for a row of that kind. */
export function controlLabel(kind: ConditionKind, input: ConditionInput): string {
  return input === 'text' && kind === 'equals' ? 'Value' : CONTROL_LABELS[input];
}

const { min: MIN, max: MAX, from: FROM, to: TO } = CONTROL_LABELS;

/** The schema's problems of a whole row, which name the bounds by the API's words, in ours. */
const ROW_PROBLEMS: Record<string, string> = {
  [RANGE_PROBLEMS.noNumberBound]: `give ${MIN}, ${MAX} or both`,
  [RANGE_PROBLEMS.numbersReversed]: `${MIN} must not be above ${MAX}`,
  [RANGE_PROBLEMS.noDateBound]: `give ${FROM}, ${TO} or both`,
  [RANGE_PROBLEMS.datesReversed]: `${FROM} must not be after ${TO}`,
};

/**
 * An issue in words: one of a control named by its label ("From: is not a real date"), so that
 * two bounds breaking one rule read as two problems; one of the whole row (no bound, bounds the
 * wrong way round) naming the bounds by their labels itself.
 */
function inWords(row: ConditionRow, issue: { path: PropertyKey[]; message: string }): string {
  const input = inputOf(row, issue.path[0]);
  if (input === 'kind') return ROW_PROBLEMS[issue.message] ?? issue.message;
  return `${controlLabel(row.kind, input)}: ${issue.message}`;
}

/** The query of a row, or why it is not one yet (in words, for the row) and where to mend it. */
export function toQuery(row: ConditionRow): { query: MetadataQuery } | ConditionProblem {
  if (row.kind !== 'anyFieldContains' && row.field.trim() === '') {
    return { problem: `${CONTROL_LABELS.field}: give the name of a field`, input: 'field' };
  }
  if (row.kind === 'numberBetween') {
    for (const input of ['min', 'max'] as const) {
      const bound = row[input];
      if (bound.trim() !== '' && numericValue(bound) === null) {
        return { problem: `${CONTROL_LABELS[input]}: "${bound}" is not a number`, input };
      }
    }
  }
  const parsed = metadataQuerySchema.safeParse(candidate(row));
  if (parsed.success) return { query: parsed.data };
  const { issues } = parsed.error;
  return {
    problem: issues.map((issue) => inWords(row, issue)).join('; '),
    input: inputOf(row, issues[0]?.path[0]),
  };
}
