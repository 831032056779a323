// Reading a metadata value (already JSON-parsed) into a MetadataDoc: checks the JSON shape of
// every known property, normalizes what the notebook service writes differently, and keeps
// every unknown key. The content rules (options, groups, values) are in validate.ts.
//
// Normalizations (each is idempotent, so parse -> serialize -> parse is stable):
// - "elabftw" is read as "notebook" when "notebook" is absent;
// - type omitted -> "text"; "select-multi" -> select + allow_multi_values; "select-one" -> select;
// - checkbox "on" / "" -> true / false, and "off" -> false (the service's entry page writes
//   "off" when a box is unticked, its builder ""); a null value -> the type's empty value;
// - multi-select text -> a one-element list ("" -> []);
// - a number value of a text-valued type -> its text (the service stores text);
// - null for an optional property -> the property is absent;
// - group_id written as text of a whole number -> that number;
// - extra_fields or the notebook object written as [] (PHP's empty object) -> empty object.

import {
  MAX_DEPTH,
  TooDeep,
  describeJsonType,
  hasOwn,
  isFiniteNumber,
  isPlainObject,
  plusZero,
  quote,
  unknownEntries,
} from './json.js';
import type { JsonObject } from './json.js';
import { notice, structural } from './problems.js';
import { FIELD_PROPERTIES, FIELD_TYPES } from './types.js';
import type {
  FieldGroup,
  FieldType,
  FieldValue,
  JsonEntry,
  MetadataDoc,
  MetadataField,
  MetadataProblem,
  NotebookSettings,
  ProblemPath,
} from './types.js';
import { emptyValueFor } from './values.js';

const BOOLEAN_PROPERTIES = [
  'allow_multi_values',
  'required',
  'blank_value_on_duplicate',
  'open_in_current_tab',
] as const;
const TEXT_PROPERTIES = ['description', 'unit'] as const;
const LIST_PROPERTIES = ['options', 'units'] as const;
const NOTEBOOK_PROPERTIES = ['display_main_text', 'extra_fields_groups'];
const TOO_LARGE = 'is a number too large to hold; write it as text if it must be kept';
const WHOLE_NUMBER = /^-?\d{1,15}$/;

export interface ReadResult {
  /** Null when the document itself is unusable. */
  doc: MetadataDoc | null;
  /** Problems of the JSON shape (they block saving), and the notice about both notebook keys. */
  problems: MetadataProblem[];
  /** "notebook", or "elabftw" when the groups were read from that key. */
  notebookKey: string;
  /** False when the notebook object could not be read (its groups are unknown). */
  notebookRead: boolean;
}

/** A known, optional property: absent (or null) -> undefined. */
function present(raw: JsonObject, key: string): unknown {
  return hasOwn(raw, key) ? raw[key] : undefined;
}

class Reader {
  readonly problems: MetadataProblem[] = [];

  fail(path: ProblemPath, code: 'wrong_type' | 'missing_property' | 'not_an_object', text: string) {
    this.problems.push(structural(path, code, text));
  }

  /**
   * The entries of `object` not in `known`, kept as they are; a number in them that JSON
   * cannot hold (1e400) is refused as in a value, not kept as null.
   */
  unknown(object: JsonObject, known: readonly string[], path: ProblemPath): JsonEntry[] {
    return unknownEntries(object, known, path, (at) => this.fail(at, 'wrong_type', TOO_LARGE));
  }

  /** An object, or [] read as {}; otherwise reports and returns null. */
  object(raw: unknown, path: ProblemPath, what: string): JsonObject | null {
    if (isPlainObject(raw)) return raw;
    if (Array.isArray(raw) && raw.length === 0) return {};
    this.fail(path, 'not_an_object', `must be ${what}, not ${describeJsonType(raw)}`);
    return null;
  }

  boolean(raw: JsonObject, key: string, path: ProblemPath): boolean | undefined {
    const value = present(raw, key);
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'boolean') return value;
    this.fail(
      [...path, key],
      'wrong_type',
      `must be true or false, not ${describeJsonType(value)}`,
    );
    return undefined;
  }

  text(raw: JsonObject, key: string, path: ProblemPath): string | undefined {
    const value = present(raw, key);
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string') return value;
    this.fail([...path, key], 'wrong_type', `must be text, not ${describeJsonType(value)}`);
    return undefined;
  }

  textList(raw: JsonObject, key: string, path: ProblemPath): string[] | undefined {
    const value = present(raw, key);
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value)) {
      this.fail(
        [...path, key],
        'wrong_type',
        `must be a list of text, not ${describeJsonType(value)}`,
      );
      return undefined;
    }
    return this.strings(value as unknown[], [...path, key]);
  }

  strings(items: unknown[], path: ProblemPath): string[] | undefined {
    let ok = true;
    items.forEach((item, index) => {
      if (typeof item !== 'string') {
        this.fail([...path, index], 'wrong_type', `must be text, not ${describeJsonType(item)}`);
        ok = false;
      }
    });
    return ok ? [...(items as string[])] : undefined;
  }

  /** A finite number; `wholeText` also accepts text such as "3". */
  number(raw: JsonObject, key: string, path: ProblemPath, wholeText = false): number | undefined {
    const value = present(raw, key);
    if (value === undefined || value === null) return undefined;
    if (isFiniteNumber(value)) return plusZero(value);
    if (wholeText && typeof value === 'string' && WHOLE_NUMBER.test(value.trim())) {
      return plusZero(Number(value.trim()));
    }
    // 1e400 in the JSON reads as Infinity: said as the value's own such number is said. (NaN
    // comes only from a document given as an object, not as JSON text.)
    if (typeof value === 'number') {
      const why = Number.isNaN(value)
        ? 'must be a number, not NaN'
        : 'is a number too large to hold';
      this.fail([...path, key], 'wrong_type', why);
      return undefined;
    }
    this.fail([...path, key], 'wrong_type', `must be a number, not ${describeJsonType(value)}`);
    return undefined;
  }

  type(raw: JsonObject, path: ProblemPath): { type: FieldType; multi: boolean } | null {
    const value = present(raw, 'type');
    if (value === undefined || value === null) return { type: 'text', multi: false };
    if (typeof value !== 'string') {
      this.fail([...path, 'type'], 'wrong_type', `must be text, not ${describeJsonType(value)}`);
      return null;
    }
    if (value === 'select-multi') return { type: 'select', multi: true };
    if (value === 'select-one') return { type: 'select', multi: false };
    const known = FIELD_TYPES.find((type) => type === value);
    if (known !== undefined) return { type: known, multi: false };
    this.problems.push(
      structural(
        [...path, 'type'],
        'unknown_type',
        `${quote(value)} is not a field type; use one of ${FIELD_TYPES.join(', ')}`,
      ),
    );
    return null;
  }

  value(raw: unknown, type: FieldType, multi: boolean, path: ProblemPath): FieldValue | undefined {
    if (raw === null) return emptyValueFor({ type, allow_multi_values: multi });
    if (typeof raw === 'boolean') return raw;
    if (typeof raw === 'string') {
      if (type === 'checkbox' && (raw === 'on' || raw === '' || raw === 'off')) return raw === 'on';
      if (multi) return raw === '' ? [] : [raw];
      return raw;
    }
    if (isFiniteNumber(raw)) {
      const number = plusZero(raw);
      if (type === 'number' || type === 'checkbox') return number;
      return multi ? [String(number)] : String(number);
    }
    if (Array.isArray(raw)) {
      // A number in a list is its text, as a number given alone is (options are text).
      const items = (raw as unknown[]).map((item) =>
        isFiniteNumber(item) ? String(plusZero(item)) : item,
      );
      return this.strings(items, path);
    }
    if (typeof raw === 'number') {
      this.fail(path, 'wrong_type', TOO_LARGE);
      return undefined;
    }
    this.fail(
      path,
      'wrong_type',
      `must be text, a number, true or false, or a list of text, not ${describeJsonType(raw)}`,
    );
    return undefined;
  }

  field(name: string, raw: unknown): MetadataField | null {
    const path: ProblemPath = ['extra_fields', name];
    const object = this.object(raw, path, 'an object with at least "value"');
    if (object === null) return null;
    const before = this.problems.length;
    const read = this.type(object, path);
    const field: Partial<MetadataField> = {};
    for (const key of BOOLEAN_PROPERTIES) {
      const value = this.boolean(object, key, path);
      if (value !== undefined) field[key] = value;
    }
    for (const key of TEXT_PROPERTIES) {
      const value = this.text(object, key, path);
      if (value !== undefined) field[key] = value;
    }
    for (const key of LIST_PROPERTIES) {
      const value = this.textList(object, key, path);
      if (value !== undefined) field[key] = value;
    }
    const position = this.number(object, 'position', path);
    if (position !== undefined) field.position = position;
    const group = this.number(object, 'group_id', path, true);
    if (group !== undefined) field.group_id = group;
    if (read?.multi === true) field.allow_multi_values = true;
    let value: FieldValue | undefined;
    if (!hasOwn(object, 'value')) {
      this.fail(
        [...path, 'value'],
        'missing_property',
        'is missing; "value" is the only required property (it may be empty)',
      );
    } else if (read !== null) {
      const multi = read.type === 'select' && field.allow_multi_values === true;
      value = this.value(object['value'], read.type, multi, [...path, 'value']);
    }
    const unknown = this.unknown(object, FIELD_PROPERTIES, path);
    if (this.problems.length > before || read === null || value === undefined) return null;
    return orderField({ ...field, name, type: read.type, value, unknown });
  }

  fields(raw: unknown): MetadataField[] {
    if (raw === undefined || raw === null) return [];
    const object = this.object(raw, ['extra_fields'], 'an object of fields keyed by name');
    if (object === null) return [];
    return Object.keys(object)
      .map((name) => this.field(name, object[name]))
      .filter((field): field is MetadataField => field !== null);
  }

  group(raw: unknown, path: ProblemPath): FieldGroup | null {
    const object = this.object(raw, path, 'an object with "id" and "name"');
    if (object === null) return null;
    const before = this.problems.length;
    for (const key of ['id', 'name']) {
      if (!hasOwn(object, key) || object[key] === null) {
        this.fail(
          [...path, key],
          'missing_property',
          `is missing; a group has an "id" and a "name"`,
        );
      }
    }
    const id = this.number(object, 'id', path, true);
    const name = this.text(object, 'name', path);
    const unknown = this.unknown(object, ['id', 'name'], path);
    if (this.problems.length > before || id === undefined || name === undefined) return null;
    return { id, name, unknown };
  }

  notebook(raw: unknown, key: string): NotebookSettings | null {
    const path = [key];
    const object = this.object(raw, path, 'an object');
    if (object === null) return null;
    const before = this.problems.length;
    const notebook: NotebookSettings = { unknown: [] };
    const display = this.boolean(object, 'display_main_text', path);
    if (display !== undefined) notebook.display_main_text = display;
    const groups = present(object, 'extra_fields_groups');
    if (Array.isArray(groups)) {
      const read = (groups as unknown[]).map((group, index) =>
        this.group(group, [key, 'extra_fields_groups', index]),
      );
      notebook.extra_fields_groups = read.filter((group): group is FieldGroup => group !== null);
    } else if (groups !== undefined && groups !== null) {
      this.fail(
        [key, 'extra_fields_groups'],
        'wrong_type',
        `must be a list of groups, not ${describeJsonType(groups)}`,
      );
    }
    notebook.unknown = this.unknown(object, NOTEBOOK_PROPERTIES, path);
    return this.problems.length > before ? null : notebook;
  }
}

/** Known properties first, in FIELD_PROPERTIES order, so equal fields look equal. */
function orderField(field: MetadataField): MetadataField {
  const out: Record<string, unknown> = { name: field.name };
  for (const key of FIELD_PROPERTIES) {
    if (field[key] !== undefined) out[key] = field[key];
  }
  out['unknown'] = field.unknown;
  return out as unknown as MetadataField;
}

/** Reads the JSON shape of a metadata document; never throws. */
export function readMetadata(input: unknown): ReadResult {
  const reader = new Reader();
  const fail = (notebookKey = 'notebook'): ReadResult => ({
    doc: null,
    problems: reader.problems,
    notebookKey,
    notebookRead: false,
  });
  if (!isPlainObject(input)) {
    reader.fail(
      [],
      'not_an_object',
      `The metadata must be a JSON object such as {"extra_fields": {}}, not ${describeJsonType(input)}`,
    );
    return fail();
  }
  // A null notebook object is none (as a null property is everywhere here): the groups are read
  // from "elabftw" then, so that the document written back, which leaves the null out, reads
  // the same.
  const given = (key: string): boolean => present(input, key) != null;
  const notebookKey = !given('notebook') && hasOwn(input, 'elabftw') ? 'elabftw' : 'notebook';
  if (given('notebook') && hasOwn(input, 'elabftw')) {
    reader.problems.push(
      notice(
        ['elabftw'],
        'both_notebook_keys',
        'is not read because "notebook" is also present; it is kept as it is',
      ),
    );
  }
  try {
    const fields = reader.fields(present(input, 'extra_fields'));
    const rawNotebook = present(input, notebookKey);
    const notebook =
      rawNotebook === undefined || rawNotebook === null
        ? undefined
        : reader.notebook(rawNotebook, notebookKey);
    const unknown = reader.unknown(input, ['extra_fields', 'notebook', notebookKey], []);
    const doc: MetadataDoc = { fields, unknown };
    if (notebook) doc.notebook = notebook;
    return { doc, problems: reader.problems, notebookKey, notebookRead: notebook !== null };
  } catch (error) {
    if (!(error instanceof TooDeep)) throw error;
    reader.problems.push(
      structural(error.path, 'too_deep', `is nested more than ${MAX_DEPTH} levels deep`),
    );
    return fail(notebookKey);
  }
}

/** Reads one field object (as the builder and the operations do); never throws. */
export function readField(
  name: string,
  raw: unknown,
): { field: MetadataField | null; problems: MetadataProblem[] } {
  const reader = new Reader();
  try {
    const field = reader.field(name, raw);
    return { field, problems: reader.problems };
  } catch (error) {
    const path = error instanceof TooDeep ? error.path : ['extra_fields', name];
    return {
      field: null,
      problems: [structural(path, 'too_deep', `is nested more than ${MAX_DEPTH} levels deep`)],
    };
  }
}
