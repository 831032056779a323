/**
 * What Fastify's router refuses before a route is found, and so before any hook runs: a path
 * with a `%` that starts no escape (FST_ERR_BAD_URL, 400), a route parameter over its length
 * limit (FST_ERR_MAX_PARAM_LENGTH, 414). Fastify's own answer skips the hooks, so it would go
 * without the listener's security headers, past its Host rule and in Fastify's body; this
 * answers it as the listener answers everything else.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { SECURITY_HEADERS } from './securityHeaders.js';

/** A request refused by the listener's own rule (its Host), as its status and body. */
export interface Refusal {
  status: number;
  body: unknown;
}

export interface RouterRefusalShape {
  /** The listener's Host rule, as its onRequest hook applies it; null lets the request by. */
  hostRefusal: (request: FastifyRequest) => Refusal | null;
  /** The listener's error body for a request it cannot route, with Fastify's message. */
  body: (message: string) => unknown;
}

/** The `frameworkErrors` option of a listener whose other answers follow `shape`. */
export function routerRefusals(
  shape: RouterRefusalShape,
): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, request, reply) => {
    void reply.headers(SECURITY_HEADERS);
    const refused = shape.hostRefusal(request);
    if (refused) return void reply.code(refused.status).send(refused.body);
    void reply.code(error.statusCode ?? 400).send(shape.body(error.message));
  };
}
