/**
 * Query parameters of the NEMO-compatible API, read the way django-filter and Django REST
 * framework read them: the last of repeated values wins, an empty value is no filter, an
 * unknown parameter is ignored, and every malformed value is reported at once as
 * `{"<param>": ["<message>"]}`.
 */
import { parseDateTime, type ParsedInstant } from './datetime.js';

/** One SQL condition with its arguments. */
export interface Clause {
  sql: string;
  args: readonly unknown[];
  /**
   * The condition is selective through an index the planner undervalues (a partial index):
   * ordering by `+id` keeps SQLite from walking the whole table in id order to find matches.
   */
  preferIndex?: boolean;
}

export type FilterDef =
  | { kind: 'integer'; where: (value: number) => Clause }
  | { kind: 'integers'; where: (values: number[]) => Clause }
  | { kind: 'datetime'; where: (value: ParsedInstant) => Clause }
  | { kind: 'boolean'; where: (value: boolean) => Clause }
  | { kind: 'text'; where: (value: string) => Clause }
  | { kind: 'texts'; where: (values: string[]) => Clause }
  /**
   * A filter NEMO has that this server cannot apply (what it filters on is not kept here):
   * refused by name, rather than ignored as an unknown parameter is, which would answer every
   * record as if filtered.
   */
  | { kind: 'unsupported' };

export type FilterSet = Readonly<Record<string, FilterDef>>;

export type ValidationErrors = Record<string, string[]>;

export const MESSAGES = {
  datetime: 'Enter a valid date/time.',
  integer: 'Enter a whole number.',
  choice: (value: string): string =>
    `Select a valid choice. ${value} is not one of the available choices.`,
  invalidPage: 'Invalid page.',
  notFound: 'Not found.',
  unsupported:
    'This NEMO filter is not supported by this server (what it filters on is not kept here); ' +
    'leave it out.',
} as const;

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

/** The query string of a raw request URL, undecoded until here ('+' is a space, as in forms). */
export function searchParamsOf(url: string): URLSearchParams {
  const at = url.indexOf('?');
  return new URLSearchParams(at < 0 ? '' : url.slice(at + 1));
}

/** Django's QueryDict.get: the last value of a repeated parameter. */
export function lastValue(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  return values.length ? values[values.length - 1] : undefined;
}

const INTEGER_RE = /^[+-]?\d+$/;

export function parseInteger(text: string): number | null {
  const trimmed = text.trim();
  if (!INTEGER_RE.test(trimmed)) return null;
  const value = Number(trimmed);
  return Number.isSafeInteger(value) ? value : null;
}

/** Comma-separated whole numbers; empty items are skipped ("1,2," is 1 and 2). */
export function parseIntegerList(text: string): number[] | null {
  const values: number[] = [];
  for (const item of splitList(text)) {
    const value = parseInteger(item);
    if (value === null) return null;
    values.push(value);
  }
  return values;
}

export function splitList(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** Django's NullBooleanField values, in any letter case: true/1 and false/0. */
export function parseBoolean(text: string): boolean | null {
  const value = text.trim().toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  return null;
}

export type FilterResult =
  { ok: true; clauses: Clause[] } | { ok: false; errors: ValidationErrors };

/** Turns the filters of `set` present in the query into SQL conditions, or all their errors. */
export function parseFilters(
  set: FilterSet,
  query: URLSearchParams,
  timeZone: string,
): FilterResult {
  const clauses: Clause[] = [];
  const errors: ValidationErrors = {};
  const seen = new Set<string>();
  for (const name of query.keys()) {
    if (seen.has(name) || !Object.hasOwn(set, name)) continue;
    seen.add(name);
    const def = set[name];
    const given = lastValue(query, name);
    // django-filter's CharFilter strips its value (forms.CharField): ` alice ` is alice, and
    // blanks alone are no filter.
    const text = def?.kind === 'text' ? given?.trim() : given;
    if (def === undefined || text === undefined || text === '') continue;
    const clause = filterClause(def, text, timeZone);
    if (typeof clause === 'string') errors[name] = [clause];
    else clauses.push(clause);
  }
  return Object.keys(errors).length ? { ok: false, errors } : { ok: true, clauses };
}

/** The condition for one value, or the message saying what is wrong with it. */
function filterClause(def: FilterDef, text: string, timeZone: string): Clause | string {
  switch (def.kind) {
    case 'integer': {
      const value = parseInteger(text);
      return value === null ? MESSAGES.integer : def.where(value);
    }
    case 'integers': {
      const values = parseIntegerList(text);
      return values === null ? MESSAGES.integer : def.where(values);
    }
    case 'datetime': {
      const value = parseDateTime(text, timeZone);
      return value === null ? MESSAGES.datetime : def.where(value);
    }
    case 'boolean': {
      const value = parseBoolean(text);
      return value === null ? MESSAGES.choice(text) : def.where(value);
    }
    case 'text':
      return def.where(text);
    case 'texts':
      return def.where(splitList(text));
    case 'unsupported':
      return MESSAGES.unsupported;
  }
}

/**
 * DRF's PageNumberPagination.get_page_size: a positive whole number, clamped to the maximum;
 * anything else (missing, zero, negative, not a number) is the default.
 */
export function pageSizeOf(query: URLSearchParams): number {
  const text = (lastValue(query, 'page_size') ?? '').trim();
  // Any positive whole number is capped, as DRF caps it, however many digits it has: one past
  // 2^53 is not the default page.
  if (INTEGER_RE.test(text) && !text.startsWith('-') && /[1-9]/.test(text)) {
    return Math.min(Number(text), MAX_PAGE_SIZE);
  }
  return DEFAULT_PAGE_SIZE;
}

/**
 * The requested page number given the number of pages (Django's Paginator.validate_number:
 * 'last' is the last page, page 1 always exists), or null when there is no such page.
 */
export function pageNumberOf(query: URLSearchParams, pages: number): number | null {
  // An empty value is page 1, as DRF reads it (`query_params.get('page') or 1`).
  const text = (lastValue(query, 'page') || '1').trim();
  if (text === 'last') return Math.max(1, pages);
  const value = parseInteger(text);
  if (value === null || value < 1) return null;
  if (value > pages && value !== 1) return null;
  return value;
}

export interface OrderField {
  /** SQL expression ordered on. */
  column: string;
  /** Nullable columns sort nulls last ascending and first descending, as PostgreSQL does. */
  nullable?: boolean;
}

/**
 * The ORDER BY of DRF's OrderingFilter: comma-separated fields, "-" for descending, unknown
 * fields ignored, id descending when none is valid. id always ends the list so pages are stable;
 * added by this function, it follows the direction of the first field.
 */
export function orderByOf(
  query: URLSearchParams,
  fields: Readonly<Record<string, OrderField>>,
  idColumn = 'id',
): string {
  const terms: string[] = [];
  const used = new Set<string>();
  let firstDescending: boolean | undefined;
  for (const raw of splitList(lastValue(query, 'ordering') ?? '')) {
    const descending = raw.startsWith('-');
    const name = descending ? raw.slice(1) : raw;
    const field = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (!field || used.has(name)) continue;
    used.add(name);
    firstDescending ??= descending;
    const direction = descending ? 'DESC' : 'ASC';
    const nulls = field.nullable ? (descending ? ' NULLS FIRST' : ' NULLS LAST') : '';
    terms.push(`${name === 'id' ? idColumn : field.column} ${direction}${nulls}`);
  }
  if (!used.has('id')) terms.push(`${idColumn} ${(firstDescending ?? true) ? 'DESC' : 'ASC'}`);
  return terms.join(', ');
}
