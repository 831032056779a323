/**
 * What answers do beyond being stored (consumables withdrawn, problems reported, a tool shut
 * down), with their records and their outbox entries. Apart from tool control because enabling
 * and disabling (toolControl.ts) and a pending form completed here or on the server
 * (pendingForms.ts) record them alike.
 */
import {
  consumablesFrom,
  effectQuestionNames,
  problemReportsFrom,
  type Answers,
  type ConsumableDraft,
  type ProblemReportDraft,
  type Question,
} from '../../../shared/questions/index.js';
import type { Db } from '../db/open.js';
import { AppError } from '../util/errors.js';
import { newUuid } from '../util/ids.js';
import { enqueue } from './outbox.js';
import { activeUsageOf, type ToolRow, type UsageRow } from './records.js';
import { forceEndInTransaction } from './usageEnd.js';

/**
 * What answers do beyond being stored: consumable purchases, problem reports, and a forced
 * shutdown that ends the tool's active usage. Runs inside the caller's transaction.
 */
export function applyAnswerEffects(
  db: Db,
  tool: ToolRow,
  usage: UsageRow,
  form: UsageForm,
  questions: Question[],
  answers: Answers,
  reporterId: number,
  now: string,
): void {
  const effects = {
    consumables: consumablesFrom(questions, answers),
    reports: problemReportsFrom(questions, answers),
  };
  recordEffects(db, { tool, usage, form, questions, answers, reporterId, now }, effects);
}

/** Which of a tool's forms answers were given on (kept with their effects: migration 40). */
export type UsageForm = 'pre_usage' | 'post_usage';

/** A form's answers for a usage, and who gave them when: what their effects are recorded with. */
interface AnsweredForm {
  tool: ToolRow;
  usage: UsageRow;
  form: UsageForm;
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
export function applyKeptAnswersEffects(db: Db, form: Omit<AnsweredForm, 'form'>): string[] {
  const { usage, questions, answers } = form;
  const key = (c: { question: string; consumable: string }) =>
    JSON.stringify([c.question, c.consumable]);
  // Only what this form's answers did: the pre-usage form's withdrawals are the usage's too,
  // and may come from a question of the same name. A row made before migration 40 has no form:
  // the post-usage form's own names tell it then.
  const ofThisForm = effectQuestionNames(questions);
  const fromThisForm = (row: { question: string; form: UsageForm | null }): boolean =>
    row.form === null ? ofThisForm.has(row.question) : row.form === 'post_usage';
  const recorded = new Map<string, number>();
  for (const row of db
    .prepare(
      `SELECT question, consumable, form, sum(quantity) AS quantity FROM consumable_withdrawals
       WHERE usage_event_id = ? GROUP BY question, consumable, form`,
    )
    .all(usage.id) as {
    question: string;
    consumable: string;
    form: UsageForm | null;
    quantity: number;
  }[]) {
    if (fromThisForm(row)) recorded.set(key(row), (recorded.get(key(row)) ?? 0) + row.quantity);
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
        .prepare('SELECT question, form FROM problem_reports WHERE usage_event_id = ?')
        .all(usage.id) as { question: string; form: UsageForm | null }[]
    )
      .filter(fromThisForm)
      .map((row) => row.question),
  );
  const reports = problemReportsFrom(questions, answers).filter((p) => !reported.has(p.question));
  recordEffects(db, { ...form, form: 'post_usage' }, { consumables, reports });
  return beyond;
}

function recordEffects(
  db: Db,
  { tool, usage, form, reporterId, now }: AnsweredForm,
  effects: { consumables: ConsumableDraft[]; reports: ProblemReportDraft[] },
): void {
  for (const c of effects.consumables) {
    const uuid = newUuid();
    db.prepare(
      `INSERT INTO consumable_withdrawals (uuid, consumable, quantity, user_id, project_id,
         usage_event_id, tool_id, question, form, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      uuid,
      c.consumable,
      c.quantity,
      usage.user_id,
      usage.project_id,
      usage.id,
      tool.id,
      c.question,
      form,
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
    recordProblemReport(db, tool, usage.id, form, reporterId, p, now);
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
export function refuseOnShutdownReport(
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
    for (const p of reports) recordProblemReport(db, tool, null, 'pre_usage', reporterId, p, now);
    shutDown(db, tool, shutdown.description, now);
  }).immediate();
  // `reported`: the refusal of an Enable whose own answers shut the tool down (the screen then
  // forgets what was typed, the report's answer with it), not of one on a tool shut already.
  throw new AppError(
    'tool_shutdown',
    `problem reported: ${shutdown.description}; ${tool.name} is now shut down and was not enabled`,
    { reported: true },
  );
}

function uuidOf(db: Db, table: 'users' | 'projects', id: number): string {
  return db.prepare(`SELECT uuid FROM ${table} WHERE id = ?`).pluck().get(id) as string;
}

function recordProblemReport(
  db: Db,
  tool: ToolRow,
  usageId: number | null,
  form: UsageForm,
  reporterId: number,
  p: ProblemReportDraft,
  now: string,
): void {
  const id = Number(
    db
      .prepare(
        `INSERT INTO problem_reports (uuid, tool_id, usage_event_id, user_id, question, form,
           description, force_shutdown, safety_hazard, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        newUuid(),
        tool.id,
        usageId,
        reporterId,
        p.question,
        form,
        p.description,
        p.force_shutdown ? 1 : 0,
        p.safety_hazard ? 1 : 0,
        now,
      ).lastInsertRowid,
  );
  enqueueProblemReport(db, id, null);
}

/** Queues a problem report as it now stands (created, or resolved by `resolvedById`). */
export function enqueueProblemReport(db: Db, id: number, resolvedById: number | null): void {
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
