// The notebook entry metadata format of spec 001 ("Structure of the metadata JSON", "Field
// object", "notebook object") as TypeScript types, plus the problem model.

export const FIELD_TYPES = [
  'checkbox',
  'date',
  'datetime-local',
  'email',
  'number',
  'radio',
  'select',
  'text',
  'time',
  'url',
] as const;

export type FieldType = (typeof FIELD_TYPES)[number];

/** The type of a field whose "type" is omitted. */
export const DEFAULT_FIELD_TYPE: FieldType = 'text';

/** Defaults of the optional properties (spec 001, Field object and notebook object). */
export const FIELD_DEFAULTS = {
  type: DEFAULT_FIELD_TYPE,
  allow_multi_values: false,
  required: false,
  blank_value_on_duplicate: false,
  open_in_current_tab: false,
} as const;

export const NOTEBOOK_DEFAULTS = { display_main_text: true } as const;

/** Any JSON value. Objects in it may hold a "__proto__" key as an own property. */
export type JsonValue =
  null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A property the spec does not define, kept as it was: [key, value]. */
export type JsonEntry = [key: string, value: JsonValue];

/**
 * A field value. Canonical shapes: checkbox -> boolean; select with allow_multi_values ->
 * string[]; number -> number or numeric text ("" when empty); every other type -> text.
 * A value that breaks its type's rule is kept as it is and reported (see MetadataProblem).
 */
export type FieldValue = string | number | boolean | string[];

/**
 * One entry of extra_fields. `type` is always set (text when the source omitted it); every
 * other optional property is present exactly when the source had it, so absence means the
 * default of FIELD_DEFAULTS.
 */
export interface MetadataField {
  /** The key in extra_fields: any string, "" and "__proto__" included. */
  name: string;
  type: FieldType;
  value: FieldValue;
  /** Choices of select and radio. */
  options?: string[];
  /** select only: the value is a list of options. */
  allow_multi_values?: boolean;
  /** A visual mark only: it never blocks saving or leaving. */
  required?: boolean;
  description?: string;
  /** number only: the choices of the units dropdown. */
  units?: string[];
  /** number only: the chosen entry of units. */
  unit?: string;
  /** Display order: lower first. */
  position?: number;
  blank_value_on_duplicate?: boolean;
  /** id of a group in notebook.extra_fields_groups. */
  group_id?: number;
  /** url only. */
  open_in_current_tab?: boolean;
  /** Properties the spec does not define, in source order, kept through every edit. */
  unknown: JsonEntry[];
}

/** The known field properties, in the order they are written. */
export const FIELD_PROPERTIES = [
  'type',
  'value',
  'options',
  'allow_multi_values',
  'required',
  'description',
  'units',
  'unit',
  'position',
  'blank_value_on_duplicate',
  'group_id',
  'open_in_current_tab',
] as const;

export type FieldProperty = (typeof FIELD_PROPERTIES)[number];

export interface FieldGroup {
  id: number;
  name: string;
  unknown: JsonEntry[];
}

/** The `notebook` object (`elabftw` in the notebook service's own files). */
export interface NotebookSettings {
  /** Absent means true. */
  display_main_text?: boolean;
  /** Groups in display order. */
  extra_fields_groups?: FieldGroup[];
  unknown: JsonEntry[];
}

export interface MetadataDoc {
  /** extra_fields, in the key order of the source object. Names are unique. */
  fields: MetadataField[];
  /** Absent when the source had no notebook object. */
  notebook?: NotebookSettings;
  /** Top-level keys other than extra_fields and notebook, in source order. */
  unknown: JsonEntry[];
}

// ---- problems ----

export type ProblemPath = (string | number)[];

export const PROBLEM_CODES = [
  // structure: the document cannot be accepted
  'invalid_json',
  'too_deep',
  'too_large',
  'not_an_object',
  'wrong_type',
  'missing_property',
  'unknown_type',
  'missing_options',
  'unknown_group',
  'duplicate_group_id',
  // builder rules (blocking in builder mode only)
  'too_few_options',
  'empty_name',
  // operations
  'unknown_field',
  'duplicate_field',
  // values: shown to the user, never block saving
  'invalid_value',
  'not_an_option',
  'multiple_values',
  'not_a_number',
  'unit_not_in_units',
  'invalid_checkbox',
  'invalid_email',
  'invalid_url',
  'invalid_date',
  'invalid_datetime',
  'invalid_time',
  // notices
  'required_empty',
  'not_applicable',
  'unit_without_units',
  'duplicate_option',
  'duplicate_unit',
  'duplicate_key',
  'inexact_number',
  'both_notebook_keys',
] as const;

export type MetadataProblemCode = (typeof PROBLEM_CODES)[number];

/**
 * Three kinds of problem:
 * - structural (`blocksSaving: true`, always an error): the JSON is not a metadata document
 *   this module can hold (not an object, a property of the wrong JSON type, an unknown type,
 *   select/radio without options, a group_id naming no group...). Parsing fails; the editor
 *   keeps the text and nothing is saved until it is fixed.
 * - value errors (`severity: 'error'`, `blocksSaving: false`): a value breaks its field's
 *   rule (bad e-mail, date, number, option, unit). Shown at the field; the document is
 *   accepted and can be saved, as the notebook service lets people save such entries.
 * - notices (`severity: 'warning'`): an empty required field (spec: required blocks nothing),
 *   a property that does not apply to the type, a key written twice...
 */
export interface MetadataProblem {
  /** e.g. ['extra_fields', 'Sample mass', 'unit']; [] for the document itself. */
  path: ProblemPath;
  code: MetadataProblemCode;
  severity: 'error' | 'warning';
  blocksSaving: boolean;
  /** Names the field and the property: `extra_fields."Sample mass".unit: "mg" is not one of units (g, kg)`. */
  message: string;
}

/** A problem found in JSON text: 1-based line and column (UTF-16 units) of its place. */
export interface LocatedProblem extends MetadataProblem {
  line: number;
  column: number;
}

export type ParseMetadataResult<P extends MetadataProblem = MetadataProblem> =
  { ok: true; doc: MetadataDoc; problems: P[] } | { ok: false; problems: P[] };

export interface ParseOptions {
  /** Also apply the builder's rules (select/radio need at least 2 options), as blocking. */
  builder?: boolean;
}

/** Result of an entry operation: a new document, or the blocking problems. */
export type EditResult =
  | { ok: true; doc: MetadataDoc; problems: MetadataProblem[] }
  | { ok: false; problems: MetadataProblem[] };
