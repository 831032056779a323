/**
 * Rules for text that people and programs give the app as one line: names of people, projects,
 * tools and harvest resources, usernames, badges. Such text ends up in paths (`{user}`,
 * `{project}`, `{instrument}`), logs, mail headers, CSV cells and one-line CLI output, where a
 * NUL, tab or line break would cut or forge a line.
 */
import { z } from 'zod';
import { isWellFormedText, NOT_WELL_FORMED } from './wellFormed.js';

export const CONTROL_CHARACTERS = 'must not hold control characters (NUL, tab, line break)';
/** Line breaks too, to JavaScript, JSON-in-script, many editors and terminals. */
export const LINE_SEPARATORS = 'must not hold line or paragraph separators (U+2028, U+2029)';
export function hasControlCharacters(text: string): boolean {
  return /\p{Cc}/u.test(text);
}

/** What keeps `text` from being one line as lineSchema has it, or null. */
export function lineProblem(text: string): string | null {
  if (!isWellFormedText(text)) return `is ${NOT_WELL_FORMED}`;
  if (hasControlCharacters(text)) return CONTROL_CHARACTERS;
  if (/[\u2028\u2029]/.test(text)) return LINE_SEPARATORS;
  return null;
}

/** `schema` with the one-line rule (lineProblem) added, its problem named. */
export function oneLine<S extends z.ZodType<string>>(schema: S): S {
  return schema.superRefine((text, context) => {
    const problem = lineProblem(text);
    if (problem !== null) context.addIssue({ code: 'custom', message: problem });
  });
}

/**
 * One line of text: trimmed, at most `max` characters, well-formed, no control characters or
 * line or paragraph separators (lineProblem). Bidirectional controls are left to be: names
 * in right-to-left scripts, pasted from a word processor, carry them.
 */
export function lineSchema(max: number) {
  return oneLine(z.string().trim().max(max, `must be at most ${max} characters`));
}

/**
 * An e-mail address: one `@`, no white space, and none of the characters that end or split an
 * address in a mail header (`< > ( ) [ ] , ; : " \`). A value that a header would read as two
 * addresses, or as none, is refused where it is entered (a bundle, the admin page, an account),
 * not found out when mail to it goes to someone else or never goes.
 */
export const EMAIL_PATTERN = /^[^\s@<>()[\],;:"\\]+@[^\s@<>()[\],;:"\\]+$/;
export const EMAIL_RULE = 'must be an e-mail address like a@b.org';

/** A person's e-mail as entered (a bundle, the admin page): one address, or empty for none. */
export const emailSchema = lineSchema(320).refine(
  (e) => e === '' || EMAIL_PATTERN.test(e),
  EMAIL_RULE,
);

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
