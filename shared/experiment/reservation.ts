// Rule 2: the reservation of a usage event is the one that overlaps it most in time.

import type { MatchedReservation, ReservationInput, UsageEventInput } from './types.js';

function instant(text: string): number | null {
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

export interface MatchOptions {
  /** The end of a usage still in progress. Default: now. */
  now?: number;
  /** Areas that contain the usage's tool: their reservations are candidates too. */
  toolAreas?: readonly number[];
}

/**
 * Among the reservations that are not cancelled, are for the usage's tool (or an area holding
 * it), and overlap the usage by more than zero seconds, the one with the largest overlap. Ties
 * go to the reservation whose start is nearest the usage's start, then to the lower id, so
 * the answer never depends on the order of the input.
 */
export function matchReservation(
  usage: UsageEventInput,
  reservations: readonly ReservationInput[],
  options: MatchOptions = {},
): { reservation: ReservationInput; match: MatchedReservation } | null {
  const start = instant(usage.start);
  const end = usage.end === null ? (options.now ?? Date.now()) : instant(usage.end);
  if (start === null || end === null) return null;
  const areas = new Set(options.toolAreas ?? []);
  let best: { reservation: ReservationInput; overlap: number; distance: number } | null = null;
  for (const reservation of reservations) {
    if (reservation.cancelled === true) continue;
    const forTool =
      reservation.tool === usage.tool ||
      (reservation.tool === null &&
        reservation.area !== null &&
        reservation.area !== undefined &&
        areas.has(reservation.area));
    if (!forTool) continue;
    const from = instant(reservation.start);
    const to = instant(reservation.end);
    if (from === null || to === null) continue;
    const overlap = Math.min(end, to) - Math.max(start, from);
    if (overlap <= 0) continue;
    const distance = Math.abs(from - start);
    const better =
      best === null ||
      overlap > best.overlap ||
      (overlap === best.overlap &&
        (distance < best.distance ||
          (distance === best.distance && reservation.id < best.reservation.id)));
    if (better) best = { reservation, overlap, distance };
  }
  if (!best) return null;
  const { reservation, overlap } = best;
  return {
    reservation,
    match: {
      id: reservation.id,
      start: reservation.start,
      end: reservation.end,
      overlap_seconds: Math.round(overlap / 1000),
    },
  };
}
