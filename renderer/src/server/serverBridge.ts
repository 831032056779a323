/**
 * The browser's way to the server: `POST /auth/jwt/login` for a JWT (kept in sessionStorage,
 * this tab only) and `POST /rpc/<name>` of the server-mode contract with `Bearer <jwt>`.
 */
import type { ServerApiArgs, ServerApiName, ServerApiResult } from '../../../shared/api.js';
import { isApiError } from '../../../shared/errors.js';
import { BridgeError } from '../bridge.js';

const JWT_KEY = 'labstation.jwt';

export function storedJwt(): string | null {
  return sessionStorage.getItem(JWT_KEY);
}

/**
 * Forgets this tab's login, and (`end`) ends its JWT on the server (`POST /auth/jwt/logout`), so
 * a copy of it taken from the tab does not work on until it expires. The server is not waited
 * for: the page logs out whether it answers or not. A login the server no longer takes is only
 * forgotten.
 */
export function forgetJwt(end: boolean): void {
  const token = storedJwt();
  sessionStorage.removeItem(JWT_KEY);
  if (token && end) {
    void fetch('/auth/jwt/logout', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      keepalive: true,
    }).catch(() => undefined);
  }
}

/** True when the page was served by a Labstation server (not a station). */
export async function servedByServer(): Promise<boolean> {
  try {
    const response = await fetch('/health', { headers: { accept: 'application/json' } });
    if (!response.ok) return false;
    const body = (await response.json()) as { role?: unknown };
    return body.role === 'server';
  } catch {
    return false;
  }
}

function detailText(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const detail = (body as { detail?: unknown }).detail;
  return typeof detail === 'string' ? detail : null;
}

/** Logs in with e-mail and password; keeps the JWT for this tab. */
export async function login(email: string, password: string): Promise<void> {
  let response: Response;
  try {
    response = await fetch('/auth/jwt/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: email, password }).toString(),
    });
  } catch {
    throw new BridgeError('internal', 'The server does not answer. Try again in a moment.');
  }
  const body: unknown = await response.json().catch(() => undefined);
  if (response.status === 429) {
    throw new BridgeError('locked', 'Too many failed logins from here. Wait a few minutes.');
  }
  if (!response.ok) {
    if (detailText(body) === 'LOGIN_BAD_CREDENTIALS' || response.status === 400) {
      throw new BridgeError('unauthenticated', 'Wrong e-mail or password.');
    }
    throw new BridgeError(
      'internal',
      detailText(body) ?? `The server answered ${response.status}.`,
    );
  }
  const token = (body as { access_token?: unknown } | undefined)?.access_token;
  if (typeof token !== 'string') throw new BridgeError('internal', 'The server sent no token.');
  sessionStorage.setItem(JWT_KEY, token);
}

const forbiddenListeners = new Set<() => void>();

/**
 * Calls `listener` whenever the server refuses a call 403: the person's role may have been
 * changed meanwhile (an admin made a user), and the page reads their account again so that it
 * no longer offers what they may not do.
 */
export function onForbidden(listener: () => void): () => void {
  forbiddenListeners.add(listener);
  return () => forbiddenListeners.delete(listener);
}

function forbidden(): void {
  for (const listener of forbiddenListeners) listener();
}

/** One call of the server-mode contract; errors come back as BridgeErrors with their code. */
export async function serverCall<N extends ServerApiName>(
  name: N,
  args: ServerApiArgs<N>,
): Promise<ServerApiResult<N>> {
  const token = storedJwt();
  let response: Response;
  try {
    response = await fetch(`/rpc/${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(args),
    });
  } catch {
    throw new BridgeError('internal', 'The server does not answer. Try again in a moment.');
  }
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    if (response.status === 403) forbidden();
    if (isApiError(body)) throw new BridgeError(body.code, body.message, body.details);
    throw new BridgeError('internal', `The server answered ${response.status}.`);
  }
  return body as ServerApiResult<N>;
}

/**
 * A GET of the server's read API (`/api/...`) with this tab's JWT: the NEMO-style answers,
 * with `{detail}` errors (and `{param: [messages]}` for a bad filter) made BridgeErrors.
 */
export async function serverGet<T>(path: string): Promise<T> {
  const token = storedJwt();
  let response: Response;
  try {
    response = await fetch(path, {
      headers: {
        accept: 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
    });
  } catch {
    throw new BridgeError('internal', 'The server does not answer. Try again in a moment.');
  }
  const body: unknown = await response.json().catch(() => undefined);
  if (response.ok) return body as T;
  const detail = detailText(body);
  if (response.status === 401) throw new BridgeError('unauthenticated', detail ?? 'Log in again.');
  if (response.status === 403) {
    forbidden();
    throw new BridgeError('forbidden', detail ?? 'Not allowed.');
  }
  if (response.status === 404) throw new BridgeError('not_found', detail ?? 'Not found.');
  if (response.status === 400 && typeof body === 'object' && body !== null) {
    const problems = Object.entries(body as Record<string, unknown>).map(
      ([name, messages]) =>
        `${name}: ${Array.isArray(messages) ? messages.join(' ') : String(messages)}`,
    );
    throw new BridgeError('bad_request', problems.join('; '));
  }
  throw new BridgeError('internal', detail ?? `The server answered ${response.status}.`);
}
