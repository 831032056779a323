/**
 * The harvest management API (spec 002) and its file and transfer records: the same five
 * operations on every management resource (Admin only), access grants, schedule triggers, and
 * the records every user may read within their grants. Paths have no trailing slash, as the
 * spec writes them (the NEMO API's have one, as NEMO's do).
 *
 * Errors: 422 `{"detail": [{"loc", "msg", "type"}]}` for bad input, 404 and 409
 * `{"detail": "..."}`, 401/403 from the guards.
 */
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import type { Db } from '../../db/open.js';
import type { Logger } from '../../util/log.js';
import type { ApiDocs } from '../openapi/registry.js';
import { registerActionRoutes } from './actionRoutes.js';
import { registerManagedRoutes } from './managedRoutes.js';
import { registerRecordRoutes } from './recordRoutes.js';
import { RECORDS_TAG, TAG, routeRegistrar } from './routing.js';

export { MANAGED_RESOURCES } from './managedRoutes.js';
export { HARVEST_WITH_SLASH, withoutSlash } from './routing.js';

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

export function registerHarvestApi(app: FastifyInstance, deps: HarvestApiDeps): void {
  const { docs } = deps;
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
  const route = routeRegistrar(app, docs);
  registerManagedRoutes(route, deps);
  registerActionRoutes(route, deps, clock);
  registerRecordRoutes(route, deps);
}
