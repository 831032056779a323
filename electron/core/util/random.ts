import { randomFillSync } from 'node:crypto';

/**
 * Cryptographically strong random bytes, drawn from the OS in blocks. A harvest of small files
 * mints two UUIDs and an ARK per file; asking the OS for each (crypto.randomInt, or the uuid
 * package's getRandomValues per call) cost about 30 µs per file, a fifth of its bookkeeping.
 * The bytes are the same quality: only the number of system calls changes.
 */
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let used = POOL_SIZE;

/** The next `count` random bytes (at most POOL_SIZE), as a view valid until the next call. */
export function randomPoolBytes(count: number): Buffer {
  if (count > POOL_SIZE) throw new RangeError(`at most ${POOL_SIZE} random bytes at a time`);
  if (used + count > POOL_SIZE) {
    randomFillSync(pool);
    used = 0;
  }
  const view = pool.subarray(used, used + count);
  used += count;
  return view;
}

/** A uniform random integer in [0, below), for below up to 256 (rejection sampling). */
export function randomBelow(below: number): number {
  if (!Number.isInteger(below) || below < 1 || below > 256) {
    throw new RangeError(`randomBelow takes an integer from 1 to 256, got ${below}`);
  }
  // The largest multiple of `below` that fits in a byte: bytes at or above it are drawn
  // again, so every result is equally likely.
  const limit = 256 - (256 % below);
  for (;;) {
    const byte = randomPoolBytes(1)[0];
    if (byte < limit) return byte % below;
  }
}
