import { z } from 'zod';
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';
import { queuePendingAnswersMail } from '../../mail/pending.js';
import { nowIso } from '../../util/ids.js';
import type { PushError, PushRecord, PushResult } from '../../sync/protocol.js';

/** Why one pushed record could not be stored; it stops the batch at that record. */
class RecordRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
const time = z.iso.datetime({ offset: true });
const flag = z.union([z.boolean(), z.literal(0), z.literal(1)]).transform((v) => (v ? 1 : 0));

const usageSchema = z.object({
  uuid,
  user_uuid: uuid,
  operator_uuid: uuid,
  project_uuid: uuid,
  tool_uuid: uuid,
  validated_by_uuid: uuid.nullable().optional(),
  force_ended_by_uuid: uuid.nullable().optional(),
  start: time,
  end: time.nullable(),
  validated: flag,
  remote_work: flag,
  pre_run_data: z.string(),
  run_data: z.string(),
  post_usage_pending: flag,
  reminder_due: flag,
  version: z.number().int().min(1),
});

const problemSchema = z.object({
  uuid,
  tool_uuid: uuid,
  usage_event_uuid: uuid.nullable().optional(),
  user_uuid: uuid,
  question: z.string(),
  description: z.string(),
  force_shutdown: flag,
  safety_hazard: flag,
  created_at: time,
  resolved_at: time.nullable().optional(),
  resolved_by_uuid: uuid.nullable().optional(),
});

const withdrawalSchema = z.object({
  uuid,
  consumable: z.string().min(1),
  quantity: z.number().positive(),
  user_uuid: uuid,
  project_uuid: uuid,
  tool_uuid: uuid,
  usage_event_uuid: uuid,
  question: z.string(),
  created_at: time,
});

function parse<T extends z.ZodType<{ uuid: string }>>(schema: T, record: PushRecord): z.infer<T> {
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

type RefTable = 'users' | 'projects' | 'tools' | 'usage_events';

function idOf(db: Db, table: RefTable, ref: string, field: string): number {
  const id = cachedStatement(db, `SELECT id FROM ${table} WHERE uuid = ?`)
    .pluck()
    .get(ref.toLowerCase()) as number | undefined;
  if (id === undefined) {
    throw new RecordRefused('unknown_reference', `${field}: no record ${ref} on the server`);
  }
  return id;
}

function optionalId(
  db: Db,
  table: RefTable,
  ref: string | null | undefined,
  field: string,
): number | null {
  return ref === null || ref === undefined ? null : idOf(db, table, ref, field);
}

/** Refuses to touch a record another station (or the server itself) created. */
function checkOwner(
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

/** Returns 'stale' when the server holds a newer version (the push is dropped, not merged). */
function upsertUsage(db: Db, stationId: number, record: PushRecord, now: string): 'ok' | 'stale' {
  const p = parse(usageSchema, record);
  const existing = cachedStatement(
    db,
    'SELECT id, version, station_id FROM usage_events WHERE uuid = ?',
  ).get(p.uuid.toLowerCase()) as
    { id: number; version: number; station_id: number | null } | undefined;
  checkOwner(existing, stationId, record);
  if (existing && existing.version > p.version) return 'stale';
  if (existing && existing.version === p.version) return 'ok';
  const values = {
    uuid: p.uuid.toLowerCase(),
    user_id: idOf(db, 'users', p.user_uuid, 'user_uuid'),
    operator_id: idOf(db, 'users', p.operator_uuid, 'operator_uuid'),
    project_id: idOf(db, 'projects', p.project_uuid, 'project_uuid'),
    tool_id: idOf(db, 'tools', p.tool_uuid, 'tool_uuid'),
    validated_by_id: optionalId(db, 'users', p.validated_by_uuid, 'validated_by_uuid'),
    force_ended_by_id: optionalId(db, 'users', p.force_ended_by_uuid, 'force_ended_by_uuid'),
    start: p.start,
    end: p.end,
    validated: p.validated,
    remote_work: p.remote_work,
    pre_run_data: p.pre_run_data,
    run_data: p.run_data,
    post_usage_pending: p.post_usage_pending,
    reminder_due: p.reminder_due,
    version: p.version,
    updated_at: now,
    station_id: stationId,
  };
  if (existing) {
    cachedStatement(
      db,
      `UPDATE usage_events SET user_id = @user_id, operator_id = @operator_id,
         project_id = @project_id, tool_id = @tool_id, validated_by_id = @validated_by_id,
         force_ended_by_id = @force_ended_by_id, start = @start, "end" = @end,
         validated = @validated, remote_work = @remote_work, pre_run_data = @pre_run_data,
         run_data = @run_data, post_usage_pending = @post_usage_pending,
         reminder_due = @reminder_due, version = @version, updated_at = @updated_at
       WHERE uuid = @uuid`,
    ).run(values);
  } else {
    cachedStatement(
      db,
      `INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, validated_by_id,
         force_ended_by_id, start, "end", validated, remote_work, pre_run_data, run_data,
         post_usage_pending, reminder_due, version, updated_at, station_id)
       VALUES (@uuid, @user_id, @operator_id, @project_id, @tool_id, @validated_by_id,
         @force_ended_by_id, @start, @end, @validated, @remote_work, @pre_run_data, @run_data,
         @post_usage_pending, @reminder_due, @version, @updated_at, @station_id)`,
    ).run(values);
  }
  // A force-ended event (answers pending) queues its e-mail in this same transaction, once.
  queuePendingAnswersMail(db, existing?.id ?? idOf(db, 'usage_events', p.uuid, 'uuid'), now);
  return 'ok';
}

function upsertProblem(db: Db, stationId: number, record: PushRecord): void {
  const p = parse(problemSchema, record);
  const existing = cachedStatement(db, 'SELECT station_id FROM problem_reports WHERE uuid = ?').get(
    p.uuid.toLowerCase(),
  ) as { station_id: number | null } | undefined;
  checkOwner(existing, stationId, record);
  const values = {
    uuid: p.uuid.toLowerCase(),
    tool_id: idOf(db, 'tools', p.tool_uuid, 'tool_uuid'),
    usage_event_id: optionalId(db, 'usage_events', p.usage_event_uuid, 'usage_event_uuid'),
    user_id: idOf(db, 'users', p.user_uuid, 'user_uuid'),
    question: p.question,
    description: p.description,
    force_shutdown: p.force_shutdown,
    safety_hazard: p.safety_hazard,
    created_at: p.created_at,
    resolved_at: p.resolved_at ?? null,
    resolved_by_id: optionalId(db, 'users', p.resolved_by_uuid, 'resolved_by_uuid'),
    station_id: stationId,
  };
  // A report is created once and may later be resolved; a resolution is never undone by a push.
  cachedStatement(
    db,
    `INSERT INTO problem_reports (uuid, tool_id, usage_event_id, user_id, question, description,
       force_shutdown, safety_hazard, created_at, resolved_at, resolved_by_id, station_id)
     VALUES (@uuid, @tool_id, @usage_event_id, @user_id, @question, @description,
       @force_shutdown, @safety_hazard, @created_at, @resolved_at, @resolved_by_id, @station_id)
     ON CONFLICT (uuid) DO UPDATE SET
       resolved_at = coalesce(problem_reports.resolved_at, excluded.resolved_at),
       resolved_by_id = coalesce(problem_reports.resolved_by_id, excluded.resolved_by_id)`,
  ).run(values);
}

function insertWithdrawal(db: Db, stationId: number, record: PushRecord): void {
  const p = parse(withdrawalSchema, record);
  const existing = cachedStatement(
    db,
    'SELECT station_id FROM consumable_withdrawals WHERE uuid = ?',
  ).get(p.uuid.toLowerCase()) as { station_id: number | null } | undefined;
  checkOwner(existing, stationId, record);
  if (existing) return; // withdrawals never change once made
  cachedStatement(
    db,
    `INSERT INTO consumable_withdrawals (uuid, consumable, quantity, user_id, project_id,
       usage_event_id, tool_id, question, created_at, station_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    p.uuid.toLowerCase(),
    p.consumable,
    p.quantity,
    idOf(db, 'users', p.user_uuid, 'user_uuid'),
    idOf(db, 'projects', p.project_uuid, 'project_uuid'),
    idOf(db, 'usage_events', p.usage_event_uuid, 'usage_event_uuid'),
    idOf(db, 'tools', p.tool_uuid, 'tool_uuid'),
    p.question,
    p.created_at,
    stationId,
  );
}

/**
 * Stores a batch of pushed outbox rows in one transaction, in order. Each record runs in its own
 * savepoint: the first one refused is rolled back alone and stops the batch, so the station's
 * order is kept (it resends that record and the rest later).
 */
export function ingestBatch(db: Db, stationId: number, records: PushRecord[]): PushResult {
  const now = nowIso();
  const applyOne = db.transaction((record: PushRecord): 'ok' | 'stale' => {
    switch (record.kind) {
      case 'usage_event':
        return upsertUsage(db, stationId, record, now);
      case 'problem_report':
        upsertProblem(db, stationId, record);
        return 'ok';
      case 'consumable_withdrawal':
        insertWithdrawal(db, stationId, record);
        return 'ok';
      default:
        throw new RecordRefused('invalid', `unknown record kind ${JSON.stringify(record.kind)}`);
    }
  });
  return db
    .transaction((): PushResult => {
      const result: PushResult = { acked: [], stale: [], error: null };
      for (const record of records) {
        try {
          if (applyOne(record) === 'stale') result.stale.push(record.id);
          result.acked.push(record.id);
        } catch (error) {
          result.error = refusal(record, error);
          break;
        }
      }
      return result;
    })
    .immediate();
}

function refusal(record: PushRecord, error: unknown): PushError {
  const base = { id: record.id, kind: record.kind, uuid: record.uuid };
  if (error instanceof RecordRefused) return { ...base, code: error.code, detail: error.message };
  if (error instanceof Error && error.name === 'SqliteError') {
    const code = String((error as { code?: unknown }).code);
    if (code.startsWith('SQLITE_CONSTRAINT')) {
      return {
        ...base,
        code: 'conflict',
        detail: `${record.kind} ${record.uuid}: ${error.message}`,
      };
    }
  }
  throw error;
}
