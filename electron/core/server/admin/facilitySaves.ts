/**
 * Admin edits of the facility on the server: people (roles, log-in secrets, badges, projects,
 * qualifications), projects, and tools with their question forms. Every write runs in one
 * transaction; the sync triggers of migration 3 log it, so online stations pull it within
 * seconds. Nothing is deleted: people and projects are deactivated, since usage events keep
 * pointing at them.
 */
import type {
  AdminProject,
  AdminProjectInput,
  AdminTool,
  AdminToolInput,
  AdminUser,
  AdminUserInput,
} from '../../../../shared/adminApi.js';
import { parseQuestions, serializeQuestions } from '../../../../shared/questions/index.js';
import { replaceLinks, touch } from '../../db/links.js';
import type { Db } from '../../db/open.js';
import { AppError, fieldError } from '../../util/errors.js';
import { newUuid, nowIso } from '../../util/ids.js';
import { hashSecret } from '../../util/pin.js';
import { logonNameClashes, type Clash } from '../accounts.js';
import type { Account } from '../auth.js';
import { toAdminProject, toolById, userById } from './facility.js';

/** Every id must name a row of `table`; the field and the missing ids are named. */
function checkIds(db: Db, table: 'projects' | 'tools' | 'users', ids: number[], field: string) {
  const missing = [...new Set(ids)].filter(
    (id) => db.prepare(`SELECT 1 FROM ${table} WHERE id = ?`).get(id) === undefined,
  );
  if (missing.length) {
    throw fieldError(field, `no ${table.slice(0, -1)} with id ${missing.join(', ')}`);
  }
}

/**
 * Saves carry the `updated_at` of the record as the editor loaded it: a record changed since
 * (by another admin, or by a save of a record linked to it) is not overwritten with what the
 * editor still showed. Not a field error: the whole form is stale.
 */
function unchangedSince(
  db: Db,
  table: 'users' | 'projects' | 'tools',
  id: number,
  loaded: string | undefined,
  what: string,
): void {
  if (loaded === undefined) return;
  const now = db.prepare(`SELECT updated_at FROM ${table} WHERE id = ?`).pluck().get(id) as
    string | undefined;
  if (now !== undefined && now !== loaded) throw changedElsewhere(what, now);
}

/**
 * The refusal of an editor's save over a change another admin saved since the editor was
 * opened (`savedAt`: when, where the record says).
 */
export function changedElsewhere(what: string, savedAt?: string): AppError {
  return new AppError(
    'conflict',
    `${what} was changed elsewhere since it was opened here` +
      `${savedAt === undefined ? '' : ` (saved at ${savedAt})`}; reload the page to see that ` +
      'change, then make yours again',
  );
}

/** Every clash at once (one refusal, each problem at its field), not one per save. */
function refuseClashes(problems: Clash[]): void {
  if (!problems.length) return;
  throw new AppError('conflict', problems.map((p) => `${p.path[0]}: ${p.message}`).join('; '), {
    problems,
  });
}

export async function saveUser(
  db: Db,
  actor: Account,
  input: AdminUserInput,
): Promise<{ user: AdminUser }> {
  const id = input.id ?? null;
  if (id === actor.id && (input.role !== 'admin' || !input.is_active)) {
    // The acting admin stays an active admin, so the server always keeps one.
    throw fieldError(
      input.role !== 'admin' ? 'role' : 'is_active',
      'you cannot take away your own admin access; ask another admin',
      'conflict',
    );
  }
  // Hash outside the transaction: argon2id takes tens of milliseconds.
  const pinHash = input.pin ? await hashSecret(input.pin) : null;
  const passwordHash = input.password ? await hashSecret(input.password) : null;
  const email = input.email.trim();
  const badge = input.badge_number.trim() || null;
  const now = nowIso();
  const savedId = db
    .transaction((): number => {
      // Read again in the write's turn: two admins taking each other's access at once both
      // passed the check above, each still an admin as it logged in, and left none.
      const acting = db.prepare('SELECT role, is_active FROM users WHERE id = ?').get(actor.id) as
        { role: string; is_active: number } | undefined;
      if (acting?.role !== 'admin' || acting.is_active !== 1) {
        throw new AppError('forbidden', 'your admin access was taken away meanwhile');
      }
      const before = id === null ? null : userById(db, id);
      if (before) unchangedSince(db, 'users', before.id, input.updated_at, before.username);
      const clashes = logonNameClashes(db, id, input.username, badge);
      if (email) {
        const owner = db
          .prepare('SELECT username FROM users WHERE email = ? COLLATE NOCASE AND id <> ?')
          .pluck()
          .get(email, id ?? -1) as string | undefined;
        if (owner) clashes.push({ path: ['email'], message: `${email} is ${owner}'s` });
      }
      refuseClashes(clashes);
      if (
        !email &&
        (passwordHash ||
          input.role === 'admin' ||
          // A password kept from before logs in with the e-mail too: clearing it would lock
          // the person out of the server (and leave pending-answers mail nowhere to go).
          before?.has_password)
      ) {
        throw fieldError('email', 'is needed to log in to the server');
      }
      checkIds(db, 'projects', input.projects, 'projects');
      checkIds(db, 'tools', input.qualified_tools, 'qualified_tools');
      const values = {
        username: input.username,
        email,
        first_name: input.first_name,
        last_name: input.last_name,
        badge_number: badge,
        role: input.role,
        is_staff: input.role === 'user' ? 0 : 1,
        is_active: input.is_active ? 1 : 0,
        pin_hash: pinHash,
        password_hash: passwordHash,
        now,
      };
      let userId: number;
      if (id === null) {
        userId = Number(
          db
            .prepare(
              `INSERT INTO users (uuid, username, email, first_name, last_name, badge_number,
                 role, is_staff, is_active, pin_hash, password_hash, created_at, updated_at)
               VALUES (@uuid, @username, @email, @first_name, @last_name, @badge_number, @role,
                 @is_staff, @is_active, @pin_hash, @password_hash, @now, @now)`,
            )
            .run({ ...values, uuid: newUuid() }).lastInsertRowid,
        );
      } else {
        userId = id;
        db.prepare(
          `UPDATE users SET username = @username, email = @email, first_name = @first_name,
             last_name = @last_name, badge_number = @badge_number, role = @role,
             is_staff = @is_staff, is_active = @is_active,
             pin_hash = coalesce(@pin_hash, pin_hash),
             password_hash = coalesce(@password_hash, password_hash), updated_at = @now
           WHERE id = @id`,
        ).run({ ...values, id });
      }
      replaceLinks(db, 'user_projects', 'user_id', 'project_id', userId, input.projects);
      const tools = replaceLinks(
        db,
        'qualifications',
        'user_id',
        'tool_id',
        userId,
        input.qualified_tools,
      );
      // A tool lists its qualified people: an editor open on it is now stale.
      touch(db, 'tools', tools, now);
      return userId;
    })
    .immediate();
  return { user: userById(db, savedId) };
}

export function saveProject(db: Db, input: AdminProjectInput): { project: AdminProject } {
  const id = input.id ?? null;
  const now = nowIso();
  const savedId = db
    .transaction((): number => {
      if (id !== null) {
        const name = db.prepare('SELECT name FROM projects WHERE id = ?').pluck().get(id) as
          string | undefined;
        if (name === undefined) throw fieldError('id', `no project with id ${id}`, 'not_found');
        unchangedSince(db, 'projects', id, input.updated_at, name);
      }
      const taken = db
        .prepare('SELECT 1 FROM projects WHERE name = ? AND id <> ?')
        .get(input.name, id ?? -1);
      if (taken) throw fieldError('name', `a project named ${input.name} exists`, 'conflict');
      const values = {
        name: input.name,
        application_identifier: input.application_identifier,
        active: input.active ? 1 : 0,
        now,
      };
      if (id === null) {
        return Number(
          db
            .prepare(
              `INSERT INTO projects (uuid, name, application_identifier, active, created_at, updated_at)
               VALUES (@uuid, @name, @application_identifier, @active, @now, @now)`,
            )
            .run({ ...values, uuid: newUuid() }).lastInsertRowid,
        );
      }
      db.prepare(
        `UPDATE projects SET name = @name, application_identifier = @application_identifier,
           active = @active, updated_at = @now WHERE id = @id`,
      ).run({ ...values, id });
      return id;
    })
    .immediate();
  const row = db
    .prepare(
      'SELECT id, uuid, name, application_identifier, active, updated_at FROM projects WHERE id = ?',
    )
    .get(savedId) as Parameters<typeof toAdminProject>[0];
  return { project: toAdminProject(row) };
}

/** A question list checked by the shared parser, or its problems, each under its field. */
function checkedQuestionsJson(
  value: unknown,
  field: string,
): { ok: true; json: string } | { ok: false; problems: { path: string[]; message: string }[] } {
  // A save states the whole tool: a list left out or null would have put none in place of the
  // stored one.
  if (value === undefined || value === null) {
    return {
      ok: false,
      problems: [{ path: [field], message: 'is required: a list of questions ([] for none)' }],
    };
  }
  const parsed = parseQuestions(value);
  if (!parsed.ok) {
    return {
      ok: false,
      problems: parsed.problems.map((p) => ({
        path: p.path ? [field, p.path] : [field],
        message: p.message,
      })),
    };
  }
  return { ok: true, json: JSON.stringify(serializeQuestions(parsed.questions)) };
}

/**
 * Both question lists, checked together: the problems of the one are named with those of the
 * other, each at its question and property (as an import and a reservation question set name
 * them).
 */
function questionListsJson(input: AdminToolInput): { pre: string; post: string } {
  const pre = checkedQuestionsJson(input.pre_usage_questions, 'pre_usage_questions');
  const post = checkedQuestionsJson(input.post_usage_questions, 'post_usage_questions');
  if (pre.ok && post.ok) return { pre: pre.json, post: post.json };
  const problems = [...(pre.ok ? [] : pre.problems), ...(post.ok ? [] : post.problems)];
  const first = problems[0];
  throw new AppError(
    'validation_failed',
    `${first?.path[0] ?? 'questions'}: ${first?.message ?? 'invalid'}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}`,
    { problems },
  );
}

export function saveTool(db: Db, input: AdminToolInput): { tool: AdminTool } {
  const id = input.id ?? null;
  const { pre, post } = questionListsJson(input);
  const now = nowIso();
  const savedId = db
    .transaction((): number => {
      if (id !== null) {
        unchangedSince(db, 'tools', id, input.updated_at, toolById(db, id).name);
      }
      const taken = db
        .prepare('SELECT 1 FROM tools WHERE name = ? AND id <> ?')
        .get(input.name, id ?? -1);
      if (taken) throw fieldError('name', `a tool named ${input.name} exists`, 'conflict');
      checkIds(db, 'users', input.qualified_users, 'qualified_users');
      const values = {
        name: input.name,
        category: input.category,
        operational: input.operational ? 1 : 0,
        visible: input.visible ? 1 : 0,
        pre,
        post,
        now,
      };
      let toolId: number;
      if (id === null) {
        toolId = Number(
          db
            .prepare(
              `INSERT INTO tools (uuid, name, category, operational, visible, pre_usage_questions,
                 post_usage_questions, created_at, updated_at)
               VALUES (@uuid, @name, @category, @operational, @visible, @pre, @post, @now, @now)`,
            )
            .run({ ...values, uuid: newUuid() }).lastInsertRowid,
        );
      } else {
        toolId = id;
        db.prepare(
          `UPDATE tools SET name = @name, category = @category, operational = @operational,
             visible = @visible, pre_usage_questions = @pre, post_usage_questions = @post,
             updated_at = @now
           WHERE id = @id`,
        ).run({ ...values, id });
      }
      const users = replaceLinks(
        db,
        'qualifications',
        'tool_id',
        'user_id',
        toolId,
        input.qualified_users,
      );
      // A person lists their qualified tools: an editor open on them is now stale.
      touch(db, 'users', users, now);
      return toolId;
    })
    .immediate();
  return { tool: toolById(db, savedId) };
}
