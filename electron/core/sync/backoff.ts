/**
 * Exponential backoff with jitter: the n-th consecutive failure waits a random time between half
 * and all of min(cap, base * 2^n), so stations that lost the server together do not come back
 * in step.
 */
export class Backoff {
  private failures = 0;

  constructor(
    private readonly baseMs = 500,
    private readonly capMs = 30_000,
    private readonly random: () => number = Math.random,
  ) {}

  /** The delay before the next attempt after one more failure. */
  fail(): number {
    const ceiling = Math.min(this.capMs, this.baseMs * 2 ** Math.min(this.failures, 30));
    this.failures += 1;
    return Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
  }

  reset(): void {
    this.failures = 0;
  }

  get attempts(): number {
    return this.failures;
  }
}
