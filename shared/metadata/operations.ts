// Entry operations (spec 001 rules 1-3): pure functions from a document to a new document.
// Unknown keys (top level, fields, notebook, groups) are carried over untouched by each one.

import { cloneEntries, cloneJson } from './json.js';
import { isAcceptable, structural } from './problems.js';
import { readField } from './read.js';
import { fieldToJson } from './serialize.js';
import { FIELD_PROPERTIES } from './types.js';
import type {
  EditResult,
  FieldGroup,
  FieldType,
  FieldValue,
  MetadataDoc,
  MetadataField,
  MetadataProblem,
  NotebookSettings,
} from './types.js';
import { validateField } from './validate.js';
import { emptyValueFor } from './values.js';

/**
 * Field properties as the builder sets them. In updateField, null removes a property. The
 * builder keeps only the properties that apply to the type: options (select, radio),
 * allow_multi_values (select), units and unit (number), open_in_current_tab (url).
 */
export interface FieldDraft {
  type?: FieldType | 'select-multi' | 'select-one' | null;
  value?: FieldValue | null;
  options?: string[] | null;
  allow_multi_values?: boolean | null;
  required?: boolean | null;
  description?: string | null;
  units?: string[] | null;
  unit?: string | null;
  position?: number | null;
  blank_value_on_duplicate?: boolean | null;
  group_id?: number | null;
  open_in_current_tab?: boolean | null;
}

/** The types each type-specific property applies to; the others apply to every type. */
const APPLIES_TO: Partial<Record<string, readonly string[]>> = {
  options: ['select', 'radio'],
  allow_multi_values: ['select'],
  units: ['number'],
  unit: ['number'],
  open_in_current_tab: ['url'],
};

// ---- copies ----

function cloneField(field: MetadataField): MetadataField {
  const copy: MetadataField = {
    ...field,
    value: cloneJson(field.value),
    unknown: cloneEntries(field.unknown),
  };
  if (field.options) copy.options = [...field.options];
  if (field.units) copy.units = [...field.units];
  return copy;
}

function cloneNotebook(notebook: NotebookSettings): NotebookSettings {
  const copy: NotebookSettings = { ...notebook, unknown: cloneEntries(notebook.unknown) };
  if (notebook.extra_fields_groups) {
    copy.extra_fields_groups = notebook.extra_fields_groups.map((group) => ({
      ...group,
      unknown: cloneEntries(group.unknown),
    }));
  }
  return copy;
}

function cloneDoc(doc: MetadataDoc): MetadataDoc {
  const copy: MetadataDoc = {
    fields: doc.fields.map(cloneField),
    unknown: cloneEntries(doc.unknown),
  };
  if (doc.notebook) copy.notebook = cloneNotebook(doc.notebook);
  return copy;
}

/**
 * The order JSON gives object keys (whole-number names first, ascending; then the others as
 * added), so a saved and reloaded document lists its fields in the same order.
 */
function inKeyOrder(fields: MetadataField[]): MetadataField[] {
  const byName = Object.create(null) as Record<string, MetadataField>;
  for (const field of fields) byName[field.name] = field;
  return Object.keys(byName).map((name) => byName[name]);
}

function withFields(doc: MetadataDoc, fields: MetadataField[]): MetadataDoc {
  return { ...cloneDoc(doc), fields: inKeyOrder(fields.map(cloneField)) };
}

/** A new entry's metadata from its template: everything copied, values included. */
export function createFromTemplate(template: MetadataDoc): MetadataDoc {
  return cloneDoc(template);
}

/**
 * The metadata of a duplicated entry: fields with blank_value_on_duplicate get their empty
 * value ("" for text-like and number fields, [] for a multi-select, false for a checkbox);
 * units, unit and everything else stay.
 */
export function duplicateMetadata(doc: MetadataDoc): MetadataDoc {
  const copy = cloneDoc(doc);
  for (const field of copy.fields) {
    if (field.blank_value_on_duplicate === true) field.value = emptyValueFor(field);
  }
  return copy;
}

// ---- fields ----

function groupIds(doc: MetadataDoc): Set<number> {
  return new Set((doc.notebook?.extra_fields_groups ?? []).map((group) => group.id));
}

function unknownField(name: string): EditResult {
  return {
    ok: false,
    problems: [
      structural(['extra_fields', name], 'unknown_field', 'there is no field with this name'),
    ],
  };
}

function finish(doc: MetadataDoc, problems: MetadataProblem[]): EditResult {
  return isAcceptable(problems) ? { ok: true, doc, problems } : { ok: false, problems };
}

/** A field built by the builder: properties that do not apply to its type are left out. */
function buildField(
  doc: MetadataDoc,
  name: string,
  properties: Record<string, unknown>,
  unknown: MetadataField['unknown'],
  builder = true,
): { field: MetadataField | null; problems: MetadataProblem[] } {
  const rawType = properties['type'];
  const type =
    rawType === 'select-multi' || rawType === 'select-one' ? 'select' : (rawType ?? 'text');
  const raw: Record<string, unknown> = {};
  for (const key of FIELD_PROPERTIES) {
    const value = properties[key];
    const applies = APPLIES_TO[key];
    if (value === undefined || value === null) continue;
    if (applies && typeof type === 'string' && !applies.includes(type)) continue;
    raw[key] = value;
  }
  if (rawType === 'select-multi') raw['allow_multi_values'] = true;
  // No value: null, which reads as the type's empty value.
  raw['value'] ??= null;
  const read = readField(name, raw);
  if (!read.field) return read;
  const field: MetadataField = { ...read.field, unknown: cloneEntries(unknown) };
  const context = { groupIds: groupIds(doc), builder, notebookKey: 'notebook' };
  return { field, problems: validateField(field, context) };
}

function knownProperties(field: MetadataField): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of FIELD_PROPERTIES) if (field[key] !== undefined) out[key] = field[key];
  return out;
}

/** Adds a field built in the builder (builder rules apply); fails when the name is taken. */
export function addField(doc: MetadataDoc, name: string, draft: FieldDraft = {}): EditResult {
  if (doc.fields.some((field) => field.name === name)) {
    return {
      ok: false,
      problems: [
        structural(
          ['extra_fields', name],
          'duplicate_field',
          'a field with this name already exists',
        ),
      ],
    };
  }
  const built = buildField(doc, name, { ...draft }, []);
  if (!built.field || !isAcceptable(built.problems)) return { ok: false, problems: built.problems };
  return finish(withFields(doc, [...doc.fields, built.field]), built.problems);
}

/**
 * Changes a field's properties as the builder does (null removes one). When the type changes
 * and no value is given, the value is kept if it fits the new type, otherwise emptied. Unknown
 * properties of the field are kept.
 */
export function updateField(doc: MetadataDoc, name: string, changes: FieldDraft): EditResult {
  const index = doc.fields.findIndex((field) => field.name === name);
  const current = doc.fields[index];
  if (!current) return unknownField(name);
  const properties = { ...knownProperties(current), ...changes };
  const type = properties['type'];
  const multi =
    type === 'select-multi' || (type === 'select' && properties['allow_multi_values'] === true);
  // Leaving a multi-select keeps its first choice.
  if (changes.value === undefined && Array.isArray(current.value) && !multi) {
    properties['value'] = current.value[0] ?? '';
  }
  // The builder's rules hold for what the edit builds: a select or radio made, or its options
  // changed, needs two; one imported with fewer (code mode takes it) keeps them through an
  // edit of its description, value or group.
  const builds =
    changes.options !== undefined || (changes.type !== undefined && changes.type !== current.type);
  let built = buildField(doc, name, properties, current.unknown, builds);
  const typeChanged = built.field !== null && built.field.type !== current.type;
  if (typeChanged && changes.value === undefined) {
    const badValue = built.problems.some(
      (problem) => problem.path[2] === 'value' && problem.severity === 'error',
    );
    if (badValue)
      built = buildField(doc, name, { ...properties, value: undefined }, current.unknown, builds);
  }
  if (!built.field || !isAcceptable(built.problems)) return { ok: false, problems: built.problems };
  const fields = doc.fields.map((field, i) => (i === index && built.field ? built.field : field));
  return finish(withFields(doc, fields), built.problems);
}

/**
 * A field written out with `change` applied to its JSON, then read back as on import: every
 * other property (one that does not apply to the type included) and unknown key stays, and
 * no builder rule applies. A result that breaks its field's rule is set and reported.
 */
function rewriteField(
  doc: MetadataDoc,
  name: string,
  change: (raw: Record<string, unknown>) => void,
): EditResult {
  const index = doc.fields.findIndex((field) => field.name === name);
  const current = doc.fields[index];
  if (!current) return unknownField(name);
  const raw: Record<string, unknown> = fieldToJson(current);
  change(raw);
  const read = readField(name, raw);
  if (!read.field) return { ok: false, problems: read.problems };
  const field = read.field;
  const context = { groupIds: groupIds(doc), builder: false, notebookKey: 'notebook' };
  const fields = doc.fields.map((item, i) => (i === index ? field : item));
  return finish(withFields(doc, fields), validateField(field, context));
}

/**
 * Sets a field's value, normalized as when reading ("on" -> true and "off" -> false for a
 * checkbox, text -> list for a multi-select). A value that breaks the field's rule is set and
 * reported, not refused.
 */
export function setFieldValue(doc: MetadataDoc, name: string, value: unknown): EditResult {
  return rewriteField(doc, name, (raw) => {
    raw['value'] = value;
  });
}

/**
 * Sets the chosen unit of a field (null or "": none), as the units dropdown of an entry does:
 * only `unit` changes (unlike updateField, which rebuilds the field as the builder would and
 * leaves out what does not apply to its type). A unit not in units is set and reported.
 */
export function setFieldUnit(doc: MetadataDoc, name: string, unit: string | null): EditResult {
  return rewriteField(doc, name, (raw) => {
    if (unit === null || unit === '') delete raw['unit'];
    else raw['unit'] = unit;
  });
}

/** Removes a field (the trash control of spec 001 rule 2). */
export function removeField(doc: MetadataDoc, name: string): EditResult {
  if (!doc.fields.some((field) => field.name === name)) return unknownField(name);
  return finish(
    withFields(
      doc,
      doc.fields.filter((field) => field.name !== name),
    ),
    [],
  );
}

/** Renames a field; its properties, value and unknown keys stay. */
export function renameField(doc: MetadataDoc, from: string, to: string): EditResult {
  const current = doc.fields.find((field) => field.name === from);
  if (!current) return unknownField(from);
  if (to === from) return finish(cloneDoc(doc), []);
  if (to.trim() === '') {
    return {
      ok: false,
      problems: [structural(['extra_fields', from], 'empty_name', 'a field needs a name')],
    };
  }
  if (doc.fields.some((field) => field.name === to)) {
    return {
      ok: false,
      problems: [
        structural(
          ['extra_fields', to],
          'duplicate_field',
          'a field with this name already exists',
        ),
      ],
    };
  }
  const fields = doc.fields.map((field) => (field.name === from ? { ...field, name: to } : field));
  return finish(withFields(doc, fields), []);
}

// ---- groups ----

function withGroups(doc: MetadataDoc, groups: FieldGroup[], fields = doc.fields): MetadataDoc {
  const copy = withFields(doc, fields);
  copy.notebook = { ...(copy.notebook ?? { unknown: [] }), extra_fields_groups: groups };
  return copy;
}

function groupsOf(doc: MetadataDoc): FieldGroup[] {
  return cloneNotebook(doc.notebook ?? { unknown: [] }).extra_fields_groups ?? [];
}

function emptyGroupName(): MetadataProblem {
  return structural(['notebook', 'extra_fields_groups'], 'empty_name', 'a group needs a name');
}

function unknownGroup(id: number): MetadataProblem {
  return structural(
    ['notebook', 'extra_fields_groups'],
    'unknown_group',
    `there is no group with id ${id}`,
  );
}

/** Adds a group after the others, with the next free id (highest id + 1, or 1). */
export function addGroup(
  doc: MetadataDoc,
  name: string,
):
  | { ok: true; doc: MetadataDoc; id: number; problems: MetadataProblem[] }
  | { ok: false; problems: MetadataProblem[] } {
  if (name.trim() === '') return { ok: false, problems: [emptyGroupName()] };
  const groups = groupsOf(doc);
  const id = groups.reduce((highest, group) => Math.max(highest, Math.floor(group.id)), 0) + 1;
  return {
    ok: true,
    doc: withGroups(doc, [...groups, { id, name, unknown: [] }]),
    id,
    problems: [],
  };
}

export function renameGroup(doc: MetadataDoc, id: number, name: string): EditResult {
  if (name.trim() === '') return { ok: false, problems: [emptyGroupName()] };
  const groups = groupsOf(doc);
  if (!groups.some((group) => group.id === id)) return { ok: false, problems: [unknownGroup(id)] };
  return finish(
    withGroups(
      doc,
      groups.map((group) => (group.id === id ? { ...group, name } : group)),
    ),
    [],
  );
}

/** Removes a group; its fields stay, without a group_id. */
export function removeGroup(doc: MetadataDoc, id: number): EditResult {
  const groups = groupsOf(doc);
  if (!groups.some((group) => group.id === id)) return { ok: false, problems: [unknownGroup(id)] };
  const fields = doc.fields.map((field) => {
    if (field.group_id !== id) return field;
    const copy = { ...field };
    delete copy.group_id;
    return copy;
  });
  return finish(
    withGroups(
      doc,
      groups.filter((group) => group.id !== id),
      fields,
    ),
    [],
  );
}
