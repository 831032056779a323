/**
 * The harvest calls of the server's web carrier (shared/harvestAdminApi.ts). Each runs the
 * functions behind the REST routes of electron/core/server/harvest/ (the resources' operations,
 * grants, triggers, the file and transfer reads with their per-instrument access), so both
 * carriers keep one set of rules. What those throw becomes the contract's errors: a 422's
 * problems keep their place as `details.problems[].path` (without the leading "body"/"query"),
 * so a form shows each at its field.
 */
import type {
  ServerApiName,
  ServerApiParsedArgs,
  ServerApiResult,
} from '../../../../shared/api.js';
import {
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  type Envelope,
} from '../../../../shared/harvest/management.js';
import type { HarvestApiResults } from '../../../../shared/harvestAdminApi.js';
import type { Db } from '../../db/open.js';
import { AppError } from '../../util/errors.js';
import { changedElsewhere } from '../admin/facilitySaves.js';
import { nowIso } from '../../util/ids.js';
import { grant, listGrants, revoke } from '../harvest/access.js';
import {
  getFile,
  listFiles,
  latestTransfersOf,
  readableInstruments,
  type Reader,
} from '../harvest/files.js';
import { hooks } from '../harvest/hooks.js';
import { instruments } from '../harvest/instruments.js';
import { Conflict, NotFound, ValidationProblems, type Problem } from '../harvest/problems.js';
import {
  createRecord,
  listPage,
  removeRecord,
  requireRecord,
  updateRecord,
  type ManagedResource,
} from '../harvest/resource.js';
import { triggerRun } from '../harvest/runs.js';
import { schedules } from '../harvest/schedules.js';
import { serviceAccounts } from '../harvest/serviceAccounts.js';
import { storageLocations } from '../harvest/storageLocations.js';
import type { Account } from '../auth.js';

type HarvestCallName = keyof HarvestApiResults & ServerApiName;

export type HarvestHandlers = {
  [N in HarvestCallName]: (account: Account, args: ServerApiParsedArgs<N>) => ServerApiResult<N>;
};

export interface HarvestHandlerDeps {
  db: Db;
  clock?: () => number;
  /** The server's time zone: date-times without an offset are wall-clock time there. */
  timeZone: () => string;
}

/** A problem as the contract carries it: where (the field's path) and what, in words. */
export interface FieldProblem {
  path: (string | number)[];
  message: string;
  type: string;
}

export function fieldProblemsOf(problems: Problem[]): FieldProblem[] {
  return problems.map((p) => ({
    path: ['body', 'query'].includes(String(p.loc[0])) ? p.loc.slice(1) : p.loc,
    message: p.msg,
    type: p.type,
  }));
}

/** The harvest API's refusals as the contract's errors; anything else passes unchanged. */
export function asAppError(error: unknown): unknown {
  if (error instanceof ValidationProblems) {
    const problems = fieldProblemsOf(error.problems);
    const text = problems.map((p) => `${p.path.join('.') || '(arguments)'}: ${p.message}`);
    return new AppError('validation_failed', text.join('; '), { problems });
  }
  if (error instanceof NotFound) return new AppError('not_found', error.message);
  if (error instanceof Conflict) return new AppError('conflict', error.message);
  return error;
}

function translated<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  return (...args) => {
    try {
      return fn(...args);
    } catch (error) {
      throw asAppError(error);
    }
  };
}

const actorOf = (account: Account): { id: number } => ({ id: account.id });
const readerOf = (account: Account): Reader => ({ id: account.id, role: account.role });

interface ResourceCalls<Out, Created> {
  list: (account: Account, args: { page?: number; size?: number }) => Envelope<Out>;
  create: (account: Account, args: object) => Created;
  update: (account: Account, args: { id: number }) => { item: Out };
  delete: (account: Account, args: { id: number }) => { ok: true };
}

function resourceCalls<Out>(
  db: Db,
  resource: ManagedResource<Out>,
): ResourceCalls<Out, { item: Out }> {
  return {
    list: (_account, args) =>
      listPage(db, resource, { page: args.page ?? 1, size: args.size ?? DEFAULT_PAGE_SIZE }),
    create: (account, args) => ({ item: createRecord(db, resource, actorOf(account), args).item }),
    update: (account, { id, loaded, ...changes }: { id: number; loaded?: unknown }) => {
      if (loaded !== undefined) unchangedSinceLoaded(db, resource, id, loaded);
      return { item: updateRecord(db, resource, actorOf(account), id, changes) };
    },
    delete: (account, { id }) => {
      removeRecord(db, resource, actorOf(account), id);
      return { ok: true };
    },
  };
}

/** JSON text of a value with its objects' keys in order: two records compare by content. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : v,
  );
}

/**
 * An editor's save refused when what an editor edits of the record (the fields of its patch)
 * changed since the editor loaded it (another admin saved it meanwhile): it would put back
 * what that admin changed. What changes on its own (an instrument's last harvest) is not
 * compared. Checked in the same turn of the event loop as the update, so nothing comes between.
 */
function unchangedSinceLoaded<Out>(
  db: Db,
  resource: ManagedResource<Out>,
  id: number,
  loaded: unknown,
): void {
  requireRecord(db, resource, id);
  const now = resource.serialize(db, id);
  const edited = (record: unknown): Record<string, unknown> => {
    const fields = record as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(resource.patchSchema.shape)
        .filter((key) => key in fields)
        .map((key) => [key, fields[key]]),
    );
  };
  if (canonicalJson(edited(now)) === canonicalJson(edited(loaded))) return;
  const name = (now as { name?: unknown }).name;
  throw changedElsewhere(`${resource.label} ${typeof name === 'string' ? name : id}`);
}

/** A resource's four calls under their contract names, e.g. admin.hooks.list. */
function named<P extends string, Out, Created>(
  prefix: P,
  calls: ResourceCalls<Out, Created>,
): Record<`${P}.list`, ResourceCalls<Out, Created>['list']> &
  Record<`${P}.create`, ResourceCalls<Out, Created>['create']> &
  Record<`${P}.update`, ResourceCalls<Out, Created>['update']> &
  Record<`${P}.delete`, ResourceCalls<Out, Created>['delete']> {
  return {
    [`${prefix}.list`]: translated(calls.list),
    [`${prefix}.create`]: translated(calls.create),
    [`${prefix}.update`]: translated(calls.update),
    [`${prefix}.delete`]: translated(calls.delete),
  } as Record<`${P}.list`, ResourceCalls<Out, Created>['list']> &
    Record<`${P}.create`, ResourceCalls<Out, Created>['create']> &
    Record<`${P}.update`, ResourceCalls<Out, Created>['update']> &
    Record<`${P}.delete`, ResourceCalls<Out, Created>['delete']>;
}

/** The file filters as the REST query has them (text), so listFiles reads them the same way. */
function fileQuery(args: ServerApiParsedArgs<'files.list'>): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value !== undefined) query[key] = String(value);
  }
  return query;
}

export function createHarvestHandlers(deps: HarvestHandlerDeps): HarvestHandlers {
  const { db } = deps;
  const clock = deps.clock ?? Date.now;
  const accounts = resourceCalls(db, serviceAccounts);
  return {
    ...named('admin.instruments', resourceCalls(db, instruments)),
    ...named('admin.storageLocations', resourceCalls(db, storageLocations)),
    ...named('admin.serviceAccounts', {
      ...accounts,
      // The key is in the create answer only: the server keeps its hash.
      create: (account, args) => {
        const { item, extra } = createRecord(db, serviceAccounts, actorOf(account), args);
        return { item, key: (extra as { key: string }).key };
      },
    }),
    ...named('admin.schedules', resourceCalls(db, schedules)),
    ...named('admin.hooks', resourceCalls(db, hooks)),
    'admin.schedules.trigger': translated((account, args) =>
      triggerRun(db, args.id, account.id, clock()),
    ),
    'admin.access.list': translated((_account, args) => ({
      grants: listGrants(db, args.instrument_id),
    })),
    'admin.access.grant': translated((account, args) =>
      db
        .transaction(() =>
          grant(db, args.instrument_id, { user_id: args.user_id }, account.id, nowIso(clock)),
        )
        .immediate(),
    ),
    'admin.access.revoke': translated((_account, args) => {
      revoke(db, args.instrument_id, args.user_id);
      return { ok: true };
    }),
    'files.list': translated((account, args) =>
      listFiles(db, readerOf(account), fileQuery(args), deps.timeZone()),
    ),
    'files.get': translated((account, args) => {
      const reader = readerOf(account);
      const file = getFile(db, reader, args.id);
      const { items, total } = latestTransfersOf(db, reader, file.id, MAX_PAGE_SIZE);
      return { file, transfers: items, transfers_total: total };
    }),
    'files.instruments': (account) => ({
      instruments: readableInstruments(db, readerOf(account)),
    }),
  };
}
