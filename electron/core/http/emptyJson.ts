/**
 * A request that says `Content-Type: application/json` and sends no body at all (curl with a
 * shared header list, clients that set the header on every call) is read as having no body,
 * as FastAPI and Django read it, instead of Fastify's 400 "Body cannot be empty". A route that
 * needs a body still says which is missing; a body that is there is parsed by Fastify's own
 * JSON parser, with its guard against `__proto__` and `constructor` keys.
 *
 * `keepProtoKeys` reads the body with JSON.parse itself instead, which makes such keys plain
 * own keys and never touches a prototype: for an app whose every route checks its body with
 * a zod schema (zod drops a `__proto__` key from the objects it builds) and passes free-form
 * documents (notebook metadata, whose field names are free) to readers that keep own keys.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Reads a body's text as JSON: none for no text at all (a route that needs one says so). */
export type JsonTextReader = (
  request: FastifyRequest,
  text: string,
  done: (error: Error | null, body?: unknown) => void,
) => void;

/** The reader acceptEmptyJson uses, for another parser that takes a body as JSON too. */
export function jsonTextReader(
  app: FastifyInstance,
  options: { keepProtoKeys?: boolean } = {},
): JsonTextReader {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  return (request, text, done) => {
    if (text === '') {
      done(null, undefined);
      return;
    }
    if (!options.keepProtoKeys) {
      void parseJson(request, text, done);
      return;
    }
    try {
      done(null, JSON.parse(text) as unknown);
    } catch (error) {
      done(
        Object.assign(new Error(`the body is not valid JSON: ${(error as Error).message}`), {
          statusCode: 400,
        }),
        undefined,
      );
    }
  };
}

/**
 * Whether a request's body is left unread: one no route takes (404, or 405 for its method), as
 * FastAPI and Django route before they read a body, and one of a method whose routes take none
 * (DELETE, GET). Its body, whatever it holds, is then no body.
 */
export function bodyLeftUnread(request: FastifyRequest): boolean {
  return request.is404 || !['POST', 'PUT', 'PATCH'].includes(request.method);
}

export function acceptEmptyJson(
  app: FastifyInstance,
  options: { keepProtoKeys?: boolean } = {},
): void {
  const readJson = jsonTextReader(app, options);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (bodyLeftUnread(request)) done(null, undefined);
    else readJson(request, String(body), done);
  });
}
