/**
 * The server's handlers for browser users (`POST /rpc/<name>` with a JWT): their account, their
 * usage, and the post-usage answers still owed for force-ended usage events.
 *
 * Ownership (DESIGN.md, Data and sync): a usage event belongs to the station that recorded it;
 * the server only adds the answers of a pending form. That write is conditional on the version
 * of what the form showed when it was loaded (`form_version`, which the answers and a station's
 * change of the event move, and a validation does not) and bumps it, so a stale form (or a
 * stale station push, which ingest refuses by version) cannot overwrite newer data, while a
 * person answering as staff validate the event is not sent back to reload it for nothing.
 */
import type {
  AccountInfo,
  ServerApiName,
  ServerApiParsedArgs,
  ServerApiResult,
  ServerPendingForm,
  UsageEventView,
} from '../../../../shared/api.js';
import { validateAnswers, type Question } from '../../../../shared/questions/index.js';
import type { Db } from '../../db/open.js';
import { findTool, findUsage, toolInfo, usageView, type UsageRow } from '../../station/records.js';
import { AppError } from '../../util/errors.js';
import { nowIso } from '../../util/ids.js';
import {
  createStation,
  createToken,
  listStations,
  listTokens,
  newStationKey,
  revokeToken,
  updateStation,
} from '../admin/credentials.js';
import { listFacility } from '../admin/facility.js';
import { saveProject, saveTool, saveUser } from '../admin/facilitySaves.js';
import { getMail, listMails, retryMail } from '../../mail/admin.js';
import { isStaff, type Account } from '../auth.js';
import { notifyStationOfUsage } from '../harvest/notify.js';
import { createHarvestHandlers } from './harvestHandlers.js';
import { createReservationHandlers } from './reservationHandlers.js';
import { latestUsage, recentUsage, toolNames, validateOnServer } from './usageValidation.js';
import { clearShutdownOnServer } from '../sync/shutdown.js';

export type ServerHandlers = {
  [N in ServerApiName]: (
    account: Account,
    args: ServerApiParsedArgs<N>,
  ) => ServerApiResult<N> | Promise<ServerApiResult<N>>;
};

export interface WebHandlerDeps {
  db: Db;
  clock?: () => number;
  /** The server's time zone (for filters that read date-times); UTC where not given. */
  timeZone?: () => string;
}

/**
 * The usage event `ref` for its user or staff. Anyone else is answered as if it did not exist
 * (as files of instruments not granted are), so usage ids cannot be probed.
 */
function ownUsage(db: Db, account: Account, ref: number | string): UsageRow {
  const usage = findUsage(db, ref);
  if (usage.user_id !== account.id && !isStaff(account)) {
    throw new AppError('not_found', `usage event ${JSON.stringify(ref)} does not exist`);
  }
  return usage;
}

function postQuestions(db: Db, toolId: number, cache?: Map<number, Question[]>): Question[] {
  const cached = cache?.get(toolId);
  if (cached) return cached;
  const questions = toolInfo(findTool(db, toolId)).post_usage_questions;
  cache?.set(toolId, questions);
  return questions;
}

function pendingForm(db: Db, usage: UsageRow, cache?: Map<number, Question[]>): ServerPendingForm {
  return {
    usage: usageView(db, usage.id),
    questions: postQuestions(db, usage.tool_id, cache),
    version: usage.form_version,
  };
}

function notPending(usage: UsageRow): AppError {
  return new AppError(
    'conflict',
    `The post-usage questions of usage event ${usage.id} are already answered.`,
  );
}

/**
 * Stores the answers of a pending form: validated, conditional on the form's `version` (the
 * event's form_version), in one transaction.
 */
export function completePendingOnServer(
  db: Db,
  account: Account,
  args: { usage: number | string; answers: unknown; version: number },
  now: string,
): { usage: UsageEventView; version: number } {
  const id = db
    .transaction((): number => {
      const usage = ownUsage(db, account, args.usage);
      if (usage.form_version !== args.version) {
        throw new AppError(
          'conflict',
          `Usage event ${usage.id} changed since this form was loaded (version ${args.version}, now ${usage.form_version}). Reload it and answer again if still needed.`,
          { version: usage.form_version },
        );
      }
      if (usage.post_usage_pending !== 1) throw notPending(usage);
      const result = validateAnswers(postQuestions(db, usage.tool_id), args.answers);
      if (!result.ok) {
        const first = result.problems[0]?.message ?? 'invalid answer';
        const more = result.problems.length > 1 ? ` (and ${result.problems.length - 1} more)` : '';
        throw new AppError('validation_failed', `post-usage questions: ${first}${more}`, {
          problems: result.problems,
        });
      }
      const changed = db
        .prepare(
          `UPDATE usage_events SET run_data = ?, post_usage_pending = 0, reminder_due = 0,
             answered_on_server_at = ?, answered_on_server_by_id = ?,
             answer_acked = CASE WHEN station_id IS NULL THEN 1 ELSE 0 END,
             version = version + 1, form_version = form_version + 1, updated_at = ?
           WHERE id = ? AND form_version = ? AND post_usage_pending = 1`,
        )
        .run(
          JSON.stringify(result.answers),
          now,
          account.id,
          now,
          usage.id,
          usage.form_version,
        ).changes;
      if (changed !== 1) {
        throw new AppError('conflict', `Usage event ${usage.id} changed meanwhile; reload it.`);
      }
      // The station that owns the event learns the answers in its next pull; this wakes its
      // long-poll now. It then records their effects (consumables, problem reports) itself.
      notifyStationOfUsage(db, usage.id);
      return usage.id;
    })
    .immediate();
  const version = db
    .prepare('SELECT form_version FROM usage_events WHERE id = ?')
    .pluck()
    .get(id) as number;
  return { usage: usageView(db, id), version };
}

export function createWebHandlers(deps: WebHandlerDeps): ServerHandlers {
  const { db } = deps;
  const clock = deps.clock ?? Date.now;
  return {
    'account.me': (account) => {
      const row = db
        .prepare(
          'SELECT id, uuid, email, username, first_name, last_name, role FROM users WHERE id = ?',
        )
        .get(account.id) as AccountInfo;
      return { account: row };
    },
    'usage.mine': (account, args) => latestUsage(db, account.id, args.limit ?? 50),
    'usage.pendingMine': (account) => {
      const rows = db
        .prepare(
          'SELECT * FROM usage_events WHERE user_id = ? AND post_usage_pending = 1 ORDER BY start, id',
        )
        .all(account.id) as UsageRow[];
      const cache = new Map<number, Question[]>();
      return { pending: rows.map((row) => pendingForm(db, row, cache)) };
    },
    'usage.pendingForm': (account, args) => {
      const usage = ownUsage(db, account, args.usage);
      if (usage.post_usage_pending !== 1) throw notPending(usage);
      return { form: pendingForm(db, usage) };
    },
    'usage.completePendingServer': (account, args) =>
      completePendingOnServer(db, account, args, nowIso(clock)),
    // Staff and admins (serverApiAccess): everyone's usage, to validate it.
    'usage.recent': (_account, args) =>
      recentUsage(db, args.limit ?? 50, {
        toValidate: args.to_validate,
        toolId: args.tool_id,
        beforeId: args.before_id,
      }),
    'usage.tools': () => toolNames(db),
    // Staff and admins (serverApiAccess), the event ended: the station is sent the validation.
    'usage.validateServer': (account, args) =>
      validateOnServer(db, account, args.usage, nowIso(clock)),
    // Staff and admins: the stations that reported the shutdown are sent the resolution.
    'usage.clearShutdownServer': (account, args) => ({
      resolved: clearShutdownOnServer(db, args.tool, account.id, nowIso(clock)),
    }),
    // Admin only (serverApiAccess in shared/api.ts, checked by the carrier before these run).
    'admin.facility': () => listFacility(db),
    'admin.users.save': (account, args) => saveUser(db, account, args),
    'admin.projects.save': (_account, args) => saveProject(db, args),
    'admin.tools.save': (_account, args) => saveTool(db, args),
    'admin.tokens.list': () => listTokens(db),
    'admin.tokens.create': (_account, args) => createToken(db, args),
    'admin.tokens.revoke': (_account, args) => revokeToken(db, args.id),
    'admin.stations.list': () => listStations(db),
    'admin.stations.create': (_account, args) => createStation(db, args),
    'admin.stations.update': (_account, args) => updateStation(db, args),
    'admin.stations.newKey': (_account, args) => newStationKey(db, args.id),
    'admin.mail.list': (_account, args) => ({ mails: listMails(db, { status: args.status }) }),
    'admin.mail.retry': (_account, args) => {
      const done = retryMail(db, args.id, nowIso(clock));
      if (done.outcome === 'not_found') throw new AppError('not_found', done.message);
      if (done.outcome !== 'queued' && done.outcome !== 'cancelled') {
        throw new AppError('conflict', done.message);
      }
      return { mail: getMail(db, args.id)!, message: done.message };
    },
    // The harvest management calls (admins) and the file records (anyone, within grants).
    ...createHarvestHandlers({ db, clock, timeZone: deps.timeZone ?? (() => 'UTC') }),
    // Booking (anyone, within their own records), question sets and areas (admins).
    ...createReservationHandlers({ db, clock }),
  };
}
