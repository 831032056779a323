/**
 * The docs of the routes app.ts registers itself: the health check and the login that gives the
 * JWT the other routes take.
 */
import { z } from 'zod';
import { DETAIL } from '../auth.js';
import { detailResponse, GUARD_RESPONSES } from './common.js';
import type { ApiDocs } from './registry.js';

export const SERVER_TAG = 'Server';
export const AUTH_TAG = 'Authentication';

/** The form `POST /auth/jwt/login` reads (FastAPI-Users' OAuth2 password form). */
const loginForm = z.object({
  username: z.string().min(1).describe("The account's e-mail address."),
  password: z.string().min(1),
});

export function describeServerBasics(docs: ApiDocs): void {
  docs.describeTag(SERVER_TAG, 'Health and this documentation; no credentials needed.');
  docs.describeTag(
    AUTH_TAG,
    'Log in with an e-mail address and password for a JWT to send as `Authorization: Bearer`.',
  );
  docs.add({
    method: 'GET',
    path: '/health',
    tag: SERVER_TAG,
    summary: 'Health check',
    description: 'Answers as soon as the server takes requests; for load balancers and monitors.',
    security: 'none',
    responses: {
      200: {
        description: 'The server is up.',
        schema: z.object({ status: z.literal('ok'), role: z.literal('server') }),
        example: { status: 'ok', role: 'server' },
      },
    },
  });
  docs.add({
    method: 'POST',
    path: '/auth/jwt/login',
    tag: AUTH_TAG,
    summary: 'Log in',
    description:
      'Takes a form (`application/x-www-form-urlencoded`) and returns a JWT for ' +
      '`Authorization: Bearer <access_token>`, valid for 8 hours unless configured otherwise. After 10 failed logins from ' +
      'one address in 15 minutes, that address must wait.',
    security: 'none',
    body: loginForm,
    bodyContentType: 'application/x-www-form-urlencoded',
    bodyExample: { username: 'ada@example.org', password: 'correct horse battery' },
    responses: {
      200: {
        description: 'Logged in.',
        schema: z.object({ access_token: z.string(), token_type: z.literal('bearer') }),
        example: {
          access_token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1LTEifQ.c2lnbmF0dXJl',
          token_type: 'bearer',
        },
      },
      400: detailResponse(
        'Wrong e-mail or password, or a disabled account.',
        'LOGIN_BAD_CREDENTIALS',
      ),
      422: {
        description: 'A field is missing or empty.',
        schema: z.object({
          detail: z.array(
            z.object({ loc: z.array(z.string()), msg: z.string(), type: z.string() }),
          ),
        }),
        example: {
          detail: [{ loc: ['body', 'password'], msg: 'Field required', type: 'missing' }],
        },
      },
      429: detailResponse('Too many failed logins from this address: wait.', DETAIL.throttled),
    },
  });
  docs.add({
    method: 'POST',
    path: '/auth/jwt/logout',
    tag: AUTH_TAG,
    summary: 'Log out',
    description:
      'Ends the JWT sent with it (`Authorization: Bearer`): from now on it authenticates ' +
      'nowhere, though it has not expired. Other logins of the same person go on.',
    security: 'user',
    responses: {
      204: { description: 'Logged out: the token is ended.' },
      400: detailResponse(
        'Called with an API token, not a JWT.',
        'Authorization: log out with the JWT of POST /auth/jwt/login (Bearer)',
      ),
      401: GUARD_RESPONSES[401],
      429: GUARD_RESPONSES[429],
    },
  });
}
