/**
 * The web UI's routes in the OpenAPI document: the carrier of the server-mode contract,
 * `POST /rpc/{name}`, whose bodies are the contract's own argument schemas, and the UI itself.
 */
import { z } from 'zod';
import {
  serverApiAccess,
  serverApiSchemas,
  type ServerApiAccess,
  type ServerApiName,
  type ServerApiResult,
} from '../../../../shared/api.js';
import { ERROR_CODES } from '../../../../shared/errors.js';
import type { ApiDocs } from '../openapi/registry.js';

export const WEB_TAG = 'Web UI carrier';

const rpcError = z
  .object({
    code: z.enum(ERROR_CODES),
    message: z.string(),
    details: z.unknown().optional(),
    detail: z.string().describe('The message again, for clients that read `detail`.'),
  })
  .meta({ id: 'RpcError', description: "A failed call: a code from the contract's list." });

const rpcErrorExample = (code: (typeof ERROR_CODES)[number], message: string) => ({
  description: message,
  schema: rpcError,
  example: { code, message, detail: message },
});

const NAMES = Object.keys(serverApiSchemas) as ServerApiName[];

// Titled copies, so the docs show which schema is which call's; the contract's own stay as they are.
const callArguments: z.ZodType[] = NAMES.map((name) =>
  serverApiSchemas[name].meta({ title: name }),
);

const accountExample: ServerApiResult<'account.me'> = {
  account: {
    id: 2,
    uuid: '5f0c2a52-3f1d-4b8e-9a57-0d1f7e6c2b10',
    email: 'alice@example.org',
    username: 'alice',
    first_name: 'Alice',
    last_name: 'Liddell',
    role: 'user',
  },
};

const ACCESS_WORDS: Record<ServerApiAccess, string> = {
  any: 'anyone logged in',
  staff: 'staff and admins',
  admin: 'admins',
};

export function describeWebUi(docs: ApiDocs): void {
  docs.describeTag(
    WEB_TAG,
    'What the browser UI of the server calls: one route, `POST /rpc/{name}`, for every call ' +
      "of the server-mode contract (shared/api.ts), which checks each call's arguments.",
  );
  const calls = NAMES.map((name) => `| \`${name}\` | ${ACCESS_WORDS[serverApiAccess[name]]} |`);
  docs.add({
    method: 'POST',
    path: '/rpc/{name}',
    tag: WEB_TAG,
    summary: 'Call the server-mode contract',
    description:
      'The body holds the arguments of the call named in the path (one of the schemas below, ' +
      'by its title); the answer is its result.\n\n| Call | Who may call |\n|---|---|\n' +
      calls.join('\n'),
    security: 'user',
    params: z.object({ name: z.enum(NAMES).describe('The call.') }),
    body: z.union(callArguments as [z.ZodType, ...z.ZodType[]]),
    bodyExample: {},
    responses: {
      200: {
        description: "The call's result (ServerApiResults in shared/api.ts); here `account.me`'s.",
        example: accountExample,
      },
      400: rpcErrorExample(
        'bad_request',
        'usage.mine: limit: Too big: expected number to be <=500',
      ),
      401: rpcErrorExample('unauthenticated', 'Log in first.'),
      403: rpcErrorExample('forbidden', 'admin.facility is for admins only'),
      404: rpcErrorExample('not_found', 'no call named "nope" on the server'),
      409: rpcErrorExample('conflict', 'Usage event 31 changed meanwhile; reload it.'),
      429: rpcErrorExample('locked', 'Too many failed attempts; wait.'),
    },
    operationId: 'callRpc',
  });
  docs.add({
    method: 'GET',
    path: '/',
    tag: WEB_TAG,
    summary: 'The web UI',
    description:
      "The browser UI's page; its scripts and styles are served beside it. Not an API: open it " +
      'in a browser.',
    security: 'none',
    responses: {
      200: {
        description: 'The page (or, when the UI is not built, a plain-text note saying so).',
        contentType: 'text/html',
        schema: z.string(),
        example: '<!doctype html>\n<html lang="en">…</html>\n',
      },
    },
  });
}
