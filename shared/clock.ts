/**
 * A station's clock against its server's. Usage events are billed from the times a station
 * records, and file records carry them too: a station whose clock is off bills its users for
 * the wrong minutes, without anyone seeing why. The station measures the difference on every
 * answer from its server (its `Date` header) and says so past this many seconds.
 */
export const CLOCK_SKEW_WARN_SECONDS = 60;

/** 75 -> "75 s", 600 -> "10 min", 5400 -> "1 h 30 min", 366 days -> "366 days". */
function span(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `${minutes} min`;
  if (minutes >= 48 * 60) return `${Math.round(minutes / 1440)} days`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest === 0 ? `${hours} h` : `${hours} h ${rest} min`;
}

/**
 * What to tell staff about `skew` (this station's clock minus the server's, in seconds), or
 * null when it is within CLOCK_SKEW_WARN_SECONDS or unknown.
 */
export function clockSkewWarning(skew: number | null): string | null {
  if (skew === null || Math.abs(skew) < CLOCK_SKEW_WARN_SECONDS) return null;
  const way = skew > 0 ? 'ahead of' : 'behind';
  return (
    `this station's clock is ${span(Math.abs(skew))} ${way} the server's: usage and file ` +
    'times are recorded from it; set the clock (or turn on time sync)'
  );
}
