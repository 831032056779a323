import type { ActiveTransfer } from '../../../../shared/api.js';

/**
 * The rate shown is the one of the last few seconds: the core's is the average since the copy
 * started, whose time left stays far too short for minutes after a share slows down (and too
 * long after it speeds up).
 */
export const RATE_WINDOW_MS = 5000;
/** Shorter than this, two samples say more about the timing of the polls than about the copy. */
const SHORTEST_SPAN_MS = 1000;

/** A transfer's bytes done, as a status read at `at` (ms) gave them. */
export interface ProgressSample {
  at: number;
  bytes: number;
}

export type ProgressSamples = ReadonlyMap<number, readonly ProgressSample[]>;

/**
 * The samples of the transfers under way, with those of a status read at `at` added: each
 * keeps the ones of its last `windowMs`, and a transfer no longer under way is dropped. A copy
 * whose bytes went back (started again after a change of its source) starts anew.
 */
export function addSamples(
  held: ProgressSamples,
  active: readonly ActiveTransfer[],
  at: number,
  windowMs: number = RATE_WINDOW_MS,
): Map<number, ProgressSample[]> {
  const next = new Map<number, ProgressSample[]>();
  for (const transfer of active) {
    const kept = held.get(transfer.file_id) ?? [];
    const restarted = (kept.at(-1)?.bytes ?? 0) > transfer.bytes_done;
    const before = restarted ? [] : kept.filter((s) => s.at >= at - windowMs && s.at < at);
    next.set(transfer.file_id, [...before, { at, bytes: transfer.bytes_done }]);
  }
  return next;
}

/**
 * Bytes per second over the samples (the last few seconds), and the seconds left at that rate
 * (null while nothing moved); the core's average since the start until the samples span a
 * second.
 */
export function recentRate(
  transfer: ActiveTransfer,
  samples: readonly ProgressSample[] | undefined,
): { rate: number; secondsLeft: number | null } {
  const first = samples?.[0];
  const last = samples?.at(-1);
  if (!first || !last || last.at - first.at < SHORTEST_SPAN_MS) {
    return { rate: transfer.rate, secondsLeft: transfer.seconds_left };
  }
  const rate = ((last.bytes - first.bytes) * 1000) / (last.at - first.at);
  const left = Math.max(transfer.bytes_total - transfer.bytes_done, 0);
  return { rate, secondsLeft: rate > 0 ? left / rate : null };
}
