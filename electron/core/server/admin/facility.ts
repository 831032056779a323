/**
 * The admin pages' reads of the facility and the views they show of people, projects and tools.
 * The saves (facilitySaves.ts) answer with these same views, read back after each write, so they
 * import this module; it imports nothing of theirs.
 */
import type { AdminProject, AdminTool, AdminUser } from '../../../../shared/adminApi.js';
import type { Db } from '../../db/open.js';
import type { UserRow } from '../../station/records.js';
import { fieldError } from '../../util/errors.js';

/** A users row with the server's account columns (records.ts has the station's). */
interface UserDbRow extends UserRow {
  role: AdminUser['role'];
  password_hash: string | null;
  updated_at: string;
}

interface ToolDbRow {
  id: number;
  uuid: string;
  name: string;
  category: string;
  operational: number;
  visible: number;
  pre_usage_questions: string;
  post_usage_questions: string;
  shutdown: number;
  shutdown_reason: string;
  shutdown_since: string | null;
  updated_at: string;
}

/** Pairs (owner id, other id) of a link table, grouped by owner. */
function linksBy(db: Db, sql: string): Map<number, number[]> {
  const map = new Map<number, number[]>();
  for (const [owner, other] of db.prepare(sql).raw().all() as [number, number][]) {
    const list = map.get(owner) ?? [];
    list.push(other);
    map.set(owner, list);
  }
  return map;
}

function toAdminUser(row: UserDbRow, projects: number[], tools: number[]): AdminUser {
  return {
    id: row.id,
    uuid: row.uuid,
    username: row.username,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    badge_number: row.badge_number ?? '',
    role: row.role,
    is_active: row.is_active === 1,
    has_pin: row.pin_hash !== null,
    has_password: row.password_hash !== null,
    projects,
    qualified_tools: tools,
    updated_at: row.updated_at,
  };
}

function toAdminTool(row: ToolDbRow, users: number[]): AdminTool {
  return {
    id: row.id,
    uuid: row.uuid,
    name: row.name,
    category: row.category,
    operational: row.operational === 1,
    visible: row.visible === 1,
    pre_usage_questions: JSON.parse(row.pre_usage_questions) as unknown[],
    post_usage_questions: JSON.parse(row.post_usage_questions) as unknown[],
    qualified_users: users,
    shutdown: row.shutdown ? { reason: row.shutdown_reason, since: row.shutdown_since } : null,
    updated_at: row.updated_at,
  };
}

export const toAdminProject = (row: {
  id: number;
  uuid: string;
  name: string;
  application_identifier: string;
  active: number;
  updated_at: string;
}): AdminProject => ({ ...row, active: row.active === 1 });

export function listFacility(db: Db): {
  users: AdminUser[];
  projects: AdminProject[];
  tools: AdminTool[];
} {
  const projectsOf = linksBy(
    db,
    'SELECT user_id, project_id FROM user_projects ORDER BY user_id, project_id',
  );
  const toolsOf = linksBy(
    db,
    'SELECT user_id, tool_id FROM qualifications ORDER BY user_id, tool_id',
  );
  const usersOf = linksBy(
    db,
    'SELECT tool_id, user_id FROM qualifications ORDER BY tool_id, user_id',
  );
  const users = (
    db
      .prepare(
        `SELECT id, uuid, username, email, first_name, last_name, badge_number, role, is_active,
           pin_hash, password_hash, updated_at
         FROM users ORDER BY username COLLATE NOCASE`,
      )
      .all() as UserDbRow[]
  ).map((row) => toAdminUser(row, projectsOf.get(row.id) ?? [], toolsOf.get(row.id) ?? []));
  const projects = (
    db
      .prepare(
        `SELECT id, uuid, name, application_identifier, active, updated_at FROM projects
         ORDER BY name COLLATE NOCASE`,
      )
      .all() as Parameters<typeof toAdminProject>[0][]
  ).map(toAdminProject);
  const tools = (
    db.prepare('SELECT * FROM tools ORDER BY name COLLATE NOCASE').all() as ToolDbRow[]
  ).map((row) => toAdminTool(row, usersOf.get(row.id) ?? []));
  return { users, projects, tools };
}

export function userById(db: Db, id: number): AdminUser {
  const row = db.prepare('SELECT * FROM users WHERE id = ?').get(id) as UserDbRow | undefined;
  if (!row) throw fieldError('id', `no person with id ${id}`, 'not_found');
  const ids = (sql: string): number[] => db.prepare(sql).pluck().all(id) as number[];
  return toAdminUser(
    row,
    ids('SELECT project_id FROM user_projects WHERE user_id = ? ORDER BY project_id'),
    ids('SELECT tool_id FROM qualifications WHERE user_id = ? ORDER BY tool_id'),
  );
}

export function toolById(db: Db, id: number): AdminTool {
  const row = db.prepare('SELECT * FROM tools WHERE id = ?').get(id) as ToolDbRow | undefined;
  if (!row) throw fieldError('id', `no tool with id ${id}`, 'not_found');
  const users = db
    .prepare('SELECT user_id FROM qualifications WHERE tool_id = ? ORDER BY user_id')
    .pluck()
    .all(id) as number[];
  return toAdminTool(row, users);
}
