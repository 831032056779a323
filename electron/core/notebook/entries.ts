/**
 * Notebook entries on a station (spec 001): create (from a template), update with an
 * optimistic version, duplicate, soft delete, link an experiment to a usage event, list, get
 * and tags. Every write enqueues the entry for the server in its own transaction.
 *
 * Who may do what: an entry belongs to the person who made it. Templates are read (and used,
 * and duplicated) by everyone and changed by their owner; other entries are read and changed
 * by their owner only. Staff read and change everything.
 */
import {
  createFromTemplate,
  duplicateMetadata,
  structural,
  toNotebook,
} from '../../../shared/metadata/index.js';
import { isPlainObject, type JsonObject } from '../../../shared/metadata/json.js';
import type { ApiParsedArgs } from '../../../shared/api.js';
import type {
  EntryKind,
  NotebookEntrySummary,
  NotebookEntryView,
} from '../../../shared/notebookApi.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { refreshUsageContexts } from '../harvest/usageContextRefresh.js';
import { enqueue } from '../station/outbox.js';
import { activeUsageOf, findTool, findUsage, type UserRow } from '../station/records.js';
import { AppError } from '../util/errors.js';
import { newUuid } from '../util/ids.js';
import {
  NO_METADATA,
  TEMPLATE_KINDS_SQL,
  entryById,
  insertEntry,
  isTemplate,
  normalizeTags,
  prepareDoc,
  prepareMetadata,
  replaceEntry,
  fieldsToCopy,
  valuesOf,
  type EntryRow,
  type EntryValues,
  type PreparedMetadata,
} from './store.js';
import { overlayJson } from './overlay.js';
import { SUMMARY_COLUMNS, SUMMARY_JOINS, entryView, toSummary, type SummaryRow } from './views.js';

type Actor = Pick<UserRow, 'id' | 'is_staff'>;

/** The first `units` UTF-16 units of `title`, without cutting a character in two. */
function cutTitle(title: string, units: number): string {
  if (title.length <= units) return title;
  const last = title.charCodeAt(units - 1);
  return title.slice(0, last >= 0xd800 && last <= 0xdbff ? units - 1 : units);
}

const isStaff = (actor: Actor): boolean => actor.is_staff === 1;

function canRead(actor: Actor, row: EntryRow): boolean {
  return row.owner_id === actor.id || isTemplate(row.kind) || isStaff(actor);
}

/** An entry the actor may read; others' private entries are not found, as if absent. */
export function readableEntry(db: Db, actor: Actor, id: number): EntryRow {
  const row = entryById(db, id);
  if (!row || row.deleted_at !== null || !canRead(actor, row)) {
    throw new AppError('not_found', `notebook entry ${id} does not exist`);
  }
  return row;
}

function editableEntry(db: Db, actor: Actor, id: number, version: number | null): EntryRow {
  const row = readableEntry(db, actor, id);
  if (row.owner_id !== actor.id && !isStaff(actor)) {
    throw new AppError('forbidden', `only the owner of "${row.title}" can change it`);
  }
  if (version !== null && row.version !== version) {
    throw new AppError(
      'conflict',
      `"${row.title}" was changed elsewhere (version ${row.version}, this edit started from ` +
        `${version}); reload it and make the change again`,
      { version: row.version },
    );
  }
  return row;
}

/**
 * The outbox payload of an entry: its fields, what it relates to by UUID, and the time of the
 * version this one was made from (`previous_updated_at`, null for the first), by which the
 * server tells a change of what it holds from one of another line of versions (a data dir
 * restored from a backup and changed since: its numbers run on past the server's).
 */
export function enqueueEntry(db: Db, id: number, previousUpdatedAt: string | null): void {
  const row = cachedStatement(
    db,
    `SELECT e.uuid, e.kind, e.title, e.body, e.tags, e.metadata, o.uuid AS owner_uuid,
       o.username AS owner_username, t.uuid AS template_uuid, ue.uuid AS usage_event_uuid,
       e.created_at, e.updated_at, e.version, e.deleted_at
     FROM notebook_entries e JOIN users o ON o.id = e.owner_id
     LEFT JOIN notebook_entries t ON t.id = e.template_id
     LEFT JOIN usage_events ue ON ue.id = e.usage_event_id
     WHERE e.id = ?`,
  ).get(id) as { uuid: string; tags: string; metadata: string | null } & Record<string, unknown>;
  const payload = {
    ...row,
    tags: JSON.parse(row.tags) as unknown,
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as unknown),
    previous_updated_at: previousUpdatedAt,
  };
  const bytes = Buffer.byteLength(JSON.stringify(payload));
  // A deletion is never refused: an entry saved this large before the limit can still go.
  if (bytes > MAX_PUSHED_ENTRY_BYTES && row.deleted_at === null) {
    // Within the character limits, text beyond ASCII (3 bytes a character for CJK) and control
    // characters (6 as JSON writes them) can still pass the server's 8 MiB per request: sent,
    // it was refused (413) at every try for good. The save is refused instead, as it stands.
    throw new AppError(
      'validation_failed',
      `the entry comes to ${megabytes(bytes)} as sent to the server, which takes at most ` +
        `${megabytes(MAX_PUSHED_ENTRY_BYTES)}: shorten its text or metadata`,
    );
  }
  enqueue(db, 'notebook_entry', row.uuid, payload);
}

/** What an entry may come to as pushed (UTF-8 JSON), with room under the server's 8 MiB. */
export const MAX_PUSHED_ENTRY_BYTES = 7 * 1024 * 1024;

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

function save(db: Db, values: EntryValues, id: number | null): NotebookEntryView {
  const saved = db.transaction((): number => {
    const before = id === null ? undefined : entryById(db, id);
    const previous = before?.updated_at ?? null;
    const entryId = id ?? insertEntry(db, values);
    if (id !== null) replaceEntry(db, id, values);
    enqueueEntry(db, entryId, previous);
    // The files of a usage hold its experiments in their usage_context: the usage it was linked
    // to and the one it is linked to now give their files the context as it is now.
    for (const usage of new Set([before?.usage_event_id, values.usage_event_id])) {
      if (usage !== undefined && usage !== null) refreshUsageContexts(db, usage);
    }
    return entryId;
  })();
  return entryView(db, saved);
}

/**
 * The version and time of the change that follows `row`, made `now`. Its time is never before
 * the row's (a clock set back meanwhile): the server takes a version older than its own but
 * changed after it for one from a data dir restored from a backup
 * (server/sync/ingestNotebook.ts), and refuses it.
 */
function nextChange(row: EntryRow, now: string): { updated_at: string; version: number } {
  const updated = Date.parse(row.updated_at) > Date.parse(now) ? row.updated_at : now;
  return { updated_at: updated, version: row.version + 1 };
}

/** The template an entry of `kind` may be made from: a template of the same family. */
function templateFor(db: Db, actor: Actor, templateId: number, kind: EntryKind): EntryRow {
  const template = readableEntry(db, actor, templateId);
  const family = kind.replace(/_template$/, '');
  if (template.kind !== `${family}_template`) {
    throw new AppError(
      'validation_failed',
      `template_id: entry ${templateId} is not an ${family} template`,
      { problems: [{ path: ['template_id'], message: `is not an ${family} template` }] },
    );
  }
  return template;
}

/**
 * Metadata given as an object or as JSON text, as an object; null for none. What is not a
 * JSON object is refused here with the problems prepareMetadata names.
 */
function givenObject(input: unknown): JsonObject | null {
  if (input === null || input === undefined) return null;
  let value: unknown = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input.replace(/^\uFEFF/, ''));
    } catch {
      value = undefined;
    }
  }
  if (isPlainObject(value)) return value;
  prepareMetadata(input); // throws, naming the problem
  throw new AppError('validation_failed', 'metadata: must be a JSON object', {
    problems: [structural([], 'not_an_object', 'must be a JSON object')],
  });
}

export function createEntry(
  db: Db,
  actor: Actor,
  args: ApiParsedArgs<'notebook.create'>,
  now: string,
): NotebookEntryView {
  const template =
    args.template_id === undefined ? null : templateFor(db, actor, args.template_id, args.kind);
  const fromTemplate = template ? fieldsToCopy(template) : null;
  let metadata: PreparedMetadata;
  if (fromTemplate) {
    // The template's fields are on every entry made from it (spec 001, rule 3): metadata given
    // as well fills them in and adds to them (overlayJson).
    const base = toNotebook(createFromTemplate(fromTemplate));
    const given = givenObject(args.metadata);
    metadata = prepareMetadata(given ? overlayJson(base, given) : base);
  } else {
    metadata = args.metadata === undefined ? NO_METADATA : prepareMetadata(args.metadata);
  }
  return save(
    db,
    {
      uuid: newUuid(),
      kind: args.kind,
      title: args.title,
      body: args.body ?? template?.body ?? '',
      tags: normalizeTags(args.tags ?? (template ? (JSON.parse(template.tags) as string[]) : [])),
      metadata,
      owner_id: actor.id,
      template_id: template?.id ?? null,
      usage_event_id: null,
      created_at: now,
      updated_at: now,
      version: 1,
      deleted_at: null,
      station_id: null,
    },
    null,
  );
}

export function updateEntry(
  db: Db,
  actor: Actor,
  args: ApiParsedArgs<'notebook.update'>,
  now: string,
): NotebookEntryView {
  const row = editableEntry(db, actor, args.id, args.version);
  const values = valuesOf(row);
  return save(
    db,
    {
      ...values,
      title: args.title ?? values.title,
      body: args.body ?? values.body,
      tags: args.tags === undefined ? values.tags : normalizeTags(args.tags),
      metadata: args.metadata === undefined ? values.metadata : prepareMetadata(args.metadata),
      ...nextChange(row, now),
    },
    row.id,
  );
}

/** A copy owned by the actor; fields with blank_value_on_duplicate are cleared. */
export function duplicateEntry(db: Db, actor: Actor, id: number, now: string): NotebookEntryView {
  const row = readableEntry(db, actor, id);
  const values = valuesOf(row);
  const doc = fieldsToCopy(row);
  return save(
    db,
    {
      ...values,
      uuid: newUuid(),
      // Within the 500 characters a title may have, here and on the server.
      title: `${cutTitle(row.title, 493)} (copy)`,
      metadata: doc ? prepareDoc(duplicateMetadata(doc)) : NO_METADATA,
      owner_id: actor.id,
      usage_event_id: null,
      created_at: now,
      updated_at: now,
      version: 1,
      deleted_at: null,
      station_id: null,
    },
    null,
  );
}

/** Marks the entry deleted (kept, and synced as deleted); returns its uuid. */
export function deleteEntry(
  db: Db,
  actor: Actor,
  id: number,
  version: number,
  now: string,
): string {
  const row = editableEntry(db, actor, id, version);
  save(db, { ...valuesOf(row), deleted_at: now, ...nextChange(row, now) }, id);
  return row.uuid;
}

/**
 * Links an experiment to a usage event: the one given, or the one in progress on the station's
 * tool; null unlinks. The usage must be the owner's (as user or operator) unless staff link it:
 * the usage_context harvest hook copies an attached experiment into the usage's file records.
 */
export function attachUsage(
  db: Db,
  actor: Actor,
  args: ApiParsedArgs<'notebook.attachUsage'>,
  stationTool: string | null,
  now: string,
): NotebookEntryView {
  const row = editableEntry(db, actor, args.id, null);
  if (row.kind !== 'experiment') {
    throw new AppError(
      'bad_request',
      `only experiments are linked to usage; this is an ${row.kind}`,
    );
  }
  let usageId: number | null = null;
  if (args.usage === undefined) {
    const active =
      stationTool === null ? undefined : activeUsageOf(db, findTool(db, stationTool).id);
    if (!active) throw new AppError('no_active_usage', 'no usage is in progress on this station');
    usageId = active.id;
  } else if (args.usage !== null) {
    usageId = findUsage(db, args.usage).id;
  }
  // The rule is the owner's, whoever links: the server checks the same (ingestNotebook.ts
  // checkUsageLink) and cannot know who linked, so a link it would refuse is not made here.
  if (usageId !== null) {
    const usage = findUsage(db, usageId);
    const owner = cachedStatement(db, 'SELECT is_staff FROM users WHERE id = ?')
      .pluck()
      .get(row.owner_id);
    if (usage.user_id !== row.owner_id && usage.operator_id !== row.owner_id && owner !== 1) {
      throw new AppError(
        'forbidden',
        'an experiment can only be linked to a usage its owner used or operated',
      );
    }
  }
  if (usageId === row.usage_event_id) return entryView(db, row.id);
  const values = valuesOf(row);
  return save(db, { ...values, usage_event_id: usageId, ...nextChange(row, now) }, row.id);
}

export function getEntry(db: Db, actor: Actor, id: number): NotebookEntryView {
  return entryView(db, readableEntry(db, actor, id).id);
}

/** The actor's entries and every template, newest change first, a page at a time. */
export function listEntries(
  db: Db,
  actor: Actor,
  args: ApiParsedArgs<'notebook.list'>,
): NotebookEntrySummary[] {
  const where = [
    'e.deleted_at IS NULL',
    `(e.owner_id = @owner OR e.kind IN ${TEMPLATE_KINDS_SQL})`,
  ];
  if (args.kind !== undefined) where.push('e.kind = @kind');
  if (args.before_id !== undefined) {
    where.push(
      '(e.updated_at, e.id) < (SELECT updated_at, id FROM notebook_entries WHERE id = @before)',
    );
  }
  const rows = db
    .prepare(
      `SELECT ${SUMMARY_COLUMNS} FROM notebook_entries e ${SUMMARY_JOINS}
       WHERE ${where.join(' AND ')} ORDER BY e.updated_at DESC, e.id DESC LIMIT @limit`,
    )
    .all({
      owner: actor.id,
      kind: args.kind ?? null,
      before: args.before_id ?? null,
      limit: args.limit ?? 100,
    }) as SummaryRow[];
  return rows.map(toSummary);
}

/** The tags of the entries the actor sees in lists, with how many entries carry each. */
export function tagCounts(db: Db, actor: Actor): { tag: string; count: number }[] {
  return cachedStatement(
    db,
    `SELECT min(t.tag) AS tag, count(*) AS count FROM notebook_tags t
     JOIN notebook_entries e ON e.id = t.entry_id
     WHERE e.owner_id = ? OR e.kind IN ${TEMPLATE_KINDS_SQL}
     GROUP BY t.tag_key ORDER BY count DESC, tag`,
  ).all(actor.id) as { tag: string; count: number }[];
}
