// Reading untrusted JSON-like values without throwing and without touching prototypes: field
// names and unknown keys are arbitrary strings ("__proto__", "constructor" included).

import type { JsonEntry, JsonValue } from './types.js';

export type JsonObject = Record<string, unknown>;

/** Objects nested deeper than this are refused rather than walked. */
export const MAX_DEPTH = 200;

/**
 * Whether `value` holds objects or lists nested more than `limit` levels deep. Without
 * recursion: JSON.parse reads deeper than a recursive walk (or JSON.stringify) could.
 */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > limit) return true;
    for (const item of Object.values(next.value)) stack.push({ value: item, depth });
  }
  return false;
}

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

/** Sets an own enumerable property, also for the key "__proto__". */
export function setOwn(object: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(object, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** A finite number with -0 read as 0 (JSON cannot tell them apart). */
export function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

export function plusZero(value: number): number {
  return value === 0 ? 0 : value;
}

export class TooDeep extends Error {
  constructor(readonly path: (string | number)[]) {
    super('nested too deeply');
  }
}

/**
 * Copies a value with JSON's meaning (what JSON.stringify then JSON.parse would give back):
 * non-finite numbers become null, undefined and functions disappear from objects and become
 * null in lists, -0 becomes 0, objects other than plain ones are left out. Throws TooDeep
 * past MAX_DEPTH levels.
 */
export function copyJson(
  value: unknown,
  path: (string | number)[] = [],
  notFinite?: (path: (string | number)[]) => void,
): JsonValue | undefined {
  return copyAt(value, [...path], notFinite);
}

/**
 * `path` is one shared stack, so a copy costs no allocation per level. `notFinite` hears of
 * each number that becomes null (a literal such as 1e400, which JSON.parse reads as Infinity).
 */
function copyAt(
  value: unknown,
  path: (string | number)[],
  notFinite?: (path: (string | number)[]) => void,
): JsonValue | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return plusZero(value);
    notFinite?.([...path]);
    return null;
  }
  if (path.length >= MAX_DEPTH && typeof value === 'object') throw new TooDeep([...path]);
  if (Array.isArray(value)) {
    const items = value as unknown[];
    const out: JsonValue[] = [];
    for (let index = 0; index < items.length; index++) {
      path.push(index);
      out.push(copyAt(items[index], path, notFinite) ?? null);
      path.pop();
    }
    return out;
  }
  if (isPlainObject(value)) {
    const out: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(value)) {
      path.push(key);
      const item = copyAt(value[key], path, notFinite);
      path.pop();
      if (item !== undefined) setOwn(out, key, item);
    }
    return out;
  }
  return undefined;
}

/**
 * The entries of `object` whose keys are not in `known`, copied as JSON; `notFinite` hears of
 * a number in them that JSON cannot hold (copyJson).
 */
export function unknownEntries(
  object: JsonObject,
  known: readonly string[],
  path: (string | number)[],
  notFinite?: (path: (string | number)[]) => void,
): JsonEntry[] {
  const entries: JsonEntry[] = [];
  for (const key of Object.keys(object)) {
    if (known.includes(key)) continue;
    const item = copyJson(object[key], [...path, key], notFinite);
    if (item !== undefined) entries.push([key, item]);
  }
  return entries;
}

/** A deep copy of JSON data already held by a document. */
export function cloneJson<T extends JsonValue>(value: T): T {
  return copyJson(value) as T;
}

export function cloneEntries(entries: readonly JsonEntry[]): JsonEntry[] {
  return entries.map(([key, value]) => [key, cloneJson(value)]);
}

/**
 * Quotes a name or value for messages: "Sample mass". On one line: JSON.stringify leaves the
 * line and paragraph separators U+2028 and U+2029 as they are, line breaks to a terminal.
 */
export function quote(text: string): string {
  return JSON.stringify(text).replace(
    /[\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16)}`,
  );
}

export function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'text';
  if (typeof value === 'number') return Number.isFinite(value) ? 'a number' : String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return typeof value;
}

/** A value as it appears in a message: text quoted, lists shown as JSON. */
export function showValue(value: unknown): string {
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  try {
    return JSON.stringify(value) ?? describeJsonType(value);
  } catch {
    return describeJsonType(value);
  }
}
