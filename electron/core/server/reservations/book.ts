/**
 * Booking and cancelling reservations on the server.
 *
 * What overlaps (two reservations that are not cancelled, whose times overlap; one ending when
 * the other starts does not): an area reservation holds the area and every tool in it, a tool
 * reservation holds the tool, and two reservations conflict when what they hold meets. So a
 * tool's booking is refused by a booking of the same tool or of an area holding it, and an
 * area's booking by one of the same area, of a tool in it, or of another area sharing a tool
 * with it. An area's bookings hold the tools the area holds now: a tool is added to an area
 * only if that meets no booking of it (areas.ts).
 *
 * The check and the insert run in one synchronous IMMEDIATE transaction (better-sqlite3), so
 * no other booking can slip in between. Each check is an index search: (tool_id, start) on
 * reservations_tool_start, (area_id, start) on reservations_area_start.
 */
import { CALENDAR_MAX_DAYS, type ReservationView } from '../../../../shared/reservationApi.js';
import { validateAnswers } from '../../../../shared/questions/index.js';
import type { Db } from '../../db/open.js';
import { AppError, fieldError } from '../../util/errors.js';
import { INSTANT_RANGE_RULE, newUuid, storableInstant } from '../../util/ids.js';
import { isStaff, type Account } from '../auth.js';
import { mergedQuestions, type FormTarget } from './questionSets.js';

export interface BookArgs {
  tool?: number | undefined;
  area?: number | undefined;
  project: number;
  start: string;
  end: string;
  answers: unknown;
  user?: number | undefined;
}

/** How far before now a booking may start (the time its form took to fill in). */
const START_GRACE_MS = 5 * 60_000;

/**
 * The reservation `r` holds the tool named by the parameter `@tool`: it is the tool's own, or
 * that of an area holding it. One condition for every list of a tool's reservations (the
 * station's, its sync, what a station may cancel).
 */
export const HOLDS_TOOL_SQL = `(r.tool_id = @tool
  OR r.area_id IN (SELECT area_id FROM area_tools WHERE tool_id = @tool))`;

/** The overlap checks; exported so the plan test runs the very statements used here. */
export const TOOL_OVERLAP_SQL = `SELECT id, tool_id, area_id, start, "end" FROM reservations
  WHERE tool_id = ? AND start < ? AND "end" > ? AND cancelled = 0 LIMIT 1`;
export const AREA_OVERLAP_SQL = `SELECT id, tool_id, area_id, start, "end" FROM reservations
  WHERE area_id = ? AND start < ? AND "end" > ? AND cancelled = 0 LIMIT 1`;

interface Overlap {
  id: number;
  tool_id: number | null;
  area_id: number | null;
  start: string;
  end: string;
}

const VIEW_SQL = `SELECT r.*, u.username AS user_name, p.name AS project_name,
    coalesce(t.name, a.name) AS target_name
  FROM reservations r JOIN users u ON u.id = r.user_id
  LEFT JOIN projects p ON p.id = r.project_id
  LEFT JOIN tools t ON t.id = r.tool_id
  LEFT JOIN areas a ON a.id = r.area_id`;

type ViewRow = Omit<ReservationView, 'cancelled'> & { cancelled: number };

const toView = (row: ViewRow): ReservationView => ({ ...row, cancelled: row.cancelled === 1 });

export function reservationView(db: Db, id: number): ReservationView {
  const row = db.prepare(`${VIEW_SQL} WHERE r.id = ?`).get(id) as ViewRow | undefined;
  if (!row) throw fieldError('id', `no reservation with id ${id}`, 'not_found');
  return toView(row);
}

/**
 * Whether the date and time written in `value` (an ISO 8601 date-time with its offset) name a
 * moment of the calendar: Date.parse takes 2027-02-30 for 2027-03-02, and 24:00 for the next
 * day's 00:00, where the booking would then take a day nobody asked for.
 */
function onTheCalendar(value: string, ms: number): boolean {
  const written = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(value);
  const offset = /(?:([+-])(\d{2}):?(\d{2})|Z)$/i.exec(value);
  if (!written || !offset) return true; // shapes the schema lets through are Date.parse's
  const minutes = offset[1]
    ? (offset[1] === '-' ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3]))
    : 0;
  const local = new Date(ms + minutes * 60_000).toISOString();
  return local.slice(0, 16) === `${written.slice(1, 4).join('-')}T${written[4]}:${written[5]}`;
}

/** Canonical UTC text (as every timestamp is stored), so times compare as text. */
function instant(value: string, field: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw fieldError(field, `${value} is not a date-time`);
  if (!onTheCalendar(value, ms)) throw fieldError(field, `${value} is not a date of the calendar`);
  const text = new Date(ms).toISOString();
  if (!storableInstant(text)) throw fieldError(field, `${value} ${INSTANT_RANGE_RULE}`);
  return text;
}

/** The first reservation that holds something this booking would hold, if any. */
function findOverlap(db: Db, target: FormTarget, start: string, end: string): Overlap | null {
  const byTool = db.prepare(TOOL_OVERLAP_SQL);
  const byArea = db.prepare(AREA_OVERLAP_SQL);
  const { tools, areas } = heldWith(db, target);
  for (const tool of tools) {
    const hit = byTool.get(tool, end, start) as Overlap | undefined;
    if (hit) return hit;
  }
  for (const area of areas) {
    const hit = byArea.get(area, end, start) as Overlap | undefined;
    if (hit) return hit;
  }
  return null;
}

function describeOverlap(db: Db, hit: Overlap): string {
  const what =
    hit.tool_id !== null
      ? `the tool ${db.prepare('SELECT name FROM tools WHERE id = ?').pluck().get(hit.tool_id) as string}`
      : `the area ${db.prepare('SELECT name FROM areas WHERE id = ?').pluck().get(hit.area_id) as string}`;
  return `reservation ${hit.id} of ${what} (${hit.start} to ${hit.end})`;
}

/**
 * The reservation not cancelled of exactly these fields, if any; `answers` null: whatever its
 * answers (the stored question_data text).
 */
function sameBooking(
  db: Db,
  booking: {
    user: number;
    creator: number;
    project: number;
    tool: number | null;
    area: number | null;
    start: string;
    end: string;
    answers: string | null;
  },
): number | undefined {
  return db
    .prepare(
      `SELECT id FROM reservations
       WHERE user_id = @user AND creator_id = @creator AND project_id = @project
         AND tool_id IS @tool AND area_id IS @area AND start = @start AND "end" = @end
         AND cancelled = 0 AND (@answers IS NULL OR question_data = @answers)`,
    )
    .pluck()
    .get(booking) as number | undefined;
}

export function bookReservation(
  db: Db,
  account: Account,
  args: BookArgs,
  now: string,
): { reservation: ReservationView } {
  const target: FormTarget =
    args.tool !== undefined ? { tool: args.tool } : { area: args.area as number };
  const start = instant(args.start, 'start');
  const end = instant(args.end, 'end');
  if (end <= start) throw fieldError('end', 'must be after the start');
  const userId = args.user ?? account.id;
  // A new booking is for time to come. The same booking sent again (its answer lost) is
  // answered with the reservation it made however late (below, once its answers are read).
  const past =
    end <= now
      ? fieldError('end', 'is in the past; a reservation is for time to come')
      : // A booking starts from now on, with a few minutes' grace for the time the form took
        // (as NEMO's policy); staff may record one that began earlier.
        !isStaff(account) && start < new Date(Date.parse(now) - START_GRACE_MS).toISOString()
        ? fieldError('start', 'is in the past; a reservation starts from now on')
        : null;
  // The booking's fields, by name: the same booking sent again is found by exactly what would
  // be stored (its answers once they are read).
  const booking = {
    user: userId,
    creator: account.id,
    project: args.project,
    tool: target.tool ?? null,
    area: target.area ?? null,
    start,
    end,
  };
  if (past !== null && sameBooking(db, { ...booking, answers: null }) === undefined) throw past;
  if (userId !== account.id && !isStaff(account)) {
    throw new AppError('forbidden', 'Only staff can book a reservation for someone else.');
  }
  const id = db
    .transaction((): number => {
      const active = db.prepare('SELECT is_active FROM users WHERE id = ?').pluck().get(userId) as
        number | undefined;
      if (active === undefined)
        throw fieldError('user', `no person with id ${userId}`, 'not_found');
      if (active !== 1) throw fieldError('user', 'this person is deactivated');
      const form = mergedQuestions(db, target, args.project);
      const project = db
        .prepare(
          `SELECT p.active, up.user_id IS NOT NULL AS member FROM projects p
           LEFT JOIN user_projects up ON up.project_id = p.id AND up.user_id = ?
           WHERE p.id = ?`,
        )
        .get(userId, args.project) as { active: number; member: number };
      if (project.active !== 1) throw fieldError('project', 'this project is not active');
      if (project.member !== 1) throw fieldError('project', 'is not one of the person’s projects');
      if (target.tool !== undefined && !isStaff(account)) {
        const qualified = db
          .prepare('SELECT 1 FROM qualifications WHERE user_id = ? AND tool_id = ?')
          .get(userId, target.tool);
        if (!qualified) {
          throw new AppError('not_qualified', 'You are not qualified on this tool.');
        }
      }
      if (target.area !== undefined && !isStaff(account)) {
        // An area's booking holds each of its tools, so it takes a qualification on each.
        const missing = db
          .prepare(
            `SELECT t.name FROM area_tools at JOIN tools t ON t.id = at.tool_id
             WHERE at.area_id = ? AND NOT EXISTS
               (SELECT 1 FROM qualifications q WHERE q.user_id = ? AND q.tool_id = at.tool_id)
             ORDER BY t.name`,
          )
          .pluck()
          .all(target.area, userId) as string[];
        if (missing.length > 0) {
          throw new AppError(
            'not_qualified',
            `You are not qualified on every tool of this area (not on ${missing.join(', ')}).`,
          );
        }
      }
      const result = validateAnswers(form.questions, args.answers ?? {});
      if (!result.ok) {
        const problems = result.problems.map((p) => ({
          path: ['answers', ...p.path],
          question: p.question,
          rule: p.rule,
          message: p.message,
        }));
        const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
        throw new AppError('validation_failed', `answers: ${problems[0]?.message}${more}`, {
          problems,
        });
      }
      const answers = JSON.stringify(result.answers);
      // The same booking again, as it was made (its answer lost on the way back, a second
      // click): that reservation, not an overlap with it.
      const same = sameBooking(db, { ...booking, answers });
      if (same !== undefined) return same;
      if (past !== null) throw past;
      const overlap = findOverlap(db, target, start, end);
      if (overlap) {
        throw new AppError(
          'conflict',
          `This time overlaps ${describeOverlap(db, overlap)}; choose another time.`,
          { reservation: overlap.id },
        );
      }
      return Number(
        db
          .prepare(
            `INSERT INTO reservations (uuid, user_id, creator_id, project_id, tool_id, area_id,
               start, "end", cancelled, question_data, created_at, updated_at)
             VALUES (@uuid, @user, @creator, @project, @tool, @area, @start, @end, 0, @answers,
               @now, @now)`,
          )
          .run({ ...booking, answers, uuid: newUuid(), now }).lastInsertRowid,
      );
    })
    .immediate();
  return { reservation: reservationView(db, id) };
}

/**
 * Marks a reservation cancelled; the record stays (GET /api/reservations/?cancelled=true lists
 * it). Its user, its creator, staff and admins may; one that has ended, only staff and admins
 * (as in NEMO: the experiment record of its usage may rest on its answers). One under way is
 * ended now instead, for anyone but staff: the tool is free from then on, and the part gone by,
 * which a usage's experiment record may rest on, stays booked. Cancelling twice changes nothing.
 */
export function cancelReservation(
  db: Db,
  account: Account,
  id: number,
  now: string,
): { reservation: ReservationView } {
  db.transaction(() => {
    const row = db
      .prepare(
        `SELECT user_id, creator_id, cancelled, start, "end", updated_at FROM reservations
         WHERE id = ?`,
      )
      .get(id) as
      | {
          user_id: number;
          creator_id: number;
          cancelled: number;
          start: string;
          end: string;
          updated_at: string;
        }
      | undefined;
    if (!row) throw fieldError('id', `no reservation with id ${id}`, 'not_found');
    if (row.user_id !== account.id && row.creator_id !== account.id && !isStaff(account)) {
      throw new AppError(
        'forbidden',
        'Only the person it is for, the one who booked it, or staff can cancel a reservation.',
      );
    }
    if (row.cancelled === 1) return;
    // Ended early by a cancel before (its end set in the change that made it: a station asking
    // again after a lost answer): done already, as a cancelled one is.
    if (row.end <= now && row.end === row.updated_at && !isStaff(account)) return;
    if (row.end <= now && !isStaff(account)) {
      throw fieldError('id', `reservation ${id} has already ended; only staff can cancel it now`);
    }
    if (row.start < now && !isStaff(account)) {
      db.prepare('UPDATE reservations SET "end" = ?, updated_at = ? WHERE id = ?').run(
        now,
        now,
        id,
      );
      return;
    }
    db.prepare('UPDATE reservations SET cancelled = 1, updated_at = ? WHERE id = ?').run(now, id);
  }).immediate();
  return { reservation: reservationView(db, id) };
}

/**
 * A tool's reservations that are not cancelled and not over, its own and those of areas
 * holding it, by start. The answers of other people's are left out unless staff asks.
 */
export function upcomingForTool(
  db: Db,
  account: Account,
  tool: number,
  now: string,
  limit = 100,
): { reservations: ReservationView[] } {
  if (!db.prepare('SELECT 1 FROM tools WHERE id = ?').get(tool)) {
    throw fieldError('tool', `no tool with id ${tool}`, 'not_found');
  }
  const rows = db
    .prepare(
      `${VIEW_SQL}
       WHERE r.cancelled = 0 AND r."end" > @now
         AND ${HOLDS_TOOL_SQL}
       ORDER BY r.start, r.id LIMIT @limit`,
    )
    .all({ tool, now, limit }) as ViewRow[];
  return { reservations: rows.map((row) => visibleTo(account, row)) };
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** What a reservation of `target` would meet: the tools and areas whose bookings concern it. */
function heldWith(db: Db, target: FormTarget): { tools: number[]; areas: number[] } {
  const ids = (sql: string, id: number): number[] => db.prepare(sql).pluck().all(id) as number[];
  if (target.tool !== undefined) {
    if (!db.prepare('SELECT 1 FROM tools WHERE id = ?').get(target.tool)) {
      throw fieldError('tool', `no tool with id ${target.tool}`, 'not_found');
    }
    return {
      tools: [target.tool],
      areas: ids('SELECT area_id FROM area_tools WHERE tool_id = ?', target.tool),
    };
  }
  if (!db.prepare('SELECT 1 FROM areas WHERE id = ?').get(target.area)) {
    throw fieldError('area', `no area with id ${target.area}`, 'not_found');
  }
  return {
    tools: ids('SELECT tool_id FROM area_tools WHERE area_id = ?', target.area),
    areas: [
      target.area,
      ...ids(
        `SELECT DISTINCT b.area_id FROM area_tools a JOIN area_tools b ON b.tool_id = a.tool_id
         WHERE a.area_id = ? AND b.area_id <> a.area_id`,
        target.area,
      ),
    ],
  };
}

/**
 * Others' answers and project stay private unless staff asks (as in upcomingForTool): a
 * calendar shows who booked when, not for which project (an industrial client's, say).
 */
function visibleTo(account: Account, row: ViewRow): ReservationView {
  const view = toView(row);
  const own = row.user_id === account.id || row.creator_id === account.id;
  return own || isStaff(account)
    ? view
    : { ...view, question_data: '', project_id: null, project_name: null };
}

/**
 * The reservations a calendar of a tool or an area shows for [from, to): not cancelled and
 * overlapping the range, of everything that a booking of the target would conflict with (the
 * same rule as the overlap check), by start. At most CALENDAR_MAX_DAYS days at a time.
 */
export function calendarReservations(
  db: Db,
  account: Account,
  args: { tool?: number | undefined; area?: number | undefined; from: string; to: string },
): { reservations: ReservationView[] } {
  const from = instant(args.from, 'from');
  const to = instant(args.to, 'to');
  if (to <= from) throw fieldError('to', 'must be after from');
  // An hour more: 62 days of a calendar that cross the autumn clock change are 62 x 24 h + 1 h.
  if (Date.parse(to) - Date.parse(from) > CALENDAR_MAX_DAYS * DAY_MS + 3_600_000) {
    throw fieldError('to', `the range may span at most ${CALENDAR_MAX_DAYS} days`);
  }
  const target: FormTarget =
    args.tool !== undefined ? { tool: args.tool } : { area: args.area as number };
  const { tools, areas } = heldWith(db, target);
  const list = (values: number[]): string => values.map(() => '?').join(', ') || 'NULL';
  const rows = db
    .prepare(
      `${VIEW_SQL}
       WHERE r.cancelled = 0 AND r.start < ? AND r."end" > ?
         AND (r.tool_id IN (${list(tools)}) OR r.area_id IN (${list(areas)}))
       ORDER BY r.start, r.id`,
    )
    .all(to, from, ...tools, ...areas) as ViewRow[];
  return { reservations: rows.map((row) => visibleTo(account, row)) };
}

/** The caller's reservations still to come or running (for them or booked by them), by start. */
export function myUpcomingReservations(
  db: Db,
  account: Account,
  now: string,
  limit = 100,
): { reservations: ReservationView[] } {
  const rows = db
    .prepare(
      `${VIEW_SQL}
       WHERE r.cancelled = 0 AND r."end" > @now AND (r.user_id = @me OR r.creator_id = @me)
       ORDER BY r.start, r.id LIMIT @limit`,
    )
    .all({ now, me: account.id, limit }) as ViewRow[];
  return { reservations: rows.map(toView) };
}
