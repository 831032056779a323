/**
 * A request that says `Content-Type: application/json` and sends no body at all (curl with a
 * shared header list, clients that set the header on every call) is read as having no body,
 * as FastAPI and Django read it, instead of Fastify's 400 "Body cannot be empty". A route that
 * needs a body still says which is missing; a body that is there is parsed by Fastify's own
 * JSON parser, with its guard against `__proto__` and `constructor` keys.
 */
import type { FastifyInstance } from 'fastify';

export function acceptEmptyJson(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
    if (text === '') {
      done(null, undefined);
      return;
    }
    void parseJson(request, text, done);
  });
}
