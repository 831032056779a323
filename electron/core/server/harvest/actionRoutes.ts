/**
 * The management operations only one resource has, beside the five every resource shares
 * (managedRoutes.ts): the grants that let users read an instrument's files, and a schedule's
 * manual trigger.
 */
import { z } from 'zod';
import { nowIso } from '../../util/ids.js';
import { grant, grantIn, grantOut, listGrants, revoke } from './access.js';
import { detailSchema } from './problems.js';
import type { HarvestApiDeps } from './routes.js';
import {
  TAG,
  badId,
  forbidden,
  idOf,
  idParams,
  invalid,
  notFound,
  unauthorized,
  type Route,
} from './routing.js';
import { triggerOut, triggerRun } from './runs.js';

export function registerActionRoutes(
  route: Route,
  deps: HarvestApiDeps,
  clock: () => number,
): void {
  const { db } = deps;

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
      params: z.object({
        id: z.number().int().describe('the instrument id'),
        user_id: z.number().int().describe('the user id'),
      }),
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
}
