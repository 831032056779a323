/**
 * The five operations every management resource has (list, get, create, update, delete), the
 * same routes and docs for each of MANAGED_RESOURCES, Admin only. What only one resource has is
 * in actionRoutes.ts.
 */
import { z } from 'zod';
import type { ResponseDoc } from '../openapi/registry.js';
import { lastValues, pagingOf } from './files.js';
import { hooks } from './hooks.js';
import { instruments } from './instruments.js';
import { NotFound, ValidationProblems, detailSchema, type Problem } from './problems.js';
import {
  createRecord,
  listPage,
  removeRecord,
  updateRecord,
  type ManagedResource,
} from './resource.js';
import type { HarvestApiDeps } from './routes.js';
import {
  TAG,
  badId,
  envelopeOf,
  forbidden,
  idOf,
  idParams,
  invalid,
  notFound,
  pageParams,
  unauthorized,
  type Route,
} from './routing.js';
import { schedules } from './schedules.js';
import { serviceAccounts } from './serviceAccounts.js';
import { storageLocations } from './storageLocations.js';

export const MANAGED_RESOURCES = [
  instruments,
  storageLocations,
  serviceAccounts,
  schedules,
  hooks,
] as const;

const pageQuery = z.object(pageParams);

export function registerManagedRoutes(route: Route, deps: HarvestApiDeps): void {
  for (const resource of MANAGED_RESOURCES) registerResource(route, deps, resource);
}

function registerResource(
  route: Route,
  deps: HarvestApiDeps,
  resource: ManagedResource<unknown>,
): void {
  const { db } = deps;
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
      const query = lastValues(request.query as Record<string, string | string[]>);
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
  // Nothing refers to a hook or a schedule (a schedule's runs stay without it).
  const deleteConflict: Record<number, ResponseDoc> =
    resource === hooks || resource === schedules
      ? {}
      : {
          409: {
            description: 'Something still refers to it; the answer names what',
            schema: detailSchema,
            example: { detail: `${label} 7 is used by instrument TEM camera` },
          },
        };
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
        ...deleteConflict,
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
