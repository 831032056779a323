/**
 * Failure counting per client address in a sliding window: after `limit` failures within
 * `windowMs`, the address is refused until the oldest failure ages out. In memory, because a
 * restart already costs an attacker the time it takes.
 */
/** Addresses with failures kept at most (about 100 bytes each). */
export const MAX_ADDRESSES = 10_000;

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
    // Last in the map's order: the most recently failing address is pruned last.
    this.failures.delete(key);
    this.failures.set(key, list);
    if (this.failures.size > MAX_ADDRESSES) this.prune();
    return list.length;
  }

  /**
   * Bounds the memory many addresses take (a trusted proxy network lets clients name any):
   * addresses whose failures aged out go, then the ones seen longest ago.
   */
  private prune(): void {
    for (const key of [...this.failures.keys()]) this.recent(key);
    for (const key of this.failures.keys()) {
      if (this.failures.size <= MAX_ADDRESSES) break;
      this.failures.delete(key);
    }
  }

  /** Seconds until the address may try again. */
  retryAfter(key: string): number {
    const first = this.recent(key)[0];
    return first === undefined
      ? 0
      : Math.max(1, Math.ceil((first + this.windowMs - this.clock()) / 1000));
  }
}
