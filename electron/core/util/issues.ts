/**
 * Validation issues (zod) as the one-line problems both carriers answer with: each names its
 * place in the input and the rule it breaks.
 */
import type { z } from 'zod';

/**
 * True when `path` names a key its object in `input` lacks (or holds undefined): zod's own
 * message for such a key ("Invalid input", "expected nonoptional, received undefined") does
 * not say that it is missing. A path through something that is not an object or list is not.
 */
function isMissingAt(input: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return false;
  let container: unknown = input;
  for (const key of path.slice(0, -1)) {
    if (typeof container !== 'object' || container === null) return false;
    container = (container as Record<PropertyKey, unknown>)[key];
  }
  if (typeof container !== 'object' || container === null) return false;
  const last = path[path.length - 1];
  return (
    !Object.hasOwn(container, last) ||
    (container as Record<PropertyKey, unknown>)[last] === undefined
  );
}

/**
 * One line per issue, naming its place; a key left out of `input` (when given) is said to be
 * required, whatever zod's message for it. The place is the path below `root` ("tools[0].name"),
 * or `root` for the whole; with `named`, the path is written after `root` ("usage event.tool",
 * "reservations[1].end").
 */
export function formatIssues(
  issues: z.core.$ZodIssue[],
  root = '(bundle)',
  input?: unknown,
  named = false,
): string[] {
  return issues.map((issue) => {
    const path = issue.path
      .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
      .join('');
    const where = named ? `${root}${path}` : path.replace(/^\./, '') || root;
    if (issue.code === 'unrecognized_keys') {
      return `${where}: unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
    }
    if (input !== undefined && isMissingAt(input, issue.path)) return `${where}: is required`;
    return `${where}: ${issue.message}`;
  });
}
