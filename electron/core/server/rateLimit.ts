/**
 * Failure counting per client address in a sliding window: after `limit` failures within
 * `windowMs`, the address is refused until the oldest failure ages out. In memory, because a
 * restart already costs an attacker the time it takes. Addresses are counted by clientKey (the
 * limiter can count under other names too: accountLimit.ts counts accounts).
 */
import { isIPv6 } from 'node:net';

/**
 * What failures are counted under for a client address: an IPv4 address as it is (also when
 * written IPv4-mapped, ::ffff:a.b.c.d), an IPv6 address by its /64 network. A host is given a
 * whole /64 and picks addresses in it at will (privacy addresses), so counting each address
 * alone would let it try without end, and push out the counts of everyone else.
 */
export function clientKey(address: string): string {
  const ip = address.split('%')[0] ?? address;
  if (!isIPv6(ip)) return address;
  const [head = '', tail] = ip.split('::');
  // Groups as numbers; a dotted IPv4 part at the end is two of them.
  const groups = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [parseInt(g, 16)];
          const [a = 0, b = 0, c = 0, d = 0] = g.split('.').map(Number);
          return [a * 256 + b, c * 256 + d];
        });
  const first = groups(head);
  const last = tail === undefined ? [] : groups(tail);
  const all = [...first, ...Array<number>(8 - first.length - last.length).fill(0), ...last];
  if (all.slice(0, 5).every((g) => g === 0) && all[5] === 0xffff) {
    const [high = 0, low = 0] = all.slice(6);
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  }
  return `${all
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** Checks that may wait for a place (FailureLimiter.enter), per place of the limit. */
const WAITING_PER_PLACE = 10;

/** Addresses with failures kept at most (about 100 bytes each). */
export const MAX_ADDRESSES = 10_000;

export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();
  /** Checks entered (enter) and not yet ended, by clientKey. */
  private readonly open = new Map<string, number>();
  /** Checks waiting for a place (enter), by clientKey. */
  private readonly waiting = new Map<string, (() => void)[]>();

  /**
   * `keyOf` names what failures are counted under: a client address by default (clientKey),
   * or anything else, as an account's name.
   */
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly clock: () => number = Date.now,
    private readonly keyOf: (name: string) => string = clientKey,
  ) {}

  private recent(key: string): number[] {
    const since = this.clock() - this.windowMs;
    const list = (this.failures.get(key) ?? []).filter((t) => t > since);
    if (list.length) this.failures.set(key, list);
    else this.failures.delete(key);
    return list;
  }

  blocked(address: string): boolean {
    return this.recent(this.keyOf(address)).length >= this.limit;
  }

  /**
   * Starts a slow check that may fail (a password hashed), once the address has a place for it:
   * its failures and its checks under way stay below the limit, so a burst sent at once is held
   * to it as tries sent one after another are (blocked() then fail() let every one of a burst
   * through, each passing blocked() before the first had failed). A check without a place waits
   * for one of those under way to end; false when the failures alone reach the limit, or too
   * many wait already. End each check entered with end().
   */
  async enter(address: string): Promise<boolean> {
    const key = this.keyOf(address);
    for (;;) {
      const open = this.open.get(key) ?? 0;
      const failed = this.recent(key).length;
      if (failed >= this.limit) return false;
      if (failed + open < this.limit) {
        this.open.set(key, open + 1);
        return true;
      }
      const waiting = this.waiting.get(key) ?? [];
      if (waiting.length >= this.limit * WAITING_PER_PLACE) return false;
      this.waiting.set(key, waiting);
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  }

  /** Ends a check entered: a failure is counted (fail, whose count it returns), a success not. */
  end(address: string, failed: boolean): number {
    const key = this.keyOf(address);
    const open = (this.open.get(key) ?? 1) - 1;
    if (open > 0) this.open.set(key, open);
    else this.open.delete(key);
    const count = failed ? this.fail(address) : this.recent(key).length;
    // Those waiting look again: one takes the place, or all learn the limit is reached.
    const waiting = this.waiting.get(key);
    this.waiting.delete(key);
    for (const wake of waiting ?? []) wake();
    return count;
  }

  fail(address: string): number {
    const key = this.keyOf(address);
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

  /** Seconds until the address may try again (1 while only checks under way hold it). */
  retryAfter(address: string): number {
    const key = this.keyOf(address);
    const recent = this.recent(key);
    if (recent.length < this.limit) return recent.length > 0 || this.open.has(key) ? 1 : 0;
    return Math.max(1, Math.ceil((recent[0] + this.windowMs - this.clock()) / 1000));
  }
}
