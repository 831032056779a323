/**
 * What the `usage_context` hook adds to a file's metadata_: the usage event active on the tool
 * when the file was first seen, its user, project and canonical answers, and the notebook
 * experiments linked to it. Built from the usage as the database holds it, on a station (its
 * own usage) or on the server (any station's): the server sends it with an instrument's history
 * (sync/history.ts), so that a file first seen on another station, and transferred here, is
 * described by the usage it was made during, which this station does not hold.
 */
import { consentValue, readConsent } from '../../../shared/experiment/consent.js';
import { elementSymbols } from '../../../shared/experiment/read.js';
import { isPlainObject } from '../../../shared/questions/json.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { METADATA_MAX_BYTES } from './metadataLimit.js';

/** The usage_context of one usage event, as the hook stores it in metadata_. */
export interface UsageContext {
  usage_event: string;
  tool: string;
  start: string;
  end: string | null;
  user: { username: string; name: string; email: string | null };
  project: { name: string; application_identifier: string | null };
  pre_run_data: Record<string, unknown> | null;
  run_data: Record<string, unknown> | null;
  experiments: { uuid: string; title: string; metadata: unknown }[];
  [canonical: string]: unknown;
}

/**
 * The usage event on the tool at `at` (ISO time): the one in progress then, the latest begun
 * where two overlap; null when there was none. A harvested file belongs to the usage on its
 * instrument's tool when it was first seen, or when it was written if it was written before
 * the harvest could see it (intake.ts consider).
 */
export function usageOnToolAt(db: Db, toolId: number, at: string): number | null {
  const id = cachedStatement(
    db,
    `SELECT id FROM usage_events WHERE tool_id = ? AND start <= ? AND ("end" IS NULL OR "end" >= ?)
       ORDER BY start DESC LIMIT 1`,
  )
    .pluck()
    .get(toolId, at, at) as number | undefined;
  return id ?? null;
}

/**
 * The usage event in progress on the tool now (the latest begun, should two be), or null: a
 * file seen now belongs to it whatever the clock says. By times alone (usageOnToolAt at now),
 * a PC's clock set back after the usage began put the file before it, in no usage or in an
 * earlier one.
 */
export function usageInProgressOn(db: Db, toolId: number): number | null {
  const id = cachedStatement(
    db,
    `SELECT id FROM usage_events WHERE tool_id = ? AND "end" IS NULL ORDER BY start DESC LIMIT 1`,
  )
    .pluck()
    .get(toolId) as number | undefined;
  return id ?? null;
}

/**
 * A transfer's metadata as it is stored: its usage_context, which the hook took when the copy
 * ended, taken again in the transaction that stores it (the usage may have ended, or been
 * answered, meanwhile: usageContextRefresh.ts saw no such file yet). A file of another
 * station's usage keeps what the server described.
 */
export function withCurrentUsageContext(
  db: Db,
  fileId: number,
  metadata: Record<string, unknown>,
): Record<string, unknown> {
  if (!('usage_context' in metadata)) return metadata;
  const usageId = cachedStatement(db, 'SELECT usage_event_id FROM harvest_files WHERE id = ?')
    .pluck()
    .get(fileId) as number | null | undefined;
  if (usageId === null || usageId === undefined) return metadata;
  const current = { ...metadata, usage_context: usageContextOf(db, usageId) };
  // Past the most a record may hold (its experiments' metadata grew), the context the hook took,
  // which fit, is kept: a record past it would never reach the server.
  return Buffer.byteLength(JSON.stringify(current)) > METADATA_MAX_BYTES ? metadata : current;
}

/** The usage_context of the usage event with this id; null when there is none. */
export function usageContextOf(db: Db, usageEventId: number): UsageContext | null {
  const row = cachedStatement(
    db,
    `SELECT e.uuid, e.start, e."end", e.pre_run_data, e.run_data, u.username, u.first_name,
         u.last_name, u.email, p.name AS project, p.application_identifier, t.name AS tool
       FROM usage_events e JOIN users u ON u.id = e.user_id
       JOIN projects p ON p.id = e.project_id JOIN tools t ON t.id = e.tool_id
       WHERE e.id = ?`,
  ).get(usageEventId) as UsageRow | undefined;
  if (!row) return null;
  const run = parseAnswers(row.run_data);
  const pre = parseAnswers(row.pre_run_data);
  return {
    usage_event: row.uuid,
    tool: row.tool,
    start: row.start,
    end: row.end,
    user: {
      username: row.username,
      name: `${row.first_name ?? ''} ${row.last_name ?? ''}`.trim(),
      email: row.email,
    },
    project: { name: row.project, application_identifier: row.application_identifier },
    ...experimentFields(
      [run, pre].filter((a): a is Record<string, unknown> => a !== null && !declinesConsent(a)),
    ),
    pre_run_data: pre,
    run_data: run,
    experiments: attachedExperiments(db, usageEventId),
  };
}

/**
 * A usage_context received from the server, as far as the station relies on it: the usage's
 * uuid, its user's name and its project's (the destination template's `{usage_event}`,
 * `{user}` and `{project}`, and the Data tab). Null for anything else, which is then kept as no
 * usage rather than trusted.
 */
export function receivedUsageContext(value: unknown): UsageContext | null {
  if (!isPlainObject(value)) return null;
  const { usage_event: uuid, user, project, start } = value;
  if (typeof uuid !== 'string' || typeof start !== 'string') return null;
  if (!isPlainObject(user) || typeof user.username !== 'string') return null;
  if (!isPlainObject(project) || typeof project.name !== 'string') return null;
  return value as UsageContext;
}

/** A file's usage_elsewhere (migration 13) as a usage_context: null for none, or one not to trust. */
export function storedUsageContext(json: string | null): UsageContext | null {
  return json === null ? null : receivedUsageContext(JSON.parse(json));
}

interface UsageRow {
  uuid: string;
  start: string;
  end: string | null;
  pre_run_data: string;
  run_data: string;
  username: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  project: string;
  application_identifier: string | null;
  tool: string;
}

function parseAnswers(text: string): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const value = JSON.parse(text) as unknown;
    return isPlainObject(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * Whether answers decline consent (`data_consent`: Disagree, No, False, Negative, or false):
 * they describe no experiment, and the next answers are read instead, as the experiment record
 * reads them (spec 000, rule 4). Answers that ask no consent are read as before.
 */
function declinesConsent(answers: Record<string, unknown>): boolean {
  const consent = consentValue(answers.data_consent);
  return consent !== undefined && readConsent(consent) === 'declined';
}

/** The canonical answers (run_data first, then pre_run_data) that describe the experiment. */
function experimentFields(answers: Record<string, unknown>[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of ['experiment_title', 'experiment_purpose', 'project_id']) {
    const found = answers.find((a) => a[key] !== undefined && a[key] !== '');
    if (found) out[key] = found[key];
  }
  // A group that names no sample is no answer, as an empty title is, and as the experiment
  // record reads it (shared/experiment): a post-usage form that asks for the group too and is
  // left as it came sends one repetition holding only its defaults, or none. The samples given
  // before the run then stand.
  const groups = answers
    .map((a) => a.sample_group)
    .filter(Array.isArray)
    .map((g) => (g as unknown[]).filter(isPlainObject));
  const group = groups.find((g) => g.some(namesSample)) ?? groups[0];
  if (group) {
    // In the experiment record's shape (shared/experiment): a field not answered is '' (a
    // list: []), elements given as text are split into symbols; what is there is kept as is.
    out.samples = group.map((s) => ({
      sample_name: s.sample_name ?? '',
      sample_or_pid: s.sample_or_pid ?? '',
      sample_details: s.sample_details ?? '',
      sample_elements: elementList(s.sample_elements),
    }));
  }
  return out;
}

function namesSample(sample: Record<string, unknown>): boolean {
  return typeof sample.sample_name === 'string' && sample.sample_name.trim() !== '';
}

function elementList(value: unknown): unknown {
  if (value === undefined || value === null) return [];
  return typeof value === 'string' ? elementSymbols(value) : value;
}

/** The notebook experiments linked to the usage event, with their metadata (Labstation form). */
function attachedExperiments(
  db: Db,
  usageEventId: number,
): { uuid: string; title: string; metadata: unknown }[] {
  const rows = cachedStatement(
    db,
    `SELECT uuid, title, metadata FROM notebook_entries
     WHERE usage_event_id = ? AND kind = 'experiment' AND deleted_at IS NULL ORDER BY id`,
  ).all(usageEventId) as { uuid: string; title: string; metadata: string | null }[];
  return rows.map((row) => ({
    uuid: row.uuid,
    title: row.title,
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as unknown),
  }));
}
