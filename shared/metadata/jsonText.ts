// A small JSON scanner for code mode: it accepts exactly the grammar of JSON.parse (RFC 8259)
// and records where each value and each object key starts, so a problem's path can be shown
// at its line. It also finds keys written twice (JSON.parse silently keeps the last one).
// Iterative, so deeply nested text cannot overflow the stack.

import type { ProblemPath } from './types.js';

export interface JsonLocation {
  /** Offset of the value's first character. */
  start: number;
  /** Offset of the key's opening quote, for a value inside an object. */
  keyStart?: number;
  /** Members of an object; a key written twice maps to its last occurrence, as in JSON.parse. */
  members?: Map<string, JsonLocation>;
  items?: JsonLocation[];
}

export interface DuplicateKey {
  path: ProblemPath;
  keyStart: number;
}

/** A whole number written with more digits than a JSON number (a double) holds exactly. */
export interface InexactNumber {
  path: ProblemPath;
  start: number;
  literal: string;
}

export type ScanResult =
  | { ok: true; root: JsonLocation; duplicates: DuplicateKey[]; inexact: InexactNumber[] }
  | { ok: false; offset: number; message: string };

class SyntaxProblem extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

interface Frame {
  location: JsonLocation;
  /** The container holding this one, and this one's key or index in it. */
  parent: Frame | undefined;
  segment: string | number;
  /** The key whose value comes next (objects only). */
  key?: { name: string; start: number };
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERALS = ['true', 'false', 'null'];

class Scanner {
  pos = 0;
  readonly duplicates: DuplicateKey[] = [];
  readonly inexact: InexactNumber[] = [];

  constructor(private readonly text: string) {}

  fail(message: string, offset = this.pos): never {
    throw new SyntaxProblem(offset, message);
  }

  skipSpace(): void {
    const { text } = this;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return;
      this.pos++;
    }
  }

  /** Reads a string literal at pos and returns its decoded text. */
  string(): string {
    const { text } = this;
    const start = this.pos;
    let i = start + 1;
    for (;;) {
      if (i >= text.length) this.fail('this text is not closed with a double quote', start);
      const c = text.charCodeAt(i);
      if (c === 0x22) break;
      if (c < 0x20) this.fail('a line break or control character inside text must be escaped', i);
      if (c === 0x5c) {
        const next = text[i + 1] ?? '';
        if ('"\\/bfnrt'.includes(next) && next !== '') i += 2;
        else if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else this.fail('invalid escape sequence in text', i);
      } else {
        i++;
      }
    }
    this.pos = i + 1;
    return JSON.parse(text.slice(start, this.pos)) as string;
  }

  /** Skips one number, literal or string at pos (not an object or list); a number's text. */
  scalar(): string | null {
    const { text } = this;
    const c = text[this.pos] ?? '';
    if (c === '"') {
      this.string();
      return null;
    }
    if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = this.pos;
      const match = NUMBER.exec(text);
      if (!match) this.fail('invalid number');
      this.pos += match[0].length;
      return match[0];
    }
    const literal = LITERALS.find((word) => text.startsWith(word, this.pos));
    if (literal === undefined) {
      this.fail(
        c === ''
          ? 'the text ends where a value was expected'
          : `unexpected ${JSON.stringify(c)}; a value was expected`,
      );
    }
    this.pos += literal.length;
    return null;
  }

  /** Reads `"key" :` into frame.key. */
  key(frame: Frame): void {
    this.skipSpace();
    if (this.text[this.pos] !== '"') this.fail('a property name in double quotes was expected');
    const start = this.pos;
    const name = this.string();
    this.skipSpace();
    if (this.text[this.pos] !== ':') this.fail(`":" was expected after the property name`);
    this.pos++;
    frame.key = { name, start };
  }

  /** Hooks a new value's location under its parent; returns its key or index there. */
  attach(location: JsonLocation, parent: Frame | undefined): string | number {
    if (!parent) return '';
    if (parent.location.members && parent.key) {
      const { name, start } = parent.key;
      location.keyStart = start;
      if (parent.location.members.has(name)) {
        this.duplicates.push({ path: [...pathOf(parent), name], keyStart: start });
      }
      parent.location.members.set(name, location);
      return name;
    }
    const items = parent.location.items ?? [];
    items.push(location);
    return items.length - 1;
  }

  scan(): JsonLocation {
    const { text } = this;
    const stack: Frame[] = [];
    const root: JsonLocation = { start: 0 };
    for (;;) {
      this.skipSpace();
      const parent = stack[stack.length - 1];
      if (!parent) root.start = this.pos;
      const location: JsonLocation = parent ? { start: this.pos } : root;
      const segment = this.attach(location, parent);
      const c = text[this.pos];
      if (c === '{' || c === '[') {
        this.pos++;
        this.skipSpace();
        if (c === '{') location.members = new Map();
        else location.items = [];
        const frame: Frame = { location, parent, segment };
        if (text[this.pos] === (c === '{' ? '}' : ']')) {
          this.pos++;
        } else {
          stack.push(frame);
          if (c === '{') this.key(frame);
          continue;
        }
      } else {
        const number = this.scalar();
        if (number !== null && !exact(number)) {
          const path = parent ? [...pathOf(parent), segment] : [];
          this.inexact.push({ path, start: location.start, literal: number });
        }
      }
      // A value ended: close every container that ends here.
      for (;;) {
        this.skipSpace();
        const top = stack[stack.length - 1];
        if (!top) {
          if (this.pos < text.length) this.fail('unexpected text after the end of the JSON value');
          return root;
        }
        const isObject = top.location.members !== undefined;
        const next = text[this.pos];
        if (next === ',') {
          this.pos++;
          if (isObject) this.key(top);
          break;
        }
        if (next === (isObject ? '}' : ']')) {
          this.pos++;
          stack.pop();
          continue;
        }
        this.fail(
          next === undefined
            ? `the text ends before the closing ${isObject ? '}' : ']'}`
            : `"," or "${isObject ? '}' : ']'}" was expected`,
        );
      }
    }
  }
}

/**
 * Whether JSON.parse reads a number literal as exactly the number written: a whole number
 * past 2^53 loses its last digits (12345678901234567890 reads as 12345678901234567000). A
 * fraction is read to the nearest double, as anyone writing one expects; one too large to
 * hold at all is reported by the reader.
 */
function exact(literal: string): boolean {
  if (!/^-?\d+$/.test(literal)) return true;
  const value = Number(literal);
  // Also exact: a literal as the number prints itself (12345678901234567000, what
  // 12345678901234567890 reads as), or a check of what `metadata convert` wrote would say it
  // reads as itself.
  return (
    !Number.isFinite(value) ||
    Number.isSafeInteger(value) ||
    BigInt(literal) === BigInt(value) ||
    String(value) === literal
  );
}

/** The path of a container, walked up from its frame (only needed for the rare duplicate). */
function pathOf(frame: Frame): ProblemPath {
  const path: ProblemPath = [];
  for (let at: Frame | undefined = frame; at?.parent; at = at.parent) path.unshift(at.segment);
  return path;
}

/** Scans JSON text; the same texts are accepted as by JSON.parse. */
export function scanJson(text: string): ScanResult {
  const scanner = new Scanner(text);
  try {
    const root = scanner.scan();
    return { ok: true, root, duplicates: scanner.duplicates, inexact: scanner.inexact };
  } catch (error) {
    if (error instanceof SyntaxProblem) {
      return { ok: false, offset: error.offset, message: error.message };
    }
    return { ok: false, offset: 0, message: 'the text could not be read as JSON' };
  }
}

/**
 * Where a path points: the key of its deepest member present in the text (or the value, for a
 * list item or the root). A path that goes further than the text points at its last present part.
 */
export function locatePath(root: JsonLocation, path: ProblemPath): number {
  let node = root;
  for (const segment of path) {
    const next = typeof segment === 'number' ? node.items?.[segment] : node.members?.get(segment);
    if (!next) break;
    node = next;
  }
  return node.keyStart ?? node.start;
}

/** Finds the 1-based line and column of offsets in `text`; \n, \r\n and \r end a line. */
export function lineColumns(text: string): (offset: number) => { line: number; column: number } {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a || (c === 0x0d && text.charCodeAt(i + 1) !== 0x0a)) starts.push(i + 1);
  }
  return (offset) => {
    const at = Math.min(Math.max(offset, 0), text.length);
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((starts[middle] ?? 0) <= at) low = middle;
      else high = middle - 1;
    }
    return { line: low + 1, column: at - (starts[low] ?? 0) + 1 };
  };
}
