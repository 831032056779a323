import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { isStaffRole } from '../../../shared/api.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { nowIso } from '../util/ids.js';
import type { Logger } from '../util/log.js';
import { FailureLimiter } from './rateLimit.js';
import { randomSecret, sha256, verifyJwt } from './secrets.js';

export type Role = 'admin' | 'staff' | 'user';

export interface Account {
  id: number;
  uuid: string;
  email: string;
  username: string;
  role: Role;
  is_active: number;
}

/** Staff and admins (shared/api.ts isStaffRole). */
export const isStaff = (account: Account): boolean => isStaffRole(account.role);

export interface Principal {
  account: Account;
  via: 'jwt' | 'token';
  /** For a JWT: its SHA-256 and expiry, which logging out of it (endJwt) records. */
  jwt?: { hash: string; exp: number };
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

/** DRF's own wording, which NEMO clients know. */
export const DETAIL = {
  missing: 'Authentication credentials were not provided.',
  invalidToken: 'Invalid token.',
  forbidden: 'You do not have permission to perform this action.',
  throttled: 'Request was throttled.',
} as const;

export function createApiToken(db: Db, userId: number, name = ''): { id: number; token: string } {
  const token = randomSecret(30);
  const id = Number(
    db
      .prepare(
        'INSERT INTO api_tokens (user_id, token_hash, prefix, name, created_at) VALUES (?, ?, ?, ?, ?)',
      )
      .run(userId, sha256(token), token.slice(0, 6), name, nowIso()).lastInsertRowid,
  );
  return { id, token };
}

export interface AuthDeps {
  db: Db;
  log: Logger;
  jwtSecret: string;
  clock?: () => number;
}

const ACCOUNT_COLUMNS = 'u.id, u.uuid, u.email, u.username, u.role, u.is_active';
/** How fresh `api_tokens.last_used_at` is kept. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Resolves the Authorization header: `Bearer <jwt>` or `Token <api token>`. Returns null when
 * there is none, or only one of another scheme (`Basic`, say: no credentials of ours, as DRF
 * and FastAPI take it, and not counted as a bad one); 'invalid' when it names no active
 * account, or its credential is missing or not one word.
 */
export function authenticate(
  deps: AuthDeps,
  header: string | undefined,
): Principal | 'invalid' | null {
  if (!header) return null;
  const [word = '', ...rest] = header.trim().split(/\s+/);
  const scheme = word.toLowerCase();
  if (scheme !== 'bearer' && scheme !== 'token') return null;
  if (rest.length !== 1) return 'invalid';
  const credential = rest[0];
  const now = (deps.clock ?? Date.now)();
  let account: Account | undefined;
  let jwt: Principal['jwt'];
  if (scheme === 'bearer') {
    const claims = verifyJwt(deps.jwtSecret, credential, Math.floor(now / 1000));
    if (!claims) return 'invalid';
    jwt = { hash: sha256(credential), exp: claims.exp };
    // Logged out of (POST /auth/jwt/logout): ended before its time.
    if (jwtEnded(deps.db, jwt.hash)) return 'invalid';
    const found = deps.db
      .prepare(`SELECT ${ACCOUNT_COLUMNS}, u.credentials_version FROM users u WHERE u.uuid = ?`)
      .get(claims.sub) as (Account & { credentials_version: number }) | undefined;
    // Made before the password changed or the account was turned off: ended (migration 16).
    if (found && found.credentials_version !== (claims.cv ?? 0)) return 'invalid';
    account = found;
  } else {
    const hash = sha256(credential);
    const row = cachedStatement(
      deps.db,
      `SELECT ${ACCOUNT_COLUMNS}, t.last_used_at FROM api_tokens t JOIN users u ON u.id = t.user_id
       WHERE t.token_hash = ?`,
    ).get(hash) as (Account & { last_used_at: string | null }) | undefined;
    if (row) {
      const { last_used_at: lastUsed, ...rest } = row;
      account = rest;
      // At most one write a minute per token: a commit (synchronous=FULL) on every API read
      // would cost more than the read itself under load.
      if (lastUsed === null || Date.parse(lastUsed) <= now - LAST_USED_RESOLUTION_MS) {
        cachedStatement(deps.db, 'UPDATE api_tokens SET last_used_at = ? WHERE token_hash = ?').run(
          nowIso(() => now),
          hash,
        );
      }
    }
  }
  if (!account || account.is_active !== 1) return 'invalid';
  return jwt ? { account, via: 'jwt', jwt } : { account, via: 'token' };
}

/** Whether the JWT with this SHA-256 was logged out of (migration 18). */
function jwtEnded(db: Db, hash: string): boolean {
  return (
    cachedStatement(db, 'SELECT 1 FROM ended_jwts WHERE token_hash = ?').get(hash) !== undefined
  );
}

/**
 * Ends a JWT before its time (`POST /auth/jwt/logout`): it no longer authenticates. Ended
 * tokens past their own expiry are forgotten meanwhile.
 */
export function endJwt(db: Db, jwt: { hash: string; exp: number }, nowSeconds: number): void {
  db.prepare('DELETE FROM ended_jwts WHERE expires_at <= ?').run(nowSeconds);
  db.prepare('INSERT OR IGNORE INTO ended_jwts (token_hash, expires_at) VALUES (?, ?)').run(
    jwt.hash,
    jwt.exp,
  );
}

/** What the credentials of a request come to (admit). */
export type Admission =
  | { principal: Principal }
  | { refused: 'missing' }
  | { refused: 'invalid' }
  | { refused: 'throttled'; retryAfter: number };

/**
 * Authenticates a request and throttles bad credentials by address, for the API's guards and
 * the web page's /rpc (each with its own `failures` and its own answer). The credential is
 * checked first: a token or JWT cannot be guessed, so what throttling guards against is the
 * load of bad ones, and a valid one from the same address (a client behind the same proxy or
 * NAT as a job with a revoked token) still gets in.
 */
export function admit(
  deps: AuthDeps,
  failures: FailureLimiter,
  request: FastifyRequest,
): Admission {
  const result = authenticate(deps, request.headers.authorization);
  if (result === null) return { refused: 'missing' };
  if (result !== 'invalid') return { principal: result };
  const ip = request.ip;
  if (failures.blocked(ip)) return { refused: 'throttled', retryAfter: failures.retryAfter(ip) };
  const count = failures.fail(ip);
  deps.log.warn({ ip, url: request.url, failures: count }, 'rejected credentials');
  return { refused: 'invalid' };
}

/**
 * Builds the hooks that guard routes (as `onRequest`, so a body is read only for a caller who
 * may send it): authentication, throttling, role check.
 */
export function createGuards(deps: AuthDeps): {
  requireRoles: (...roles: Role[]) => onRequestAsyncHookHandler;
  tokenFailures: FailureLimiter;
} {
  const tokenFailures = new FailureLimiter(20, 60_000, deps.clock);
  const refuse = (reply: FastifyReply, status: number, detail: string): FastifyReply => {
    // A 401 names the schemes that would do (RFC 9110), Token first as DRF sends it.
    if (status === 401) void reply.header('www-authenticate', 'Token, Bearer');
    return reply.code(status).send({ detail });
  };

  const requireRoles =
    (...roles: Role[]): onRequestAsyncHookHandler =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      const admitted = admit(deps, tokenFailures, request);
      if ('refused' in admitted) {
        if (admitted.refused === 'missing') return refuse(reply, 401, DETAIL.missing);
        if (admitted.refused === 'invalid') return refuse(reply, 401, DETAIL.invalidToken);
        void reply.header('retry-after', String(admitted.retryAfter));
        return refuse(reply, 429, DETAIL.throttled);
      }
      const { principal } = admitted;
      if (!roles.includes(principal.account.role)) return refuse(reply, 403, DETAIL.forbidden);
      request.principal = principal;
    };
  return { requireRoles, tokenFailures };
}
