// The shapes of the read API (`GET /api/usage_events/{id}/`, `GET /api/reservations/`) that the
// rules read, as schemas: other keys of those objects are allowed and ignored.

import { z } from 'zod';
import { isValidDate } from '../metadata/values.js';
import type { ReservationInput } from './types.js';

/**
 * An ISO 8601 date-time with its offset, as the read API writes them (`2026-05-05T10:00:00Z`,
 * `…:00.123456-05:00`; not an offset with seconds, which it writes for a zone's local mean time
 * before about 1940, and which Date.parse does not read): Date.parse alone takes "1" or
 * "May 5", and a time without an offset in whatever zone the machine is in.
 */
export const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * Whether `text` is a date-time of ISO_DATE_TIME's form on the calendar: Date.parse also
 * takes 30 February (as 2 March) and hour 24.
 */
export function isIsoDateTime(text: string): boolean {
  const m = ISO_DATE_TIME.exec(text);
  if (!m || !isValidDate(`${m[1]}-${m[2]}-${m[3]}`) || Number(m[4]) > 23) return false;
  return Number.isFinite(Date.parse(text));
}

const dateTime = z
  .string()
  .refine(isIsoDateTime, 'must be an ISO 8601 date-time with its offset (Z or ±hh:mm)');
const id = z.number().int().positive();

export const usageEventInputSchema = z.looseObject({
  id,
  tool: id,
  start: dateTime,
  end: dateTime.nullable(),
  pre_run_data: z.string().nullable().optional(),
  run_data: z.string().nullable().optional(),
});

export const reservationInputSchema = z.looseObject({
  id,
  tool: id.nullable(),
  area: id.nullable().optional(),
  start: dateTime,
  end: dateTime,
  cancelled: z.boolean().optional(),
  question_data: z.string().nullable().optional(),
});

const reservationArraySchema = z.array(reservationInputSchema);
const reservationPageSchema = z
  .looseObject({ results: z.array(reservationInputSchema) })
  .transform((page) => page.results);

/**
 * The schema of a list of reservations, or of the paginated envelope the read API answers with,
 * picked by the value's shape: a union of the two would answer a bad field of either with
 * "Invalid input" alone, not naming it.
 */
export function reservationListSchema(value: unknown): z.ZodType<ReservationInput[]> {
  return Array.isArray(value) ? reservationArraySchema : reservationPageSchema;
}
