/**
 * Every JSON body the server takes is refused when a string in it, or a key, is not well-formed
 * Unicode (shared/wellFormed.ts): stored, it would read back as U+FFFD and sync to stations so.
 * One check, after the body is parsed (by whichever parser the route's scope has) and before
 * any handler reads it, answered in the error shape of the API family the path belongs to.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from '../../../shared/errors.js';
import {
  illFormedArgument,
  illFormedTextPath,
  NOT_WELL_FORMED,
  pathText,
  type PathStep,
} from '../../../shared/wellFormed.js';
import { SYNC_RESERVATIONS_PATH } from '../sync/protocol.js';

/** The answer to a body with ill-formed text at `path`, in the shape the path's API gives. */
function refusal(request: FastifyRequest, path: PathStep[]): { status: number; body: unknown } {
  const url = request.url.split('?', 1)[0];
  if (url.startsWith('/rpc/')) {
    // The web page's calls: as their schema check refuses arguments (web/ui.ts).
    const where = illFormedArgument(path);
    const name = url.slice('/rpc/'.length);
    const error: ApiError = {
      code: 'bad_request',
      message: `${name}: ${where}`,
      details: { problems: [where] },
    };
    return { status: 400, body: { ...error, detail: error.message } };
  }
  if (url === SYNC_RESERVATIONS_PATH || url.startsWith(`${SYNC_RESERVATIONS_PATH}/`)) {
    // A station's bookings: the contract's shape, as their fieldError (sync/reservationRoutes.ts).
    const field = pathText(path, 'body');
    const error: ApiError = {
      code: 'validation_failed',
      message: `${field}: ${NOT_WELL_FORMED}`,
      details: { problems: [{ path: [field], message: NOT_WELL_FORMED }] },
    };
    return { status: 422, body: { ...error, detail: error.message } };
  }
  if (url.startsWith('/sync/')) {
    // A station's pushes and uploads: as their body check (sync/routes.ts, uploads/routes.ts).
    return { status: 400, body: { detail: `${path.join('.') || 'body'}: ${NOT_WELL_FORMED}` } };
  }
  // The harvest API and the log-in, FastAPI's validation error (the NEMO API takes no body).
  return {
    status: 422,
    body: { detail: [{ loc: ['body', ...path], msg: NOT_WELL_FORMED, type: 'string_unicode' }] },
  };
}

/** Adds the check to `app` and every scope in it: call it before any route is added. */
export function refuseIllFormedBodies(app: FastifyInstance): void {
  app.addHook('preValidation', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.body === undefined || request.body === null) return;
    const path = illFormedTextPath(request.body);
    if (path === null) return;
    const { status, body } = refusal(request, path);
    return reply.code(status).send(body);
  });
}
