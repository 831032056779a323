// Small helpers for reading untrusted JSON-like values without throwing.

export type JsonObject = Record<string, unknown>;

export function isPlainObject(value: unknown): value is JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function hasOwn(object: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

/** Own property value, or undefined; never reaches into the prototype chain. */
export function ownValue(object: object, key: string): unknown {
  return hasOwn(object, key) ? (object as JsonObject)[key] : undefined;
}

export function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

export function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** A string answer that a person would call empty. */
export function isBlankString(value: string): boolean {
  return value.trim() === '';
}

/** Reads a JSON text when given one; anything else is returned as it is. */
export function parseJsonText(
  input: unknown,
): { ok: true; value: unknown } | { ok: false; error: string } {
  if (typeof input !== 'string') return { ok: true, value: input };
  try {
    return { ok: true, value: JSON.parse(input) as unknown };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : 'invalid JSON' };
  }
}

/** Quotes a name for messages: "sample_name". */
export function quote(text: string): string {
  return JSON.stringify(text);
}

/** Lists names for messages: "a", "b" and "c". */
export function listInWords(items: readonly string[], conjunction = 'and'): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} ${conjunction} ${items[items.length - 1]}`;
}
