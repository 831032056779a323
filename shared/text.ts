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

/** The fewest characters a password to the server has. */
export const MIN_PASSWORD_LENGTH = 10;

/**
 * What is wrong with a password to the server, or null: at least MIN_PASSWORD_LENGTH
 * characters as a person counts them (code points: five emoji are five), not only spaces, no
 * control characters (nobody types a NUL; a login form cannot send one back).
 */
export function passwordProblem(password: string): string | null {
  if ([...password].length < MIN_PASSWORD_LENGTH) {
    return `must be at least ${MIN_PASSWORD_LENGTH} characters`;
  }
  if (password.trim() === '') return 'must not be only spaces';
  if (hasControlCharacters(password)) return CONTROL_CHARACTERS;
  return null;
}
