/**
 * One management resource of the harvest API (spec 002: instruments, storage-locations,
 * service-accounts, schedules, hooks): its schemas, examples and store operations. The routes
 * (managedRoutes.ts) are the same five operations for every resource.
 */
import type { z } from 'zod';
import type { Envelope } from '../../../../shared/harvest/management.js';
import { lineProblem } from '../../../../shared/text.js';
import type { Db } from '../../db/open.js';
import { nowIso } from '../../util/ids.js';
import { NotFound, ValidationProblems, problem, parseBody } from './problems.js';

export interface Actor {
  id: number;
}

export interface Context {
  db: Db;
  actor: Actor;
  now: string;
}

export interface ManagedResource<Out> {
  /** Path segment: /api/<path>. */
  path: string;
  /** In messages: "no instrument with id 5". */
  label: string;
  table: string;
  createSchema: z.ZodObject;
  patchSchema: z.ZodObject;
  outSchema: z.ZodType<Out>;
  /** Fields a client may send back as it got them; they are ignored on input. */
  readOnly: readonly string[];
  examples: { out: Out; create: Record<string, unknown>; patch: Record<string, unknown> };
  serialize(db: Db, id: number): Out;
  /** Stores a checked new record; returns its id (and what only the create response carries). */
  create(ctx: Context, input: Record<string, unknown>): { id: number; extra?: object };
  update(ctx: Context, id: number, input: Record<string, unknown>): void;
  /** Throws Conflict naming what still refers to it. */
  remove(ctx: Context, id: number): void;
}

export function exists(db: Db, table: string, id: number): boolean {
  return db.prepare(`SELECT 1 FROM ${table} WHERE id = ?`).get(id) !== undefined;
}

export function requireRecord(db: Db, resource: { table: string; label: string }, id: number) {
  if (!exists(db, resource.table, id)) {
    throw new NotFound(`no ${resource.label} with id ${id}`);
  }
}

/** The body minus the read-only fields a client may echo back. */
export function withoutReadOnly(body: unknown, readOnly: readonly string[]): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const copy: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const field of readOnly) delete copy[field];
  return copy;
}

export function parseInput<Out>(
  resource: ManagedResource<Out>,
  schema: z.ZodObject,
  body: unknown,
): Record<string, unknown> {
  return parseBody<z.ZodObject>(schema, withoutReadOnly(body, resource.readOnly));
}

/** One page of a resource's records, in id order (the list operation of every resource). */
export function listPage<Out>(
  db: Db,
  resource: ManagedResource<Out>,
  paging: { page: number; size: number },
): Envelope<Out> {
  return db.transaction(() => {
    const total = db.prepare(`SELECT count(*) FROM ${resource.table}`).pluck().get() as number;
    const ids = db
      .prepare(`SELECT id FROM ${resource.table} ORDER BY id LIMIT ? OFFSET ?`)
      .pluck()
      .all(paging.size, (paging.page - 1) * paging.size) as number[];
    return { items: ids.map((id) => resource.serialize(db, id)), total, ...paging };
  })();
}

export function context(db: Db, actor: Actor): Context {
  return { db, actor, now: nowIso() };
}

/**
 * The create operation: checks `body`, stores it in one transaction, and answers the record
 * as stored plus what only the create answer carries (a service account's key).
 */
export function createRecord<Out>(
  db: Db,
  resource: ManagedResource<Out>,
  actor: Actor,
  body: unknown,
): { item: Out; extra: object | undefined } {
  const input = parseInput(resource, resource.createSchema, body);
  checkNewName(input, null);
  return db
    .transaction(() => {
      const { id, extra } = resource.create(context(db, actor), input);
      return { item: resource.serialize(db, id), extra };
    })
    .immediate();
}

/** The update operation: only the fields given change; answers the record as it is now. */
export function updateRecord<Out>(
  db: Db,
  resource: ManagedResource<Out>,
  actor: Actor,
  id: number,
  body: unknown,
): Out {
  // A missing record is 404 whatever the body says.
  requireRecord(db, resource, id);
  const input = parseInput(resource, resource.patchSchema, body);
  if (typeof (input as { name?: unknown }).name === 'string') {
    const stored = db.prepare(`SELECT name FROM ${resource.table} WHERE id = ?`).pluck().get(id);
    checkNewName(input, typeof stored === 'string' ? stored : null);
  }
  return db
    .transaction(() => {
      resource.update(context(db, actor), id, input);
      return resource.serialize(db, id);
    })
    .immediate();
}

/**
 * A name given or changed is one line (shared/text.ts lineProblem: no control character or line
 * separator). Checked here, not in the shape, so that a name stored before the rule still saves
 * back unchanged.
 */
function checkNewName(input: unknown, stored: string | null): void {
  const name = (input as { name?: unknown }).name;
  if (typeof name !== 'string' || name === stored) return;
  const broken = lineProblem(name);
  if (broken !== null) throw new ValidationProblems([problem(['body', 'name'], broken)]);
}

export function removeRecord<Out>(
  db: Db,
  resource: ManagedResource<Out>,
  actor: Actor,
  id: number,
): void {
  db.transaction(() => resource.remove(context(db, actor), id)).immediate();
}

/** A reference to another record that must exist: a problem at `loc` when it does not. */
export function checkReference(
  db: Db,
  table: string,
  label: string,
  field: string,
  id: number | null | undefined,
): ReturnType<typeof problem>[] {
  if (id === null || id === undefined || exists(db, table, id)) return [];
  return [problem(['body', field], `no ${label} with id ${id}`, 'missing_reference')];
}

/** A name that must be unique in `table`. */
export function checkUniqueName(
  db: Db,
  table: string,
  label: string,
  name: string | undefined,
  id: number | null,
): ReturnType<typeof problem>[] {
  if (name === undefined) return [];
  const other = db
    .prepare(`SELECT id FROM ${table} WHERE name = ? AND id IS NOT ?`)
    .pluck()
    .get(name, id) as number | undefined;
  return other === undefined
    ? []
    : [problem(['body', 'name'], `${label} ${other} already has this name`, 'unique')];
}

/** The count of rows referring to a record, for a 409 message. */
export function countWhere(db: Db, sql: string, id: number): number {
  return db.prepare(sql).pluck().get(id) as number;
}

export { idSchema, nameSchema } from '../../../../shared/harvest/management.js';
