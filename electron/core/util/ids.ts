import { v7 as uuidv7 } from 'uuid';

/** Every record gets a time-ordered UUID (v7) at birth, besides its integer id. */
export function newUuid(): string {
  return uuidv7();
}

/** Timestamps are stored as ISO 8601 UTC text with milliseconds: they sort as text. */
export function nowIso(clock: () => number = Date.now): string {
  return new Date(clock()).toISOString();
}
