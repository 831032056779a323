/**
 * The plumbing every harvest API route shares, so that each route module holds only its routes:
 * the error bodies its docs name, how a thrown problem becomes one, path ids, the trailing-slash
 * redirect, and the registrar that adds a route and its OpenAPI doc together (in one order, the
 * order of the /docs document).
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
} from 'fastify';
import { z } from 'zod';
import type { ApiDocs, OperationDoc } from '../openapi/registry.js';
import {
  Conflict,
  NotFound,
  ValidationProblems,
  detailSchema,
  problem,
  validationErrorSchema,
} from './problems.js';

export const TAG = 'Harvest management';
export const RECORDS_TAG = 'Harvest records';

export function envelopeOf(item: z.ZodType): z.ZodType {
  return z.object({
    items: z.array(item),
    total: z.number().int(),
    page: z.number().int(),
    size: z.number().int(),
  });
}

/** Path and query numbers are documented as what they must be; the handlers read the text. */
export const idParams = z.object({ id: z.number().int().describe('the record id') });

/** The paging parameters of every list, as pagingOf checks them. */
export const pageParams = {
  page: z.number().int().min(1).optional().describe('page number, from 1 (default 1)'),
  size: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .optional()
    .describe('items per page, 1 to 1000 (default 50)'),
};

export const unauthorized = {
  description: 'No credentials, or credentials that name no active account',
  schema: detailSchema,
  example: { detail: 'Authentication credentials were not provided.' },
};
export const forbidden = {
  description: 'The account is not an admin',
  schema: detailSchema,
  example: { detail: 'You do not have permission to perform this action.' },
};
export const invalid = (loc: (string | number)[], msg: string) => ({
  description: 'A field breaks a rule: every problem, each with where it is',
  schema: validationErrorSchema,
  example: { detail: [{ loc, msg, type: 'value_error' }] },
});
/** A path id that is not a whole number (idOf). */
export const badId = (name = 'id') => ({
  description: `The ${name} in the path is not a whole number`,
  schema: validationErrorSchema,
  example: {
    detail: [{ loc: ['path', name], msg: 'must be a whole number', type: 'int_parsing' }],
  },
});
export const notFound = (label: string) => ({
  description: `No ${label} with that id (or not one this user may see)`,
  schema: detailSchema,
  example: { detail: `no ${label} with id 999` },
});

/**
 * A harvest API path asked for with a trailing slash. The API (FastAPI in spec 002) serves its
 * paths without one, and Starlette's redirect_slashes sends such a request on to the path
 * without it (307, method and body kept, query kept); without this, `/api/instruments/` met
 * the route of `/api/instruments/{id}` and answered that `id` must be a whole number.
 */
export const HARVEST_WITH_SLASH =
  /^\/api\/(instruments|storage-locations|service-accounts|schedules|hooks|files|transfers)(\/-?\d+(\/access(\/-?\d+)?|\/trigger)?)?\/$/;

/** The 307 to `url` without its trailing slash, when HARVEST_WITH_SLASH names it; else null. */
export function withoutSlash(reply: FastifyReply, url: string): FastifyReply | null {
  const at = url.indexOf('?');
  const path = at < 0 ? url : url.slice(0, at);
  if (!HARVEST_WITH_SLASH.test(path)) return null;
  return reply.redirect(`${path.slice(0, -1)}${at < 0 ? '' : url.slice(at)}`, 307);
}

/** Sends what a handler threw as the API's error bodies; anything else goes on to fastify. */
function sendError(reply: FastifyReply, error: unknown): FastifyReply {
  if (error instanceof ValidationProblems) {
    return reply.code(422).send({ detail: error.problems });
  }
  if (error instanceof NotFound) return reply.code(404).send({ detail: error.message });
  if (error instanceof Conflict) return reply.code(409).send({ detail: error.message });
  throw error;
}

/**
 * A whole number written in decimal digits, of any length (FastAPI's `int` has no bound), or
 * null. One past what a double holds exactly is held at ±Number.MAX_SAFE_INTEGER: no record has
 * such an id, no page is that far on, and a page size that large is named for its range.
 */
export function wholeNumber(text: string): number | null {
  if (!/^-?\d+$/.test(text)) return null;
  const value = Number(text);
  if (Number.isSafeInteger(value)) return value === 0 ? 0 : value;
  return value < 0 ? -Number.MAX_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
}

/** A path id; a negative one is a whole number too (FastAPI's `id: int`), and finds nothing: 404. */
export function idOf(request: FastifyRequest, name = 'id'): number {
  const id = wholeNumber((request.params as Record<string, string>)[name] ?? '');
  if (id === null) {
    throw new ValidationProblems([
      problem(['path', name], 'must be a whole number', 'int_parsing'),
    ]);
  }
  return id;
}

/**
 * What the route modules get instead of `app`: a route and its doc go in together, so the docs
 * name every route, in the order the routes were added.
 */
export type Route = (
  doc: OperationDoc,
  guard: onRequestAsyncHookHandler,
  handler: (request: FastifyRequest, reply: FastifyReply) => unknown,
) => void;

export function routeRegistrar(app: FastifyInstance, docs: ApiDocs): Route {
  return (doc, guard, handler) => {
    docs.add(doc);
    const url = doc.path.replace(/\{(\w+)\}/g, ':$1');
    app.route({
      method: doc.method,
      url,
      // The slash first, before credentials, as for the paths no route matches (app.ts).
      onRequest: [async (request, reply) => withoutSlash(reply, request.url) ?? undefined, guard],
      handler: (request, reply) => {
        try {
          return handler(request, reply);
        } catch (error) {
          return sendError(reply, error);
        }
      },
    });
  };
}
