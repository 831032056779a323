import type { ToolStatus, UsageEventView } from '../../../shared/api.js';
import {
  consumablesFrom,
  effectQuestionNames,
  problemReportsFrom,
  validateAnswers,
  type Answers,
  type ConsumableDraft,
  type ProblemReportDraft,
  type Question,
} from '../../../shared/questions/index.js';
import type { Db } from '../db/open.js';
import { AppError } from '../util/errors.js';
import { failpoint } from '../util/failpoint.js';
import { newUuid } from '../util/ids.js';
import { enqueue, enqueueUsage, usageQueued } from './outbox.js';
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
function checkedAnswers(questions: Question[], raw: unknown, form: string): Answers {
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
  };
}

export function enableTool(db: Db, actor: UserRow, args: EnableArgs, now: string): UsageEventView {
  const tool = findTool(db, args.tool);
  if (tool.shutdown) {
    throw new AppError('tool_shutdown', `${tool.name} is shut down: ${tool.shutdown_reason}`);
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
            now,
            args.remoteWork ? 1 : 0,
            JSON.stringify(answers),
            now,
          ).lastInsertRowid,
      );
      failpoint('enable.after-insert');
      enqueueUsage(db, usageId);
      applyAnswerEffects(db, tool, findUsage(db, usageId), questions, answers, actor.id, now);
      failpoint('enable.before-commit');
      return usageId;
    })
    .immediate();
  return usageView(db, id);
}

export function disableTool(
  db: Db,
  actor: UserRow,
  args: { tool: Ref; answers: unknown },
  now: string,
): UsageEventView {
  const tool = findTool(db, args.tool);
  const active = activeUsageOf(db, tool.id);
  if (!active) throw new AppError('no_active_usage', `${tool.name} is not in use`);
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
    applyAnswerEffects(db, tool, findUsage(db, active.id), questions, answers, actor.id, now);
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

function endAtOrAfter(usage: UsageRow, now: string): string {
  return now < usage.start ? usage.start : now;
}

function forceEndInTransaction(
  db: Db,
  tool: ToolRow,
  active: UsageRow,
  byUserId: number | null,
  now: string,
): void {
  const pending = toolInfo(tool).post_usage_questions.length > 0 ? 1 : 0;
  db.prepare(
    `UPDATE usage_events SET "end" = ?, run_data = ?, post_usage_pending = ?, reminder_due = ?,
       force_ended_by_id = ?, version = version + 1, updated_at = ?
     WHERE id = ?`,
  ).run(endAtOrAfter(active, now), pending ? '' : '{}', pending, pending, byUserId, now, active.id);
  enqueueUsage(db, active.id);
}

export function validateUsage(db: Db, actor: UserRow, usageRef: Ref, now: string): UsageEventView {
  requireStaff(actor, 'validate usage events');
  const usage = findUsage(db, usageRef);
  if (usage.end === null) {
    throw new AppError(
      'conflict',
      `usage event ${usage.id} is still active; end it before validating`,
    );
  }
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
      db.prepare('UPDATE problem_reports SET resolved_at = ? WHERE id = ?').run(now, id);
      enqueueProblemReport(db, id, actor.id);
    }
  }).immediate();
  return toolStatus(db, tool.id);
}

export function completePending(
  db: Db,
  actor: UserRow,
  args: { usage: Ref; answers: unknown },
  now: string,
): UsageEventView {
  const usage = findUsage(db, args.usage);
  if (usage.user_id !== actor.id && actor.is_staff !== 1) {
    throw new AppError('forbidden', 'only the billed user or staff can answer these questions');
  }
  if (usage.post_usage_pending !== 1) {
    throw new AppError('conflict', `usage event ${usage.id} has no pending post-usage questions`);
  }
  const tool = findTool(db, usage.tool_id);
  const questions = toolInfo(tool).post_usage_questions;
  const answers = checkedAnswers(questions, args.answers, 'post-usage questions');
  db.transaction(() => {
    const changed = db
      .prepare(
        `UPDATE usage_events SET run_data = ?, post_usage_pending = 0, reminder_due = 0,
           version = version + 1, updated_at = ?
         WHERE id = ? AND version = ? AND post_usage_pending = 1`,
      )
      .run(JSON.stringify(answers), now, usage.id, usage.version).changes;
    if (changed !== 1) {
      throw new AppError('conflict', `usage event ${usage.id} changed meanwhile; reload it`);
    }
    enqueueUsage(db, usage.id);
    applyAnswerEffects(db, tool, findUsage(db, usage.id), questions, answers, actor.id, now);
  }).immediate();
  return usageView(db, usage.id);
}

/**
 * Takes post-usage answers given on the server for one of this station's events as its own:
 * a pending form is completed with them and their effects are recorded here (consumables,
 * problem reports, a shutdown), as if answered at the station; an event answered here too
 * keeps its effects and takes the server's answers, which reached the server first, and what
 * those do beyond them (applyKeptAnswersEffects). Either way the event is queued, which tells
 * the server the station has them. Returns the tool's name, and the withdrawals recorded
 * beyond the kept answers, when something changed; null when the event is unknown or already
 * holds these answers.
 */
export function adoptServerAnswers(
  db: Db,
  answer: { usage_uuid: string; run_data: string; answered_by_uuid: string | null },
  now: string,
): { tool: string; withdrawnBeyond: string[] } | null {
  return db
    .transaction((): { tool: string; withdrawnBeyond: string[] } | null => {
      const usage = db
        .prepare('SELECT * FROM usage_events WHERE uuid = ?')
        .get(answer.usage_uuid.toLowerCase()) as UsageRow | undefined;
      if (!usage) return null;
      const wasPending = usage.post_usage_pending === 1;
      // Already taken, and the push that says so is on its way.
      if (!wasPending && usage.run_data === answer.run_data && usageQueued(db, usage.uuid)) {
        return null;
      }
      db.prepare(
        `UPDATE usage_events SET run_data = ?, post_usage_pending = 0, reminder_due = 0,
           version = version + 1, updated_at = ?
         WHERE id = ?`,
      ).run(answer.run_data, now, usage.id);
      enqueueUsage(db, usage.id);
      const tool = findTool(db, usage.tool_id);
      const questions = toolInfo(tool).post_usage_questions;
      // The server checked them against its form; if this station's copy differs, the
      // effects that its own form can read are still recorded.
      const answers = validateAnswers(questions, parseJsonOr(answer.run_data, {})).answers;
      const by =
        answer.answered_by_uuid === null
          ? undefined
          : (db
              .prepare('SELECT id FROM users WHERE uuid = ?')
              .pluck()
              .get(answer.answered_by_uuid) as number | undefined);
      const ended = findUsage(db, usage.id);
      if (wasPending) {
        applyAnswerEffects(db, tool, ended, questions, answers, by ?? usage.user_id, now);
        return { tool: tool.name, withdrawnBeyond: [] };
      }
      // Answered here too, with other answers: what the kept ones do beyond is recorded.
      const withdrawnBeyond =
        usage.run_data === answer.run_data
          ? []
          : applyKeptAnswersEffects(db, {
              tool,
              usage: ended,
              questions,
              answers,
              reporterId: by ?? usage.user_id,
              now,
            });
      return { tool: tool.name, withdrawnBeyond };
    })
    .immediate();
}

/**
 * What answers do beyond being stored: consumable purchases, problem reports, and a forced
 * shutdown that ends the tool's active usage. Runs inside the caller's transaction.
 */
function applyAnswerEffects(
  db: Db,
  tool: ToolRow,
  usage: UsageRow,
  questions: Question[],
  answers: Answers,
  reporterId: number,
  now: string,
): void {
  const effects = {
    consumables: consumablesFrom(questions, answers),
    reports: problemReportsFrom(questions, answers),
  };
  recordEffects(db, { tool, usage, questions, answers, reporterId, now }, effects);
}

/** A form's answers for a usage, and who gave them when: what their effects are recorded with. */
interface AnsweredForm {
  tool: ToolRow;
  usage: UsageRow;
  questions: Question[];
  answers: Answers;
  reporterId: number;
  now: string;
}

/** Below this, two quantities of a consumable are the same (sums of decimal fractions). */
const QUANTITY_EPSILON = 1e-9;

/**
 * A pending form answered both on the server and at this station while it was offline: the
 * server's answers are kept (adoptServerAnswers), but what the station's own answers did is
 * already recorded and sent. What the kept answers do beyond that is recorded now: the
 * consumables they withdraw beyond those recorded for the usage (per question and
 * consumable), and the problems they report that no report of the usage names. So a problem
 * reported on the server is never lost. A withdrawal recorded beyond the kept answers stays
 * (the server keeps each as made): it is logged for staff to settle. Returns what it logged.
 */
function applyKeptAnswersEffects(db: Db, form: AnsweredForm): string[] {
  const { usage, questions, answers } = form;
  const key = (c: { question: string; consumable: string }) =>
    JSON.stringify([c.question, c.consumable]);
  // Only what this form's answers did: the pre-usage form's withdrawals are the usage's too.
  const ofThisForm = effectQuestionNames(questions);
  const recorded = new Map<string, number>();
  for (const row of db
    .prepare(
      `SELECT question, consumable, sum(quantity) AS quantity FROM consumable_withdrawals
       WHERE usage_event_id = ? GROUP BY question, consumable`,
    )
    .all(usage.id) as { question: string; consumable: string; quantity: number }[]) {
    if (ofThisForm.has(row.question)) recorded.set(key(row), row.quantity);
  }
  const kept = new Map<string, ConsumableDraft>();
  for (const c of consumablesFrom(questions, answers)) {
    const before = kept.get(key(c));
    kept.set(key(c), before ? { ...c, quantity: before.quantity + c.quantity } : c);
  }
  const consumables: ConsumableDraft[] = [];
  const beyond: string[] = [];
  for (const [k, c] of kept) {
    const more = c.quantity - (recorded.get(k) ?? 0);
    if (more > QUANTITY_EPSILON) consumables.push({ ...c, quantity: more });
    recorded.delete(k);
    // Rounded: sums of decimal fractions (0.1 + 0.2) would print their binary noise.
    if (more < -QUANTITY_EPSILON) {
      beyond.push(`${Number((-more).toPrecision(12))} ${c.consumable} (${c.question})`);
    }
  }
  for (const [k, quantity] of recorded) {
    const [question, consumable] = JSON.parse(k) as [string, string];
    beyond.push(`${quantity} ${consumable} (${question})`);
  }
  const reported = new Set(
    (
      db
        .prepare('SELECT question FROM problem_reports WHERE usage_event_id = ?')
        .pluck()
        .all(usage.id) as string[]
    ).filter((question) => ofThisForm.has(question)),
  );
  const reports = problemReportsFrom(questions, answers).filter((p) => !reported.has(p.question));
  recordEffects(db, form, { consumables, reports });
  return beyond;
}

function recordEffects(
  db: Db,
  { tool, usage, reporterId, now }: AnsweredForm,
  effects: { consumables: ConsumableDraft[]; reports: ProblemReportDraft[] },
): void {
  for (const c of effects.consumables) {
    const uuid = newUuid();
    db.prepare(
      `INSERT INTO consumable_withdrawals (uuid, consumable, quantity, user_id, project_id,
         usage_event_id, tool_id, question, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      uuid,
      c.consumable,
      c.quantity,
      usage.user_id,
      usage.project_id,
      usage.id,
      tool.id,
      c.question,
      now,
    );
    enqueue(db, 'consumable_withdrawal', uuid, {
      uuid,
      consumable: c.consumable,
      quantity: c.quantity,
      user_uuid: uuidOf(db, 'users', usage.user_id),
      project_uuid: uuidOf(db, 'projects', usage.project_id),
      tool_uuid: tool.uuid,
      usage_event_uuid: usage.uuid,
      question: c.question,
      created_at: now,
    });
  }
  let shutdownReason: string | null = null;
  for (const p of effects.reports) {
    recordProblemReport(db, tool, usage.id, reporterId, p, now);
    if (p.force_shutdown && shutdownReason === null) shutdownReason = p.description;
  }
  if (shutdownReason !== null) {
    shutDown(db, tool, shutdownReason, now);
    const active = activeUsageOf(db, tool.id);
    if (active) forceEndInTransaction(db, tool, active, null, now);
  }
}

function shutDown(db: Db, tool: ToolRow, reason: string, now: string): void {
  db.prepare(
    `UPDATE tools SET shutdown = 1, shutdown_reason = ?, shutdown_since = ?, updated_at = ?
     WHERE id = ?`,
  ).run(reason, now, now, tool.id);
}

/**
 * A person who reports a problem that shuts the tool down while enabling it does not get the
 * tool: the report and the shutdown are kept, no usage event starts, and the call is refused.
 */
function refuseOnShutdownReport(
  db: Db,
  tool: ToolRow,
  questions: Question[],
  answers: Answers,
  reporterId: number,
  now: string,
): void {
  const reports = problemReportsFrom(questions, answers);
  const shutdown = reports.find((p) => p.force_shutdown);
  if (!shutdown) return;
  db.transaction(() => {
    for (const p of reports) recordProblemReport(db, tool, null, reporterId, p, now);
    shutDown(db, tool, shutdown.description, now);
  }).immediate();
  throw new AppError(
    'tool_shutdown',
    `problem reported: ${shutdown.description}; ${tool.name} is now shut down and was not enabled`,
  );
}

function parseJsonOr(text: string, fallback: unknown): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return fallback;
  }
}

function uuidOf(db: Db, table: 'users' | 'projects', id: number): string {
  return db.prepare(`SELECT uuid FROM ${table} WHERE id = ?`).pluck().get(id) as string;
}

function recordProblemReport(
  db: Db,
  tool: ToolRow,
  usageId: number | null,
  reporterId: number,
  p: ProblemReportDraft,
  now: string,
): void {
  const id = Number(
    db
      .prepare(
        `INSERT INTO problem_reports (uuid, tool_id, usage_event_id, user_id, question, description,
           force_shutdown, safety_hazard, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        newUuid(),
        tool.id,
        usageId,
        reporterId,
        p.question,
        p.description,
        p.force_shutdown ? 1 : 0,
        p.safety_hazard ? 1 : 0,
        now,
      ).lastInsertRowid,
  );
  enqueueProblemReport(db, id, null);
}

/** Queues a problem report as it now stands (created, or resolved by `resolvedById`). */
function enqueueProblemReport(db: Db, id: number, resolvedById: number | null): void {
  const row = db
    .prepare(
      `SELECT r.uuid, t.uuid AS tool_uuid, e.uuid AS usage_event_uuid, u.uuid AS user_uuid,
         r.question, r.description, r.force_shutdown, r.safety_hazard, r.created_at, r.resolved_at
       FROM problem_reports r JOIN tools t ON t.id = r.tool_id JOIN users u ON u.id = r.user_id
       LEFT JOIN usage_events e ON e.id = r.usage_event_id WHERE r.id = ?`,
    )
    .get(id) as { uuid: string; force_shutdown: number; safety_hazard: number };
  enqueue(db, 'problem_report', row.uuid, {
    ...row,
    force_shutdown: row.force_shutdown === 1,
    safety_hazard: row.safety_hazard === 1,
    resolved_by_uuid: resolvedById === null ? null : uuidOf(db, 'users', resolvedById),
  });
}
