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
