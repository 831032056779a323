/**
 * Times of the reservation pages (server and station) in the browser's own time zone: weeks
 * start on Monday at midnight, `datetime-local` values are read as local times and sent as ISO
 * with the offset of that moment (so a booking made across a DST change still means what was
 * typed).
 */

const pad = (n: number): string => String(n).padStart(2, '0');

/** Monday 00:00 (local) of the week holding `date`. */
export function weekStartOf(date: Date): Date {
  const start = new Date(date.getFullYear(), date.getMonth(), date.getDate());
  start.setDate(start.getDate() - ((start.getDay() + 6) % 7));
  return start;
}

/** `date` plus `days` calendar days, at the same local time of day. */
export function addDays(date: Date, days: number): Date {
  const next = new Date(date);
  next.setDate(next.getDate() + days);
  return next;
}

/** An instant as ISO 8601 with the local offset, e.g. 2026-03-02T09:00:00+01:00. */
export function isoWithOffset(date: Date): string {
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const abs = Math.abs(offset);
  return (
    `${toLocalDay(date)}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}

/**
 * What a booking form starts from: the next whole hour, and an hour after it, as the values of
 * `datetime-local` inputs.
 */
export function defaultBookingTimes(now: Date = new Date()): { start: string; end: string } {
  const start = new Date(now);
  start.setMinutes(0, 0, 0);
  start.setHours(start.getHours() + 1);
  const end = new Date(start.getTime() + 60 * 60_000);
  return { start: toLocalInput(start), end: toLocalInput(end) };
}

/** The local day of an instant, YYYY-MM-DD (the value of a `date` input). */
export function toLocalDay(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** The value of a `datetime-local` input for an instant (local time, minutes). */
export function toLocalInput(date: Date): string {
  return `${toLocalDay(date)}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** A `datetime-local` value read as local time; null when empty or not a time. */
export function fromLocalInput(value: string): Date | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  if (!match) return null;
  const [y, mo, d, h, mi, s] = match.slice(1).map((part) => Number(part ?? 0));
  const date = new Date(y ?? 0, (mo ?? 1) - 1, d ?? 1, h ?? 0, mi ?? 0, s ?? 0);
  return Number.isNaN(date.getTime()) ? null : date;
}

const dayFormat = new Intl.DateTimeFormat(undefined, {
  weekday: 'short',
  day: 'numeric',
  month: 'short',
});
const longDayFormat = new Intl.DateTimeFormat(undefined, {
  weekday: 'long',
  day: 'numeric',
  month: 'long',
  year: 'numeric',
});
const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const hourFormat = new Intl.DateTimeFormat(undefined, { hour: 'numeric' });

export const formatDay = (date: Date): string => dayFormat.format(date);
export const formatLongDay = (date: Date): string => longDayFormat.format(date);
export const formatTime = (date: Date): string => timeFormat.format(date);
export const formatHour = (date: Date): string => hourFormat.format(date);

export function sameDay(a: Date, b: Date): boolean {
  return (
    a.getFullYear() === b.getFullYear() &&
    a.getMonth() === b.getMonth() &&
    a.getDate() === b.getDate()
  );
}
