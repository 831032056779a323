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
  return valueAt(input, path) !== undefined;
}

/** The value `input` holds at `path`, or undefined. */
function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let at: unknown = input;
  for (const key of path) {
    if (at === null || typeof at !== 'object' || typeof key === 'symbol') return undefined;
    if (!Object.prototype.hasOwnProperty.call(at, key)) return undefined;
    at = (at as Record<string | number, unknown>)[key];
  }
  return at;
}

/** The wrappers whose inner schema decides a value's type. */
const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch']);

/**
 * The schema of the value at `path` in `schema`, through objects, arrays and the wrappers
 * (optional, nullable, default ...), or undefined where it cannot tell.
 */
function schemaAt(schema: z.core.$ZodType | undefined, path: PropertyKey[]): unknown {
  const unwrap = (at: z.core.$ZodType | undefined): z.core.$ZodType | undefined => {
    let inner = at;
    while (inner && WRAPPERS.has(inner._zod.def.type)) {
      inner = (inner._zod.def as { innerType?: z.core.$ZodType }).innerType;
    }
    return inner;
  };
  let at = unwrap(schema);
  for (const key of path) {
    const def = at?._zod.def as
      | { type: string; shape?: Record<string, z.core.$ZodType>; element?: z.core.$ZodType }
      | undefined;
    if (def?.type === 'object' && typeof key === 'string') at = unwrap(def.shape?.[key]);
    else if (def?.type === 'array' && typeof key === 'number') at = unwrap(def.element);
    else return undefined;
  }
  return at;
}

/** Whether `schema` (from schemaAt) takes whole numbers only. */
function wholeNumbers(schema: unknown): boolean {
  return schema instanceof z.ZodNumber && schema.isInt;
}

/**
 * zod's issues as problems under `root` ("body" or "query"), for `input` as it came; unknown
 * keys one by one. With the `schema` that gave them, a wrong type where a whole number belongs
 * has the type names pydantic gives an int field rather than a float one.
 */
export function zodProblems(
  root: string,
  error: z.ZodError,
  input: unknown,
  schema?: z.ZodType,
): Problem[] {
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
      problems.push(problem(at, issue.message, errorType(issue, schema, input)));
    }
  }
  return problems;
}

/**
 * The `type` FastAPI (pydantic 2) gives the same mistake, which its clients may branch on, as
 * the query parameters' problems already say (files.ts: int_parsing, greater_than_equal);
 * zod's own code where pydantic has no like of it.
 */
function errorType(issue: z.core.$ZodIssue, schema: z.ZodType | undefined, input: unknown): string {
  switch (issue.code) {
    case 'invalid_type': {
      // A number with a fraction where a whole one belongs.
      if (issue.expected === 'int') return 'int_from_float';
      if (issue.expected === 'number') {
        const text = typeof valueAt(input, issue.path) === 'string';
        if (wholeNumbers(schemaAt(schema, issue.path))) return text ? 'int_parsing' : 'int_type';
        return text ? 'float_parsing' : 'float_type';
      }
      return TYPE_ERRORS[issue.expected] ?? issue.code;
    }
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

/** pydantic's type errors, by the type zod expected (numbers: errorType). */
const TYPE_ERRORS: Partial<Record<string, string>> = {
  string: 'string_type',
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
  // As FastAPI answers for a body model: none sent is missing, one not an object is refused
  // whole, before any field is looked at.
  if (input === undefined) {
    throw new ValidationProblems([problem(['body'], 'Field required', 'missing')]);
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new ValidationProblems([problem(['body'], 'must be a JSON object', 'model_type')]);
  }
  const result = schema.safeParse(input);
  if (!result.success) {
    throw new ValidationProblems(zodProblems('body', result.error, input, schema));
  }
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
