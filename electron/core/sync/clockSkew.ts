/**
 * This station's clock against the server's, measured from the `Date` header of every answer
 * (shared/clock.ts says why it matters): kept for the sync state, and logged once when it goes
 * past CLOCK_SKEW_WARN_SECONDS and once when it is back. Apart from the client, which hands it
 * each answer's header whichever exchange it came from.
 */
import { CLOCK_SKEW_WARN_SECONDS, clockSkewWarning } from '../../../shared/clock.js';
import type { Logger } from '../util/log.js';

export class ClockSkew {
  /** This station's clock minus the server's (s), from its last answer; null before one. */
  seconds: number | null = null;
  private warned = false;

  constructor(private readonly log: Logger) {}

  /**
   * Measures this station's clock against the server's `Date` header (RFC 9110: whole seconds,
   * cut down, so the server's time was half a second past it on average) and logs when the
   * difference goes past CLOCK_SKEW_WARN_SECONDS, or back within it.
   */
  note(header: unknown): void {
    if (typeof header !== 'string') return;
    const server = Date.parse(header);
    if (!Number.isFinite(server)) return;
    const skew = Math.round((Date.now() - server - 500) / 1000);
    this.seconds = skew;
    // Said once each way: a clock about a minute off would otherwise log on every answer.
    const warning = clockSkewWarning(skew);
    if (warning && !this.warned) {
      this.warned = true;
      this.log.warn({ clockSkewSeconds: skew }, warning);
    } else if (this.warned && Math.abs(skew) < CLOCK_SKEW_WARN_SECONDS - 15) {
      this.warned = false;
      this.log.info(
        { clockSkewSeconds: skew },
        "this station's clock agrees with the server's again",
      );
    }
  }
}
