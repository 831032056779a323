import Fastify, {
  type FastifyInstance,
  type FastifyRequest,
  type onRouteHookHandler,
} from 'fastify';
import type { Db } from '../db/open.js';
import { DECOY_HASH } from '../station/logon.js';
import { verifySecret } from '../util/pin.js';
import { AppError, asAppError } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import { createGuards, endJwt, type Role } from './auth.js';
import { registerHarvestApi, withoutSlash } from './harvest/routes.js';
import { registerNemoApi } from './nemo/routes.js';
import { describeServerBasics } from './openapi/basics.js';
import { ApiDocs } from './openapi/registry.js';
import { registerApiDocs } from './openapi/routes.js';
import { FailureLimiter } from './rateLimit.js';
import { AccountLoginLimit } from './accountLimit.js';
import { randomBytes } from 'node:crypto';
import { signJwt } from './secrets.js';
import { registerSyncApi } from './sync/routes.js';
import { stationAuth } from './sync/stationAuth.js';
import { registerUploadApi } from './uploads/routes.js';
import { registerWebUi } from './web/ui.js';
import { detailClientErrors } from '../http/clientErrors.js';
import { closeConnectionsOnClose } from '../http/closeConnections.js';
import { addSecurityHeaders } from '../http/securityHeaders.js';
import { acceptEmptyJson, bodyLeftUnread } from '../http/emptyJson.js';
import { multipartFields, readBodiesAsFastApi } from '../http/fastApiBodies.js';
import { recordRouteMethods } from '../http/allowedMethods.js';
import { namesLoopback } from '../http/loopbackHost.js';
import { routerRefusals, type Refusal } from '../http/routerRefusals.js';
import { uiFileServed } from '../http/uiFiles.js';
import { RENDERER_DIR } from '../paths.js';
import { refuseIllFormedBodies } from './wellFormedBodies.js';

/** A NEMO resource's list or record path without the trailing slash it is served at. */
const NEMO_WITHOUT_SLASH =
  /^\/api\/(users|tools|projects|reservations|usage_events|experiments)(\/\d{1,15})?$/;

/**
 * Whether a browser's Origin header names this server: the host the request came to (behind a
 * trusted proxy, the one it forwarded) or the configured public address. `null` (a sandboxed
 * or file page) is another site.
 */
function sameSite(origin: string, host: string, publicUrl: string | null): boolean {
  if (!URL.canParse(origin)) return false;
  const from = new URL(origin).host;
  if (from === host) return true;
  return publicUrl !== null && URL.canParse(publicUrl) && new URL(publicUrl).host === from;
}

/**
 * Whether a Host header names the configured public address: its host name in any letter case,
 * with no port or the address's own (written or its scheme's: 443 for https).
 */
function namesPublicUrl(host: string | undefined, publicUrl: string | null): boolean {
  if (host === undefined || publicUrl === null || !URL.canParse(publicUrl)) return false;
  if (!URL.canParse(`http://${host}`)) return false;
  const own = new URL(publicUrl);
  const ownPort = own.port || (own.protocol === 'https:' ? '443' : '80');
  // Read as http: its port 80 comes back as none, which the host's own default stands for.
  const named = new URL(`http://${host}`);
  return named.hostname === own.hostname && (named.port === '' || named.port === ownPort);
}

/** The most `POST /auth/jwt/login` reads: an e-mail address and a password, with room. */
const LOGIN_BODY_LIMIT = 64 * 1024;

/**
 * Failed log-ins an account takes in 15 minutes, from all addresses together, before it is
 * held at addresses it has not logged in from lately (accountLimit.ts). Above the limit of one
 * address (10), so that one address alone never reaches it.
 */
const ACCOUNT_LOGIN_LIMIT = 30;
export interface ServerAppOptions {
  db: Db;
  log: Logger;
  jwtSecret: string;
  timeZone: () => string;
  jwtLifetimeSeconds?: number;
  clock?: () => number;
  /** Sees every route as it is added (the docs coverage test lists them with it). */
  onRoute?: onRouteHookHandler;
  /** Where the routes describe themselves; a test passes its own to inspect it. */
  docs?: ApiDocs;
  /**
   * The reverse proxies whose X-Forwarded-For, -Proto and -Host are believed (runServer's
   * trustedProxies); none by default.
   */
  trustProxy?: string[];
  /**
   * The server's configured public address (configuredPublicUrl), which links handed out in
   * responses start with; null or unset: the scheme and host the request came in on.
   */
  publicUrl?: () => string | null;
  /** The built renderer the web page is served from; dist/renderer unless a test gives one. */
  rendererDir?: string;
  /**
   * Listening on a loopback address with no reverse proxy in front: requests must name a
   * loopback host (or the public address) in their Host header (http/loopbackHost.ts).
   */
  loopbackOnly?: boolean;
  /** How long a key's holder must be silent before another Labstation may take the key (stationAuth.ts). */
  stationTakeoverMs?: number;
}

/**
 * The server's HTTP API: health, login, and the NEMO-compatible read API. Error bodies follow
 * the services that clients already speak to: `{"detail": ...}`.
 */
export async function createServerApp(options: ServerAppOptions): Promise<FastifyInstance> {
  const { db, log } = options;
  const clock = options.clock ?? Date.now;
  const proxies = options.trustProxy ?? [];
  // Else a page that rebinds its own name to this address could log in here, or, by failing
  // to, throttle the log-ins of the people at this address.
  const hostRefusal = (request: FastifyRequest): Refusal | null => {
    if (!options.loopbackOnly) return null;
    const host = request.headers.host;
    if (namesLoopback(host) || namesPublicUrl(host, options.publicUrl?.() ?? null)) return null;
    return { status: 403, body: { detail: 'This server answers on its loopback address only.' } };
  };
  const app = Fastify({
    logger: false,
    bodyLimit: 8 * 1024 * 1024,
    trustProxy: proxies.length ? proxies : false,
    clientErrorHandler: detailClientErrors,
    frameworkErrors: routerRefusals({ hostRefusal, body: (message) => ({ detail: message }) }),
  });
  if (options.onRoute) app.addHook('onRoute', options.onRoute);
  const rendererDir = options.rendererDir ?? RENDERER_DIR;
  const allowedMethods = recordRouteMethods(app, {
    catchAll: uiFileServed(rendererDir, { sourceMaps: false }),
  });
  addSecurityHeaders(app);
  if (options.loopbackOnly) {
    app.addHook('onRequest', async (request, reply) => {
      const refused = hostRefusal(request);
      if (refused) return reply.code(refused.status).send(refused.body);
    });
  }
  closeConnectionsOnClose(app);
  acceptEmptyJson(app);
  refuseIllFormedBodies(app);
  const guards = createGuards({ db, log, jwtSecret: options.jwtSecret, clock });
  const loginFailures = new FailureLimiter(10, 15 * 60_000, clock);
  const accountLogins = new AccountLoginLimit(ACCOUNT_LOGIN_LIMIT, 15 * 60_000, clock);
  // Every route module describes its operations here: /openapi.json and /docs are built from it.
  const docs = options.docs ?? new ApiDocs();
  describeServerBasics(docs);

  // A form body is text to every route but the log-in (below), as a text/plain one is: the
  // harvest API answers it 422 "must be a JSON object", as it answers any body not an object.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (request, body, done) => done(null, bodyLeftUnread(request) ? undefined : String(body)),
  );

  // The harvest API and the log-in read a body with no Content-Type, or an application/*+json
  // one, as JSON, and one of another type as text, as FastAPI does; other routes refuse it, 415.
  readBodiesAsFastApi(app, /^\/(api|auth)\//);

  app.setErrorHandler((thrown, request, reply) => {
    const error = asAppError(thrown);
    if (error instanceof AppError) {
      const status = {
        not_found: 404,
        forbidden: 403,
        unauthenticated: 401,
        conflict: 409,
        unavailable: 503,
      }[error.code as string];
      if (status === 503) reply.header('retry-after', '5');
      return reply.code(status ?? 400).send({ detail: error.message, code: error.code });
    }
    const status = (error as { statusCode?: number }).statusCode;
    // The harvest API and the login answer a body that is not JSON as FastAPI does: 422 with
    // the problem in the list every other refused body gets.
    if (
      (error as { code?: unknown }).code === 'FST_ERR_CTP_INVALID_JSON_BODY' &&
      /^\/(api|auth)\//.test(request.url)
    ) {
      return reply.code(422).send({
        detail: [
          {
            loc: ['body'],
            msg:
              'JSON decode error: the body is not valid JSON, or has a key named __proto__, ' +
              'or a key constructor holding a key prototype (refused)',
            type: 'json_invalid',
          },
        ],
      });
    }
    if (status !== undefined && status >= 400 && status < 500) {
      return reply.code(status).send({ detail: (error as Error).message });
    }
    log.error({ err: error, url: request.url }, 'request failed');
    return reply.code(500).send({ detail: 'Internal server error.' });
  });
  app.setNotFoundHandler((request, reply) => {
    // Django's APPEND_SLASH, which NEMO runs with: a NEMO list or record asked for without its
    // trailing slash is sent there (301), query kept, before anything checks credentials.
    const at = request.url.indexOf('?');
    const path = at < 0 ? request.url : request.url.slice(0, at);
    if ((request.method === 'GET' || request.method === 'HEAD') && NEMO_WITHOUT_SLASH.test(path)) {
      return reply.redirect(`${path}/${at < 0 ? '' : request.url.slice(at)}`, 301);
    }
    // The harvest API's paths the other way round, as FastAPI does.
    const redirect = withoutSlash(reply, request.url);
    if (redirect) return redirect;
    if (path === '/docs/')
      return reply.redirect(`/docs${at < 0 ? '' : request.url.slice(at)}`, 307);
    // A path that is there for other methods: 405 naming them, before any credentials are
    // checked, as FastAPI's router answers it (the route list is public at /docs anyway).
    const allowed = allowedMethods(path);
    if (allowed.length) {
      void reply.code(405).header('allow', allowed.join(', '));
      if (path.startsWith('/rpc/')) {
        // The calls' own shape, {code, message} (and detail), as every other refusal of /rpc
        // and the station's /rpc answer it: their clients read `code`.
        const message = `${request.method} is not allowed here (allowed: ${allowed.join(', ')})`;
        return reply.send({ code: 'bad_request', message, detail: message });
      }
      return reply.send({ detail: `Method "${request.method}" not allowed.` });
    }
    return reply.code(404).send({ detail: 'Not found.' });
  });

  app.get('/health', () => ({ status: 'ok', role: 'server' }));

  /** What a log-in's form gives: a token, the fields it lacks, or wrong credentials (e-mail). */
  const logIn = async (
    body: Record<string, unknown>,
  ): Promise<{ token: string } | { missing: string[] } | { wrong: string }> => {
    const missing = ['username', 'password'].filter(
      (f) => typeof body[f] !== 'string' || body[f] === '',
    );
    if (missing.length) return { missing };
    const email = String(body.username).trim();
    const account = db
      .prepare(
        "SELECT id, uuid, role, is_active, password_hash, credentials_version FROM users WHERE email = ? COLLATE NOCASE AND email <> ''",
      )
      .get(email) as
      | {
          id: number;
          uuid: string;
          role: Role;
          is_active: number;
          password_hash: string | null;
          credentials_version: number;
        }
      | undefined;
    // An account without a password (imported without one, as a station's people are) is
    // checked against the decoy too, for the time it takes, and never let in.
    const good =
      (await verifySecret(String(body.password), account?.password_hash ?? DECOY_HASH)) &&
      account !== undefined &&
      account.password_hash !== null &&
      account.is_active === 1;
    if (!good) return { wrong: email };
    const now = Math.floor(clock() / 1000);
    const token = signJwt(options.jwtSecret, {
      sub: account.uuid,
      role: account.role,
      cv: account.credentials_version,
      iat: now,
      exp: now + (options.jwtLifetimeSeconds ?? 8 * 3600),
      jti: randomBytes(16).toString('base64url'),
    });
    return { token };
  };

  // Open to anyone, so it reads no more than a log-in form needs: a large or deeply nested
  // body from no one costs a 413, not a parse. In a scope of its own: the log-in is the one
  // route that reads a form's fields (fastapi-users' OAuth2 password form).
  void app.register((scope, _options, done) => {
    scope.removeContentTypeParser('application/x-www-form-urlencoded');
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_request, body, parsed) =>
        parsed(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
    // fastapi-users' form reads a multipart one too (curl -F).
    scope.addContentTypeParser(
      'multipart/form-data',
      { parseAs: 'buffer' },
      (request, body, parsed) => {
        try {
          parsed(null, multipartFields(request, body as Buffer));
        } catch (error) {
          parsed(error as Error, undefined);
        }
      },
    );
    scope.post('/auth/jwt/login', { bodyLimit: LOGIN_BODY_LIMIT }, async (request, reply) => {
      // A browser names the page a form was sent from: another site's page may not log in here,
      // nor, by failing, lock the people at this address out (its form needs no script).
      const origin = request.headers.origin;
      if (origin !== undefined && !sameSite(origin, request.host, options.publicUrl?.() ?? null)) {
        return reply.code(403).send({ detail: 'A log-in from another site is refused.' });
      }
      const ip = request.ip;
      // Each log-in holds a place in the address's limit while its password is checked, so that
      // tries sent at once are held to the limit as tries sent one after another are; one
      // without a place waits for it (people behind one address logging in at once all get in).
      if (!(await loginFailures.enter(ip))) {
        void reply.header('retry-after', String(loginFailures.retryAfter(ip)));
        return reply.code(429).send({ detail: 'Request was throttled.' });
      }
      const body = (request.body ?? {}) as Record<string, unknown>;
      const email = typeof body.username === 'string' ? body.username.trim() : '';
      // Then a place in the account's own limit, unless it logged in from this address lately.
      const pass = email === '' ? null : await accountLogins.enter(email, ip);
      if (email !== '' && pass === null) {
        loginFailures.end(ip, false);
        void reply.header('retry-after', String(accountLogins.retryAfter(email)));
        return reply.code(429).send({ detail: 'Request was throttled.' });
      }
      let result: Awaited<ReturnType<typeof logIn>> | undefined;
      try {
        result = await logIn(body);
      } finally {
        // Given back however the check ended; counted as a failure only for wrong credentials.
        const wrong = result !== undefined && 'wrong' in result ? result.wrong : null;
        const count = loginFailures.end(ip, wrong !== null);
        const onAccount = pass === null ? 0 : accountLogins.end(email, pass, wrong !== null);
        if (wrong !== null) log.warn({ ip, email: wrong, failures: count }, 'failed login');
        if (onAccount === ACCOUNT_LOGIN_LIMIT) {
          log.warn(
            { email, failures: onAccount },
            'log-ins to an account held: too many failed, from addresses it does not log in from',
          );
        }
      }
      if (pass !== null && 'token' in result) accountLogins.succeeded(email, ip);
      if ('missing' in result) {
        return reply.code(422).send({
          detail: result.missing.map((f) => ({
            loc: ['body', f],
            msg: 'Field required',
            type: 'missing',
          })),
        });
      }
      if ('wrong' in result) return reply.code(400).send({ detail: 'LOGIN_BAD_CREDENTIALS' });
      return { access_token: result.token, token_type: 'bearer' };
    });
    done();
  });

  // As FastAPI-Users' JWT logout, with an effect: the token it is called with is ended here,
  // not only forgotten by the browser (a copy taken from it would work on for hours).
  app.post(
    '/auth/jwt/logout',
    { onRequest: guards.requireRoles('admin', 'staff', 'user') },
    (request, reply) => {
      const jwt = request.principal?.jwt;
      if (!jwt) {
        return reply.code(400).send({
          detail:
            'Authorization: log out with the JWT of POST /auth/jwt/login (Bearer); ' +
            'an API token is revoked by an admin (the web page, Administration, API tokens)',
        });
      }
      endJwt(db, jwt, Math.floor(clock() / 1000));
      log.info({ user: request.principal?.account.email }, 'logged out');
      return reply.code(204).send();
    },
  );

  registerNemoApi(app, {
    db,
    timeZone: options.timeZone,
    publicUrl: options.publicUrl ?? (() => null),
    authorize: guards.requireRoles('admin', 'staff'),
    docs,
  });
  registerHarvestApi(app, {
    db,
    log,
    docs,
    clock,
    timeZone: options.timeZone,
    admin: guards.requireRoles('admin'),
    anyUser: guards.requireRoles('admin', 'staff', 'user'),
  });
  // Made here first, with the server's settings: the station routes below get this one.
  stationAuth(app, {
    db,
    log,
    clock,
    ...(options.stationTakeoverMs === undefined ? {} : { takeoverMs: options.stationTakeoverMs }),
  });
  registerUploadApi(app, { db, log, docs });
  registerSyncApi(app, { db, log, docs });
  await registerWebUi(app, {
    db,
    log,
    jwtSecret: options.jwtSecret,
    clock,
    timeZone: options.timeZone,
    docs,
    rendererDir,
  });
  registerApiDocs(app, { docs });
  return app;
}
