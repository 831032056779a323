/**
 * Failure counting per client address in a sliding window: after `limit` failures within
 * `windowMs`, the address is refused until the oldest failure ages out. In memory, because a
 * restart already costs an attacker the time it takes.
 */
export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  private recent(key: string): number[] {
    const since = this.clock() - this.windowMs;
    const list = (this.failures.get(key) ?? []).filter((t) => t > since);
    if (list.length) this.failures.set(key, list);
    else this.failures.delete(key);
    return list;
  }

  blocked(key: string): boolean {
    return this.recent(key).length >= this.limit;
  }

  fail(key: string): number {
    const list = this.recent(key);
    list.push(this.clock());
    this.failures.set(key, list);
    return list.length;
  }

  /** Seconds until the address may try again. */
  retryAfter(key: string): number {
    const first = this.recent(key)[0];
    return first === undefined
      ? 0
      : Math.max(1, Math.ceil((first + this.windowMs - this.clock()) / 1000));
  }
}
