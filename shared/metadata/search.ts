// Search by metadata (spec 001 rule 4), pure part: the rows of a derived search table, one per
// field value, and the queries over them. The SQL side stores metadataIndexRows() and
// translates each query with the same meaning as matchesQuery(), which is the reference.
//
// Beyond the notebook service (whose search is one case-insensitive LIKE on the value), this
// offers number ranges with a unit and date ranges, a long-standing request of its users.

import { z } from 'zod';
import { likeContains } from '../sqlLike.js';
import type { FieldType, MetadataDoc, MetadataField } from './types.js';
import { isValidDate, normalizeDateTime, numericValue } from './values.js';

export interface MetadataIndexRow {
  /** The field name composed (fieldKey); queries match it exactly otherwise, case too. */
  name: string;
  type: FieldType;
  /** The value as lowercased text, for equals and contains ("on" / "" for a checkbox). */
  text: string;
  /** number fields: the value as a number; null when empty or not a number. */
  num: number | null;
  /** number fields: the chosen unit as looked for (unitKey); null when none or blank. */
  unit: string | null;
  /** date: YYYY-MM-DD; datetime-local: YYYY-MM-DDTHH:MM:SS; null when empty or invalid. */
  date: string | null;
  /** checkbox fields: the value; null for other types. */
  bool: boolean | null;
}

/** How query text and stored text are compared: both lowercased and composed this way. */
export function searchText(text: string): string {
  // Lowercased, then composed (NFC): "é" typed composed finds it written decomposed ("e" and
  // U+0301, as text from macOS often is), and the other way round. In this order, as
  // migration 24 folds text lowercased before it (its SQL nfc() over the stored text).
  // Final sigma is sigma: lowercasing makes a capital sigma one or the other by where it
  // stands in its word, so "ΜΑΣ" (looked for as "μας") would not be found in "ΜΑΣΑ" ("μασα");
  // migration 54 folded the text stored before.
  return text.toLowerCase().replace(/ς/g, 'σ').normalize('NFC');
}

/**
 * How a field name is stored and looked for: composed (NFC), as values are (searchText), so a
 * name typed with "é" as one character finds a field named with "e" and U+0301 (a Mac's), and
 * the other way round. Its letter case is kept: "Sample" and "sample" are two fields.
 */
export function fieldKey(name: string): string {
  return name.normalize('NFC');
}

/**
 * How a number field's unit is stored and looked for: composed (NFC), as field names are
 * (fieldKey), so "Å" typed as one character (U+00C5) finds a unit written "A" and U+030A, and
 * the other way round (NFC also turns the signs U+212B ANGSTROM, U+2126 OHM and U+212A KELVIN
 * into the letters). The micro sign (U+00B5, what most keyboards give for "µ") is written as the
 * Greek mu (U+03BC, what a Greek keyboard gives) too: one prefix in either spelling, which NFC
 * keeps apart (only NFKC joins them, which would also fold "m²" to "m2"). Letter case is kept:
 * "mg" and "Mg" are two units. The spaces around it are no part of it (String.prototype.trim's
 * white space, which migration 30 lists): "mg " written in the JSON is found by "mg", as typed
 * in the search panel (which trims), and an API query's " mg" finds "mg"; a unit of spaces
 * alone is none ("", as no unit is indexed).
 */
export function unitKey(unit: string): string {
  return unit.trim().normalize('NFC').replaceAll('\u00b5', '\u03bc');
}

/**
 * The unit a numberBetween query looks for, as unitKey folds it; null for none: absent, or
 * blank (as the search panel leaves a blank one out), which is any unit, not "no unit".
 */
export function queryUnit(unit: string | undefined): string | null {
  if (unit === undefined) return null;
  const key = unitKey(unit);
  return key === '' ? null : key;
}

/** The unit of a number field as indexed: its unitKey, null when it has none (or a blank one). */
function indexedUnit(field: MetadataField): string | null {
  const key = field.type === 'number' && field.unit !== undefined ? unitKey(field.unit) : '';
  return key === '' ? null : key;
}

function rowsOf(field: MetadataField): MetadataIndexRow[] {
  const values = Array.isArray(field.value) ? field.value : [field.value];
  // An empty multi-select still gives one row, so every field can be found by its name.
  return (values.length > 0 ? values : ['']).map((value): MetadataIndexRow => {
    const isNumber = field.type === 'number';
    const text = typeof value === 'string' ? value.trim() : '';
    let date: string | null = null;
    if (field.type === 'date' && isValidDate(text)) date = text;
    if (field.type === 'datetime-local') date = normalizeDateTime(text);
    return {
      name: fieldKey(field.name),
      type: field.type,
      text: typeof value === 'boolean' ? (value ? 'on' : '') : searchText(String(value).trim()),
      num: isNumber ? numericValue(value) : null,
      unit: indexedUnit(field),
      date,
      bool: field.type === 'checkbox' && typeof value === 'boolean' ? value : null,
    };
  });
}

/** The search rows of a document: one per field, one per value for a multi-select. */
export function metadataIndexRows(doc: MetadataDoc): MetadataIndexRow[] {
  return doc.fields.flatMap(rowsOf);
}

// ---- queries ----

const fieldName = z.string().max(1000);
const DATE_OR_DATETIME = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2})?)?$/;

const DATE_FORM = 'must be YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]';

/** Whether a bound of the form is a real date (and time): Feb 30 and 25:00 are not. */
const isRealDate = (text: string): boolean =>
  text.length === 10 ? isValidDate(text) : normalizeDateTime(text) !== null;

const isDateBound = (value: unknown): value is string =>
  typeof value === 'string' && DATE_OR_DATETIME.test(value) && isRealDate(value);

// One problem per bound: zod runs the refinement over a bound the regex refused too, which is
// not said to be no real date as well. The regex stays a regex: the API documents its pattern.
const dateBound = z
  .string()
  .regex(DATE_OR_DATETIME, DATE_FORM)
  .refine((text) => !DATE_OR_DATETIME.test(text) || isRealDate(text), {
    error: (issue) =>
      typeof issue.input === 'string' && issue.input.length === 10
        ? 'is not a real date'
        : 'is not a real date and time',
  });

/** A number bound the order of two can be judged by (zod refuses the others by name). */
const isNumberBound = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value);

const bounded = (low: unknown, high: unknown): boolean => low !== undefined || high !== undefined;

/**
 * The problems of a range query as a whole, in the API's words (its property names); the
 * search panel knows them by these and says them with its controls' labels.
 */
export const RANGE_PROBLEMS = {
  noNumberBound: 'give min, max or both',
  numbersReversed: 'min must not be above max',
  noDateBound: 'give from, to or both',
  datesReversed: 'from must not be after to',
} as const;

/** Text to look for: SQLite reads a LIKE pattern or a MATCH phrase only up to a NUL. */
const needle = (min: number): z.ZodString =>
  z
    .string()
    .min(min)
    .max(1000)
    .regex(/^[^\0]*$/, 'must not hold a NUL character');

export const metadataQuerySchema = z.discriminatedUnion('kind', [
  /**
   * The field's value equals `value`, ignoring case and the spaces around both (one of the
   * values, for a multi-select).
   */
  z.object({ kind: z.literal('equals'), field: fieldName, value: needle(0) }).strict(),
  /** The field's value contains `text`, ignoring case. */
  z.object({ kind: z.literal('contains'), field: fieldName, text: needle(1) }).strict(),
  /**
   * A number field between min and max (inclusive; one may be left out), in `unit` if given:
   * the field's unit as written or in another Unicode form ("µ" as the micro sign or the Greek
   * mu), letter case kept, the spaces around either ignored; a blank one is none (queryUnit).
   */
  z
    .object({
      kind: z.literal('numberBetween'),
      field: fieldName,
      min: z.number().optional(),
      max: z.number().optional(),
      unit: z.string().max(100).optional(),
    })
    .strict()
    .refine((q) => bounded(q.min, q.max), { message: RANGE_PROBLEMS.noNumberBound })
    // Judged between two numbers only: a bound that is not one has its own problem.
    .refine((q) => !isNumberBound(q.min) || !isNumberBound(q.max) || q.min <= q.max, {
      message: RANGE_PROBLEMS.numbersReversed,
    }),
  /**
   * A date or datetime-local field between from and to (inclusive; one may be left out). A
   * bound given as a date covers that whole day; a date value counts as the start of its day.
   */
  z
    .object({
      kind: z.literal('dateBetween'),
      field: fieldName,
      from: dateBound.optional(),
      to: dateBound.optional(),
    })
    .strict()
    .refine((q) => bounded(q.from, q.to), { message: RANGE_PROBLEMS.noDateBound })
    .refine(
      (q) => {
        // Judged between two real dates only: a bound that is not one has its own problem
        // (zod runs this refinement over such a bound too).
        if (!isDateBound(q.from) || !isDateBound(q.to)) return true;
        const { min, max } = dateQueryBounds(q);
        return min === null || max === null || min <= max;
      },
      { message: RANGE_PROBLEMS.datesReversed },
    ),
  /** A checkbox field that is (or is not) checked. */
  z.object({ kind: z.literal('checkbox'), field: fieldName, checked: z.boolean() }).strict(),
  /** Any field's value contains `text`, ignoring case. */
  z.object({ kind: z.literal('anyFieldContains'), text: needle(1) }).strict(),
]);

export type MetadataQuery = z.infer<typeof metadataQuerySchema>;

/**
 * The bounds of a date query as strings to compare with row.date: date >= min and
 * date <= max. A date-only `to` reaches the end of that day; minutes without seconds cover
 * that whole minute, and seconds that whole second; a `from` at midnight takes the dates of
 * its day.
 */
export function dateQueryBounds(query: { from?: string; to?: string }): {
  min: string | null;
  max: string | null;
} {
  let min =
    query.from === undefined ? null : query.from.length === 16 ? `${query.from}:00` : query.from;
  // A date value counts as the start of its day, so a bound at midnight takes that day's dates
  // too: as text, "2024-01-05" sorts before "2024-01-05T00:00:00", and so does a bound of the
  // date alone before every date-time of the day.
  const midnight = min === null ? null : /^(\d{4}-\d{2}-\d{2})T00:00:00(\.0+)?$/.exec(min);
  if (midnight) min = midnight[1];
  // A date-time value may carry a fraction of a second (values.ts isValidTime): the end
  // bound takes in the whole of its last second.
  let max: string | null = null;
  if (query.to !== undefined) {
    if (query.to.length === 10) max = `${query.to}T23:59:59.999`;
    else max = query.to.length === 16 ? `${query.to}:59.999` : `${query.to}.999`;
  }
  return { min, max };
}

/** `%text%` for SQL LIKE ... ESCAPE '\', of the text as searched (searchText), escaped. */
export function likeContainsPattern(text: string): string {
  return likeContains(searchText(text));
}

/** Whether one row matches a query: the meaning the SQL side must reproduce. */
export function rowMatches(row: MetadataIndexRow, query: MetadataQuery): boolean {
  if (query.kind === 'anyFieldContains') return row.text.includes(searchText(query.text));
  if (row.name !== fieldKey(query.field)) return false;
  switch (query.kind) {
    case 'equals':
      // Values are indexed trimmed (rowsOf): so is the value looked for.
      return row.text === searchText(query.value.trim());
    case 'contains':
      return row.text.includes(searchText(query.text));
    case 'numberBetween': {
      const unit = queryUnit(query.unit);
      return (
        row.num !== null &&
        (query.min === undefined || row.num >= query.min) &&
        (query.max === undefined || row.num <= query.max) &&
        (unit === null || row.unit === unit)
      );
    }
    case 'dateBetween': {
      const { min, max } = dateQueryBounds(query);
      return (
        row.date !== null && (min === null || row.date >= min) && (max === null || row.date <= max)
      );
    }
    case 'checkbox':
      return row.bool === query.checked;
  }
}

/** Whether a document matches a query (some row of it matches). */
export function matchesQuery(doc: MetadataDoc, query: MetadataQuery): boolean {
  return metadataIndexRows(doc).some((row) => rowMatches(row, query));
}
