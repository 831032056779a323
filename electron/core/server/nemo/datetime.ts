/**
 * Date-times of the NEMO-compatible API: parsing filter values (with an offset, or naive in the
 * server's IANA time zone) into the stored form, and formatting stored values with the zone's
 * offset. Built on Intl.DateTimeFormat only; offsets are cached per UTC day, because one
 * formatToParts call costs about 9 µs and a page formats up to 2,000 date-times.
 */

export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

/** A parsed filter value: whole milliseconds, and whether finer digits were cut off. */
export interface ParsedInstant {
  ms: number;
  subMillisecond: boolean;
}

const DAY_MS = 86_400_000;

/** Epoch milliseconds of wall-clock fields read as UTC (years below 100 included). */
export function utcMs(f: WallClock): number {
  const d = new Date(0);
  d.setUTCFullYear(f.year, f.month - 1, f.day);
  d.setUTCHours(f.hour, f.minute, f.second, f.millisecond);
  return d.getTime();
}

const MIN_MS = utcMs({ year: 1, month: 1, day: 1, hour: 0, minute: 0, second: 0, millisecond: 0 });
const MAX_MS = utcMs({
  year: 9999,
  month: 12,
  day: 31,
  hour: 23,
  minute: 59,
  second: 59,
  millisecond: 999,
});

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Offset of the zone at an instant, in milliseconds (local = instant + offset), uncached. */
function computeOffset(timeZone: string, ms: number): number {
  const f: WallClock = { year: 0, month: 1, day: 1, hour: 0, minute: 0, second: 0, millisecond: 0 };
  let beforeCommonEra = false;
  for (const part of formatterFor(timeZone).formatToParts(ms)) {
    switch (part.type) {
      case 'year':
        f.year = Number(part.value);
        break;
      case 'month':
        f.month = Number(part.value);
        break;
      case 'day':
        f.day = Number(part.value);
        break;
      case 'hour':
        f.hour = Number(part.value);
        break;
      case 'minute':
        f.minute = Number(part.value);
        break;
      case 'second':
        f.second = Number(part.value);
        break;
      case 'era':
        beforeCommonEra = part.value.startsWith('B');
        break;
      default:
        break;
    }
  }
  if (beforeCommonEra) f.year = 1 - f.year;
  return utcMs(f) - Math.floor(ms / 1000) * 1000;
}

/** Per zone: UTC day number -> offset when constant over that day, NaN when it changes in it. */
const offsetCache = new Map<string, Map<number, number>>();
const OFFSET_CACHE_LIMIT = 50_000;

/** Offset of the zone at an instant, in milliseconds (local = instant + offset). */
export function offsetAt(timeZone: string, ms: number): number {
  const day = Math.floor(ms / DAY_MS);
  let cache = offsetCache.get(timeZone);
  if (!cache) {
    cache = new Map();
    offsetCache.set(timeZone, cache);
  }
  let known = cache.get(day);
  if (known === undefined) {
    const first = computeOffset(timeZone, day * DAY_MS);
    const last = computeOffset(timeZone, day * DAY_MS + DAY_MS - 1);
    known = first === last ? first : Number.NaN;
    if (cache.size >= OFFSET_CACHE_LIMIT) cache.clear();
    cache.set(day, known);
  }
  return Number.isNaN(known) ? computeOffset(timeZone, ms) : known;
}

/**
 * The instant a wall-clock time in a zone denotes. Times repeated when clocks go back take the
 * earlier instant; times skipped when clocks go forward are read with the offset from before
 * the change, so they move forward by its length (02:30 on a spring-forward day in New York is
 * 03:30 EDT). This is the "compatible" rule of JavaScript Temporal and Python's fold=0.
 */
export function zonedToUtc(local: WallClock, timeZone: string): number {
  const asUtc = utcMs(local);
  const before = offsetAt(timeZone, asUtc - DAY_MS);
  const after = offsetAt(timeZone, asUtc + DAY_MS);
  const candidates: number[] = [];
  for (const offset of before === after ? [before] : [before, after]) {
    const instant = asUtc - offset;
    if (offsetAt(timeZone, instant) === offset) candidates.push(instant);
  }
  return candidates.length ? Math.min(...candidates) : asUtc - before;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

// Date alone, or date and time with optional seconds, fraction and offset (Django's own parser
// accepts one-digit month, day, hour and minute, a space for the T, and a comma for the dot).
const DATE_TIME_RE =
  /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:[.,](\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;
// An unencoded "+" in a query string arrives as a space: "10:00:00 05:00" means "+05:00".
const SPACE_FOR_PLUS_RE = /(\d:\d{1,2}(?::\d{1,2}(?:[.,]\d+)?)?) (\d{2}(?::?\d{2})?)$/;

/**
 * Parses an ISO 8601 date-time or date. Without an offset the value is wall-clock time in
 * `timeZone`; a date alone is the start of that day there. Returns null for anything that is
 * not a real calendar date and time between the years 1 and 9999.
 */
export function parseDateTime(text: string, timeZone: string): ParsedInstant | null {
  const match = DATE_TIME_RE.exec(text.trim().replace(SPACE_FOR_PLUS_RE, '$1+$2'));
  if (!match) return null;
  const [, y, mo, d, h, mi, s, fraction, offset] = match;
  const fields: WallClock = {
    year: Number(y),
    month: Number(mo),
    day: Number(d),
    hour: Number(h ?? 0),
    minute: Number(mi ?? 0),
    second: Number(s ?? 0),
    millisecond: fraction ? Number(fraction.slice(0, 3).padEnd(3, '0')) : 0,
  };
  if (
    fields.year < 1 ||
    fields.month < 1 ||
    fields.month > 12 ||
    fields.day < 1 ||
    fields.day > daysInMonth(fields.year, fields.month) ||
    fields.hour > 23 ||
    fields.minute > 59 ||
    fields.second > 59
  ) {
    return null;
  }
  let ms: number;
  if (offset === undefined) {
    ms = zonedToUtc(fields, timeZone);
  } else if (offset.toUpperCase() === 'Z') {
    ms = utcMs(fields);
  } else {
    const digits = offset.slice(1).replace(':', '');
    const hours = Number(digits.slice(0, 2));
    const minutes = Number(digits.slice(2) || '0');
    if (hours > 23 || minutes > 59) return null;
    const sign = offset.startsWith('-') ? -1 : 1;
    ms = utcMs(fields) - sign * (hours * 60 + minutes) * 60_000;
  }
  if (ms < MIN_MS || ms > MAX_MS) return null;
  return { ms, subMillisecond: fraction !== undefined && /[1-9]/.test(fraction.slice(3)) };
}

/** The stored form: ISO 8601 UTC with milliseconds, which sorts and compares as text. */
export function storedIso(ms: number): string {
  return new Date(ms).toISOString();
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

function formatOffset(offsetMs: number): string {
  if (offsetMs === 0) return 'Z';
  const total = Math.abs(offsetMs) / 1000;
  const text = `${offsetMs < 0 ? '-' : '+'}${pad(Math.floor(total / 3600))}:${pad(Math.floor(total / 60) % 60)}`;
  return total % 60 ? `${text}:${pad(total % 60)}` : text;
}

/**
 * A stored UTC value as Django REST framework writes it in the server's zone: ISO 8601 with the
 * zone's offset ("Z" when it is zero), seconds, and microseconds only when non-zero
 * ("2026-11-20T10:00:00+01:00", "2026-11-20T10:00:00.250000+01:00"); in UTC where the zone's
 * local time would fall outside the years 1 to 9999.
 */
export function formatDateTime(stored: string, timeZone: string): string {
  const ms = Date.parse(stored);
  if (Number.isNaN(ms)) return stored;
  let offset = offsetAt(timeZone, ms);
  let local = new Date(ms + offset);
  // Stored times keep to the years 1 to 9999 in UTC; one whose local day leaves them (the last
  // hours of 9999 east of UTC) is written in UTC, as an ISO 8601 reader takes no other year.
  if (local.getUTCFullYear() < 1 || local.getUTCFullYear() > 9999) {
    offset = 0;
    local = new Date(ms);
  }
  const year = local.getUTCFullYear();
  const fraction = local.getUTCMilliseconds();
  return (
    `${year < 0 ? '-' : ''}${pad(Math.abs(year), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}` +
    `T${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}` +
    (fraction ? `.${pad(fraction, 3)}000` : '') +
    formatOffset(offset)
  );
}
