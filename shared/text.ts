/**
 * Rules for text that people and programs give the app as one line: names of people, projects,
 * tools and harvest resources, usernames, badges. Such text ends up in paths (`{user}`,
 * `{project}`, `{instrument}`), logs, mail headers, CSV cells and one-line CLI output, where a
 * NUL, tab or line break would cut or forge a line.
 */
import { z } from 'zod';

export const CONTROL_CHARACTERS = 'must not hold control characters (NUL, tab, line break)';

export function hasControlCharacters(text: string): boolean {
  return /\p{Cc}/u.test(text);
}

/** One line of text: trimmed, at most `max` characters, no control characters. */
export function lineSchema(max: number) {
  return z
    .string()
    .trim()
    .max(max, `must be at most ${max} characters`)
    .refine((text) => !hasControlCharacters(text), CONTROL_CHARACTERS);
}
