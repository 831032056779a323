import { z } from 'zod';
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';
import { queuePendingAnswersMail } from '../../mail/pending.js';
import { nowIso } from '../../util/ids.js';
import type { PushError, PushRecord, PushResult } from '../../sync/protocol.js';
import {
  RecordRefused,
  checkOwner,
  checkTool,
  flag,
  idOf,
  optionalId,
  parse,
  time,
  usageOfStation,
  uuid,
  type StationRef,
} from './records.js';
import { applyDeployment, upsertRun } from './ingestHarvest.js';
import { upsertHarvestFile } from './ingestHarvestFile.js';
import { insertHarvestTransfer } from './ingestHarvestTransfer.js';
import { upsertNotebookEntry } from './ingestNotebook.js';
import { refreshShutdown } from './shutdown.js';

const usageSchema = z
  .object({
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
  })
  // What a station's usage never is (usageEnd.ts ends it with its form pending at once), named
  // at its field rather than left to the table's CHECK, whose words name no field.
  .superRefine((usage, ctx) => {
    if (usage.end !== null && usage.end < usage.start) {
      ctx.addIssue({
        code: 'custom',
        path: ['end'],
        message: `must not be before start (${usage.start})`,
      });
    }
    if (usage.post_usage_pending === 1 && usage.end === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['post_usage_pending'],
        message: 'only an ended usage has its post-usage questions pending; end is null',
      });
    }
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

interface StoredUsage {
  id: number;
  tool_id: number;
  version: number;
  station_version: number | null;
  station_id: number | null;
  start: string;
  end: string | null;
  pre_run_data: string;
  run_data: string;
  answered_on_server_at: string | null;
  validated: number;
  validated_by_id: number | null;
  validation_acked: number;
  diverged_version: number | null;
  station_answers_not_kept: string | null;
}

/**
 * Stores a station's usage event. The station owns it, except for the answers of a pending
 * post-usage form given on the server: those stay as given (the first answer to reach the
 * server wins) and the station is sent them until it pushes them back as its own. A validation
 * is never taken back (validatedFields). A push not newer than the last one stored (a resend)
 * changes nothing; an older one is 'stale'. The version of what a pending form shows
 * (form_version, server/web/handlers.ts) moves only with a change of what the form shows or
 * its answers: not with a push that acknowledges a validation or a reminder.
 */
function upsertUsage(db: Db, station: StationRef, record: PushRecord, now: string): 'ok' | 'stale' {
  const p = parse(usageSchema, record);
  const existing = cachedStatement(
    db,
    `SELECT id, version, station_version, station_id, tool_id, start, "end", pre_run_data,
       run_data, answered_on_server_at, validated, validated_by_id, validation_acked,
       diverged_version, station_answers_not_kept
     FROM usage_events WHERE uuid = ?`,
  ).get(p.uuid.toLowerCase()) as StoredUsage | undefined;
  checkOwner(existing, station.id, record);
  const pushed = existing?.station_version ?? 0;
  if (existing && p.version < pushed) return 'stale';
  if (existing && p.version === pushed) {
    // A resend carries what was stored. The same version saying otherwise comes from a
    // station whose data dir was restored from a backup and changed the event again (ended
    // it anew): refused, so the two are not left to differ in silence.
    const differs =
      p.start !== existing.start ||
      p.end !== existing.end ||
      p.pre_run_data !== existing.pre_run_data ||
      (existing.answered_on_server_at === null && p.run_data !== existing.run_data);
    if (differs) {
      throw new UsageDiverged(
        pushed,
        `usage_event ${record.uuid}: the server holds version ${pushed} of it with other ` +
          'content (end or answers); was this station restored from a backup? The server ' +
          'keeps its version; staff settle the difference',
      );
    }
    return 'ok';
  }
  // A later version of a history that differed from the server's (above): taken, it would
  // replace the server's end and answers with that history's, and let the withdrawals and
  // reports its station holds back with the refused version go too (billed twice).
  if (existing?.diverged_version != null) {
    throw new UsageDiverged(
      existing.diverged_version,
      `usage_event ${record.uuid}: version ${p.version} continues this station's version ` +
        `${existing.diverged_version}, which differed from the server's (was this station ` +
        'restored from a backup?); the server keeps its version; staff settle the difference',
    );
  }
  const toolId = idOf(db, 'tools', p.tool_uuid, 'tool_uuid');
  // An event belongs to one tool for good: a station never moves it to another.
  if (existing && existing.tool_id !== toolId) {
    throw new RecordRefused('forbidden', `usage_event ${record.uuid}: its tool cannot change`);
  }
  if (!existing) checkTool(db, station, toolId, record, p.start);
  const answeredHere = existing?.answered_on_server_at != null;
  const values = {
    uuid: p.uuid.toLowerCase(),
    user_id: idOf(db, 'users', p.user_uuid, 'user_uuid'),
    operator_id: idOf(db, 'users', p.operator_uuid, 'operator_uuid'),
    project_id: idOf(db, 'projects', p.project_uuid, 'project_uuid'),
    tool_id: toolId,
    ...validatedFields(
      existing,
      p.validated,
      optionalId(db, 'users', p.validated_by_uuid, 'validated_by_uuid'),
    ),
    force_ended_by_id: optionalId(db, 'users', p.force_ended_by_uuid, 'force_ended_by_uuid'),
    start: p.start,
    end: p.end,
    remote_work: p.remote_work,
    pre_run_data: p.pre_run_data,
    run_data: answeredHere ? existing.run_data : p.run_data,
    // Answers given at the station to a form answered here first: not kept, and not lost.
    station_answers_not_kept:
      answeredHere &&
      p.post_usage_pending === 0 &&
      p.run_data !== '' &&
      p.run_data !== existing.run_data
        ? p.run_data
        : (existing?.station_answers_not_kept ?? null),
    post_usage_pending: answeredHere ? 0 : p.post_usage_pending,
    reminder_due: answeredHere ? 0 : p.reminder_due,
    answer_acked:
      !answeredHere || (p.post_usage_pending === 0 && p.run_data === existing.run_data) ? 1 : 0,
    station_version: p.version,
    updated_at: now,
    station_id: station.id,
  };
  if (existing) {
    cachedStatement(
      db,
      `UPDATE usage_events SET user_id = @user_id, operator_id = @operator_id,
         project_id = @project_id, tool_id = @tool_id, validated_by_id = @validated_by_id,
         force_ended_by_id = @force_ended_by_id, start = @start, "end" = @end,
         validated = @validated, remote_work = @remote_work, pre_run_data = @pre_run_data,
         run_data = @run_data, station_answers_not_kept = @station_answers_not_kept,
         post_usage_pending = @post_usage_pending,
         reminder_due = @reminder_due, answer_acked = @answer_acked,
         validation_acked = @validation_acked, station_version = @station_version,
         version = version + 1, form_version = form_version + (user_id IS NOT @user_id
           OR project_id IS NOT @project_id OR start IS NOT @start OR "end" IS NOT @end
           OR run_data IS NOT @run_data OR post_usage_pending IS NOT @post_usage_pending),
         updated_at = @updated_at
       WHERE uuid = @uuid`,
    ).run(values);
  } else {
    cachedStatement(
      db,
      `INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, validated_by_id,
         force_ended_by_id, start, "end", validated, remote_work, pre_run_data, run_data,
         post_usage_pending, reminder_due, answer_acked, validation_acked, station_version,
         version, updated_at, station_id)
       VALUES (@uuid, @user_id, @operator_id, @project_id, @tool_id, @validated_by_id,
         @force_ended_by_id, @start, @end, @validated, @remote_work, @pre_run_data, @run_data,
         @post_usage_pending, @reminder_due, @answer_acked, @validation_acked, @station_version,
         1, @updated_at, @station_id)`,
    ).run(values);
  }
  // A force-ended event (answers pending) queues its e-mail in this same transaction, once.
  queuePendingAnswersMail(db, existing?.id ?? idOf(db, 'usage_events', p.uuid, 'uuid'), now);
  return 'ok';
}

/**
 * The validation a push leaves stored. It only ever goes from 0 to 1: a push of the event not
 * validated (the station has not heard of a validation given on the server yet, or sends an
 * older change late) keeps the one the server holds, and who gave it. A push of it validated
 * is the station's own word, taken with its validated_by (the station validated it itself, or
 * took the server's), and acknowledges a validation given here: it is no longer sent.
 */
function validatedFields(
  existing: StoredUsage | undefined,
  validated: 0 | 1,
  validatedById: number | null,
): { validated: 0 | 1; validated_by_id: number | null; validation_acked: number } {
  if (validated === 1) {
    return {
      validated,
      validated_by_id: validatedById ?? existing?.validated_by_id ?? null,
      validation_acked: 1,
    };
  }
  if (existing?.validated === 1) {
    return {
      validated: 1,
      validated_by_id: existing.validated_by_id,
      validation_acked: existing.validation_acked,
    };
  }
  return { validated: 0, validated_by_id: validatedById, validation_acked: 1 };
}

function upsertProblem(db: Db, station: StationRef, record: PushRecord): void {
  const p = parse(problemSchema, record);
  const existing = cachedStatement(db, 'SELECT station_id FROM problem_reports WHERE uuid = ?').get(
    p.uuid.toLowerCase(),
  ) as { station_id: number | null } | undefined;
  checkOwner(existing, station.id, record);
  const toolId = idOf(db, 'tools', p.tool_uuid, 'tool_uuid');
  if (!existing)
    checkTool(db, station, toolId, record, madeIn(db, station, p.usage_event_uuid, p.created_at));
  const values = {
    uuid: p.uuid.toLowerCase(),
    tool_id: toolId,
    // Stored once: a push of an existing report changes its resolution only (below).
    usage_event_id:
      existing || p.usage_event_uuid === null || p.usage_event_uuid === undefined
        ? null
        : usageOfStation(db, station, p.usage_event_uuid, toolId, 'usage_event_uuid', record),
    user_id: idOf(db, 'users', p.user_uuid, 'user_uuid'),
    question: p.question,
    description: p.description,
    force_shutdown: p.force_shutdown,
    safety_hazard: p.safety_hazard,
    created_at: p.created_at,
    resolved_at: p.resolved_at ?? null,
    resolved_by_id: optionalId(db, 'users', p.resolved_by_uuid, 'resolved_by_uuid'),
    station_id: station.id,
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
       resolved_by_id = coalesce(problem_reports.resolved_by_id, excluded.resolved_by_id),
       resolution_acked = CASE WHEN excluded.resolved_at IS NULL
         THEN problem_reports.resolution_acked ELSE 1 END`,
  ).run(values);
  refreshShutdown(db, toolId);
}

/**
 * When a record of a usage (a problem reported in its form, a consumable withdrawn) counts as
 * made, for a tool its station no longer runs (checkTool): when its usage started, so the
 * reports and withdrawals of a usage under way when the station was moved, given at its end,
 * are taken with it; without a usage of this station's (a problem reported apart), its own
 * time.
 */
function madeIn(
  db: Db,
  station: StationRef,
  usageUuid: string | null | undefined,
  createdAt: string,
): string {
  if (!usageUuid) return createdAt;
  const start = cachedStatement(
    db,
    'SELECT start FROM usage_events WHERE uuid = ? AND station_id = ?',
  )
    .pluck()
    .get(usageUuid.toLowerCase(), station.id) as string | undefined;
  return start ?? createdAt;
}

function insertWithdrawal(db: Db, station: StationRef, record: PushRecord): void {
  const p = parse(withdrawalSchema, record);
  const existing = cachedStatement(
    db,
    'SELECT station_id FROM consumable_withdrawals WHERE uuid = ?',
  ).get(p.uuid.toLowerCase()) as { station_id: number | null } | undefined;
  checkOwner(existing, station.id, record);
  if (existing) return; // withdrawals never change once made
  const toolId = idOf(db, 'tools', p.tool_uuid, 'tool_uuid');
  checkTool(db, station, toolId, record, madeIn(db, station, p.usage_event_uuid, p.created_at));
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
    usageOfStation(db, station, p.usage_event_uuid, toolId, 'usage_event_uuid', record),
    toolId,
    p.question,
    p.created_at,
    station.id,
  );
}

/** A usage event's version that differs from the server's at the same version (upsertUsage). */
class UsageDiverged extends RecordRefused {
  constructor(
    readonly version: number,
    message: string,
  ) {
    super('conflict', message);
  }
}

/** From now on the later versions of the station's usage event are refused (migration 52). */
function markDiverged(db: Db, station: StationRef, record: PushRecord, version: number): void {
  cachedStatement(
    db,
    `UPDATE usage_events SET diverged_version = coalesce(diverged_version, ?)
     WHERE uuid = ? AND station_id = ?`,
  ).run(version, record.uuid.toLowerCase(), station.id);
}

/**
 * Stores a batch of pushed outbox rows in one transaction, in order. Each record runs in its own
 * savepoint: the first one refused is rolled back alone and stops the batch, so the station's
 * order is kept (it resends that record and the rest later).
 */
export function ingestBatch(
  db: Db,
  station: StationRef & { name: string },
  records: PushRecord[],
): PushResult {
  const now = nowIso();
  const applyOne = db.transaction((record: PushRecord): 'ok' | 'stale' => {
    switch (record.kind) {
      case 'usage_event':
        return upsertUsage(db, station, record, now);
      case 'problem_report':
        upsertProblem(db, station, record);
        return 'ok';
      case 'consumable_withdrawal':
        insertWithdrawal(db, station, record);
        return 'ok';
      case 'harvest_file':
        return upsertHarvestFile(db, station, record);
      case 'harvest_transfer':
        return insertHarvestTransfer(db, station, record);
      case 'harvest_deployment':
        return applyDeployment(db, station, record);
      case 'harvest_run':
        return upsertRun(db, station, record);
      case 'notebook_entry':
        return upsertNotebookEntry(db, station, record);
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
          // Rolled back with its record's savepoint: kept here, with the refusal.
          if (error instanceof UsageDiverged) markDiverged(db, station, record, error.version);
          break;
        }
      }
      return result;
    })
    .immediate();
}

/**
 * What a constraint the record broke means, without SQLite's words (table names, its syntax):
 * "UNIQUE constraint failed: harvest_files.persistent_id" is "persistent_id: another record
 * has that value".
 */
function constraintInWords(message: string): string {
  const unique = /^UNIQUE constraint failed: (.+)$/.exec(message);
  if (unique) {
    const fields = unique[1].split(', ').map((column) => column.slice(column.indexOf('.') + 1));
    return `${fields.join(', ')}: another record has ${fields.length > 1 ? 'those values' : 'that value'}`;
  }
  return 'it breaks a rule of the records the server holds';
}

function refusal(record: PushRecord, error: unknown): PushError {
  const base = { id: record.id, kind: record.kind, uuid: record.uuid };
  if (error instanceof RecordRefused) {
    return {
      ...base,
      code: error.code,
      detail: error.message,
      ...(error.missing ? { missing: error.missing } : {}),
    };
  }
  if (error instanceof Error && error.name === 'SqliteError') {
    const code = String((error as { code?: unknown }).code);
    if (code.startsWith('SQLITE_CONSTRAINT')) {
      return {
        ...base,
        code: 'conflict',
        detail: `${record.kind} ${record.uuid}: ${constraintInWords(error.message)}`,
      };
    }
  }
  throw error;
}
