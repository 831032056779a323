// HTML5 `pattern` semantics: the expression must match the whole value. Browsers compile it
// with the `v` flag since 2023 and with `u` before; many real forms were written for `u` and
// use what `v` refuses (`[A-Za-z0-9_-]+`: an unescaped "-" in a class), so a pattern that does
// not compile with `v` is compiled with `u`, and only one that compiles with neither is invalid.
// Definition checks and answer checks both go through compileHtmlPattern, so they agree. The
// pattern is written by a facility administrator in the question definition, never by the
// person answering.

const supportsUnicodeSets = ((): boolean => {
  try {
    new RegExp('', 'v');
    return true;
  } catch {
    return false;
  }
})();

const PATTERN_FLAGS = supportsUnicodeSets ? ['v', 'u'] : ['u'];

/**
 * `wrapped`: the pattern is invalid on its own but compiles inside `^(?:…)$` (an unbalanced
 * ")" such as `a)|(b`). This module accepted that before browsers' reading was followed; a list
 * saved then still loads (ParseOptions.stored), and the pattern, as in a browser, checks nothing.
 */
export type CompiledPattern =
  { ok: true; regexp: RegExp } | { ok: false; error: string; wrapped: boolean };

const cache = new Map<string, CompiledPattern>();
const CACHE_LIMIT = 500;

/** The expression, or why it does not compile. */
function regExpOrError(source: string, flags: string): RegExp | string {
  try {
    return new RegExp(source, flags);
  } catch (e) {
    return e instanceof Error ? e.message : 'invalid pattern';
  }
}

function compile(pattern: string): CompiledPattern {
  // As a browser does: the pattern is compiled on its own first, and only a valid one is
  // wrapped to match the whole value; wrapped alone, `a)|(b` would become `^(?:a)|(b)$`, which
  // takes any value that starts with "a". The error reported is the last one, from `u`: it
  // names what is wrong even for the older, more lenient reading (`v` says "Invalid character
  // in character class" for "[a-z").
  let error = 'invalid pattern';
  let wrapped = false;
  for (const flags of PATTERN_FLAGS) {
    const alone = regExpOrError(pattern, flags);
    const whole = regExpOrError(`^(?:${pattern})$`, flags);
    if (typeof alone !== 'string' && typeof whole !== 'string') return { ok: true, regexp: whole };
    error = typeof alone === 'string' ? alone : 'invalid pattern';
    wrapped ||= typeof whole !== 'string';
  }
  return { ok: false, error, wrapped };
}

export function compileHtmlPattern(pattern: string): CompiledPattern {
  const cached = cache.get(pattern);
  if (cached) return cached;
  const compiled = compile(pattern);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(pattern, compiled);
  return compiled;
}

/** True when the value matches the whole pattern; an uncompilable pattern matches nothing. */
export function matchesHtmlPattern(pattern: string, value: string): boolean {
  const compiled = compileHtmlPattern(pattern);
  return compiled.ok && compiled.regexp.test(value);
}
