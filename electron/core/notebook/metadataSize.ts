/**
 * How large a notebook metadata document may be. The station's saves (store.ts) refuse one past
 * these limits, and `labstation metadata check` and `convert` say so of a file, so that a
 * document the CLI calls ok is one the station takes.
 */

/**
 * A metadata document, as JSON, at most this long: an entry (with a main text of up to a
 * million characters) must fit in one push to the server (8 MiB).
 */
export const MAX_METADATA_CHARS = 1_000_000;

/**
 * JSON text may be laid out (indented, a line per property) to several times the length of
 * the document it holds, which is what MAX_METADATA_CHARS bounds (as stored). The text itself
 * is bounded only so that no larger one is read at all.
 */
export const MAX_METADATA_TEXT_CHARS = 4 * MAX_METADATA_CHARS;

const count = (n: number): string => n.toLocaleString('en-US');

/** Why JSON text of a document is too long to be read, or null. */
export function textTooLong(text: string): string | null {
  // Measured as it is: stringified again, every quote and line break counted twice.
  if (text.length <= MAX_METADATA_TEXT_CHARS) return null;
  return `at most ${count(MAX_METADATA_TEXT_CHARS)} characters of JSON text (this has ${count(text.length)})`;
}

/**
 * The length of `input` as JSON text; 0 when it is nested too deep for JSON.stringify's stack
 * (some thousands of levels, a body of a few dozen KB): parseMetadata then refuses it, naming
 * where it passes MAX_DEPTH.
 */
function jsonLength(input: unknown): number {
  try {
    return JSON.stringify(input)?.length ?? 0;
  } catch (error) {
    if (error instanceof RangeError) return 0;
    throw error;
  }
}

/** Why a document given as a value (not text) is too long, or null. */
export function valueTooLong(input: unknown): string | null {
  const size = jsonLength(input);
  if (size <= MAX_METADATA_CHARS) return null;
  return `at most ${count(MAX_METADATA_CHARS)} characters of JSON (this has ${count(size)})`;
}

/**
 * Why a document is too long as stored (toNotebook's JSON, which writes out what the input may
 * leave implicit, each field's type), or null: a copy, a resend or the server would refuse
 * what was stored past it.
 */
export function storedTooLong(storedJson: string): string | null {
  if (storedJson.length <= MAX_METADATA_CHARS) return null;
  return (
    `at most ${count(MAX_METADATA_CHARS)} characters of JSON as stored, ` +
    `with each field's type written out (this comes to ${count(storedJson.length)})`
  );
}
