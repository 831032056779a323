// Include/exclude globs for watched folders. Paths are relative to the watched folder and
// '/'-separated.
//
// Patterns compile to a RegExp, but a naive translation (`*` -> `[^/]*`) backtracks
// polynomially in the number of stars: `*a*a*a*a*a*a*b` against 40 characters already takes
// a quarter of a second. Every wildcard except the last one of its run is therefore made
// atomic with the `(?=(x*?y))\N` idiom, which commits to the leftmost match. For glob syntax
// that is exact, not a heuristic: when a `*` (or `**`) follows, the earliest end of the
// fixed-width part before it leaves the most room for everything after. Braces break the
// fixed-width property, so they are expanded into separate alternatives first.

export const DEFAULT_EXCLUDE: readonly string[] = [
  '.*',
  '~$*',
  '*.tmp',
  '*.partial',
  'Thumbs.db',
  '.DS_Store',
];

export interface GlobOptions {
  caseInsensitive?: boolean;
}

/**
 * How a station matches names: without regard to case where its file systems ignore case
 * (Windows, macOS), so `*.tif` takes `SCAN.TIF` as the instrument PC's own search would;
 * exactly on Linux, where `a.tif` and `A.TIF` are two files.
 */
export function platformGlobOptions(platform: string): GlobOptions {
  return { caseInsensitive: platform === 'win32' || platform === 'darwin' };
}

export type CompiledGlob =
  { ok: true; test(relPath: string): boolean } | { ok: false; message: string };

export interface PathFilter {
  include: string[];
  exclude: string[];
}

export interface FilterProblem {
  field: 'include' | 'exclude';
  index: number;
  message: string;
}

export type CompiledFilter =
  | { ok: true; accepts(relPath: string): boolean; skipsDirectory(relDir: string): boolean }
  | { ok: false; problems: FilterProblem[] };

/** Brace expansion is exponential in the number of braces; past this it is surely a mistake. */
const MAX_ALTERNATIVES = 256;

type Token =
  | { kind: 'literal'; char: string }
  | { kind: 'star' }
  | { kind: 'one' }
  | { kind: 'class'; source: string }
  | { kind: 'slash' }
  | { kind: 'braces'; options: Token[][] };

type Flat = Exclude<Token, { kind: 'braces' } | { kind: 'slash' }>;

/** A segment is either `**` or a list of single-segment tokens. */
type Segment = 'globstar' | Flat[];

class GlobError extends Error {}

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|]/;
const CLASS_SPECIAL = /[\\\]^[-]/;

function escapeLiteral(char: string): string {
  return REGEX_SPECIAL.test(char) ? `\\${char}` : char;
}

function escapeInClass(char: string): string {
  return CLASS_SPECIAL.test(char) ? `\\${char}` : char;
}

function charAt(text: string, index: number): string {
  const code = text.codePointAt(index);
  return code === undefined ? '' : String.fromCodePoint(code);
}

function tokenize(pattern: string): Token[] {
  let i = 0;

  function readClass(): Token {
    const start = i;
    i++;
    let negated = false;
    if (pattern[i] === '!' || pattern[i] === '^') {
      negated = true;
      i++;
    }
    let body = '';
    let first = true;
    const readChar = (): string => {
      if (pattern[i] === '\\') {
        if (i + 1 >= pattern.length) {
          throw new GlobError(`trailing backslash at position ${i + 1}`);
        }
        i++;
      }
      const char = charAt(pattern, i);
      i += char.length;
      return char;
    };
    for (;;) {
      if (i >= pattern.length) throw new GlobError(`unclosed "[" at position ${start + 1}`);
      if (pattern[i] === ']' && !first) {
        i++;
        break;
      }
      first = false;
      const rangeStart = i;
      const low = readChar();
      if (pattern[i] === '-' && i + 1 < pattern.length && pattern[i + 1] !== ']') {
        i++;
        const high = readChar();
        if ((low.codePointAt(0) ?? 0) > (high.codePointAt(0) ?? 0)) {
          throw new GlobError(
            `range "${low}-${high}" at position ${rangeStart + 1} runs backwards`,
          );
        }
        body += `${escapeInClass(low)}-${escapeInClass(high)}`;
      } else {
        body += escapeInClass(low);
      }
    }
    // A class must never match the separator, or `[!a]` would let `*`-like tokens cross folders.
    const source = negated ? `[^/${body}]` : `(?!/)[${body}]`;
    return { kind: 'class', source };
  }

  function readSequence(depth: number): Token[] {
    const out: Token[] = [];
    while (i < pattern.length) {
      const char = pattern[i];
      if (depth > 0 && (char === ',' || char === '}')) return out;
      if (char === '\\') {
        if (i + 1 >= pattern.length) throw new GlobError(`trailing backslash at position ${i + 1}`);
        const escaped = charAt(pattern, i + 1);
        // An escaped '/' is still the separator: a name can never contain one.
        out.push(escaped === '/' ? { kind: 'slash' } : { kind: 'literal', char: escaped });
        i += 1 + escaped.length;
      } else if (char === '*') {
        out.push({ kind: 'star' });
        i++;
      } else if (char === '?') {
        out.push({ kind: 'one' });
        i++;
      } else if (char === '/') {
        out.push({ kind: 'slash' });
        i++;
      } else if (char === '[') {
        out.push(readClass());
      } else if (char === '{') {
        const start = i;
        i++;
        const options: Token[][] = [];
        for (;;) {
          options.push(readSequence(depth + 1));
          if (i >= pattern.length) throw new GlobError(`unclosed "{" at position ${start + 1}`);
          const separator = pattern[i];
          i++;
          if (separator === '}') break;
        }
        out.push({ kind: 'braces', options });
      } else {
        const literal = charAt(pattern, i);
        out.push({ kind: 'literal', char: literal });
        i += literal.length;
      }
    }
    return out;
  }

  return readSequence(0);
}

function hasSlash(tokens: Token[]): boolean {
  return tokens.some(
    (token) =>
      token.kind === 'slash' ||
      (token.kind === 'braces' && token.options.some((option) => hasSlash(option))),
  );
}

type Plain = Exclude<Token, { kind: 'braces' }>;

function expand(tokens: Token[]): Plain[][] {
  let results: Plain[][] = [[]];
  for (const token of tokens) {
    if (token.kind !== 'braces') {
      for (const result of results) result.push(token);
      continue;
    }
    const tails: Plain[][] = [];
    for (const option of token.options) {
      tails.push(...expand(option));
      if (tails.length > MAX_ALTERNATIVES) break;
    }
    if (results.length * tails.length > MAX_ALTERNATIVES) {
      throw new GlobError(`braces give more than ${MAX_ALTERNATIVES} alternatives`);
    }
    results = results.flatMap((head) => tails.map((tail) => [...head, ...tail]));
  }
  return results;
}

function toSegments(tokens: Plain[]): Segment[] {
  const segments: Segment[] = [];
  let current: Flat[] = [];
  const finish = (): void => {
    // Empty segments come from a leading '/', '//' or a trailing '/': none names anything.
    if (current.length === 0) return;
    const isGlobstar = current.length === 2 && current.every((token) => token.kind === 'star');
    if (isGlobstar) {
      if (segments.at(-1) !== 'globstar') segments.push('globstar');
    } else {
      segments.push(current);
    }
    current = [];
  };
  for (const token of tokens) {
    if (token.kind === 'slash') finish();
    else current.push(token);
  }
  finish();
  return segments;
}

interface Counter {
  groups: number;
}

function flatSource(token: Flat): string {
  if (token.kind === 'literal') return escapeLiteral(token.char);
  if (token.kind === 'one') return '[^/]';
  if (token.kind === 'class') return token.source;
  return '[^/]*';
}

function segmentSource(tokens: Flat[], counter: Counter): string {
  const chunks: string[] = [''];
  for (const token of tokens) {
    if (token.kind === 'star') {
      if (chunks[chunks.length - 1] !== '' || chunks.length === 1) chunks.push('');
    } else {
      chunks[chunks.length - 1] += flatSource(token);
    }
  }
  if (chunks.length === 1) return chunks[0];
  let source = chunks[0];
  for (const middle of chunks.slice(1, -1)) {
    counter.groups++;
    source += `(?=([^/]*?${middle}))(?:\\${counter.groups})`;
  }
  return `${source}[^/]*${chunks[chunks.length - 1]}`;
}

/** Source matching '/' + path; every segment consumes its leading '/'. */
function alternativeSource(segments: Segment[], counter: Counter): string {
  const runs: Flat[][][] = [[]];
  for (const segment of segments) {
    if (segment === 'globstar') runs.push([]);
    else runs[runs.length - 1].push(segment);
  }
  const runSource = (run: Flat[][]): string =>
    run.map((segment) => `/${segmentSource(segment, counter)}`).join('');
  let source = runSource(runs[0]);
  if (runs.length === 1) return source;
  for (const middle of runs.slice(1, -1)) {
    counter.groups++;
    const group = counter.groups;
    source += `(?=((?:/[^]*?)??${runSource(middle)})(?=/|$))(?:\\${group})`;
  }
  return `${source}(?:/[^]*)?${runSource(runs[runs.length - 1])}`;
}

type Mode = 'basename' | 'any-segment';

function compileRegExp(
  pattern: string,
  unanchored: Mode,
  options: GlobOptions,
  descendants: boolean,
): RegExp {
  if (pattern === '') throw new GlobError('empty pattern');
  const nul = pattern.indexOf('\0');
  if (nul >= 0) throw new GlobError(`NUL character at position ${nul + 1}`);
  const tokens = tokenize(pattern);
  const anchored = hasSlash(tokens);
  const counter: Counter = { groups: 0 };
  const sources: string[] = [];
  for (const alternative of expand(tokens)) {
    let segments = toSegments(alternative);
    if (segments.length === 0) continue;
    if (!anchored) {
      segments =
        unanchored === 'basename'
          ? ['globstar', ...segments]
          : ['globstar', ...segments, 'globstar'];
    } else if (descendants) {
      segments = [...segments, 'globstar'];
    }
    sources.push(alternativeSource(collapseGlobstars(segments), counter));
  }
  if (sources.length === 0) throw new GlobError('pattern names nothing besides "/"');
  return new RegExp(`^(?:${sources.join('|')})$`, options.caseInsensitive ? 'ui' : 'u');
}

function collapseGlobstars(segments: Segment[]): Segment[] {
  return segments.filter(
    (segment, index) => segment !== 'globstar' || segments[index - 1] !== 'globstar',
  );
}

function attempt(
  pattern: string,
  mode: Mode,
  options: GlobOptions,
  descendants: boolean,
): { ok: true; regex: RegExp } | { ok: false; message: string } {
  try {
    return { ok: true, regex: compileRegExp(pattern, mode, options, descendants) };
  } catch (error) {
    if (error instanceof GlobError) return { ok: false, message: error.message };
    // Only a bug here could make the RegExp constructor reject our source; report, not throw.
    return { ok: false, message: `cannot compile pattern: ${String(error)}` };
  }
}

/**
 * A pattern without '/' matches the basename at any depth; with '/' it is anchored at the
 * watched folder's root. `*` and `?` never match '/', and do match a leading dot.
 */
export function compileGlob(pattern: string, options: GlobOptions = {}): CompiledGlob {
  const compiled = attempt(pattern, 'basename', options, false);
  if (!compiled.ok) return compiled;
  const { regex } = compiled;
  return { ok: true, test: (relPath: string) => regex.test(`/${relPath}`) };
}

/**
 * Patterns of a watched folder that compile but can match nothing, which were taken without a
 * word while the instrument harvested nothing: one with a `.` or `..` segment (paths are matched
 * as they lie below the watched folder: `./raw/*.tif` is `raw/*.tif`), and an include ending
 * with `/` and holding no `*` (`raw/` names a folder, as an exclude may, and an include takes
 * files; after a `*` the `/` still takes the files below, as `*` matches the empty name after
 * it). Checked where a folder's patterns are given (an import, the harvest API); stored ones
 * compile as before.
 */
export function unmatchablePatterns(filter: PathFilter): FilterProblem[] {
  const problems: FilterProblem[] = [];
  const look = (field: FilterProblem['field'], pattern: string, index: number): void => {
    if (pattern.split('/').some((segment) => segment === '.' || segment === '..')) {
      const bare = pattern.replace(/^(\.\/)+/, '');
      const fix =
        pattern.startsWith('./') && !bare.split('/').includes('..')
          ? `give ${bare}`
          : 'leave them out';
      problems.push({
        field,
        index,
        message: `paths are matched as they lie below the watched folder, with no . or .. in them (${fix})`,
      });
    } else if (field === 'include' && pattern.endsWith('/') && !pattern.includes('*')) {
      problems.push({
        field,
        index,
        message: `ends with /, so it names folders, and it is matched against files: give ${pattern}** for every file below them`,
      });
    }
  };
  filter.include.forEach((pattern, index) => look('include', pattern, index));
  filter.exclude.forEach((pattern, index) => look('exclude', pattern, index));
  return problems;
}

/**
 * What is wrong with a watched folder's patterns, where they are given: those that do not
 * compile, else those that compile but can match nothing (unmatchablePatterns).
 */
export function patternProblems(filter: PathFilter): FilterProblem[] {
  const compiled = compileFilter(filter);
  return compiled.ok ? unmatchablePatterns(filter) : compiled.problems;
}

/**
 * Empty include means everything. Excludes also apply to every folder on the way: a pattern
 * without '/' excludes a path when any of its segments matches (so `.*` hides everything in
 * hidden folders), and an anchored one when it matches the path or one of its folders.
 */
export function compileFilter(filter: PathFilter, options: GlobOptions = {}): CompiledFilter {
  const problems: FilterProblem[] = [];
  const includes: RegExp[] = [];
  const excludes: RegExp[] = [];
  filter.include.forEach((pattern, index) => {
    const compiled = attempt(pattern, 'basename', options, false);
    if (compiled.ok) includes.push(compiled.regex);
    else problems.push({ field: 'include', index, message: compiled.message });
  });
  filter.exclude.forEach((pattern, index) => {
    const compiled = attempt(pattern, 'any-segment', options, true);
    if (compiled.ok) excludes.push(compiled.regex);
    else problems.push({ field: 'exclude', index, message: compiled.message });
  });
  if (problems.length > 0) return { ok: false, problems };

  const excluded = (path: string): boolean => excludes.some((regex) => regex.test(path));
  return {
    ok: true,
    accepts(relPath: string): boolean {
      const path = `/${relPath}`;
      if (excluded(path)) return false;
      return includes.length === 0 || includes.some((regex) => regex.test(path));
    },
    skipsDirectory(relDir: string): boolean {
      const dir = relDir.replace(/^\/+|\/+$/g, '');
      const path = dir === '' ? '' : `/${dir}`;
      // The probe `dir/` adds an empty last segment. Only `*` or `**` can match an empty
      // segment, and those match any name, so if the probe is excluded every child is too.
      return (path !== '' && excluded(path)) || excluded(`${path}/`);
    },
  };
}
