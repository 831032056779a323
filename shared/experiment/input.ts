// The shapes of the read API (`GET /api/usage_events/{id}/`, `GET /api/reservations/`) that the
// rules read, as schemas: other keys of those objects are allowed and ignored.

import { z } from 'zod';
import type { ReservationInput } from './types.js';

const dateTime = z
  .string()
  .refine((text) => Number.isFinite(Date.parse(text)), 'must be an ISO 8601 date-time');
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
