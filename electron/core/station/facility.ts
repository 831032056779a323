import { z } from 'zod';
import { parseQuestions, serializeQuestions } from '../../../shared/questions/index.js';
import { isPlainObject, ownValue } from '../../../shared/questions/json.js';
import { lineSchema } from '../../../shared/text.js';
import { replaceLinks, touch } from '../db/links.js';
import type { Db } from '../db/open.js';
import {
  applyHarvestBundle,
  harvestBundleProblems,
  harvestBundleShape,
} from '../harvest/bundle.js';
import { AppError } from '../util/errors.js';
import { formatIssues } from '../util/issues.js';
import { newUuid, nowIso } from '../util/ids.js';
import { hashSecret, verifySecret } from '../util/pin.js';
import { getSetting, setSetting } from './settings.js';

const name = lineSchema(200).min(1, 'must not be empty');
const pin = z.string().regex(/^\d{4,12}$/, 'must be 4 to 12 digits');

const bundleSchema = z
  .object({
    users: z
      .array(
        z
          .object({
            username: name,
            email: lineSchema(320).optional(),
            first_name: lineSchema(200).optional(),
            last_name: lineSchema(200).optional(),
            badge_number: lineSchema(64).min(1).nullable().optional(),
            pin: pin.optional(),
            pin_hash: z
              .string()
              .startsWith('$argon2id$', 'must be an argon2id PHC string')
              .optional(),
            is_staff: z.boolean().optional(),
            is_active: z.boolean().optional(),
            password: z.string().min(10, 'must be at least 10 characters').max(200).optional(),
            role: z.enum(['admin', 'staff', 'user']).optional(),
            projects: z.array(name).optional(),
            qualified_tools: z.array(name).optional(),
          })
          .strict(),
      )
      .optional(),
    projects: z
      .array(
        z
          .object({
            name,
            application_identifier: lineSchema(200).optional(),
            active: z.boolean().optional(),
          })
          .strict(),
      )
      .optional(),
    tools: z
      .array(
        z
          .object({
            name,
            pre_usage_questions: z.unknown().optional(),
            post_usage_questions: z.unknown().optional(),
          })
          .strict(),
      )
      .optional(),
    station: z
      .object({
        tool: name,
        idle_logoff_minutes: z.number().positive().max(1440).optional(),
        idle_force_end_minutes: z.number().positive().max(10080).nullable().optional(),
        lock_mode: z.boolean().optional(),
        /** Run `command` hooks that come from the server (off unless the station says so). */
        server_command_hooks: z.boolean().optional(),
        /** Copies at once (harvest.concurrency). */
        harvest_concurrency: z.number().int().min(1).max(16).optional(),
        /** Minutes between full walks of the watched folders (harvest.rescanMinutes). */
        rescan_minutes: z.number().min(0.1).max(1440).optional(),
        /** A failed file's first wait, doubled at each failure up to the most (harvest.retry*). */
        retry_base_seconds: z.number().int().min(1).max(86_400).optional(),
        retry_max_seconds: z.number().int().min(1).max(604_800).optional(),
      })
      .strict()
      .optional(),
    ...harvestBundleShape,
  })
  .strict();

export type FacilityBundle = z.infer<typeof bundleSchema>;

export interface ImportSummary {
  users: number;
  projects: number;
  tools: number;
  station: string | null;
  instruments: number;
  storage_locations: number;
  hooks: number;
  schedules: number;
}

type BundleUser = NonNullable<FacilityBundle['users']>[number];

/**
 * A data dir serves a station or a server. A station bundle names its tool; a server bundle
 * may give people passwords and roles to log in to the server. A fresh dir takes the role its
 * first bundle implies.
 */
function dataDirMode(
  db: Db,
  bundle: FacilityBundle,
  problems: string[],
): 'station' | 'server' | null {
  const current = getSetting(db, 'mode');
  const serverOnly = (bundle.users ?? []).flatMap((u, i) =>
    (['password', 'role'] as const)
      .filter((k) => u[k] !== undefined)
      .map((k) => `users[${i}] (${u.username}).${k}`),
  );
  const wants = bundle.station ? 'station' : serverOnly.length ? 'server' : null;
  if (bundle.station && serverOnly.length) {
    problems.push(
      `${serverOnly[0]}: passwords and roles belong to a server bundle, which has no "station"`,
    );
    return current;
  }
  if (current === 'server' && wants === 'station') {
    problems.push('station: this data dir belongs to a server, which runs no tool itself');
  } else if (current === 'station' && wants === 'server') {
    problems.push(
      `${serverOnly[0]}: this data dir belongs to a station; passwords and roles go to a server`,
    );
  }
  return current ?? wants;
}

/**
 * People log on with a username or a badge number, so each must name one person: a badge
 * used twice, or equal to someone else's username, would make log-on ambiguous.
 */
function badgeProblems(db: Db, users: BundleUser[]): string[] {
  const problems: string[] = [];
  const existing = db.prepare('SELECT username, badge_number FROM users').all() as {
    username: string;
    badge_number: string | null;
  }[];
  const badgeOwner = new Map<string, string>();
  for (const e of existing)
    if (e.badge_number) badgeOwner.set(e.badge_number, e.username.toLowerCase());
  // The bundle's own assignments replace those of the people it names (a person whose entry
  // leaves badge_number out keeps theirs).
  for (const u of users) {
    if (u.badge_number === undefined) continue;
    for (const [badge, owner] of badgeOwner)
      if (owner === u.username.toLowerCase()) badgeOwner.delete(badge);
  }
  const usernames = new Set([
    ...existing.map((e) => e.username.toLowerCase()),
    ...users.map((u) => u.username.toLowerCase()),
  ]);
  users.forEach((u, i) => {
    const badge = u.badge_number;
    if (!badge) return;
    const owner = badgeOwner.get(badge);
    if (owner !== undefined && owner !== u.username.toLowerCase()) {
      problems.push(
        `users[${i}] (${u.username}).badge_number: ${badge} already belongs to ${owner}`,
      );
    } else if (
      usernames.has(badge.toLowerCase()) &&
      badge.toLowerCase() !== u.username.toLowerCase()
    ) {
      problems.push(`users[${i}] (${u.username}).badge_number: ${badge} is someone's username`);
    }
    badgeOwner.set(badge, u.username.toLowerCase());
  });
  return problems;
}

/** One line per issue, "path: message"; `root` names what an issue without a path is about. */
/**
 * A person's role and NEMO's is_staff after an import. A given role decides both. Else a given
 * is_staff decides (an admin stays an admin: a re-import must not demote whoever runs the
 * server). A person the bundle says neither of keeps both; a new one is a user.
 */
function roleOf(
  u: BundleUser,
  current: { role: string; is_staff: number } | undefined,
): { role: string; isStaff: number } {
  if (u.role !== undefined) return { role: u.role, isStaff: u.role === 'user' ? 0 : 1 };
  if (u.is_staff !== undefined) {
    if (current?.role === 'admin') return { role: 'admin', isStaff: 1 };
    return { role: u.is_staff ? 'staff' : 'user', isStaff: u.is_staff ? 1 : 0 };
  }
  return current ? { role: current.role, isStaff: current.is_staff } : { role: 'user', isStaff: 0 };
}

const QUESTION_LISTS = ['pre_usage_questions', 'post_usage_questions'] as const;

/**
 * Checks a tool's question lists and returns them as canonical JSON text, adding a named
 * problem for each broken rule. It reads the raw input, so the question problems of a bundle
 * the schema refuses are named too, with the schema's own.
 */
function toolForms(
  tool: unknown,
  i: number,
  problems: string[],
): Record<(typeof QUESTION_LISTS)[number], string> {
  const forms = { pre_usage_questions: '[]', post_usage_questions: '[]' };
  if (!isPlainObject(tool)) return forms;
  const name = ownValue(tool, 'name');
  const where = typeof name === 'string' ? `tools[${i}] (${name.trim()})` : `tools[${i}]`;
  for (const key of QUESTION_LISTS) {
    const result = parseQuestions(ownValue(tool, key) ?? []);
    if (result.ok) forms[key] = JSON.stringify(serializeQuestions(result.questions));
    else for (const p of result.problems) problems.push(`${where}.${key}: ${p.message}`);
  }
  return forms;
}

/**
 * Loads a facility bundle (users, projects, tools with their question forms, the station's
 * tool) in one transaction: every problem is reported and nothing is imported, or all is.
 * Records are matched by name, so importing the same bundle twice changes nothing.
 */
export async function importBundle(db: Db, input: unknown): Promise<ImportSummary> {
  const parsed = bundleSchema.safeParse(input);
  if (!parsed.success) {
    const problems = formatIssues(parsed.error.issues, '(bundle)', input);
    const rawTools = isPlainObject(input) ? ownValue(input, 'tools') : undefined;
    if (Array.isArray(rawTools)) rawTools.forEach((tool, i) => toolForms(tool, i, problems));
    throw new AppError('validation_failed', problems.join('\n'), { problems });
  }
  const bundle = parsed.data;
  const problems: string[] = [];
  const tools = (bundle.tools ?? []).map((tool, i) => ({
    name: tool.name,
    ...toolForms(tool, i, problems),
  }));
  const projectNames = new Set([
    ...(bundle.projects ?? []).map((p) => p.name),
    ...(db.prepare('SELECT name FROM projects').pluck().all() as string[]),
  ]);
  const toolNames = new Set([
    ...tools.map((t) => t.name),
    ...(db.prepare('SELECT name FROM tools').pluck().all() as string[]),
  ]);
  // Records are matched by name: a name listed twice would keep only its last entry.
  for (const [field, list] of [
    ['projects', bundle.projects ?? []],
    ['tools', tools],
  ] as const) {
    const names = new Set<string>();
    list.forEach((item, i) => {
      if (names.has(item.name)) problems.push(`${field}[${i}].name: ${item.name} is listed twice`);
      names.add(item.name);
    });
  }
  const seen = new Map<string, number>();
  const emails = new Map<string, string>();
  (bundle.users ?? []).forEach((u, i) => {
    const key = u.username.toLowerCase();
    if (seen.has(key)) problems.push(`users[${i}].username: ${u.username} is listed twice`);
    seen.set(key, i);
    const email = u.email?.trim().toLowerCase();
    if (email) {
      const other = emails.get(email);
      if (other) problems.push(`users[${i}] (${u.username}).email: ${u.email} is also ${other}'s`);
      emails.set(email, u.username);
    }
    for (const p of u.projects ?? []) {
      if (!projectNames.has(p))
        problems.push(
          `users[${i}] (${u.username}).projects: no project named ${JSON.stringify(p)}`,
        );
    }
    for (const t of u.qualified_tools ?? []) {
      if (!toolNames.has(t))
        problems.push(
          `users[${i}] (${u.username}).qualified_tools: no tool named ${JSON.stringify(t)}`,
        );
    }
    if (u.pin && u.pin_hash)
      problems.push(`users[${i}] (${u.username}): give pin or pin_hash, not both`);
  });
  problems.push(...badgeProblems(db, bundle.users ?? []));
  const mode = dataDirMode(db, bundle, problems);
  if (bundle.station && !toolNames.has(bundle.station.tool)) {
    problems.push(`station.tool: no tool named ${JSON.stringify(bundle.station.tool)}`);
  }
  // A failed file's wait doubles up to the most: the most is at least the first wait, each
  // taken from the bundle or, where it leaves one out, as stored.
  const retry = bundle.station;
  if (retry?.retry_base_seconds !== undefined || retry?.retry_max_seconds !== undefined) {
    const base = retry.retry_base_seconds ?? getSetting(db, 'harvest.retryBaseSeconds');
    const most = retry.retry_max_seconds ?? getSetting(db, 'harvest.retryMaxSeconds');
    if (most < base) {
      problems.push(
        retry.retry_max_seconds !== undefined
          ? `station.retry_max_seconds: must be at least the first wait, retry_base_seconds (${base})`
          : `station.retry_base_seconds: must be at most the longest wait, retry_max_seconds (${most})`,
      );
    }
  }
  const stationTool =
    bundle.station?.tool ?? (mode === 'station' ? getSetting(db, 'station.tool') : null);
  problems.push(...harvestBundleProblems(db, bundle, toolNames, stationTool));
  if (problems.length) throw new AppError('validation_failed', problems.join('\n'), { problems });

  // A PIN or password the person has already keeps its hash (null: unchanged), so that a
  // re-import of the same bundle changes no one (a new salt would make every hash new).
  const stored = db.prepare('SELECT pin_hash, password_hash FROM users WHERE username = ?');
  const hashes = await Promise.all(
    (bundle.users ?? []).map(async (u) => {
      const now = stored.get(u.username) as
        { pin_hash: string | null; password_hash: string | null } | undefined;
      return {
        pin: u.pin ? await newHash(u.pin, now?.pin_hash ?? null) : (u.pin_hash ?? null),
        password: u.password ? await newHash(u.password, now?.password_hash ?? null) : null,
      };
    }),
  );
  const pinHashes = hashes.map((h) => h.pin);
  const passwordHashes = hashes.map((h) => h.password);
  const now = nowIso();
  db.transaction(() => {
    for (const p of bundle.projects ?? []) {
      db.prepare(
        `INSERT INTO projects (uuid, name, application_identifier, active, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET application_identifier = excluded.application_identifier,
           active = excluded.active, updated_at = excluded.updated_at
         WHERE (application_identifier, active) IS NOT
           (excluded.application_identifier, excluded.active)`,
      ).run(
        newUuid(),
        p.name,
        p.application_identifier ?? '',
        p.active === false ? 0 : 1,
        now,
        now,
      );
    }
    for (const t of tools) {
      db.prepare(
        `INSERT INTO tools (uuid, name, pre_usage_questions, post_usage_questions, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET pre_usage_questions = excluded.pre_usage_questions,
           post_usage_questions = excluded.post_usage_questions, updated_at = excluded.updated_at
         WHERE (pre_usage_questions, post_usage_questions) IS NOT
           (excluded.pre_usage_questions, excluded.post_usage_questions)`,
      ).run(newUuid(), t.name, t.pre_usage_questions, t.post_usage_questions, now, now);
    }
    (bundle.users ?? []).forEach((u, i) => {
      // A bundle that names no role keeps an admin an admin (a re-import must not demote the
      // person who runs the server); staff follows the role, as NEMO's is_staff does.
      const current = db
        .prepare('SELECT role, is_staff FROM users WHERE username = ?')
        .get(u.username) as { role: string; is_staff: number } | undefined;
      const { role, isStaff } = roleOf(u, current);
      // Fields the bundle leaves out keep what the person has (a new one gets the default);
      // badge_number: null takes a badge away.
      const values = {
        username: u.username,
        email: u.email ?? null,
        first_name: u.first_name ?? null,
        last_name: u.last_name ?? null,
        badge_given: u.badge_number === undefined ? 0 : 1,
        badge_number: u.badge_number ?? null,
        pin_hash: pinHashes[i] ?? null,
        is_staff: isStaff,
        is_active: u.is_active === undefined ? null : u.is_active ? 1 : 0,
        password_hash: passwordHashes[i] ?? null,
        role,
        now,
      };
      if (current === undefined) {
        db.prepare(
          `INSERT INTO users (uuid, username, email, first_name, last_name, badge_number, pin_hash,
             is_staff, is_active, password_hash, role, created_at, updated_at)
           VALUES (@uuid, @username, coalesce(@email, ''), coalesce(@first_name, ''),
             coalesce(@last_name, ''), @badge_number, @pin_hash, @is_staff,
             coalesce(@is_active, 1), @password_hash, @role, @now, @now)`,
        ).run({ ...values, uuid: newUuid() });
      } else {
        db.prepare(
          `UPDATE users SET email = coalesce(@email, email),
             first_name = coalesce(@first_name, first_name),
             last_name = coalesce(@last_name, last_name),
             badge_number = CASE WHEN @badge_given = 1 THEN @badge_number ELSE badge_number END,
             pin_hash = coalesce(@pin_hash, pin_hash), is_staff = @is_staff,
             is_active = coalesce(@is_active, is_active),
             password_hash = coalesce(@password_hash, password_hash), role = @role,
             updated_at = @now
           WHERE username = @username
             AND (email, first_name, last_name, badge_number, pin_hash, is_staff, is_active,
               password_hash, role) IS NOT (coalesce(@email, email),
               coalesce(@first_name, first_name), coalesce(@last_name, last_name),
               CASE WHEN @badge_given = 1 THEN @badge_number ELSE badge_number END,
               coalesce(@pin_hash, pin_hash), @is_staff, coalesce(@is_active, is_active),
               coalesce(@password_hash, password_hash), @role)`,
        ).run(values);
      }
      const userId = db
        .prepare('SELECT id FROM users WHERE username = ?')
        .pluck()
        .get(u.username) as number;
      if (u.projects) {
        // Only the links that change are written, as the admin pages write them: a re-import
        // of the same bundle logs no change for stations to pull.
        const projectIds = idsNamed(db, 'projects', u.projects);
        replaceLinks(db, 'user_projects', 'user_id', 'project_id', userId, projectIds);
      }
      if (u.qualified_tools) {
        const toolIds = idsNamed(db, 'tools', u.qualified_tools);
        const changed = replaceLinks(db, 'qualifications', 'user_id', 'tool_id', userId, toolIds);
        // A tool lists its qualified people: an admin's editor open on one whose list changed
        // is now stale, as after a save of the person in the admin pages.
        touch(db, 'tools', changed, now);
      }
    });
    if (mode !== null) setSetting(db, 'mode', mode);
    if (bundle.station) {
      setSetting(db, 'station.tool', bundle.station.tool);
      if (bundle.station.idle_logoff_minutes !== undefined) {
        setSetting(db, 'idle.logoffMinutes', bundle.station.idle_logoff_minutes);
      }
      if (bundle.station.idle_force_end_minutes !== undefined) {
        setSetting(db, 'idle.forceEndMinutes', bundle.station.idle_force_end_minutes);
      }
      if (bundle.station.lock_mode !== undefined)
        setSetting(db, 'station.lockMode', bundle.station.lock_mode);
      if (bundle.station.server_command_hooks !== undefined) {
        setSetting(db, 'harvest.serverCommandHooks', bundle.station.server_command_hooks);
      }
      const tuning = [
        ['harvest_concurrency', 'harvest.concurrency'],
        ['rescan_minutes', 'harvest.rescanMinutes'],
        ['retry_base_seconds', 'harvest.retryBaseSeconds'],
        ['retry_max_seconds', 'harvest.retryMaxSeconds'],
      ] as const;
      for (const [key, setting] of tuning) {
        const value = bundle.station[key];
        if (value !== undefined) setSetting(db, setting, value);
      }
    }
    applyHarvestBundle(db, bundle, now);
    setSetting(db, 'harvest.importedAt', now);
  }).immediate();
  return {
    users: bundle.users?.length ?? 0,
    projects: bundle.projects?.length ?? 0,
    tools: tools.length,
    station: bundle.station?.tool ?? null,
    instruments: bundle.instruments?.length ?? 0,
    storage_locations: bundle.storage_locations?.length ?? 0,
    hooks: bundle.hooks?.length ?? 0,
    schedules: bundle.schedules?.length ?? 0,
  };
}

/** The hash to store for `secret`: null when `current` is already its hash (kept as it is). */
async function newHash(secret: string, current: string | null): Promise<string | null> {
  if (current !== null && (await verifySecret(secret, current))) return null;
  return hashSecret(secret);
}

/** The ids of the projects or tools of these names (a name none has is left out). */
function idsNamed(db: Db, table: 'projects' | 'tools', names: string[]): number[] {
  const find = db.prepare(`SELECT id FROM ${table} WHERE name = ?`).pluck();
  return names.flatMap((name) => {
    const id = find.get(name) as number | undefined;
    return id === undefined ? [] : [id];
  });
}
