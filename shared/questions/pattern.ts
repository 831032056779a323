// HTML5 `pattern` semantics: the expression must match the whole value, and browsers compile
// it with the `v` flag (older ones with `u`). The pattern is written by a facility
// administrator in the question definition, never by the person answering.

const supportsUnicodeSets = ((): boolean => {
  try {
    new RegExp('', 'v');
    return true;
  } catch {
    return false;
  }
})();

const PATTERN_FLAGS = supportsUnicodeSets ? 'v' : 'u';

export type CompiledPattern = { ok: true; regexp: RegExp } | { ok: false; error: string };

const cache = new Map<string, CompiledPattern>();
const CACHE_LIMIT = 500;

export function compileHtmlPattern(pattern: string): CompiledPattern {
  const cached = cache.get(pattern);
  if (cached) return cached;
  let compiled: CompiledPattern;
  try {
    compiled = { ok: true, regexp: new RegExp(`^(?:${pattern})$`, PATTERN_FLAGS) };
  } catch (error) {
    compiled = { ok: false, error: error instanceof Error ? error.message : 'invalid pattern' };
  }
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(pattern, compiled);
  return compiled;
}

/** True when the value matches the whole pattern; an uncompilable pattern matches nothing. */
export function matchesHtmlPattern(pattern: string, value: string): boolean {
  const compiled = compileHtmlPattern(pattern);
  return compiled.ok && compiled.regexp.test(value);
}
