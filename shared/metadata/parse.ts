// parseMetadata: from untrusted input (a value, or JSON text) to a checked, normalized
// MetadataDoc and the list of its problems. Never throws.
//
// Why two outcomes: a structural problem means the JSON is not a document this module can hold
// (ok: false; the editor keeps the text and nothing is saved). Problems of values (a bad
// e-mail, a unit not in units...) and notices (an empty required field) leave ok: true, and
// the document can be saved with them: the notebook service saves such entries too, and
// required is a visual mark only (spec 001).

import { lineColumns, locatePath, scanJson } from './jsonText.js';
import { isAcceptable, notice, structural } from './problems.js';
import { readMetadata } from './read.js';
import type {
  LocatedProblem,
  MetadataProblem,
  ParseMetadataResult,
  ParseOptions,
} from './types.js';
import { validateMetadata } from './validate.js';

function fromValue(value: unknown, options: ParseOptions): ParseMetadataResult {
  const read = readMetadata(value);
  if (!read.doc) return { ok: false, problems: read.problems };
  let checks = validateMetadata(read.doc, {
    builder: options.builder === true,
    notebookKey: read.notebookKey,
  });
  // Without a readable notebook object the groups are unknown: its own problem says so.
  if (!read.notebookRead) checks = checks.filter((problem) => problem.code !== 'unknown_group');
  const problems = [...read.problems, ...checks];
  return isAcceptable(problems) ? { ok: true, doc: read.doc, problems } : { ok: false, problems };
}

function unreadable(): MetadataProblem {
  return structural([], 'not_an_object', 'The metadata could not be read.');
}

/**
 * Checks a metadata document (a value, or JSON text: then problems carry line and column)
 * and returns it normalized, with every problem found; see read.ts for the normalizations.
 * With `{ builder: true }` the builder's rules apply too, as blocking problems.
 */
export function parseMetadata(input: unknown, options: ParseOptions = {}): ParseMetadataResult {
  if (typeof input === 'string') return parseMetadataText(input, options);
  try {
    return fromValue(input, options);
  } catch {
    return { ok: false, problems: [unreadable()] };
  }
}

/**
 * Code mode: parses JSON text. Each problem has the 1-based line and column of the place it
 * is about (the key of the property, or the syntax error). Never throws.
 */
export function parseMetadataText(
  source: string,
  options: ParseOptions = {},
): ParseMetadataResult<LocatedProblem> {
  // A byte order mark, as Windows editors write one at the start: read as the space it takes,
  // so every line and column stays where the text has it.
  const text = source.replace(/^\uFEFF/, ' ');
  try {
    const at = lineColumns(text);
    const scan = scanJson(text);
    if (!scan.ok) {
      const place = at(scan.offset);
      const problem = structural(
        [],
        'invalid_json',
        `The metadata is not valid JSON (line ${place.line}, column ${place.column}): ${scan.message}`,
      );
      return { ok: false, problems: [{ ...problem, ...place }] };
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      const problem = structural(
        [],
        'invalid_json',
        `The metadata is not valid JSON: ${error instanceof Error ? error.message : 'unreadable'}`,
      );
      return { ok: false, problems: [{ ...problem, line: 1, column: 1 }] };
    }
    const result = fromValue(value, options);
    const located: LocatedProblem[] = [
      ...scan.duplicates.map((duplicate) => ({
        ...notice(
          duplicate.path,
          'duplicate_key',
          'is written more than once; the last one is used',
        ),
        ...at(duplicate.keyStart),
      })),
      ...scan.inexact.map((number) => ({
        ...notice(
          number.path,
          'inexact_number',
          `${number.literal} has more digits than a number holds: it reads as ` +
            `${String(Number(number.literal))}; write it as text ("${number.literal}") to keep every digit`,
        ),
        ...at(number.start),
      })),
      ...result.problems.map((problem) => ({
        ...problem,
        ...at(locatePath(scan.root, problem.path)),
      })),
    ].sort((a, b) => a.line - b.line || a.column - b.column);
    return result.ok ? { ...result, problems: located } : { ok: false, problems: located };
  } catch {
    return { ok: false, problems: [{ ...unreadable(), line: 1, column: 1 }] };
  }
}
