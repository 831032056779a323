import type { BridgeError } from './bridge.js';
import { fromLocalInput, toLocalDay } from './time.js';

const dateTime = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
});

/** A stored ISO time in the station's local time, e.g. "05/01/2024, 09:00". */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const time = new Date(iso);
  return Number.isNaN(time.getTime()) ? iso : dateTime.format(time);
}

const dayOnly = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});

/**
 * A notebook's date (YYYY-MM-DD) or local date and time (YYYY-MM-DDTHH:MM, no zone: a wall
 * time) as the station shows its other times, e.g. "05/01/2024" or "05/01/2024, 09:00"; null
 * for text of another shape, which is shown as it is.
 */
export function formatWallTime(value: string, type: 'date' | 'datetime-local'): string | null {
  // Read as a datetime-local input's value is (a date: at its midnight).
  const time =
    type === 'date'
      ? /^\d{4}-\d{2}-\d{2}$/.test(value)
        ? fromLocalInput(`${value}T00:00`)
        : null
      : fromLocalInput(value);
  // Not a day of the calendar (2026-02-30, read as a day of March): shown as written.
  if (time === null || toLocalDay(time) !== value.slice(0, 10)) return null;
  return (type === 'date' ? dayOnly : dateTime).format(time);
}

/**
 * A server's message with its times in UTC ("reservation 3 of the tool SEM
 * (2026-12-10T08:00:00.000Z to ...)") as the person reads times: local, as formatDateTime.
 */
export const localTimes = (text: string): string =>
  text.replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z/g, (iso) => formatDateTime(iso));

export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function sentence(text: string): string {
  const t = capitalize(text.trim());
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** A refused log-on in words: wrong PIN (with the tries left), or locked. */
export function logonErrorText(error: BridgeError): string {
  if (error.code === 'unauthenticated') {
    return `Wrong username, badge or PIN. ${sentence(error.message)}`;
  }
  return errorText(error);
}

/**
 * Whether a log-on or login failed on what was typed: a wrong PIN or password ('unauthenticated'),
 * or a login locked after too many ('locked'). Not when the station or server did not answer.
 */
export function credentialsRefused(error: BridgeError): boolean {
  return error.code === 'unauthenticated' || error.code === 'locked';
}

/** An error from the core in words for the person at the screen. */
export function errorText(error: BridgeError): string {
  switch (error.code) {
    case 'locked': {
      const until = lockedUntil(error.details);
      const when = until ? ` until ${formatDateTime(until)}` : '';
      // The station's lock (wrong PINs across logins) keeps everyone out, not only this login.
      return detail(error.details, 'scope') === 'station'
        ? `Log-on at this station is locked after too many wrong PINs${when}. Try again later or ask staff.`
        : `This login is locked after five wrong PINs${when}. Try again later or ask staff.`;
    }
    case 'validation_failed':
      return `Some answers need attention. ${sentence(error.message)}`;
    default:
      return sentence(error.message);
  }
}

/** One field of an error's details, whatever they hold. */
function detail(details: unknown, name: string): unknown {
  if (typeof details !== 'object' || details === null) return undefined;
  return (details as Record<string, unknown>)[name];
}

function lockedUntil(details: unknown): string | null {
  const value = detail(details, 'locked_until');
  return typeof value === 'string' ? value : null;
}
