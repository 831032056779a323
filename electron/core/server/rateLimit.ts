/**
 * Failure counting per client address in a sliding window: after `limit` failures within
 * `windowMs`, the address is refused until the oldest failure ages out. In memory, because a
 * restart already costs an attacker the time it takes. Addresses are counted by clientKey.
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

/** Addresses with failures kept at most (about 100 bytes each). */
export const MAX_ADDRESSES = 10_000;

export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();
  /** Checks begun (begin) and not yet ended, by clientKey. */
  private readonly open = new Map<string, number>();

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

  blocked(address: string): boolean {
    return this.recent(clientKey(address)).length >= this.limit;
  }

  /**
   * Starts a slow check that may fail (a password hashed): false, and nothing started, when
   * the address's failures and its checks under way reach the limit. For a check that awaits:
   * blocked() then fail() would let a burst sent at once through whole, every one passing
   * blocked() before the first has failed. End each begun check with end().
   */
  begin(address: string): boolean {
    const key = clientKey(address);
    const open = this.open.get(key) ?? 0;
    if (this.recent(key).length + open >= this.limit) return false;
    this.open.set(key, open + 1);
    return true;
  }

  /** Ends a check begun: a failure is counted (as fail, whose count it returns), a success not. */
  end(address: string, failed: boolean): number {
    const key = clientKey(address);
    const open = (this.open.get(key) ?? 1) - 1;
    if (open > 0) this.open.set(key, open);
    else this.open.delete(key);
    return failed ? this.fail(address) : this.recent(key).length;
  }

  fail(address: string): number {
    const key = clientKey(address);
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
    const key = clientKey(address);
    const first = this.recent(key)[0];
    if (first === undefined) return this.open.has(key) ? 1 : 0;
    return Math.max(1, Math.ceil((first + this.windowMs - this.clock()) / 1000));
  }
}
