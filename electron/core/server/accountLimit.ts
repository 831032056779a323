/**
 * Failed log-ins counted per account, beside the count per address. Many addresses (a botnet,
 * or the many networks of one host) each held to its own limit could together try thousands
 * of passwords an hour on one account; counted per account, they get `limit` tries in the
 * window between them. An account that reached its limit is held only at addresses it has not
 * logged in from lately: an attack on it does not lock its owner out where they log in from.
 * In memory, as the count per address is: a restart costs an attacker the time it takes.
 */
import { clientKey, FailureLimiter, MAX_ADDRESSES } from './rateLimit.js';

/** How long an address stays one the account logs in from after its last log-in there. */
const REMEMBERED_MS = 30 * 24 * 3600_000;

/** Addresses remembered per account, the most recent ones. */
const ADDRESSES_PER_ACCOUNT = 10;

/**
 * What a log-in got from enter(): `known`, from an address the account logged in from lately,
 * not held; `entered`, holding a place in the account's limit (give it back with end()).
 */
export type AccountPass = 'known' | 'entered';

/** The name an account is counted under: the e-mail as the log-in looks it up, in any case. */
export function accountKey(email: string): string {
  return email.trim().toLowerCase();
}

export class AccountLoginLimit {
  private readonly failures: FailureLimiter;
  /** By account key: client address keys (clientKey) and when the account last logged in there. */
  private readonly known = new Map<string, Map<string, number>>();

  constructor(
    limit: number,
    windowMs: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.failures = new FailureLimiter(limit, windowMs, clock, accountKey);
  }

  private isKnown(email: string, address: string): boolean {
    const when = this.known.get(accountKey(email))?.get(clientKey(address));
    return when !== undefined && when > this.clock() - REMEMBERED_MS;
  }

  /**
   * Lets a log-in to `email` from `address` check its password, once the account has a place
   * for it (FailureLimiter.enter: a burst from many addresses is held to the limit too); null
   * when the account's failures reached its limit, or too many tries wait already.
   */
  async enter(email: string, address: string): Promise<AccountPass | null> {
    if (this.isKnown(email, address)) return 'known';
    return (await this.failures.enter(email)) ? 'entered' : null;
  }

  /**
   * Ends a log-in that enter() let through; a failure is counted whatever the pass, and the
   * count returned (0 for a success).
   */
  end(email: string, pass: AccountPass, failed: boolean): number {
    if (pass === 'entered') {
      const count = this.failures.end(email, failed);
      return failed ? count : 0;
    }
    return failed ? this.failures.fail(email) : 0;
  }

  /** Remembers the address an account logged in from. */
  succeeded(email: string, address: string): void {
    const key = accountKey(email);
    const addresses = this.known.get(key) ?? new Map<string, number>();
    const where = clientKey(address);
    // Last in the map's order: the address logged in from longest ago goes first.
    addresses.delete(where);
    addresses.set(where, this.clock());
    for (const old of addresses.keys()) {
      if (addresses.size <= ADDRESSES_PER_ACCOUNT) break;
      addresses.delete(old);
    }
    this.known.delete(key);
    this.known.set(key, addresses);
    for (const old of this.known.keys()) {
      if (this.known.size <= MAX_ADDRESSES) break;
      this.known.delete(old);
    }
  }

  /** Seconds until the account may be tried again from an address it is not known at. */
  retryAfter(email: string): number {
    return this.failures.retryAfter(email);
  }
}
