/**
 * What the server offers browser users: the built React UI at `/` and the HTTP carrier of the
 * server-mode contract, `POST /rpc/<name>`, authenticated with `Authorization: Bearer <jwt>`
 * (from `POST /auth/jwt/login`) or `Token <api token>`. Errors are `{code, message, details?}`
 * with the status of shared/errors.ts, like the station's carrier.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  isServerApiName,
  isStaffRole,
  serverApiAccess,
  serverApiSchemas,
} from '../../../../shared/api.js';
import { HTTP_STATUS, type ApiError } from '../../../../shared/errors.js';
import type { Db } from '../../db/open.js';
import { RENDERER_DIR } from '../../paths.js';
import { serveUiFiles } from '../../http/uiFiles.js';
import { AppError, toApiError } from '../../util/errors.js';
import { formatIssues } from '../../util/issues.js';
import type { Logger } from '../../util/log.js';
import { admit } from '../auth.js';
import type { ApiDocs } from '../openapi/registry.js';
import { FailureLimiter } from '../rateLimit.js';
import { describeWebUi } from './docs.js';
import { createWebHandlers } from './handlers.js';

export interface WebUiDeps {
  db: Db;
  log: Logger;
  jwtSecret: string;
  clock?: () => number;
  /** The server's time zone (for filters that read date-times); UTC where not given. */
  timeZone?: () => string;
  /** Built renderer (index.html and assets); defaults to dist/renderer. */
  rendererDir?: string;
  /** Where the routes describe themselves for /openapi.json. */
  docs?: ApiDocs;
}

/**
 * The contract's `{code, message, details?}`, plus `detail` (the message again): what clients of
 * the server's other routes (DRF and FastAPI style) read for a 401 or 403.
 */
function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply.code(HTTP_STATUS[error.code]).send({ ...error, detail: error.message });
}

export async function registerWebUi(app: FastifyInstance, deps: WebUiDeps): Promise<void> {
  const { db, log } = deps;
  const handlers = createWebHandlers({
    db,
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(deps.timeZone ? { timeZone: deps.timeZone } : {}),
  });
  const failures = new FailureLimiter(20, 60_000, deps.clock);
  const authDeps = {
    db,
    log,
    jwtSecret: deps.jwtSecret,
    ...(deps.clock ? { clock: deps.clock } : {}),
  };
  if (deps.docs) describeWebUi(deps.docs);

  // The rpc routes get their own error handler: the contract's `{code, message}`, not `{detail}`.
  await app.register((scope, _options, done) => {
    scope.setErrorHandler((error, request, reply) => {
      if (error instanceof AppError) return sendError(reply, error.toJSON());
      const status = (error as { statusCode?: number }).statusCode;
      if (status !== undefined && status >= 400 && status < 500) {
        // Fastify's own refusals keep their status (413 for a body over the limit, 415 for one
        // that is not JSON), as on the server's other routes and the station's /rpc.
        const body: ApiError = { code: 'bad_request', message: (error as Error).message };
        return reply.code(status).send({ ...body, detail: body.message });
      }
      const answer = toApiError(error);
      if (answer.code !== 'internal') return sendError(reply, answer);
      log.error({ err: error, url: request.url }, 'rpc request failed');
      return sendError(reply, { ...answer, message: 'internal error; see the server log' });
    });

    // Who calls is settled before the body is read (onRequest): a caller without valid
    // credentials gets its 401 without the server reading and parsing up to bodyLimit of JSON,
    // as on the API's routes (auth.ts createGuards).
    scope.addHook('onRequest', async (request, reply) => {
      // As the API's guard: a valid JWT always gets in, only bad ones are throttled.
      const admitted = admit(authDeps, failures, request);
      if (!('refused' in admitted)) {
        request.principal = admitted.principal;
        return;
      }
      if (admitted.refused === 'missing') {
        return sendError(reply, { code: 'unauthenticated', message: 'Log in first.' });
      }
      if (admitted.refused === 'throttled') {
        void reply.header('retry-after', String(admitted.retryAfter));
        return sendError(reply, { code: 'locked', message: 'Too many failed attempts; wait.' });
      }
      return sendError(reply, {
        code: 'unauthenticated',
        message: 'Your login has expired or is not valid; log in again.',
      });
    });

    scope.post<{ Params: { name: string } }>('/rpc/:name', async (request) => {
      const ip = request.ip;
      const principal = request.principal;
      if (!principal) throw new Error('rpc: no principal after the onRequest check');
      const name = request.params.name;
      if (!isServerApiName(name)) {
        throw new AppError('not_found', `no call named ${JSON.stringify(name)} on the server`);
      }
      if (serverApiAccess[name] === 'admin' && principal.account.role !== 'admin') {
        log.warn({ ip, name, user: principal.account.email }, 'refused an admin call');
        throw new AppError('forbidden', `${name} is for admins only`);
      }
      if (serverApiAccess[name] === 'staff' && !isStaffRole(principal.account.role)) {
        log.warn({ ip, name, user: principal.account.email }, 'refused a staff call');
        throw new AppError('forbidden', `${name} is for staff and admins only`);
      }
      const body = request.body ?? {};
      const parsed = serverApiSchemas[name].safeParse(body);
      if (!parsed.success) {
        const problems = formatIssues(parsed.error.issues, '(arguments)', body);
        throw new AppError('bad_request', `${name}: ${problems.join('; ')}`, { problems });
      }
      const handler = handlers[name] as (account: unknown, args: unknown) => unknown;
      return await handler(principal.account, parsed.data);
    });
    done();
  });

  const root = deps.rendererDir ?? RENDERER_DIR;
  if (existsSync(join(root, 'index.html'))) {
    await serveUiFiles(app, root, { sourceMaps: false });
  } else {
    app.get('/', (_request, reply) =>
      reply
        .type('text/plain; charset=utf-8')
        .send(
          'The Labstation UI is not built: run `npm run build`, then start the server again.\n',
        ),
    );
  }
}
