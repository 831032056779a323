import type { EntryKind } from '../../../../shared/notebookApi.js';
import type { FieldType } from '../../../../shared/metadata/index.js';

export const KIND_LABELS: Record<EntryKind, string> = {
  experiment: 'Experiment',
  item: 'Item',
  experiment_template: 'Experiment template',
  item_template: 'Item template',
};

export const KIND_PLURALS: Record<EntryKind, string> = {
  experiment: 'Experiments',
  item: 'Items',
  experiment_template: 'Experiment templates',
  item_template: 'Item templates',
};

/** The template kind an entry of this kind is made from; null for templates themselves. */
export function templateKindFor(kind: EntryKind): EntryKind | null {
  if (kind === 'experiment') return 'experiment_template';
  if (kind === 'item') return 'item_template';
  return null;
}

export const TYPE_LABELS: Record<FieldType, string> = {
  checkbox: 'Checkbox',
  date: 'Date',
  'datetime-local': 'Date and time',
  email: 'E-mail',
  number: 'Number',
  radio: 'Radio buttons',
  select: 'Dropdown (select)',
  text: 'Text',
  time: 'Time',
  url: 'URL',
};

/** Tags typed as "a, b, c": trimmed, empty ones and repeats left out. */
export function parseTags(text: string): string[] {
  const tags = text
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '');
  return [...new Set(tags)];
}

/**
 * A list typed one per line, e.g. options and units: a comma stays in its item, since choices
 * such as "N,N-Dimethylformamide" or "Yes, with gloves" hold one.
 */
export function parseList(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** What a field is called on the screen: the format allows "" as a name, which reads as nothing. */
export function fieldLabel(name: string): string {
  return name === '' ? '(unnamed field)' : name;
}
