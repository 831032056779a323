// Writing a document back to JSON, in this project's form ("notebook") or in the notebook
// service's own form ("elabftw"). Known properties come first in a fixed order, then unknown
// keys in their source order, so the output is deterministic; parseMetadata of the output
// gives the same document back.

import { cloneJson, hasOwn, setOwn } from './json.js';
import { FIELD_PROPERTIES } from './types.js';
import type {
  JsonEntry,
  JsonValue,
  MetadataDoc,
  MetadataField,
  NotebookSettings,
} from './types.js';

export type JsonRecord = { [key: string]: JsonValue };

export type MetadataForm = 'notebook' | 'elabftw';

export interface WriteOptions {
  /** The key the notebook object is written under. */
  notebookKey: string;
  /** Checkbox values as the notebook service writes them: "on" / "". */
  checkboxAsOn: boolean;
}

function addUnknown(out: JsonRecord, entries: readonly JsonEntry[]): JsonRecord {
  for (const [key, value] of entries) {
    if (!hasOwn(out, key)) setOwn(out, key, cloneJson(value));
  }
  return out;
}

export function fieldToJson(field: MetadataField, checkboxAsOn = false): JsonRecord {
  const out: JsonRecord = {};
  for (const key of FIELD_PROPERTIES) {
    const value = field[key];
    if (value !== undefined) out[key] = cloneJson(value);
  }
  if (checkboxAsOn && field.type === 'checkbox' && typeof field.value === 'boolean') {
    out['value'] = field.value ? 'on' : '';
  }
  return addUnknown(out, field.unknown);
}

function notebookToJson(notebook: NotebookSettings): JsonRecord {
  const out: JsonRecord = {};
  if (notebook.display_main_text !== undefined) {
    out['display_main_text'] = notebook.display_main_text;
  }
  if (notebook.extra_fields_groups !== undefined) {
    out['extra_fields_groups'] = notebook.extra_fields_groups.map((group) =>
      addUnknown({ id: group.id, name: group.name }, group.unknown),
    );
  }
  return addUnknown(out, notebook.unknown);
}

export function documentToJson(doc: MetadataDoc, options: WriteOptions): JsonRecord {
  const fields: JsonRecord = {};
  for (const field of doc.fields)
    setOwn(fields, field.name, fieldToJson(field, options.checkboxAsOn));
  const out: JsonRecord = { extra_fields: fields };
  if (doc.notebook) setOwn(out, options.notebookKey, notebookToJson(doc.notebook));
  return addUnknown(out, doc.unknown);
}

/** The document as plain JSON in this project's form: groups under "notebook", checkboxes true/false. */
export function toNotebook(doc: MetadataDoc): JsonRecord {
  return documentToJson(doc, { notebookKey: 'notebook', checkboxAsOn: false });
}

/**
 * The document as the notebook service (eLabFTW) writes it: groups under "elabftw", checkbox
 * values "on" / "". Number values stay as they are (the service reads numbers and text), and a
 * multi-select stays a select with allow_multi_values and a list value. When the document
 * already holds an unknown "elabftw" key (its source had both keys), the groups stay under
 * "notebook" so that nothing is lost and importing the result gives the same document.
 */
export function toElabftw(doc: MetadataDoc): JsonRecord {
  const taken = doc.unknown.some(([key]) => key === 'elabftw');
  return documentToJson(doc, { notebookKey: taken ? 'notebook' : 'elabftw', checkboxAsOn: true });
}

/** Deterministic JSON text (2-space indentation) of a document, in either form. */
export function serializeMetadata(doc: MetadataDoc, form: MetadataForm = 'notebook'): string {
  return JSON.stringify(form === 'elabftw' ? toElabftw(doc) : toNotebook(doc), null, 2);
}
