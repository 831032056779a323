// How a document is shown: fields by position then name, grouped in the order groups are
// defined (spec 001: "Groups are displayed in the order in which they are defined").

import type { FieldGroup, MetadataDoc, MetadataField } from './types.js';

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/**
 * Display order: fields with a position first, lower first; then fields without one. Ties
 * go by name ("Sample 2" before "Sample 10"), then by code units so the order is total.
 */
export function compareFields(a: MetadataField, b: MetadataField): number {
  if (a.position !== undefined && b.position !== undefined && a.position !== b.position) {
    return a.position - b.position;
  }
  if (a.position !== undefined && b.position === undefined) return -1;
  if (a.position === undefined && b.position !== undefined) return 1;
  return collator.compare(a.name, b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** The fields in display order. */
export function fieldsInDisplayOrder(doc: MetadataDoc): MetadataField[] {
  return [...doc.fields].sort(compareFields);
}

export interface FieldSection {
  /** null for the fields outside any group. */
  group: FieldGroup | null;
  /** In display order. */
  fields: MetadataField[];
}

/**
 * The fields by group: first the fields without a group (or whose group_id names no group),
 * when there are any; then every group in the order defined, empty groups included.
 */
export function groupedFields(doc: MetadataDoc): FieldSection[] {
  const groups = doc.notebook?.extra_fields_groups ?? [];
  const sections = groups.map((group): FieldSection => ({ group, fields: [] }));
  const ungrouped: FieldSection = { group: null, fields: [] };
  for (const field of fieldsInDisplayOrder(doc)) {
    const section = sections.find((candidate) => candidate.group?.id === field.group_id);
    (section ?? ungrouped).fields.push(field);
  }
  return ungrouped.fields.length > 0 ? [ungrouped, ...sections] : sections;
}

/** notebook.display_main_text with its default (true). */
export function displayMainText(doc: MetadataDoc): boolean {
  return doc.notebook?.display_main_text ?? true;
}

export function findField(doc: MetadataDoc, name: string): MetadataField | undefined {
  return doc.fields.find((field) => field.name === name);
}
