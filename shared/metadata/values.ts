// What a valid value of each field type looks like. Surrounding spaces are ignored, as the
// browser inputs the notebook service uses ignore them.

import type { FieldType, FieldValue } from './types.js';

/** An empty value: always allowed, whatever the type. */
export function isEmptyValue(value: FieldValue): boolean {
  if (typeof value === 'string') return value.trim() === '';
  if (Array.isArray(value)) return value.length === 0;
  return false;
}

/** The value a field holds when cleared: false, [] (multi-select) or "". */
export function emptyValueFor(field: {
  type: FieldType;
  allow_multi_values?: boolean;
}): FieldValue {
  if (field.type === 'checkbox') return false;
  if (field.type === 'select' && field.allow_multi_values === true) return [];
  return '';
}

const NUMERIC = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The number a value stands for (a number, or numeric text), or null. */
export function numericValue(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (!NUMERIC.test(text)) return null;
  const number = Number(text);
  return Number.isFinite(number) ? number : null;
}

// The address rule of HTML's <input type="email"> (WHATWG), which the notebook service uses.
const EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

export function isValidEmail(value: string): boolean {
  return EMAIL.test(value.trim());
}

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):([^]*)$/;
/** Schemes whose URLs address a host, so "//host" must follow. */
const HOST_SCHEMES = ['http', 'https', 'ftp', 'ftps', 'sftp', 'ws', 'wss', 'smb'];
/** A url field is shown as a clickable link: these would run code instead of opening a page. */
const UNSAFE_SCHEMES = ['javascript', 'vbscript', 'data'];

/** Why a url value is refused, or null when it is a valid absolute URL. */
export function urlProblem(value: string): string | null {
  const text = value.trim();
  if (/\s/.test(text) || [...text].some((c) => c < ' ' || c === '\u007f')) {
    return 'must not contain spaces or control characters';
  }
  const match = SCHEME.exec(text);
  if (!match) return 'must be a full URL starting with a scheme, such as https://';
  const scheme = (match[1] ?? '').toLowerCase();
  const rest = match[2] ?? '';
  if (UNSAFE_SCHEMES.includes(scheme)) return `must not be a ${scheme}: link`;
  if (HOST_SCHEMES.includes(scheme)) {
    return /^\/\/(?:[^/?#@]*@)?[^/?#@:]+/.test(rest) ? null : `must name a host after ${scheme}://`;
  }
  return rest === '' ? 'must have something after the scheme' : null;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,3})?)?$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** YYYY-MM-DD naming a real calendar day (year 0001 to 9999). */
export function isValidDate(value: string): boolean {
  const match = DATE.exec(value.trim());
  if (!match) return false;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/**
 * HH:MM, HH:MM:SS or HH:MM:SS.sss, 00:00 to 23:59:59.999: a browser's time input writes the
 * fraction when its step is under a second.
 */
export function isValidTime(value: string): boolean {
  return TIME.test(value.trim());
}

/** The date-time as YYYY-MM-DDTHH:MM:SS (seconds added when absent), or null when invalid. */
export function normalizeDateTime(value: string): string | null {
  const text = value.trim();
  const at = text.indexOf('T');
  if (at < 0) return null;
  const date = text.slice(0, at);
  const time = text.slice(at + 1);
  if (!isValidDate(date) || !isValidTime(time)) return null;
  return `${date}T${time.length === 5 ? `${time}:00` : time}`;
}

export function isValidDateTime(value: string): boolean {
  return normalizeDateTime(value) !== null;
}
