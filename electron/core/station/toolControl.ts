/**
 * The state changes of a tool: enabling and disabling it (a usage event starts and ends),
 * force-ending its usage, validating a usage and bringing a shut-down tool back. What the
 * answers given on the way do is answerEffects.ts; a pending form completed later is
 * pendingForms.ts.
 */
import type { ToolStatus, UsageEventView } from '../../../shared/api.js';
import { validateAnswers, type Answers, type Question } from '../../../shared/questions/index.js';
import type { Db } from '../db/open.js';
import { AppError } from '../util/errors.js';
import { failpoint } from '../util/failpoint.js';
import { newUuid, UUID_PATTERN } from '../util/ids.js';
import {
  applyAnswerEffects,
  enqueueProblemReport,
  refuseOnShutdownReport,
} from './answerEffects.js';
import { enqueueUsage } from './outbox.js';
import {
  activeUsageOf,
  displayName,
  findProject,
  findTool,
  findUsage,
  findUser,
  isQualified,
  toolInfo,
  usageView,
  type Ref,
  type ToolRow,
  type UsageRow,
  type UserRow,
} from './records.js';
import { endAtOrAfter, forceEndInTransaction } from './usageEnd.js';

export interface EnableArgs {
  tool: Ref;
  project: Ref;
  answers: unknown;
  user?: Ref | undefined;
  remoteWork?: boolean | undefined;
}

function requireStaff(actor: UserRow, what: string): void {
  if (actor.is_staff !== 1) throw new AppError('forbidden', `only staff can ${what}`);
}

/** Answers checked by the core, whatever the UI did; the problems go back field by field. */
export function checkedAnswers(questions: Question[], raw: unknown, form: string): Answers {
  const result = validateAnswers(questions, raw);
  if (result.ok) return result.answers;
  const first = result.problems[0]?.message ?? 'invalid answer';
  const more = result.problems.length > 1 ? ` (and ${result.problems.length - 1} more)` : '';
  throw new AppError('validation_failed', `${form}: ${first}${more}`, {
    problems: result.problems,
  });
}

export function toolStatus(db: Db, toolRef: Ref): ToolStatus {
  const tool = findTool(db, toolRef);
  const active = activeUsageOf(db, tool.id);
  return {
    tool: toolInfo(tool),
    state: tool.shutdown ? 'shutdown' : active ? 'in_use' : 'idle',
    active: active ? usageView(db, active.id) : null,
    shutdown: tool.shutdown
      ? { reason: tool.shutdown_reason, since: tool.shutdown_since ?? '' }
      : null,
    operational: tool.operational !== 0,
  };
}

export function enableTool(db: Db, actor: UserRow, args: EnableArgs, now: string): UsageEventView {
  const tool = findTool(db, args.tool);
  if (tool.shutdown) {
    throw new AppError('tool_shutdown', `${tool.name} is shut down: ${tool.shutdown_reason}`);
  }
  if (tool.operational === 0 && actor.is_staff !== 1) {
    throw new AppError(
      'tool_shutdown',
      `${tool.name} is marked not operational by staff; only staff may start a usage on it`,
    );
  }
  const billed = args.user === undefined ? actor : findUser(db, args.user);
  if (billed.id !== actor.id) requireStaff(actor, 'enable a tool on behalf of another user');
  if (args.remoteWork) requireStaff(actor, 'mark usage as remote work');
  if (billed.is_active !== 1) {
    throw new AppError('forbidden', `${displayName(billed)}'s account is not active`);
  }
  if (billed.is_staff !== 1 && !isQualified(db, billed.id, tool.id)) {
    throw new AppError(
      'not_qualified',
      `${displayName(billed)} is not qualified to use ${tool.name}`,
    );
  }
  const project = findProject(db, args.project);
  if (project.active !== 1)
    throw new AppError('forbidden', `project ${project.name} is not active`);
  const member = db
    .prepare('SELECT 1 FROM user_projects WHERE user_id = ? AND project_id = ?')
    .get(billed.id, project.id);
  if (!member) {
    throw new AppError(
      'forbidden',
      `${project.name} is not one of ${displayName(billed)}'s projects`,
    );
  }
  const questions = toolInfo(tool).pre_usage_questions;
  const answers = checkedAnswers(questions, args.answers, 'pre-usage questions');
  const busy = activeUsageOf(db, tool.id);
  if (busy) throw inUse(db, tool, busy);
  refuseOnShutdownReport(db, tool, questions, answers, actor.id, now);

  const id = db
    .transaction(() => {
      const current = activeUsageOf(db, tool.id);
      if (current) throw inUse(db, tool, current);
      // Not before the tool's last usage ended: a PC clock set back since (NTP, a time zone
      // fixed) would otherwise date this one inside that one, and bill that time twice. As a
      // usage's end is never before its start (usageEnd.ts endAtOrAfter).
      const start = startAtOrAfterLastEnd(db, tool.id, now);
      const usageId = Number(
        db
          .prepare(
            `INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, start,
               remote_work, pre_run_data, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            newUuid(),
            billed.id,
            actor.id,
            project.id,
            tool.id,
            start,
            args.remoteWork ? 1 : 0,
            JSON.stringify(answers),
            now,
          ).lastInsertRowid,
      );
      failpoint('enable.after-insert');
      enqueueUsage(db, usageId);
      applyAnswerEffects(
        db,
        tool,
        findUsage(db, usageId),
        'pre_usage',
        questions,
        answers,
        actor.id,
        now,
      );
      failpoint('enable.before-commit');
      return usageId;
    })
    .immediate();
  return usageView(db, id);
}

/**
 * How far ahead of the clock the tool's last usage may end for a new one to start at that end
 * (startAtOrAfterLastEnd): what a clock set back by NTP, or by an hour of summer time, takes
 * back. An end further ahead was dated by a clock that was wrong then (a year ahead, a time
 * zone taken for UTC); started there, every usage until the clock caught up would start at
 * that time and last nothing, as an end is never before its start.
 */
export const CLOCK_SET_BACK_MAX_MS = 3_600_000;

/**
 * `now`, or the latest end of the tool's usages that is later, up to CLOCK_SET_BACK_MAX_MS
 * ahead (the clock went back).
 */
function startAtOrAfterLastEnd(db: Db, toolId: number, now: string): string {
  const lastEnd = db
    .prepare('SELECT max("end") FROM usage_events WHERE tool_id = ? AND "end" <= ?')
    .pluck()
    .get(toolId, new Date(Date.parse(now) + CLOCK_SET_BACK_MAX_MS).toISOString()) as string | null;
  return lastEnd !== null && lastEnd > now ? lastEnd : now;
}

export function disableTool(
  db: Db,
  actor: UserRow,
  args: { tool: Ref; answers: unknown; usage?: string | undefined },
  now: string,
): UsageEventView {
  if (args.usage !== undefined && !UUID_PATTERN.test(args.usage)) {
    throw new AppError('bad_request', 'usage: must be the UUID of the usage the answers are for');
  }
  const tool = findTool(db, args.tool);
  const active = activeUsageOf(db, tool.id);
  if (!active) throw new AppError('no_active_usage', `${tool.name} is not in use`);
  // Answers given for a usage that ended meanwhile (on another screen, by the idle rule) are
  // not the ending of the one begun since.
  if (args.usage !== undefined && args.usage.toLowerCase() !== active.uuid) {
    throw new AppError(
      'conflict',
      `the usage these answers were for has ended, and ${usageView(db, active.id).user_name} ` +
        `is using ${tool.name} now; the answers were not taken`,
    );
  }
  if (actor.id !== active.user_id && actor.id !== active.operator_id && actor.is_staff !== 1) {
    throw new AppError(
      'forbidden',
      `${usageView(db, active.id).user_name} is using ${tool.name}; only they or staff can disable it`,
    );
  }
  const questions = toolInfo(tool).post_usage_questions;
  const answers = checkedAnswers(questions, args.answers, 'post-usage questions');
  db.transaction(() => {
    const current = activeUsageOf(db, tool.id);
    if (!current || current.id !== active.id) {
      throw new AppError('conflict', `the usage of ${tool.name} changed meanwhile; try again`);
    }
    db.prepare(
      `UPDATE usage_events SET "end" = ?, run_data = ?, version = version + 1, updated_at = ?
       WHERE id = ?`,
    ).run(endAtOrAfter(active, now), JSON.stringify(answers), now, active.id);
    failpoint('disable.after-update');
    enqueueUsage(db, active.id);
    applyAnswerEffects(
      db,
      tool,
      findUsage(db, active.id),
      'post_usage',
      questions,
      answers,
      actor.id,
      now,
    );
    failpoint('disable.before-commit');
  }).immediate();
  return usageView(db, active.id);
}

/**
 * Ends the active usage of a tool without its post-usage answers: by staff, by the idle rule
 * (actor null) or by a forced shutdown. The answers stay pending for the user to complete.
 */
export function forceEndTool(
  db: Db,
  actor: UserRow | null,
  toolRef: Ref,
  now: string,
): UsageEventView {
  if (actor) requireStaff(actor, "force-end another person's usage");
  const tool = findTool(db, toolRef);
  const id = db
    .transaction(() => {
      const active = activeUsageOf(db, tool.id);
      if (!active) throw new AppError('no_active_usage', `${tool.name} is not in use`);
      forceEndInTransaction(db, tool, active, actor?.id ?? null, now);
      return active.id;
    })
    .immediate();
  return usageView(db, id);
}

function inUse(db: Db, tool: ToolRow, usage: UsageRow): AppError {
  const who = usageView(db, usage.id);
  return new AppError(
    'tool_in_use',
    `${tool.name} is in use by ${who.user_name} since ${who.start}`,
  );
}

/**
 * Validates the ended usage event as `actor` (staff). One validated already, here or on the
 * server, is left as it is, whoever validated it, as the server does (validateOnServer): the
 * station pushes its validator, so validating again would give the event another person on
 * both sides.
 */
export function validateUsage(db: Db, actor: UserRow, usageRef: Ref, now: string): UsageEventView {
  requireStaff(actor, 'validate usage events');
  const usage = findUsage(db, usageRef);
  if (usage.end === null) {
    throw new AppError(
      'conflict',
      `usage event ${usage.id} is still active; end it before validating`,
    );
  }
  if (usage.validated === 1) return usageView(db, usage.id);
  db.transaction(() => {
    db.prepare(
      `UPDATE usage_events SET validated = 1, validated_by_id = ?, version = version + 1,
         updated_at = ? WHERE id = ?`,
    ).run(actor.id, now, usage.id);
    enqueueUsage(db, usage.id);
  }).immediate();
  return usageView(db, usage.id);
}

export function clearShutdown(db: Db, actor: UserRow, toolRef: Ref, now: string): ToolStatus {
  requireStaff(actor, 'bring a shut-down tool back into service');
  const tool = findTool(db, toolRef);
  db.transaction(() => {
    db.prepare(
      `UPDATE tools SET shutdown = 0, shutdown_reason = '', shutdown_since = NULL, updated_at = ?
       WHERE id = ?`,
    ).run(now, tool.id);
    const open = db
      .prepare(
        `SELECT id FROM problem_reports
         WHERE tool_id = ? AND force_shutdown = 1 AND resolved_at IS NULL`,
      )
      .pluck()
      .all(tool.id) as number[];
    for (const id of open) {
      db.prepare('UPDATE problem_reports SET resolved_at = ?, resolved_by_id = ? WHERE id = ?').run(
        now,
        actor.id,
        id,
      );
      enqueueProblemReport(db, id, actor.id);
    }
  }).immediate();
  return toolStatus(db, tool.id);
}
