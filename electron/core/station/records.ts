import type {
  FileUsageView,
  ProjectSummary,
  ToolInfo,
  UsageEventView,
  UserSummary,
} from '../../../shared/api.js';
import { parseQuestions, type Question } from '../../../shared/questions/index.js';
import type { Db } from '../db/open.js';
import { storedUsageContext } from '../harvest/usageContext.js';
import { AppError } from '../util/errors.js';
import { UUID_PATTERN } from '../util/ids.js';

export interface UserRow {
  id: number;
  uuid: string;
  username: string;
  email: string;
  first_name: string;
  last_name: string;
  badge_number: string | null;
  pin_hash: string | null;
  is_staff: number;
  is_active: number;
}

export interface ToolRow {
  id: number;
  uuid: string;
  name: string;
  pre_usage_questions: string;
  post_usage_questions: string;
  shutdown: number;
  shutdown_reason: string;
  shutdown_since: string | null;
  /** 0 when staff marked the tool not operational (server admin, synced down): staff only. */
  operational: number;
}

export interface ProjectRow {
  id: number;
  uuid: string;
  name: string;
  application_identifier: string;
  active: number;
}

export interface UsageRow {
  id: number;
  uuid: string;
  user_id: number;
  operator_id: number;
  project_id: number;
  tool_id: number;
  start: string;
  end: string | null;
  validated: number;
  validated_by_id: number | null;
  remote_work: number;
  pre_run_data: string;
  run_data: string;
  post_usage_pending: number;
  reminder_due: number;
  force_ended_by_id: number | null;
  version: number;
  /**
   * The server's version of what a pending post-usage form shows (migration 35): a validation
   * leaves it as it is; see server/web/handlers.ts.
   */
  form_version: number;
  updated_at: string;
  /** On the server: a station's answers to a form answered here first (migration 57). */
  station_answers_not_kept: string | null;
}

export type Ref = number | string;

function byRef<T>(db: Db, table: string, ref: Ref, nameColumns: string[], what: string): T {
  let row: T | undefined;
  if (typeof ref === 'number') {
    row = db.prepare(`SELECT * FROM ${table} WHERE id = ?`).get(ref) as T | undefined;
  } else if (UUID_PATTERN.test(ref)) {
    row = db.prepare(`SELECT * FROM ${table} WHERE uuid = ?`).get(ref.toLowerCase()) as
      T | undefined;
  }
  for (const column of nameColumns) {
    if (row || typeof ref !== 'string') break;
    row = db.prepare(`SELECT * FROM ${table} WHERE ${column} = ?`).get(ref) as T | undefined;
  }
  if (!row) throw new AppError('not_found', `${what} ${JSON.stringify(ref)} does not exist`);
  return row;
}

export const findUser = (db: Db, ref: Ref): UserRow =>
  byRef<UserRow>(db, 'users', ref, ['username', 'badge_number'], 'user');
export const findTool = (db: Db, ref: Ref): ToolRow =>
  byRef<ToolRow>(db, 'tools', ref, ['name'], 'tool');
export const findProject = (db: Db, ref: Ref): ProjectRow =>
  byRef<ProjectRow>(db, 'projects', ref, ['name'], 'project');
export const findUsage = (db: Db, ref: Ref): UsageRow =>
  byRef<UsageRow>(db, 'usage_events', ref, [], 'usage event');

export function displayName(user: Pick<UserRow, 'first_name' | 'last_name' | 'username'>): string {
  const full = `${user.first_name} ${user.last_name}`.trim();
  return full || user.username;
}

export function userSummary(row: UserRow): UserSummary {
  return {
    id: row.id,
    uuid: row.uuid,
    username: row.username,
    first_name: row.first_name,
    last_name: row.last_name,
    is_staff: row.is_staff === 1,
  };
}

export function projectSummary(row: ProjectRow): ProjectSummary {
  return {
    id: row.id,
    uuid: row.uuid,
    name: row.name,
    application_identifier: row.application_identifier,
  };
}

/** Question lists are validated on the way in, so a stored list that fails to parse is a bug. */
export function storedQuestions(json: string, what: string): Question[] {
  const parsed = parseQuestions(json, { stored: true });
  if (!parsed.ok) {
    throw new AppError('internal', `stored ${what} are invalid: ${parsed.problems[0]?.message}`);
  }
  return parsed.questions;
}

export function toolInfo(row: ToolRow): ToolInfo {
  return {
    id: row.id,
    uuid: row.uuid,
    name: row.name,
    pre_usage_questions: storedQuestions(
      row.pre_usage_questions,
      `pre-usage questions of ${row.name}`,
    ),
    post_usage_questions: storedQuestions(
      row.post_usage_questions,
      `post-usage questions of ${row.name}`,
    ),
  };
}

export function activeProjectsOf(db: Db, userId: number): ProjectRow[] {
  return db
    .prepare(
      `SELECT p.* FROM projects p JOIN user_projects up ON up.project_id = p.id
       WHERE up.user_id = ? AND p.active = 1 ORDER BY p.name`,
    )
    .all(userId) as ProjectRow[];
}

export function isQualified(db: Db, userId: number, toolId: number): boolean {
  return (
    db
      .prepare('SELECT 1 FROM qualifications WHERE user_id = ? AND tool_id = ?')
      .get(userId, toolId) !== undefined
  );
}

const USAGE_VIEW_SQL = `
  SELECT e.*,
    u.first_name AS u_first, u.last_name AS u_last, u.username AS u_username,
    o.first_name AS o_first, o.last_name AS o_last, o.username AS o_username,
    v.first_name AS v_first, v.last_name AS v_last, v.username AS v_username,
    p.name AS project_name, t.name AS tool_name
  FROM usage_events e
  JOIN users u ON u.id = e.user_id
  JOIN users o ON o.id = e.operator_id
  LEFT JOIN users v ON v.id = e.validated_by_id
  JOIN projects p ON p.id = e.project_id
  JOIN tools t ON t.id = e.tool_id`;

interface UsageViewRow extends UsageRow {
  u_first: string;
  u_last: string;
  u_username: string;
  o_first: string;
  o_last: string;
  o_username: string;
  v_first: string | null;
  v_last: string | null;
  v_username: string | null;
  project_name: string;
  tool_name: string;
}

function toView(r: UsageViewRow): UsageEventView {
  return {
    id: r.id,
    uuid: r.uuid,
    user_id: r.user_id,
    operator_id: r.operator_id,
    project_id: r.project_id,
    tool_id: r.tool_id,
    start: r.start,
    end: r.end,
    validated: r.validated === 1,
    validated_by_id: r.validated_by_id,
    remote_work: r.remote_work === 1,
    pre_run_data: r.pre_run_data,
    run_data: r.run_data,
    post_usage_pending: r.post_usage_pending === 1,
    reminder_due: r.reminder_due === 1,
    force_ended_by_id: r.force_ended_by_id,
    user_name: displayName({ first_name: r.u_first, last_name: r.u_last, username: r.u_username }),
    operator_name: displayName({
      first_name: r.o_first,
      last_name: r.o_last,
      username: r.o_username,
    }),
    project_name: r.project_name,
    tool_name: r.tool_name,
    validated_by_name:
      r.v_username === null
        ? null
        : displayName({
            first_name: r.v_first ?? '',
            last_name: r.v_last ?? '',
            username: r.v_username,
          }),
    ...(r.station_answers_not_kept === null
      ? {}
      : { station_answers_not_kept: r.station_answers_not_kept }),
  };
}

export function usageView(db: Db, id: number): UsageEventView {
  const row = db.prepare(`${USAGE_VIEW_SQL} WHERE e.id = ?`).get(id) as UsageViewRow | undefined;
  if (!row) throw new AppError('not_found', `usage event ${id} does not exist`);
  return toView(row);
}

/**
 * The usage the harvested file with this id was made during: the station's own, or (a file of
 * an instrument's history made on another station) as the server described it. Null when
 * there was none, or none is known.
 */
export function fileUsageView(db: Db, fileId: number): FileUsageView | null {
  const file = db
    .prepare('SELECT usage_event_id, usage_elsewhere FROM harvest_files WHERE id = ?')
    .get(fileId) as { usage_event_id: number | null; usage_elsewhere: string | null } | undefined;
  if (!file) return null;
  if (file.usage_event_id !== null) {
    const row = db.prepare(`${USAGE_VIEW_SQL} WHERE e.id = ?`).get(file.usage_event_id) as
      UsageViewRow | undefined;
    if (!row) return null;
    const { uuid, user_name, project_name, tool_name, start, end } = toView(row);
    return { uuid, user_name, project_name, tool_name, start, end, elsewhere: false };
  }
  const context = storedUsageContext(file.usage_elsewhere);
  if (context === null) return null;
  return {
    uuid: context.usage_event,
    user_name:
      typeof context.user.name === 'string' && context.user.name
        ? context.user.name
        : context.user.username,
    project_name: context.project.name,
    tool_name: typeof context.tool === 'string' ? context.tool : '',
    start: context.start,
    end: typeof context.end === 'string' ? context.end : null,
    elsewhere: true,
  };
}

export interface UsageQuery {
  toolId?: number;
  userId?: number;
  from?: string;
  to?: string;
  pendingOnly?: boolean;
}

/** Usage events, newest first. `from`/`to` bound the start time (ISO text compares in order). */
export function queryUsage(db: Db, q: UsageQuery): UsageEventView[] {
  const where: string[] = [];
  const params: (string | number)[] = [];
  const add = (clause: string, value?: string | number): void => {
    where.push(clause);
    if (value !== undefined) params.push(value);
  };
  if (q.toolId !== undefined) add('e.tool_id = ?', q.toolId);
  if (q.userId !== undefined) add('e.user_id = ?', q.userId);
  if (q.from !== undefined) add('e.start >= ?', q.from);
  if (q.to !== undefined) add('e.start < ?', q.to);
  if (q.pendingOnly) add('e.post_usage_pending = 1');
  const sql = `${USAGE_VIEW_SQL} ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
    ORDER BY e.start DESC, e.id DESC`;
  return (db.prepare(sql).all(...params) as UsageViewRow[]).map(toView);
}

export function activeUsageOf(db: Db, toolId: number): UsageRow | undefined {
  return db
    .prepare('SELECT * FROM usage_events WHERE tool_id = ? AND "end" IS NULL')
    .get(toolId) as UsageRow | undefined;
}
