import type { Diagnostic } from '@codemirror/lint';
import type { Text } from '@codemirror/state';
import type { LocatedProblem } from '../../../../shared/metadata/index.js';

/**
 * A problem found by parseMetadataText as a CodeMirror diagnostic at its line and column
 * (both 1-based, columns in UTF-16 units as CodeMirror counts them), underlining the rest of
 * the line from there.
 */
export function toDiagnostic(doc: Text, problem: LocatedProblem): Diagnostic {
  const lineNumber = Math.min(Math.max(problem.line, 1), doc.lines);
  const line = doc.line(lineNumber);
  const from = Math.min(line.from + Math.max(problem.column - 1, 0), line.to);
  const to = from < line.to ? line.to : Math.min(from + 1, doc.length);
  return {
    from,
    to: Math.max(to, from),
    severity: problem.severity === 'error' ? 'error' : 'warning',
    message: problem.message,
    source: problem.code,
  };
}
