// Rule 3: consent words. Anything else is neither, and counts as missing consent.

const AFFIRMATIVE = new Set(['agree', 'yes', 'true', 'affirmative']);
const DECLINED = new Set(['disagree', 'no', 'false', 'negative']);

export type Consent = 'affirmative' | 'declined' | 'unrecognized';

/** Reads a consent answer: the words of rule 3 in any case, around spaces; booleans too. */
export function readConsent(value: string | boolean): Consent {
  if (typeof value === 'boolean') return value ? 'affirmative' : 'declined';
  const word = value.trim().toLowerCase();
  if (AFFIRMATIVE.has(word)) return 'affirmative';
  if (DECLINED.has(word)) return 'declined';
  return 'unrecognized';
}

/**
 * The consent an answer gives: a word or a boolean as it is, and a checkbox's list of one
 * word (`["Agree"]`: data_consent asked as a checkbox, whose answer is the list of the choices
 * ticked) as that word; undefined for anything else (no word, or several, or another type).
 */
export function consentValue(value: unknown): string | boolean | undefined {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (Array.isArray(value) && value.length === 1 && typeof value[0] === 'string') return value[0];
  return undefined;
}
