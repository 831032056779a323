import { randomPoolBytes } from './random.js';

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** The 31-bit counter of UUIDs made within one millisecond (RFC 9562 section 6.2, method 1). */
const COUNTER_MAX = 0x7fffffff;
let lastMs = -1;
let counter = 0;

/** A UUID in its text form, any version, either case. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Every record gets a time-ordered UUID (v7, RFC 9562) at birth, besides its integer id:
 * 48 bits of Unix milliseconds, then a 31-bit counter that starts at a random value below
 * 2^30 in each new millisecond and counts up within it (so UUIDs made by one process sort in
 * the order they were made, even thousands per millisecond), then 43 random bits. A clock
 * that steps back keeps the last time, and a counter that runs out moves on a millisecond,
 * so the order holds then too.
 */
export function newUuid(clock: () => number = Date.now): string {
  const random = randomPoolBytes(10);
  const now = clock();
  if (now > lastMs) {
    lastMs = now;
    counter = random.readUInt32BE(0) & 0x3fffffff;
  } else if (counter < COUNTER_MAX) {
    counter += 1;
  } else {
    lastMs += 1;
    counter = random.readUInt32BE(0) & 0x3fffffff;
  }
  const ms = lastMs;
  const high = Math.floor(ms / 0x10000); // the top 32 of the 48 bits
  const b = [
    high >>> 24,
    (high >>> 16) & 0xff,
    (high >>> 8) & 0xff,
    high & 0xff,
    (ms >>> 8) & 0xff,
    ms & 0xff,
    0x70 | (counter >>> 27), // version 7, then the counter's top 4 bits
    (counter >>> 19) & 0xff,
    0x80 | ((counter >>> 13) & 0x3f), // variant 10, then 6 counter bits
    (counter >>> 5) & 0xff,
    ((counter & 0x1f) << 3) | (random[4] & 0x07),
    random[5],
    random[6],
    random[7],
    random[8],
    random[9],
  ];
  let out = '';
  for (let i = 0; i < 16; i++) {
    out += HEX[b[i]];
    if (i === 3 || i === 5 || i === 7 || i === 9) out += '-';
  }
  return out;
}

let isoMs = Number.NaN;
let isoText = '';

/**
 * Timestamps are stored as ISO 8601 UTC text with milliseconds: they sort as text. A harvest of
 * small files takes about ten per file, mostly within the same millisecond: the last one made
 * is given again for the same instant.
 */
export function nowIso(clock: () => number = Date.now): string {
  const ms = clock();
  if (ms !== isoMs) {
    isoText = new Date(ms).toISOString();
    isoMs = ms;
  }
  return isoText;
}

/**
 * Whether an instant written by toISOString keeps the four-digit year that makes text order
 * time order: JavaScript writes the years past 9999 as "+010000-…" and those before 1 as
 * "0000-…" or "-000001-…", which sort apart from the rest (a date filter's text comparison
 * then matches them wrongly), and NEMO's clients, in Python, read no year outside 1 to 9999.
 */
export function storableInstant(iso: string): boolean {
  return /^\d{4}-/.test(iso) && !iso.startsWith('0000-');
}

export const INSTANT_RANGE_RULE = 'must fall within the years 0001 to 9999 (UTC)';
