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
import type { FastifyInstance } from 'fastify';

export function acceptEmptyJson(
  app: FastifyInstance,
  options: { keepProtoKeys?: boolean } = {},
): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
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
  });
}
