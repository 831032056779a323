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

export interface DocumentProblems {
  /** By the name of the field they are about (any name, "" included), without its path. */
  fields: Map<string, FieldMessage[]>;
  /** About no field, in full. */
  general: FieldMessage[];
}

/** The document's problems by the field they are about, and the others. */
export function problemsByField(doc: MetadataDoc): DocumentProblems {
  const fields = new Map<string, FieldMessage[]>();
  const general: FieldMessage[] = [];
  for (const problem of validateMetadata(doc)) {
    const field =
      problem.path[0] === 'extra_fields' && typeof problem.path[1] === 'string'
        ? problem.path[1]
        : null;
    if (field === null) {
      general.push({ text: problem.message, severity: problem.severity });
      continue;
    }
    const list = fields.get(field) ?? [];
    list.push({ text: shortMessage(problem), severity: problem.severity });
    fields.set(field, list);
  }
  return { fields, general };
}
