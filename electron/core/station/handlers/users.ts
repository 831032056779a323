/**
 * The users.* calls of the station's handler map (station.ts): for staff, who may use a tool
 * (the active people qualified for it, and staff) with their active projects.
 */
import { AppError } from '../../util/errors.js';
import {
  activeProjectsOf,
  findTool,
  projectSummary,
  userSummary,
  type UserRow,
} from '../records.js';
import type { HandlerContext, HandlersOf } from './context.js';

export type UsersContext = Pick<HandlerContext, 'db' | 'actor'>;

export function userHandlers(ctx: UsersContext): HandlersOf<'users'> {
  const { db } = ctx;
  return {
    'users.list': ({ tool }) => {
      const actor = ctx.actor();
      if (actor.is_staff !== 1) throw new AppError('forbidden', 'only staff can list users');
      const toolRow = findTool(db, tool);
      const rows = db
        .prepare(
          `SELECT * FROM users u WHERE u.is_active = 1 AND (u.is_staff = 1 OR EXISTS
             (SELECT 1 FROM qualifications q WHERE q.user_id = u.id AND q.tool_id = ?))
           ORDER BY u.last_name, u.first_name, u.username`,
        )
        .all(toolRow.id) as UserRow[];
      return {
        users: rows.map((u) => ({
          ...userSummary(u),
          projects: activeProjectsOf(db, u.id).map(projectSummary),
        })),
      };
    },
  };
}
