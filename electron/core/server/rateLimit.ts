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

  /** Seconds until the address may try again. */
  retryAfter(address: string): number {
    const first = this.recent(clientKey(address))[0];
    return first === undefined
      ? 0
      : Math.max(1, Math.ceil((first + this.windowMs - this.clock()) / 1000));
  }
}
