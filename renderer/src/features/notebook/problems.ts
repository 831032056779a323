import { formatPath, validateMetadata } from '../../../../shared/metadata/index.js';
import type { MetadataDoc, MetadataProblem } from '../../../../shared/metadata/index.js';

export interface FieldMessage {
  text: string;
  severity: 'error' | 'warning';
}

/** A problem's message without the path it starts with (the field shows it already). */
export function shortMessage(problem: MetadataProblem): string {
  const prefix = `${formatPath(problem.path)}: `;
  return problem.message.startsWith(prefix)
    ? problem.message.slice(prefix.length)
    : problem.message;
}

/** The document's problems by the field they are about; the rest under ''. */
export function problemsByField(doc: MetadataDoc): Map<string, FieldMessage[]> {
  const found = new Map<string, FieldMessage[]>();
  for (const problem of validateMetadata(doc)) {
    const field =
      problem.path[0] === 'extra_fields' && typeof problem.path[1] === 'string'
        ? problem.path[1]
        : '';
    const list = found.get(field) ?? [];
    list.push({
      text: field ? shortMessage(problem) : problem.message,
      severity: problem.severity,
    });
    found.set(field, list);
  }
  return found;
}
