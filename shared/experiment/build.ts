// The experiment record of a usage event (spec 000, conventions): rule 1's source priority,
// rule 2's reservation, rule 3's consent, rule 4's fallback.

import { readSource, type SourceFields } from './read.js';
import { matchReservation, type MatchOptions } from './reservation.js';
import type {
  ExperimentResult,
  ExperimentSource,
  MatchedReservation,
  ReservationInput,
  SourceAttempt,
  UsageEventInput,
} from './types.js';

export function buildExperimentRecord(
  usage: UsageEventInput,
  reservations: readonly ReservationInput[],
  options: MatchOptions = {},
): ExperimentResult {
  const matched = matchReservation(usage, reservations, options);
  const sources: { source: ExperimentSource; text: string | null | undefined }[] = [
    { source: 'run_data', text: usage.run_data },
    { source: 'pre_run_data', text: usage.pre_run_data },
  ];
  const attempts: SourceAttempt[] = [];
  const tryRead = (
    source: ExperimentSource,
    raw: string | null | undefined,
    reservationId?: number,
  ) => {
    const read = readSource(raw);
    const base =
      reservationId === undefined ? { source } : { source, reservation_id: reservationId };
    attempts.push(
      read.ok
        ? { ...base, ok: true }
        : { ...base, ok: false, reason: read.reason, detail: read.detail },
    );
    return read;
  };
  for (const { source, text } of sources) {
    const read = tryRead(source, text);
    if (read.ok) return done(usage, read.fields, source, matched?.match ?? null, attempts);
  }
  if (!matched) {
    attempts.push({
      source: 'question_data',
      ok: false,
      reason: 'no_reservation',
      detail: 'no reservation of this tool (or of an area holding it) overlaps the usage',
    });
  } else {
    const read = tryRead(
      'question_data',
      matched.reservation.question_data,
      matched.reservation.id,
    );
    if (read.ok) return done(usage, read.fields, 'question_data', matched.match, attempts);
  }
  return {
    ok: false,
    reason: attempts.map((a) => `${a.source}: ${a.detail ?? a.reason ?? 'not used'}`).join('; '),
    attempts,
    reservation: matched?.match ?? null,
  };
}

function done(
  usage: UsageEventInput,
  fields: SourceFields,
  source: ExperimentSource,
  reservation: MatchedReservation | null,
  attempts: SourceAttempt[],
): ExperimentResult {
  return {
    ok: true,
    record: {
      usage_event_id: usage.id,
      tool_id: usage.tool,
      start: usage.start,
      end: usage.end,
      ...fields,
      source,
      reservation,
    },
    attempts,
  };
}
