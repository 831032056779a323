/**
 * What a person may book on the server's reservation page (`reservations.targets`): the tools
 * and areas booking accepts from them (qualified tools, and areas whose every tool is one;
 * everything for staff and admins, as book.ts decides), and the people and active projects a
 * booking may name.
 */
import type { ReservationTargets } from '../../../../shared/reservationApi.js';
import type { Db } from '../../db/open.js';
import { isStaff, type Account } from '../auth.js';

interface NamedRow {
  id: number;
  name: string;
}

export function reservationTargets(db: Db, account: Account): ReservationTargets {
  const staff = isStaff(account);
  const tools = (
    staff
      ? db.prepare('SELECT id, name FROM tools ORDER BY name').all()
      : db
          .prepare(
            `SELECT t.id, t.name FROM tools t JOIN qualifications q ON q.tool_id = t.id
             WHERE q.user_id = ? ORDER BY t.name`,
          )
          .all(account.id)
  ) as NamedRow[];
  const areaTools = db.prepare(
    `SELECT t.id, t.name FROM area_tools a JOIN tools t ON t.id = a.tool_id
     WHERE a.area_id = ? ORDER BY t.name`,
  );
  const qualified = new Set(tools.map((tool) => tool.id));
  const areas = (db.prepare('SELECT id, name FROM areas ORDER BY name').all() as NamedRow[])
    .map((area) => ({ ...area, tools: areaTools.all(area.id) as NamedRow[] }))
    .filter((area) => staff || area.tools.every((tool) => qualified.has(tool.id)));
  const projectsOf = db
    .prepare(
      `SELECT p.id FROM user_projects up JOIN projects p ON p.id = up.project_id
       WHERE up.user_id = ? AND p.active = 1 ORDER BY p.name`,
    )
    .pluck();
  const people = (
    db
      .prepare(
        `SELECT id, username AS name FROM users
         WHERE is_active = 1 AND (@staff = 1 OR id = @me) ORDER BY username`,
      )
      .all({ staff: staff ? 1 : 0, me: account.id }) as NamedRow[]
  ).map((person) => ({ ...person, projects: projectsOf.all(person.id) as number[] }));
  const projects = db
    .prepare(
      `SELECT id, name FROM projects p WHERE active = 1
         AND (@staff = 1 OR EXISTS (SELECT 1 FROM user_projects up
           WHERE up.project_id = p.id AND up.user_id = @me))
       ORDER BY name`,
    )
    .all({ staff: staff ? 1 : 0, me: account.id }) as NamedRow[];
  return { tools, areas, projects, people };
}
