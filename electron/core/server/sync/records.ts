/**
 * What every kind of pushed record shares: the refusal that stops a batch at one record, the
 * payload checks, and the station's right to write for a tool.
 */
import { z } from 'zod';
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';
import { formerToolRight, movedBefore } from './formerRights.js';
import type { PushRecord } from '../../sync/protocol.js';
import { INSTANT_RANGE_RULE, storableInstant, UUID_PATTERN } from '../../util/ids.js';

/** Why one pushed record could not be stored; it stops the batch at that record. */
export class RecordRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** For unknown_reference: the record the server lacks (PushError.missing). */
    readonly missing?: { table: RefTable; uuid: string },
  ) {
    super(message);
  }
}

export const uuid = z.string().regex(UUID_PATTERN);
// Stored in one form (UTC, milliseconds) whatever offset or precision the station sent:
// date filters compare the text, so "12:00+02:00" and "10:00:00.000Z" must be one value.
export const time = z.iso
  .datetime({ offset: true })
  .transform((value) => new Date(value).toISOString())
  .refine(storableInstant, INSTANT_RANGE_RULE);
export const flag = z
  .union([z.boolean(), z.literal(0), z.literal(1)])
  .transform((v) => (v ? 1 : 0));

/**
 * A JSON object taken as it is, every key kept: `z.record` rebuilds the object by assignment,
 * which turns a key `__proto__` (a notebook field or a sidecar key may be named so) into the
 * new object's prototype and loses it.
 */
export const jsonObject = z.custom<Record<string, unknown>>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  { message: 'expected an object' },
);

export function parse<T extends z.ZodType<{ uuid: string }>>(
  schema: T,
  record: PushRecord,
): z.infer<T> {
  const result = schema.safeParse(record.payload);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue?.path.join('.') || '(payload)';
    throw new RecordRefused(
      'invalid',
      `${record.kind} ${record.uuid}: ${where}: ${issue?.message}`,
    );
  }
  if (result.data.uuid.toLowerCase() !== record.uuid.toLowerCase()) {
    throw new RecordRefused('invalid', `${record.kind} ${record.uuid}: payload uuid differs`);
  }
  return result.data;
}

export type RefTable =
  | 'users'
  | 'projects'
  | 'tools'
  | 'usage_events'
  | 'instruments'
  | 'harvest_files'
  | 'storage_locations';

export function idOf(db: Db, table: RefTable, ref: string, field: string): number {
  const id = cachedStatement(db, `SELECT id FROM ${table} WHERE uuid = ?`)
    .pluck()
    .get(ref.toLowerCase()) as number | undefined;
  if (id === undefined) {
    throw new RecordRefused('unknown_reference', `${field}: no record ${ref} on the server`, {
      table,
      uuid: ref.toLowerCase(),
    });
  }
  return id;
}

export function optionalId(
  db: Db,
  table: RefTable,
  ref: string | null | undefined,
  field: string,
): number | null {
  return ref === null || ref === undefined ? null : idOf(db, table, ref, field);
}

/** Refuses to touch a record another station (or the server itself) created. */
export function checkOwner(
  existing: { station_id: number | null } | undefined,
  stationId: number,
  record: PushRecord,
): void {
  if (existing && existing.station_id !== stationId) {
    throw new RecordRefused(
      'forbidden',
      `${record.kind} ${record.uuid} belongs to another station or to the server`,
    );
  }
}

export interface StationRef {
  id: number;
  uuid: string;
  tool_id: number | null;
}

/**
 * A station writes the records of the tool it runs, or of a tool it was registered for before
 * (records made then may still wait in its outbox: station_tools, migration 5) that it made
 * before it took its move off that tool (`madeAt`, the record's own time: formerRights.ts); a
 * key cannot be used to write for any other tool.
 */
export function checkTool(
  db: Db,
  station: StationRef,
  toolId: number,
  record: PushRecord,
  madeAt: string,
): void {
  if (station.tool_id === toolId) return;
  const right = formerToolRight(db, station.id, toolId);
  if (!right) {
    throw new RecordRefused(
      'forbidden',
      `${record.kind} ${record.uuid}: this station does not run that tool`,
    );
  }
  const learned = movedBefore(right, madeAt);
  if (learned !== null) {
    throw new RecordRefused(
      'forbidden',
      `${record.kind} ${record.uuid}: made at ${madeAt}, after this station was moved off ` +
        `that tool (it took the move at ${learned})`,
    );
  }
}

/** Whether the station runs the tool, or ran it at any time (no matter when it was moved). */
function runsTool(db: Db, station: StationRef, toolId: number): boolean {
  return station.tool_id === toolId || formerToolRight(db, station.id, toolId) !== undefined;
}

/** The tool of a usage event, by the event's id. */
function usageTool(db: Db, usageId: number): number {
  return cachedStatement(db, 'SELECT tool_id FROM usage_events WHERE id = ?')
    .pluck()
    .get(usageId) as number;
}

/**
 * A record made in a usage (a consumable withdrawn, a problem reported in its form) names a
 * usage this station recorded, of the record's own tool: a station makes them only in the forms
 * of its own usages, so no key (not even another station's on the same tool) can hang a
 * withdrawal or a report on someone else's usage, its bill or its logbook.
 */
export function usageOfStation(
  db: Db,
  station: StationRef,
  ref: string,
  toolId: number,
  field: string,
  record: PushRecord,
): number {
  const usageId = idOf(db, 'usage_events', ref, field);
  const usage = cachedStatement(
    db,
    'SELECT tool_id, station_id FROM usage_events WHERE id = ?',
  ).get(usageId) as { tool_id: number; station_id: number | null };
  if (usage.station_id !== station.id) {
    throw new RecordRefused(
      'forbidden',
      `${record.kind} ${record.uuid}: ${field}: that usage was recorded by another station`,
    );
  }
  if (usage.tool_id !== toolId) {
    throw new RecordRefused(
      'forbidden',
      `${record.kind} ${record.uuid}: ${field}: that usage is of another tool`,
    );
  }
  return usageId;
}

/**
 * A file links to a usage of a tool this station runs or ran (runsTool), as its usage_context
 * is read back by the station (GET /sync/harvest/history): no key can read another tool's
 * usage, its person and answers, by linking a file to it. A link already stored may be sent
 * again unchanged by a station that took the record over.
 */
export function fileUsage(
  db: Db,
  station: StationRef,
  ref: string | null | undefined,
  stored: number | null | undefined,
  record: PushRecord,
): number | null {
  const usageId = optionalId(db, 'usage_events', ref, 'usage_event_uuid');
  if (usageId !== null && usageId !== stored && !runsTool(db, station, usageTool(db, usageId))) {
    throw new RecordRefused(
      'forbidden',
      `${record.kind} ${record.uuid}: usage_event_uuid: that usage is of a tool this station ` +
        'does not run',
    );
  }
  return usageId;
}
