/**
 * The one check of a server answer a station reads (the delta, a history page, the push
 * answer, the answers of booking, the upload answers): the answer is parsed whole with its
 * schema (deltaSchema.ts, answerSchema.ts, uploadProtocol.ts) before anything of it is stored or
 * deleted, and one that does not fit is refused with an error that names the answer, what was
 * not done, and each field and rule.
 */
import type { z } from 'zod';
import { formatIssues } from '../util/issues.js';

/** A server answer that does not fit its schema: nothing of it is stored or deleted. */
export class BadAnswerError extends Error {
  /** The message without its problems: "the server's push answer does not parse, ...". */
  readonly summary: string;

  constructor(
    /** What the answer is ("history page"). */
    readonly answer: string,
    readonly issues: string[],
    /** What was not done ("nothing of it taken"). */
    outcome: string,
  ) {
    const summary = `the server's ${answer} does not parse, ${outcome}`;
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    super(`${summary}: ${issues[0]}${more}`);
    this.name = 'BadAnswerError';
    this.summary = summary;
  }
}

/** `data` as `schema` reads it, unknown keys dropped; throws BadAnswerError. */
export function parseAnswer<S extends z.ZodType>(
  schema: S,
  data: unknown,
  answer: string,
  outcome: string,
): z.output<S> {
  const parsed = schema.safeParse(data);
  if (parsed.success) return parsed.data;
  throw new BadAnswerError(answer, formatIssues(parsed.error.issues, '(the answer)'), outcome);
}
