/**
 * The clock that waits are measured on (an idle limit, a stability window): it only goes
 * forward, and it counts the time the PC sleeps.
 *
 * The wall clock (Date.now) jumps when the PC's time is set or corrected: measured on it, a
 * jump back of an hour held files and kept a session open for that hour, and a jump forward
 * force-ended a usage at once. The monotonic clock (performance.now) does not jump, but stops
 * while the PC is suspended (Linux's CLOCK_MONOTONIC, macOS's mach_absolute_time): a session
 * left open when the PC went to sleep would have outlived its idle limit by the night. The
 * system's uptime counts the sleep (Linux's CLOCK_BOOTTIME through /proc/uptime, Windows'
 * GetTickCount64), but reading it costs a file read here (about 5 µs, against 0.07 µs), and a
 * harvest asks the time several times per file. So the monotonic clock is read each time, and
 * the uptime at most once a second: what the uptime gained beyond the monotonic clock
 * meanwhile is time asleep, added from then on.
 */
import { uptime } from 'node:os';

/** Below this, a gap between the two clocks is their jitter (/proc/uptime has 10 ms steps). */
const SLEEP_MIN_MS = 1000;
const CHECK_EVERY_MS = 1000;

/**
 * A clock as described above, from a monotonic clock and the system's uptime (both in ms),
 * starting near the epoch's milliseconds (`origin`), so that a time on it reads as a date.
 */
export function elapsedClock(
  monotonic: () => number,
  uptimeMs: () => number,
  origin: number,
): () => number {
  let asleepMs = 0;
  let checkedAt = monotonic();
  let upAt = uptimeMs();
  return () => {
    const now = monotonic();
    if (now - checkedAt >= CHECK_EVERY_MS) {
      const up = uptimeMs();
      const slept = up - upAt - (now - checkedAt);
      if (slept >= SLEEP_MIN_MS) asleepMs += slept;
      checkedAt = now;
      upAt = up;
    }
    // An uptime that could not be read (NaN) adds nothing: the monotonic clock alone.
    return origin + now + asleepMs;
  };
}

function uptimeOrNaN(): number {
  try {
    return uptime() * 1000;
  } catch {
    return Number.NaN; // no /proc here: time asleep goes uncounted
  }
}

/** The process's clock for waits (see the top). */
export const monotonicMs = elapsedClock(
  () => performance.now(),
  uptimeOrNaN,
  performance.timeOrigin,
);
