/**
 * The checks of a facility bundle (`labstation import`, the desktop's import): its shape, then
 * the rules across its parts and the data dir (names listed twice, people's projects and tools,
 * badges, the data dir's role, the station's tool and retry waits, the harvest's parts). Every
 * problem is named, "path: rule", and nothing is imported unless there is none (facility.ts).
 */
import { illFormedTextPath, NOT_WELL_FORMED, pathText } from '../../../shared/wellFormed.js';
import { z } from 'zod';
import { parseQuestions, serializeQuestions } from '../../../shared/questions/index.js';
import { isPlainObject, ownValue } from '../../../shared/questions/json.js';
import { emailSchema, lineSchema, passwordProblem } from '../../../shared/text.js';
import type { Db } from '../db/open.js';
import { harvestBundleShape } from '../harvest/bundle.js';
import { harvestBundleProblems } from '../harvest/bundleCheck.js';
import { AppError } from '../util/errors.js';
import { formatIssues } from '../util/issues.js';
import { getSetting } from './settings.js';

const name = lineSchema(200).min(1, 'must not be empty');
const pin = z.string().regex(/^\d{4,12}$/, 'must be 4 to 12 digits');
/**
 * A whole argon2id hash in the PHC string form (as pin.ts and other argon2 libraries write it),
 * with costs a log-on can pay: one that only started so was taken, and its person could never
 * log on; one of a huge cost would keep a log-on worker busy for hours.
 */
const ARGON2ID_PHC =
  /^\$argon2id\$v=19\$m=(\d{1,7}),t=(\d{1,3}),p=(\d{1,2})\$[A-Za-z0-9+/]{11,}={0,2}\$[A-Za-z0-9+/]{6,}={0,2}$/;
const PHC_RULE =
  'must be an argon2id PHC string, $argon2id$v=19$m=…,t=…,p=…$salt$hash (base64), with ' +
  'm from 8·p to 262144 (KiB), t from 1 to 16 and p from 1 to 16';

function argon2idPhcProblem(text: string): string | null {
  const m = ARGON2ID_PHC.exec(text);
  if (!m) return PHC_RULE;
  const [memory, passes, lanes] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const fits =
    lanes >= 1 &&
    lanes <= 16 &&
    passes >= 1 &&
    passes <= 16 &&
    memory >= 8 * lanes &&
    memory <= 262_144;
  return fits ? null : PHC_RULE;
}

const bundleSchema = z
  .object({
    users: z
      .array(
        z
          .object({
            username: name,
            /** Empty: none. */
            email: emailSchema.optional(),
            first_name: lineSchema(200).optional(),
            last_name: lineSchema(200).optional(),
            badge_number: lineSchema(64).min(1).nullable().optional(),
            pin: pin.optional(),
            pin_hash: z
              .string()
              .superRefine((hash, ctx) => {
                const problem = argon2idPhcProblem(hash);
                if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
              })
              .optional(),
            is_staff: z.boolean().optional(),
            is_active: z.boolean().optional(),
            password: z
              .string()
              .max(200)
              .superRefine((p, ctx) => {
                const problem = passwordProblem(p);
                if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
              })
              .optional(),
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

export type BundleUser = NonNullable<FacilityBundle['users']>[number];

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
 * A username or an e-mail as the database compares it (COLLATE NOCASE: A to Z only): two it
 * tells apart are two people here too, as at log-in, or a check could let through what the
 * database then refuses, or refuse what another bundle may give.
 */
function foldAsDatabase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/**
 * Each stored value (a badge, an e-mail) with its holder (folded), less those of the people
 * whose bundle entries give one (`giving`): the bundle's replaces theirs, while a person it
 * leaves the field out for, or does not name, keeps what they have.
 */
function keptByStored(
  stored: { username: string; value: string | null }[],
  giving: BundleUser[],
): Map<string, string> {
  const replaced = new Set(giving.map((u) => foldAsDatabase(u.username)));
  const kept = new Map<string, string>();
  for (const { username, value } of stored) {
    const holder = foldAsDatabase(username);
    if (value && !replaced.has(holder)) kept.set(value, holder);
  }
  return kept;
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
  const badgeOwner = keptByStored(
    existing.map((e) => ({ username: e.username, value: e.badge_number })),
    users.filter((u) => u.badge_number !== undefined),
  );
  const usernames = new Set([
    ...existing.map((e) => foldAsDatabase(e.username)),
    ...users.map((u) => foldAsDatabase(u.username)),
  ]);
  users.forEach((u, i) => {
    const badge = u.badge_number;
    if (!badge) return;
    const owner = badgeOwner.get(badge);
    if (owner !== undefined && owner !== foldAsDatabase(u.username)) {
      problems.push(
        `users[${i}] (${u.username}).badge_number: ${badge} already belongs to ${owner}`,
      );
    } else if (
      usernames.has(foldAsDatabase(badge)) &&
      foldAsDatabase(badge) !== foldAsDatabase(u.username)
    ) {
      problems.push(`users[${i}] (${u.username}).badge_number: ${badge} is someone's username`);
    }
    badgeOwner.set(badge, foldAsDatabase(u.username));
  });
  // And a username may not be a badge someone else keeps (log-on would take it for the
  // username, and the badge would log on no more), in any case, as log-on reads both.
  const badgeHolders = new Map(
    [...badgeOwner].flatMap(([badge, owner]) =>
      owner === undefined ? [] : [[foldAsDatabase(badge), owner] as const],
    ),
  );
  users.forEach((u, i) => {
    const holder = badgeHolders.get(foldAsDatabase(u.username));
    if (holder !== undefined && holder !== foldAsDatabase(u.username)) {
      problems.push(
        `users[${i}] (${u.username}).username: ${u.username} is the badge number of ${holder}`,
      );
    }
  });
  return problems;
}

/**
 * An e-mail names one person (the server's log-in, its mail; A to Z in any case): one that a
 * stored person keeps (not named by the bundle, or named without an e-mail) cannot go to
 * another. One the bundle moves among the people it names is taken (facility.ts frees it from
 * its holder first). Two of the bundle's own people with one e-mail are named in checkBundle.
 */
function storedEmailProblems(db: Db, users: BundleUser[]): string[] {
  const stored = db.prepare("SELECT username, email FROM users WHERE email <> ''").all() as {
    username: string;
    email: string;
  }[];
  const owner = keptByStored(
    stored.map((e) => ({ username: e.username, value: foldAsDatabase(e.email.trim()) })),
    users.filter((u) => u.email !== undefined),
  );
  const problems: string[] = [];
  users.forEach((u, i) => {
    const email = u.email === undefined ? undefined : foldAsDatabase(u.email.trim());
    const holder = email ? owner.get(email) : undefined;
    if (holder !== undefined && holder !== foldAsDatabase(u.username)) {
      problems.push(`users[${i}] (${u.username}).email: ${u.email} already belongs to ${holder}`);
    }
  });
  return problems;
}

const QUESTION_LISTS = ['pre_usage_questions', 'post_usage_questions'] as const;

/**
 * Checks a tool's question lists and returns them as canonical JSON text (null for a list the
 * entry leaves out), adding a named problem for each broken rule. It reads the raw input, so
 * the question problems of a bundle the schema refuses are named too, with the schema's own.
 */
function toolForms(
  tool: unknown,
  i: number,
  problems: string[],
): Record<(typeof QUESTION_LISTS)[number], string | null> {
  const forms: Record<(typeof QUESTION_LISTS)[number], string | null> = {
    pre_usage_questions: null,
    post_usage_questions: null,
  };
  if (!isPlainObject(tool)) return forms;
  const name = ownValue(tool, 'name');
  const where = typeof name === 'string' ? `tools[${i}] (${name.trim()})` : `tools[${i}]`;
  for (const key of QUESTION_LISTS) {
    const list = ownValue(tool, key);
    if (list === undefined) continue;
    const result = parseQuestions(list);
    if (result.ok) forms[key] = JSON.stringify(serializeQuestions(result.questions));
    else {
      // Where in the list, as `questions check` names it: `[1].maxlength`, `g.x.pattern`.
      for (const p of result.problems) {
        const at = p.path === '' ? '' : p.path.startsWith('[') ? p.path : `.${p.path}`;
        problems.push(`${where}.${key}${at}: ${p.message}`);
      }
    }
  }
  return forms;
}

/** A bundle that passed every check, its tools' question lists as canonical JSON text. */
export interface CheckedBundle {
  bundle: FacilityBundle;
  /** Each list left out (null) keeps what a stored tool has; a new tool has none. */
  tools: ({ name: string } & Record<(typeof QUESTION_LISTS)[number], string | null>)[];
  /** The role the data dir has, or takes with this bundle (null: not known yet). */
  mode: 'station' | 'server' | null;
}

/** The bundle `input` checked: every problem named at once (AppError validation_failed). */
export function checkBundle(db: Db, input: unknown): CheckedBundle {
  // Text that is not well-formed Unicode anywhere (a lone surrogate, "\ud800" in the JSON) would
  // be stored as bytes that read back as U+FFFD: refused where it is, as the server refuses it
  // in any body.
  const illFormed = illFormedTextPath(input);
  if (illFormed !== null) {
    const problem = `${pathText(illFormed, '(bundle)')}: ${NOT_WELL_FORMED}`;
    throw new AppError('validation_failed', problem, { problems: [problem] });
  }
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
    // As the database compares them (foldAsDatabase): imported one bundle at a time, Émile and
    // émile are two people, so they are in one bundle too.
    const key = foldAsDatabase(u.username);
    if (seen.has(key)) problems.push(`users[${i}].username: ${u.username} is listed twice`);
    seen.set(key, i);
    const email = u.email === undefined ? undefined : foldAsDatabase(u.email.trim());
    if (email) {
      const other = emails.get(email);
      if (other) problems.push(`users[${i}] (${u.username}).email: ${u.email} is also ${other}'s`);
      emails.set(email, u.username);
    }
    (u.projects ?? []).forEach((p, j) => {
      if (!projectNames.has(p))
        problems.push(
          `users[${i}] (${u.username}).projects[${j}]: no project named ${JSON.stringify(p)}`,
        );
    });
    (u.qualified_tools ?? []).forEach((t, j) => {
      if (!toolNames.has(t))
        problems.push(
          `users[${i}] (${u.username}).qualified_tools[${j}]: no tool named ${JSON.stringify(t)}`,
        );
    });
    if (u.pin && u.pin_hash)
      problems.push(`users[${i}] (${u.username}): give pin or pin_hash, not both`);
  });
  problems.push(...badgeProblems(db, bundle.users ?? []));
  problems.push(...storedEmailProblems(db, bundle.users ?? []));
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
  // A bundle that makes this data dir a station, or gives it another tool, has the stored
  // instruments of that tool harvested here from now on: checked as the station's.
  const toolChanges =
    bundle.station !== undefined &&
    (getSetting(db, 'mode') !== 'station' ||
      getSetting(db, 'station.tool') !== bundle.station.tool);
  problems.push(
    ...harvestBundleProblems(db, bundle, toolNames, stationTool, mode !== 'station', toolChanges),
  );
  if (problems.length) throw new AppError('validation_failed', problems.join('\n'), { problems });
  return { bundle, tools, mode };
}
