/**
 * The harvest management API (spec 002) and its file and transfer records: the same five
 * operations on every management resource (Admin only), access grants, schedule triggers, and
 * the records every user may read within their grants. Paths have no trailing slash, as the
 * spec writes them (the NEMO API's have one, as NEMO's do).
 *
 * Errors: 422 `{"detail": [{"loc", "msg", "type"}]}` for bad input, 404 and 409
 * `{"detail": "..."}`, 401/403 from the guards.
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
} from 'fastify';
import { z } from 'zod';
import type { Db } from '../../db/open.js';
import { nowIso } from '../../util/ids.js';
import type { Logger } from '../../util/log.js';
import type { ApiDocs, OperationDoc, ResponseDoc } from '../openapi/registry.js';
import { grant, grantIn, grantOut, listGrants, revoke } from './access.js';
import {
  fileExample,
  fileOut,
  fileQuery,
  getFile,
  getTransfer,
  listFiles,
  listTransfers,
  singleValues,
  pagingOf,
  transferExample,
  transferOut,
  transferQuery,
  type Reader,
} from './files.js';
import { hooks } from './hooks.js';
import { instruments } from './instruments.js';
import {
  Conflict,
  NotFound,
  ValidationProblems,
  detailSchema,
  problem,
  validationErrorSchema,
  type Problem,
} from './problems.js';
import {
  createRecord,
  listPage,
  removeRecord,
  updateRecord,
  type ManagedResource,
} from './resource.js';
import { triggerOut, triggerRun } from './runs.js';
import { schedules } from './schedules.js';
import { serviceAccounts } from './serviceAccounts.js';
import { storageLocations } from './storageLocations.js';

export interface HarvestApiDeps {
  db: Db;
  log: Logger;
  docs: ApiDocs;
  /** Authenticates any account; sends 401 itself. */
  anyUser: onRequestAsyncHookHandler;
  /** Authenticates an admin; sends 401/403 itself. */
  admin: onRequestAsyncHookHandler;
  /** The server's time zone: date-time filters without an offset are wall-clock time there. */
  timeZone: () => string;
  clock?: () => number;
}

const TAG = 'Harvest management';
const RECORDS_TAG = 'Harvest records';

export const MANAGED_RESOURCES = [
  instruments,
  storageLocations,
  serviceAccounts,
  schedules,
  hooks,
] as const;

function envelopeOf(item: z.ZodType): z.ZodType {
  return z.object({
    items: z.array(item),
    total: z.number().int(),
    page: z.number().int(),
    size: z.number().int(),
  });
}

const pageQuery = z.object({
  page: z.string().optional().describe('page number, from 1 (default 1)'),
  size: z.string().optional().describe('items per page, 1 to 1000 (default 50)'),
});
const idParams = z.object({ id: z.string().describe('the record id') });

const unauthorized = {
  description: 'No credentials, or credentials that name no active account',
  schema: detailSchema,
  example: { detail: 'Authentication credentials were not provided.' },
};
const forbidden = {
  description: 'The account is not an admin',
  schema: detailSchema,
  example: { detail: 'You do not have permission to perform this action.' },
};
const invalid = (loc: (string | number)[], msg: string) => ({
  description: 'A field breaks a rule: every problem, each with where it is',
  schema: validationErrorSchema,
  example: { detail: [{ loc, msg, type: 'value_error' }] },
});
/** A path id that is not a whole number (idOf). */
const badId = (name = 'id') => ({
  description: `The ${name} in the path is not a whole number`,
  schema: validationErrorSchema,
  example: {
    detail: [{ loc: ['path', name], msg: 'must be a whole number', type: 'int_parsing' }],
  },
});
const notFound = (label: string) => ({
  description: `No ${label} with that id (or not one this user may see)`,
  schema: detailSchema,
  example: { detail: `no ${label} with id 999` },
});

/**
 * A harvest API path asked for with a trailing slash. The API (FastAPI in spec 002) serves its
 * paths without one, and Starlette's redirect_slashes sends such a request on to the path
 * without it (307, method and body kept, query kept); without this, `/api/instruments/` met
 * the route of `/api/instruments/{id}` and answered that `id` must be a whole number.
 */
export const HARVEST_WITH_SLASH =
  /^\/api\/(instruments|storage-locations|service-accounts|schedules|hooks|files|transfers)(\/-?\d{1,15}(\/access(\/-?\d{1,15})?|\/trigger)?)?\/$/;

/** The 307 to `url` without its trailing slash, when HARVEST_WITH_SLASH names it; else null. */
export function withoutSlash(reply: FastifyReply, url: string): FastifyReply | null {
  const at = url.indexOf('?');
  const path = at < 0 ? url : url.slice(0, at);
  if (!HARVEST_WITH_SLASH.test(path)) return null;
  return reply.redirect(`${path.slice(0, -1)}${at < 0 ? '' : url.slice(at)}`, 307);
}

/** Sends what a handler threw as the API's error bodies; anything else goes on to fastify. */
function sendError(reply: FastifyReply, error: unknown): FastifyReply {
  if (error instanceof ValidationProblems) {
    return reply.code(422).send({ detail: error.problems });
  }
  if (error instanceof NotFound) return reply.code(404).send({ detail: error.message });
  if (error instanceof Conflict) return reply.code(409).send({ detail: error.message });
  throw error;
}

/** A path id; a negative one is a whole number too (FastAPI's `id: int`), and finds nothing: 404. */
function idOf(request: FastifyRequest, name = 'id'): number {
  const text = (request.params as Record<string, string>)[name] ?? '';
  if (!/^-?\d{1,15}$/.test(text)) {
    throw new ValidationProblems([
      problem(['path', name], 'must be a whole number', 'int_parsing'),
    ]);
  }
  return Number(text);
}

function readerOf(request: FastifyRequest): Reader {
  const account = request.principal!.account;
  return { id: account.id, role: account.role };
}

export function registerHarvestApi(app: FastifyInstance, deps: HarvestApiDeps): void {
  const { db, docs } = deps;
  const clock = deps.clock ?? Date.now;
  docs.describeTag(
    TAG,
    'Instruments, storage locations, service accounts (the stations), schedules and hooks ' +
      '(spec 002), for admins. Changes reach the station that runs an instrument within ' +
      'seconds; schedules are deployed there and report back.',
  );
  docs.describeTag(
    RECORDS_TAG,
    'The file and transfer records every station pushes. Admins read all of them; other ' +
      'users those of instruments granted to them (`/api/instruments/{id}/access`).',
  );
  const route = (
    doc: OperationDoc,
    guard: onRequestAsyncHookHandler,
    handler: (request: FastifyRequest, reply: FastifyReply) => unknown,
  ): void => {
    docs.add(doc);
    const url = doc.path.replace(/\{(\w+)\}/g, ':$1');
    app.route({
      method: doc.method,
      url,
      // The slash first, before credentials, as for the paths no route matches (app.ts).
      onRequest: [async (request, reply) => withoutSlash(reply, request.url) ?? undefined, guard],
      handler: (request, reply) => {
        try {
          return handler(request, reply);
        } catch (error) {
          return sendError(reply, error);
        }
      },
    });
  };

  for (const resource of MANAGED_RESOURCES) registerResource(resource);

  function registerResource(resource: ManagedResource<unknown>): void {
    const base = `/api/${resource.path}`;
    const label = resource.label;
    const common = { 401: unauthorized, 403: forbidden };
    route(
      {
        method: 'GET',
        path: base,
        tag: TAG,
        summary: `List ${label}s`,
        security: 'admin',
        query: pageQuery,
        responses: {
          200: {
            description: `One page of ${label}s, in id order`,
            schema: envelopeOf(resource.outSchema),
            example: { items: [resource.examples.out], total: 1, page: 1, size: 50 },
          },
          ...common,
          422: invalid(['query', 'size'], 'must be between 1 and 1000'),
        },
      },
      deps.admin,
      (request) => {
        const problems: Problem[] = [];
        const query = singleValues(request.query as Record<string, string | string[]>, problems);
        const paging = pagingOf(query, problems);
        if (problems.length) throw new ValidationProblems(problems);
        return listPage(db, resource, paging);
      },
    );
    route(
      {
        method: 'GET',
        path: `${base}/{id}`,
        tag: TAG,
        summary: `Get one ${label}`,
        security: 'admin',
        params: idParams,
        responses: {
          200: {
            description: `The ${label}`,
            schema: resource.outSchema,
            example: resource.examples.out,
          },
          ...common,
          404: notFound(label),
          422: badId(),
        },
      },
      deps.admin,
      (request) => {
        const id = idOf(request);
        if (!db.prepare(`SELECT 1 FROM ${resource.table} WHERE id = ?`).get(id)) {
          throw new NotFound(`no ${label} with id ${id}`);
        }
        return resource.serialize(db, id);
      },
    );
    route(
      {
        method: 'POST',
        path: base,
        tag: TAG,
        summary: `Create a ${label}`,
        security: 'admin',
        body: resource.createSchema,
        bodyExample: resource.examples.create,
        responses: {
          201: {
            description:
              resource === serviceAccounts
                ? `The new ${label}, with \`key\`: the secret its station syncs with, shown only here`
                : `The new ${label}`,
            schema:
              resource === serviceAccounts
                ? (resource.outSchema as z.ZodObject).extend({ key: z.string() })
                : resource.outSchema,
            example:
              resource === serviceAccounts
                ? { ...(resource.examples.out as object), key: 'Xk3v…(shown once)' }
                : resource.examples.out,
          },
          ...common,
          422: invalid(['body', 'name'], 'Field required'),
        },
      },
      deps.admin,
      (request, reply) => {
        const actor = { id: request.principal!.account.id };
        const { item, extra } = createRecord(db, resource, actor, request.body);
        return reply.code(201).send({ ...(item as object), ...extra });
      },
    );
    // Renaming a storage location that a redirect hook names is refused (storageLocations.ts).
    const renameConflict: Record<number, ResponseDoc> =
      resource === storageLocations
        ? {
            409: {
              description: 'A redirect hook names the location: change its config first',
              schema: detailSchema,
              example: {
                detail: 'storage location 3 is named by hook raw-aside; change its config first',
              },
            },
          }
        : {};
    route(
      {
        method: 'PATCH',
        path: `${base}/{id}`,
        tag: TAG,
        summary: `Update a ${label}: only the fields given change`,
        security: 'admin',
        params: idParams,
        body: resource.patchSchema,
        bodyExample: resource.examples.patch,
        responses: {
          200: {
            description: `The ${label} as it is now`,
            schema: resource.outSchema,
            example: resource.examples.out,
          },
          ...common,
          404: notFound(label),
          ...renameConflict,
          422: invalid(['body', 'enabled'], 'Invalid input: expected boolean, received string'),
        },
      },
      deps.admin,
      (request) => {
        const id = idOf(request);
        const actor = { id: request.principal!.account.id };
        return updateRecord(db, resource, actor, id, request.body);
      },
    );
    route(
      {
        method: 'DELETE',
        path: `${base}/{id}`,
        tag: TAG,
        summary: `Delete a ${label}`,
        security: 'admin',
        params: idParams,
        responses: {
          204: { description: 'Deleted', example: null },
          ...common,
          404: notFound(label),
          409: {
            description: 'Something still refers to it; the answer names what',
            schema: detailSchema,
            example: { detail: `${label} 7 is used by instrument TEM camera` },
          },
          422: badId(),
        },
      },
      deps.admin,
      (request, reply) => {
        const id = idOf(request);
        const actor = { id: request.principal!.account.id };
        removeRecord(db, resource, actor, id);
        return reply.code(204).send();
      },
    );
  }

  // --- Access grants -------------------------------------------------------------------------
  route(
    {
      method: 'GET',
      path: '/api/instruments/{id}/access',
      tag: TAG,
      summary: "List the users granted access to an instrument's files",
      security: 'admin',
      params: idParams,
      responses: {
        200: {
          description: 'The grants, by user id',
          schema: z.array(grantOut),
          example: [{ user_id: 12, granted_at: '2026-11-02T13:40:00.000Z' }],
        },
        401: unauthorized,
        403: forbidden,
        404: notFound('instrument'),
        422: badId(),
      },
    },
    deps.admin,
    (request) => listGrants(db, idOf(request)),
  );
  route(
    {
      method: 'POST',
      path: '/api/instruments/{id}/access',
      tag: TAG,
      summary: "Grant a user access to an instrument's files and their transfers",
      security: 'admin',
      params: idParams,
      body: grantIn,
      bodyExample: { user_id: 12 },
      responses: {
        201: {
          description: 'Granted',
          schema: grantOut,
          example: { user_id: 12, granted_at: '2026-11-02T13:40:00.000Z' },
        },
        200: {
          description: 'The user had access already: the grant as it is',
          schema: grantOut,
          example: { user_id: 12, granted_at: '2026-11-02T13:40:00.000Z' },
        },
        401: unauthorized,
        403: forbidden,
        404: notFound('instrument'),
        422: invalid(['body', 'user_id'], 'no user with id 99'),
      },
    },
    deps.admin,
    (request, reply) => {
      const id = idOf(request);
      const result = db
        .transaction(() =>
          grant(db, id, request.body, request.principal!.account.id, nowIso(clock)),
        )
        .immediate();
      return reply.code(result.created ? 201 : 200).send(result.grant);
    },
  );
  route(
    {
      method: 'DELETE',
      path: '/api/instruments/{id}/access/{user_id}',
      tag: TAG,
      summary: 'Revoke a user’s access to an instrument',
      security: 'admin',
      params: z.object({ id: z.string(), user_id: z.string() }),
      responses: {
        204: { description: 'Revoked', example: null },
        401: unauthorized,
        403: forbidden,
        404: {
          description: 'No such instrument, or the user has no access to it',
          schema: detailSchema,
          example: { detail: 'user 12 has no access to instrument 7' },
        },
        422: badId('user_id'),
      },
    },
    deps.admin,
    (request, reply) => {
      revoke(db, idOf(request), idOf(request, 'user_id'));
      return reply.code(204).send();
    },
  );

  // --- Triggers ------------------------------------------------------------------------------
  route(
    {
      method: 'POST',
      path: '/api/schedules/{id}/trigger',
      tag: TAG,
      summary: 'Trigger a manual harvest of the schedule’s instrument now',
      description:
        'Queues a run for the station that runs the instrument. `GET /api/schedules/{id}` ' +
        'shows its state and counts once the station reports them. A station that is offline ' +
        'gets the run when it connects (`queued_offline`).',
      security: 'admin',
      params: idParams,
      responses: {
        202: {
          description: 'The run is queued',
          schema: triggerOut,
          example: {
            run_id: 32,
            state: 'queued',
            station: { id: 3, name: 'tem-pc', online: true },
            queued_offline: false,
            detail: 'run 32 is queued; station tem-pc starts it within seconds',
          },
        },
        401: unauthorized,
        403: forbidden,
        404: notFound('schedule'),
        409: {
          description: 'No station can run it: no service account, or it is disabled',
          schema: detailSchema,
          example: { detail: 'instrument 7 (TEM camera) has no service account to run it' },
        },
        422: badId(),
      },
    },
    deps.admin,
    (request, reply) => {
      const result = triggerRun(db, idOf(request), request.principal!.account.id, clock());
      return reply.code(202).send(result);
    },
  );

  // --- Files and transfers -------------------------------------------------------------------
  const recordResponses = { 401: unauthorized };
  route(
    {
      method: 'GET',
      path: '/api/files',
      tag: RECORDS_TAG,
      summary: 'List file records',
      description: 'Admins see every file; other users the files of instruments granted to them.',
      security: 'user',
      query: fileQuery,
      responses: {
        200: {
          description: 'One page of files, in id order',
          schema: envelopeOf(fileOut),
          example: { items: [fileExample], total: 1, page: 1, size: 50 },
        },
        ...recordResponses,
        422: invalid(['query', 'instrument_id'], 'must be a whole number'),
      },
    },
    deps.anyUser,
    (request) =>
      listFiles(
        db,
        readerOf(request),
        request.query as Record<string, string | string[]>,
        deps.timeZone(),
      ),
  );
  route(
    {
      method: 'GET',
      path: '/api/files/{id}',
      tag: RECORDS_TAG,
      summary: 'Get a file record',
      security: 'user',
      params: idParams,
      responses: {
        200: { description: 'The file', schema: fileOut, example: fileExample },
        ...recordResponses,
        404: notFound('file'),
        422: badId(),
      },
    },
    deps.anyUser,
    (request) => getFile(db, readerOf(request), idOf(request)),
  );
  route(
    {
      method: 'GET',
      path: '/api/transfers',
      tag: RECORDS_TAG,
      summary: 'List transfer records',
      description: 'Admins see every transfer; other users those of files they may see.',
      security: 'user',
      query: transferQuery,
      responses: {
        200: {
          description: 'One page of transfers, in id order',
          schema: envelopeOf(transferOut),
          example: { items: [transferExample], total: 1, page: 1, size: 50 },
        },
        ...recordResponses,
        422: invalid(['query', 'file_id'], 'must be a whole number'),
      },
    },
    deps.anyUser,
    (request) =>
      listTransfers(db, readerOf(request), request.query as Record<string, string | string[]>),
  );
  route(
    {
      method: 'GET',
      path: '/api/transfers/{id}',
      tag: RECORDS_TAG,
      summary: 'Get a transfer record',
      security: 'user',
      params: idParams,
      responses: {
        200: { description: 'The transfer', schema: transferOut, example: transferExample },
        ...recordResponses,
        404: notFound('transfer'),
        422: badId(),
      },
    },
    deps.anyUser,
    (request) => getTransfer(db, readerOf(request), idOf(request)),
  );
}
