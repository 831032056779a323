// How problems are made and worded: each message starts with the place it is about, written
// the way a person reads the JSON: extra_fields."Sample mass".unit, notebook.extra_fields_groups[1].id.

import type { MetadataProblem, MetadataProblemCode, ProblemPath } from './types.js';
import { quote } from './json.js';

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** extra_fields."Sample mass".unit; field names are always quoted, other keys when needed. */
export function formatPath(path: readonly (string | number)[]): string {
  let out = '';
  path.forEach((segment, index) => {
    if (typeof segment === 'number') {
      out += `[${segment}]`;
      return;
    }
    const isFieldName = index === 1 && path[0] === 'extra_fields';
    const written = !isFieldName && IDENTIFIER.test(segment) ? segment : JSON.stringify(segment);
    out += index === 0 ? written : `.${written}`;
  });
  return out;
}

function make(
  path: ProblemPath,
  code: MetadataProblemCode,
  severity: 'error' | 'warning',
  blocksSaving: boolean,
  text: string,
): MetadataProblem {
  const message = path.length === 0 ? text : `${formatPath(path)}: ${text}`;
  return { path: [...path], code, severity, blocksSaving, message };
}

/** The document cannot be accepted. */
export function structural(
  path: ProblemPath,
  code: MetadataProblemCode,
  text: string,
): MetadataProblem {
  return make(path, code, 'error', true, text);
}

/** A value breaks its field's rule: shown, never blocks saving. */
export function valueError(
  path: ProblemPath,
  code: MetadataProblemCode,
  text: string,
): MetadataProblem {
  return make(path, code, 'error', false, text);
}

/** Worth showing, blocks nothing. */
export function notice(
  path: ProblemPath,
  code: MetadataProblemCode,
  text: string,
): MetadataProblem {
  return make(path, code, 'warning', false, text);
}

/** True when no problem blocks saving. */
export function isAcceptable(problems: readonly MetadataProblem[]): boolean {
  return !problems.some((problem) => problem.blocksSaving);
}

/**
 * "(g, kg)" for messages. An item that would not read back as itself there (empty, spaces at an
 * end, a comma, parenthesis or quote, a line break or other control character) is written as
 * JSON text: a message stays one line, and says which items there are.
 */
export function listInParens(items: readonly string[]): string {
  const plain = (item: string): boolean =>
    item !== '' && item.trim() === item && !/[,()"\\\p{Cc}\u2028\u2029]/u.test(item);
  return `(${items.map((item) => (plain(item) ? item : quote(item))).join(', ')})`;
}
