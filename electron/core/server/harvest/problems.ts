/**
 * The harvest API's validation errors, in the shape FastAPI clients read:
 * `422 {"detail": [{"loc": ["body", "watch", 0, "include", 1], "msg": "...", "type": "..."}]}`,
 * one item per problem, so a client can show each next to its field.
 */
import { z } from 'zod';

export type Loc = (string | number)[];

export interface Problem {
  loc: Loc;
  msg: string;
  type: string;
}

/** Thrown by a resource's checks; the routes answer 422 with every problem. */
export class ValidationProblems extends Error {
  constructor(readonly problems: Problem[]) {
    super(problems.map((p) => `${p.loc.join('.')}: ${p.msg}`).join('; '));
  }
}

/** A missing record: 404 `{"detail": message}`. */
export class NotFound extends Error {}

/** Something still refers to the record, or a rule between records is broken: 409. */
export class Conflict extends Error {}

export function problem(loc: Loc, msg: string, type = 'value_error'): Problem {
  return { loc, msg, type };
}

/**
 * Whether `input` holds a value at `path`. zod leaves the offending value out of its issues
 * (unless asked to report it), so a key that is there with the wrong type and a key that is
 * not there at all both come as `invalid_type`; this tells them apart.
 */
function present(input: unknown, path: PropertyKey[]): boolean {
  let at: unknown = input;
  for (const key of path) {
    if (at === null || typeof at !== 'object' || typeof key === 'symbol') return false;
    if (!Object.prototype.hasOwnProperty.call(at, key)) return false;
    at = (at as Record<string | number, unknown>)[key];
  }
  return at !== undefined;
}

/**
 * zod's issues as problems under `root` ("body" or "query"), for `input` as it came; unknown
 * keys one by one.
 */
export function zodProblems(root: string, error: z.ZodError, input: unknown): Problem[] {
  const problems: Problem[] = [];
  for (const issue of error.issues) {
    const at = [root, ...issue.path.map((p) => (typeof p === 'number' ? p : String(p)))];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        problems.push(problem([...at, key], 'unknown field', 'extra_forbidden'));
      }
    } else if (issue.code !== 'custom' && !present(input, issue.path)) {
      // Left out, whatever the rule it would have broken (a type, one of an enum's values).
      problems.push(problem(at, 'Field required', 'missing'));
    } else {
      problems.push(problem(at, issue.message, errorType(issue)));
    }
  }
  return problems;
}

/**
 * The `type` FastAPI (pydantic 2) gives the same mistake, which its clients may branch on, as
 * the query parameters' problems already say (files.ts: int_parsing, greater_than_equal);
 * zod's own code where pydantic has no like of it.
 */
function errorType(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return TYPE_ERRORS[issue.expected] ?? issue.code;
    case 'too_small':
    case 'too_big': {
      const small = issue.code === 'too_small';
      if (issue.origin === 'string') return small ? 'string_too_short' : 'string_too_long';
      if (issue.origin === 'array' || issue.origin === 'set') {
        return small ? 'too_short' : 'too_long';
      }
      if (issue.origin === 'number' || issue.origin === 'int' || issue.origin === 'bigint') {
        return `${small ? 'greater' : 'less'}_than${issue.inclusive ? '_equal' : ''}`;
      }
      return issue.code;
    }
    case 'invalid_format':
      return issue.format === 'regex'
        ? 'string_pattern_mismatch'
        : issue.format === 'url'
          ? 'url_parsing'
          : 'value_error';
    case 'invalid_value':
      return 'enum';
    case 'not_multiple_of':
      return 'multiple_of';
    default:
      return 'value_error';
  }
}

/** pydantic's type errors, by the type zod expected. */
const TYPE_ERRORS: Partial<Record<string, string>> = {
  string: 'string_type',
  number: 'float_type',
  int: 'int_type',
  bigint: 'int_type',
  boolean: 'bool_type',
  array: 'list_type',
  object: 'dict_type',
  record: 'dict_type',
  null: 'none_required',
};

/**
 * The checks shared with the facility bundle report `path.to[0].field: message`; this turns
 * one into a problem under `root` (`body`), dropping the bundle's own prefix `prefix`.
 */
export function pathProblem(root: string, prefix: string, text: string): Problem {
  const at = text.indexOf(': ');
  const path = at < 0 ? '' : text.slice(0, at);
  const msg = at < 0 ? text : text.slice(at + 2);
  const rest = path.startsWith(prefix) ? path.slice(prefix.length) : path;
  const loc: Loc = [root];
  for (const part of rest.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (part[2] !== undefined) loc.push(Number(part[2]));
    else if (part[1] !== undefined) loc.push(part[1]);
  }
  return problem(loc, msg);
}

/** Parses `input` with `schema`, or throws every problem as a 422. */
export function parseBody<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const result = schema.safeParse(input);
  if (!result.success) throw new ValidationProblems(zodProblems('body', result.error, input));
  return result.data;
}

/** The 422 body's schema, for the docs. */
export const validationErrorSchema = z.object({
  detail: z.array(
    z.object({
      loc: z.array(z.union([z.string(), z.number()])),
      msg: z.string(),
      type: z.string(),
    }),
  ),
});

export const detailSchema = z.object({ detail: z.string() });
