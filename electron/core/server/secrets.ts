import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A random secret for API tokens and station keys (256 bits, URL-safe). Never one that starts
 * with "-": `labstation station --key -abc…` would read it as an option (1 key in 64 did).
 */
export function randomSecret(bytes = 32): string {
  for (;;) {
    const secret = randomBytes(bytes).toString('base64url');
    if (!secret.startsWith('-')) return secret;
  }
}

/**
 * Tokens and keys are high-entropy random strings, so a plain SHA-256 is enough to store them
 * (a slow hash protects guessable secrets like passwords and PINs, which these are not).
 */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export interface JwtClaims {
  sub: string;
  role: string;
  iat: number;
  exp: number;
  /**
   * The account's credentials_version when the token was made (migration 16): a password
   * changed or the account deactivated since ends the token. Tokens made before it: 0.
   */
  cv?: number;
  /**
   * A random id: every login's token differs, even two of one person in the same second, so
   * logging out of one (`POST /auth/jwt/logout`) ends that one only. Tokens made before it
   * have none.
   */
  jti?: string;
}

const b64 = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** HS256 JSON Web Token, as fastapi-users issues for `POST /auth/jwt/login`. */
export function signJwt(secret: string, claims: JwtClaims): string {
  const head = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}

export function verifyJwt(secret: string, token: string, nowSeconds: number): JwtClaims | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  const [header, payload, signature] = parts as [string, string, string];
  const expected = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
  if (!safeEqual(signature, expected)) return null;
  try {
    const head = JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg?: unknown };
    if (head.alg !== 'HS256') return null;
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Partial<JwtClaims>;
    if (typeof claims.sub !== 'string' || typeof claims.exp !== 'number') return null;
    if (claims.exp <= nowSeconds) return null;
    return claims as JwtClaims;
  } catch {
    return null;
  }
}
