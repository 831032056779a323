/**
 * Pending post-usage forms (a usage force-ended without its answers) completed later: at the
 * station by the billed user or staff, or on the server, whose answers a pulled delta brings
 * (sync/adoptAnswers.ts). Apart from tool control, as their answers come after the usage ended.
 */
import type { UsageEventView } from '../../../shared/api.js';
import { validateAnswers } from '../../../shared/questions/index.js';
import type { Db } from '../db/open.js';
import { AppError } from '../util/errors.js';
import { applyAnswerEffects, applyKeptAnswersEffects } from './answerEffects.js';
import { enqueueUsage, usageQueued } from './outbox.js';
import {
  findTool,
  findUsage,
  toolInfo,
  usageView,
  type Ref,
  type UsageRow,
  type UserRow,
} from './records.js';
import { checkedAnswers } from './toolControl.js';

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
    applyAnswerEffects(
      db,
      tool,
      findUsage(db, usage.id),
      'post_usage',
      questions,
      answers,
      actor.id,
      now,
    );
  }).immediate();
  return usageView(db, usage.id);
}

/** What adoptServerAnswers took. */
export interface AdoptedAnswers {
  /** The event's tool, by name. */
  tool: string;
  /** Withdrawals the station's own answers recorded beyond those of the answers kept. */
  withdrawnBeyond: string[];
  /** The station's own answers the server's replaced (the server keeps them for staff). */
  replaced: string | null;
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
): AdoptedAnswers | null {
  return db
    .transaction((): AdoptedAnswers | null => {
      const usage = db
        .prepare('SELECT * FROM usage_events WHERE uuid = ?')
        .get(answer.usage_uuid.toLowerCase()) as UsageRow | undefined;
      if (!usage) return null;
      // Still running here (this data dir restored from a backup made before it ended): the
      // answers wait for its end at this station; the server sends them until it has them.
      // Taken now, a usage in progress would hold post-usage answers, their effects recorded,
      // and its disable would answer again.
      if (usage.end === null) return null;
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
        applyAnswerEffects(
          db,
          tool,
          ended,
          'post_usage',
          questions,
          answers,
          by ?? usage.user_id,
          now,
        );
        return { tool: tool.name, withdrawnBeyond: [], replaced: null };
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
      return {
        tool: tool.name,
        withdrawnBeyond,
        replaced: usage.run_data === answer.run_data ? null : usage.run_data,
      };
    })
    .immediate();
}

function parseJsonOr(text: string, fallback: unknown): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return fallback;
  }
}
