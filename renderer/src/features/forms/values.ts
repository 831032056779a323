/**
 * Form values while the person types: the canonical answer shape (spec 000), except that
 * numbers are kept as the text typed, so "1." or "-" survive until the field is finished.
 * validateAnswers turns them into canonical answers.
 */
import type { AnswerGroup, Answers, AnswerValue } from '../../../../shared/questions/index.js';

export type Path = (string | number)[];
export type FieldValue = string | string[];

export function pathKey(path: Path): string {
  return path.join('.');
}

/** A DOM id for the control of a field, unique within one form. */
export function fieldId(formId: string, path: Path): string {
  return `${formId}-${path.join('-')}`.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** Reads the value at ['name'] or ['group', index, 'field']. */
export function valueAt(values: Answers, path: Path): AnswerValue | undefined {
  const [name, index, field] = path;
  if (typeof name !== 'string') return undefined;
  const top = values[name];
  if (index === undefined) return top;
  if (!Array.isArray(top) || typeof index !== 'number' || typeof field !== 'string') {
    return undefined;
  }
  const item = top[index];
  return isGroupItem(item) ? item[field] : undefined;
}

function isGroupItem(value: unknown): value is AnswerGroup {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function groupItemsAt(values: Answers, name: string): AnswerGroup[] {
  const value = values[name];
  return Array.isArray(value) ? value.filter(isGroupItem) : [];
}

export function withValue(values: Answers, path: Path, value: FieldValue): Answers {
  const [name, index, field] = path;
  if (typeof name !== 'string') return values;
  if (index === undefined) return { ...values, [name]: value };
  if (typeof index !== 'number' || typeof field !== 'string') return values;
  const items = groupItemsAt(values, name).map((item, i) =>
    i === index ? { ...item, [field]: value } : item,
  );
  return { ...values, [name]: items };
}

export function withGroupItems(values: Answers, name: string, items: AnswerGroup[]): Answers {
  return { ...values, [name]: items };
}

/** The text shown in an input for a stored value. */
export function asText(value: AnswerValue | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return '';
}

export function asList(value: AnswerValue | undefined): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
