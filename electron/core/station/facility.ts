/**
 * Loads a facility bundle into a data dir (`labstation import`, the desktop's import), once
 * facilityCheck.ts found no problem in it.
 */
import { replaceLinks, touch } from '../db/links.js';
import type { Db } from '../db/open.js';
import { applyHarvestBundle } from '../harvest/bundle.js';
import { newUuid, nowIso } from '../util/ids.js';
import { hashSecret, verifySecret } from '../util/pin.js';
import { checkBundle, type BundleUser } from './facilityCheck.js';
import { endUsageOfToolsLeft } from './usageEnd.js';
import { setSetting } from './settings.js';

export type { FacilityBundle } from './facilityCheck.js';

export interface ImportSummary {
  users: number;
  projects: number;
  tools: number;
  station: string | null;
  /** Usages in progress on the tool the station left for another one, ended (usageEnd.ts). */
  usages_ended: number;
  instruments: number;
  storage_locations: number;
  hooks: number;
  schedules: number;
}

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

/**
 * Loads a facility bundle (users, projects, tools with their question forms, the station's
 * tool) in one transaction: every problem is reported and nothing is imported, or all is.
 * Records are matched by name, so importing the same bundle twice changes nothing.
 */
export async function importBundle(db: Db, input: unknown): Promise<ImportSummary> {
  const { bundle, tools, mode } = checkBundle(db, input);

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
  let usagesEnded = 0;
  db.transaction(() => {
    // Checked again under the write lock: the hashes above took a while, and a running server
    // or station may have changed what the bundle names meanwhile (a project deleted, a badge
    // given): refused by name, not written past it.
    checkBundle(db, input);
    // A field a project's or tool's entry leaves out (null here) keeps its stored value, as a
    // person's does; a new record takes the default.
    for (const p of bundle.projects ?? []) {
      db.prepare(
        `INSERT INTO projects (uuid, name, application_identifier, active, created_at, updated_at)
         VALUES (@uuid, @name, coalesce(@identifier, ''), coalesce(@active, 1), @now, @now)
         ON CONFLICT (name) DO UPDATE SET
           application_identifier = coalesce(@identifier, application_identifier),
           active = coalesce(@active, active), updated_at = @now
         WHERE (application_identifier, active) IS NOT
           (coalesce(@identifier, application_identifier), coalesce(@active, active))`,
      ).run({
        uuid: newUuid(),
        name: p.name,
        identifier: p.application_identifier ?? null,
        active: p.active === undefined ? null : p.active ? 1 : 0,
        now,
      });
    }
    for (const t of tools) {
      db.prepare(
        `INSERT INTO tools (uuid, name, pre_usage_questions, post_usage_questions, created_at, updated_at)
         VALUES (@uuid, @name, coalesce(@pre, '[]'), coalesce(@post, '[]'), @now, @now)
         ON CONFLICT (name) DO UPDATE SET
           pre_usage_questions = coalesce(@pre, pre_usage_questions),
           post_usage_questions = coalesce(@post, post_usage_questions), updated_at = @now
         WHERE (pre_usage_questions, post_usage_questions) IS NOT
           (coalesce(@pre, pre_usage_questions), coalesce(@post, post_usage_questions))`,
      ).run({
        uuid: newUuid(),
        name: t.name,
        pre: t.pre_usage_questions,
        post: t.post_usage_questions,
        now,
      });
    }
    // Those whose entries give a badge, or an e-mail: the others keep theirs.
    const givingBadges = JSON.stringify(
      (bundle.users ?? []).filter((u) => u.badge_number !== undefined).map((u) => u.username),
    );
    const givingEmails = JSON.stringify(
      (bundle.users ?? []).filter((u) => u.email !== undefined).map((u) => u.username),
    );
    // Prepared once for all the people: a bundle of thousands holds the write lock, which a
    // running station or server waits for, no longer than it must.
    const currentOf = db.prepare('SELECT role, is_staff FROM users WHERE username = ?');
    const takeBadge = db.prepare(
      `UPDATE users SET badge_number = NULL, updated_at = ? WHERE badge_number = ?
         AND username <> ? AND username IN (SELECT value FROM json_each(?))`,
    );
    const takeEmail = db.prepare(
      `UPDATE users SET email = '', updated_at = ? WHERE email = ? COLLATE NOCASE
         AND email <> '' AND username <> ? AND username IN (SELECT value FROM json_each(?))`,
    );
    const insertUser = db.prepare(
      `INSERT INTO users (uuid, username, email, first_name, last_name, badge_number, pin_hash,
         is_staff, is_active, password_hash, role, created_at, updated_at)
       VALUES (@uuid, @username, coalesce(@email, ''), coalesce(@first_name, ''),
         coalesce(@last_name, ''), @badge_number, @pin_hash, @is_staff,
         coalesce(@is_active, 1), @password_hash, @role, @now, @now)`,
    );
    const updateUser = db.prepare(
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
    );
    const idOfUser = db.prepare('SELECT id FROM users WHERE username = ?').pluck();
    (bundle.users ?? []).forEach((u, i) => {
      // A bundle that names no role keeps an admin an admin (a re-import must not demote the
      // person who runs the server); staff follows the role, as NEMO's is_staff does.
      const current = currentOf.get(u.username) as { role: string; is_staff: number } | undefined;
      const { role, isStaff } = roleOf(u, current);
      // A badge or e-mail the bundle moves to this person from another it names (who gets
      // another: facilityCheck.ts) is taken from its holder first: both are unique. Never from
      // someone whose entry does not give one.
      if (u.badge_number) {
        takeBadge.run(now, u.badge_number, u.username, givingBadges);
      }
      if (u.email?.trim()) {
        takeEmail.run(now, u.email, u.username, givingEmails);
      }
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
      if (current === undefined) insertUser.run({ ...values, uuid: newUuid() });
      else updateUser.run(values);
      const userId = idOfUser.get(u.username) as number;
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
      usagesEnded = endUsageOfToolsLeft(db, bundle.station.tool, now).length;
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
    applyHarvestBundle(db, bundle, now, mode === 'server');
    setSetting(db, 'harvest.importedAt', now);
  }).immediate();
  return {
    users: bundle.users?.length ?? 0,
    projects: bundle.projects?.length ?? 0,
    tools: tools.length,
    station: bundle.station?.tool ?? null,
    usages_ended: usagesEnded,
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
