import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { serveUiFiles, uiFileServed } from './uiFiles.js';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { CoreEvent } from '../../../shared/api.js';
import { HTTP_STATUS, type ApiError } from '../../../shared/errors.js';
import type { Station } from '../station/station.js';
import { AppError, toApiError } from '../util/errors.js';
import { closeConnectionsOnClose } from './closeConnections.js';
import { addSecurityHeaders, SECURITY_HEADERS } from './securityHeaders.js';
import { acceptEmptyJson } from './emptyJson.js';
import { recordRouteMethods } from './allowedMethods.js';
import { namesLoopback } from './loopbackHost.js';
import { routerRefusals, type Refusal } from './routerRefusals.js';

/**
 * The loopback token that guards /rpc and /events; kept in <data>/rpc-token, mode 0600, for
 * programs on the machine to read. `fresh`: a new one, for a station on an ephemeral port. A
 * page left open on a stopped station keeps sending its token to the port, which any program
 * may take meanwhile; a page cannot follow a station to a new port anyway, so a station there
 * gives out a token that only this run of it takes. On a fixed port the token is kept, so a
 * page open on it reconnects to it started again.
 */
export function loadOrCreateRpcToken(dataDir: string, fresh = false): string {
  const file = join(dataDir, 'rpc-token');
  if (!fresh && existsSync(file)) {
    const token = readFileSync(file, 'utf8').trim();
    chmodSync(file, 0o600);
    if (token.length >= 32) return token;
  }
  const token = randomBytes(32).toString('base64url');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return token;
}

function bearerMatches(request: FastifyRequest, token: string): boolean {
  const header = request.headers.authorization ?? '';
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match) return false;
  const given = Buffer.from(match[1]);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply.code(HTTP_STATUS[error.code]).send(error);
}

export interface StationServerOptions {
  station: Station;
  token: string;
  /** Built renderer (index.html and assets); omitted in tests that only speak RPC. */
  rendererDir?: string | undefined;
}

/** A station answers to loopback names only (the Host a request names). */
function loopbackRefusal(request: FastifyRequest): Refusal | null {
  if (namesLoopback(request.headers.host)) return null;
  const body: ApiError = { code: 'forbidden', message: 'this station answers on loopback only' };
  return { status: HTTP_STATUS.forbidden, body };
}

/**
 * The station's loopback listener: GET /health, POST /rpc/<name> (the HTTP carrier of the
 * contract), GET /events (server-sent events) and the UI itself.
 */
export async function createStationServer(options: StationServerOptions): Promise<FastifyInstance> {
  const { station, token } = options;
  const app = Fastify({
    logger: false,
    bodyLimit: 4 * 1024 * 1024,
    frameworkErrors: routerRefusals({
      hostRefusal: loopbackRefusal,
      body: (message): ApiError => ({ code: 'bad_request', message }),
    }),
  });
  addSecurityHeaders(app);
  closeConnectionsOnClose(app);
  // Notebook fields may be named `__proto__`: every /rpc call is checked by its zod schema.
  acceptEmptyJson(app, { keepProtoKeys: true });
  const rendererDir = options.rendererDir;
  const allowedMethods = recordRouteMethods(
    app,
    rendererDir ? { catchAll: uiFileServed(rendererDir, { sourceMaps: true }) } : {},
  );

  app.setErrorHandler((error, request, reply) => {
    if (error instanceof AppError) return sendError(reply, error.toJSON());
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      // Fastify's own refusals keep their status (415 for a body that is not JSON, 413 for
      // one over the limit); the body is the contract's, code bad_request.
      const body: ApiError = { code: 'bad_request', message: (error as Error).message };
      return reply.code(status).send(body);
    }
    const answer = toApiError(error);
    if (answer.code === 'internal')
      station.log.error({ err: error, url: request.url }, 'request failed');
    return sendError(reply, answer);
  });
  app.setNotFoundHandler((request, reply) => {
    const at = request.url.indexOf('?');
    const allowed = allowedMethods(at < 0 ? request.url : request.url.slice(0, at));
    if (allowed.length) {
      const body: ApiError = {
        code: 'bad_request',
        message: `${request.method} is not allowed here (allowed: ${allowed.join(', ')})`,
      };
      return reply.code(405).header('allow', allowed.join(', ')).send(body);
    }
    return sendError(reply, {
      code: 'not_found',
      message: `nothing at ${request.method} ${request.url}`,
    });
  });

  // A loopback server answers to loopback names only: a web page that rebinds its own DNS name
  // to 127.0.0.1 gets nothing from it (defence in depth; /rpc and /events need the token too).
  app.addHook('onRequest', async (request, reply) => {
    const refused = loopbackRefusal(request);
    if (refused) return reply.code(refused.status).send(refused.body);
  });

  // Open event streams would keep close() waiting forever: end them first.
  const streams = new Set<ServerResponse>();
  app.addHook('preClose', (done) => {
    for (const res of streams) res.end();
    streams.clear();
    done();
  });

  app.get('/health', () => ({ status: 'ok', role: 'station' }));

  app.post<{ Params: { name: string } }>('/rpc/:name', async (request, reply) => {
    if (!bearerMatches(request, token)) {
      return sendError(reply, {
        code: 'unauthenticated',
        message: 'missing or wrong bearer token',
      });
    }
    return await station.call(request.params.name, request.body);
  });

  app.get('/events', (request, reply) => {
    if (!bearerMatches(request, token)) {
      return sendError(reply, {
        code: 'unauthenticated',
        message: 'missing or wrong bearer token',
      });
    }
    reply.hijack();
    const res = reply.raw;
    // Taken over from fastify (hijack): its onSend hook does not add the headers here.
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    res.write(': connected\n\n');
    const send = (event: CoreEvent): void => {
      res.write(`data: ${JSON.stringify(event)}\n\n`);
    };
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 25_000);
    station.events.on('event', send);
    streams.add(res);
    request.raw.on('close', () => {
      clearInterval(keepAlive);
      station.events.off('event', send);
      streams.delete(res);
    });
    return reply;
  });

  if (rendererDir && existsSync(join(rendererDir, 'index.html'))) {
    await serveUiFiles(app, rendererDir, { sourceMaps: true });
  } else {
    app.get('/', (_request, reply) =>
      reply
        .type('text/plain; charset=utf-8')
        .send(
          'The Labstation UI is not built: run `npm run build`, then start the station again.\n',
        ),
    );
  }
  return app;
}
