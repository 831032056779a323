/**
 * Notebook entries in the database, for both roles: the station saves its own, the server
 * stores what stations push. Every save rewrites the derived tables (tags, metadata search
 * rows, the any-field text index) in the caller's transaction, so a search never sees an
 * entry in one state and its rows in another.
 */
import {
  metadataIndexRows,
  parseMetadata,
  searchText,
  structural,
  toNotebook,
  type MetadataDoc,
  type MetadataProblem,
} from '../../../shared/metadata/index.js';
import type { EntryKind } from '../../../shared/notebookApi.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { AppError } from '../util/errors.js';
import { storedTooLong, textTooLong, valueTooLong } from './metadataSize.js';

export interface EntryRow {
  id: number;
  uuid: string;
  kind: EntryKind;
  title: string;
  body: string;
  /** JSON string[] */
  tags: string;
  /** JSON, Labstation's form; null: no metadata. */
  metadata: string | null;
  /** JSON MetadataProblem[] */
  problems: string;
  field_count: number;
  owner_id: number;
  template_id: number | null;
  usage_event_id: number | null;
  created_at: string;
  updated_at: string;
  version: number;
  deleted_at: string | null;
  station_id: number | null;
}

export const TEMPLATE_KINDS: readonly EntryKind[] = ['experiment_template', 'item_template'];
export const TEMPLATE_KINDS_SQL = "('experiment_template', 'item_template')";

export function isTemplate(kind: EntryKind): boolean {
  return TEMPLATE_KINDS.includes(kind);
}

/** Metadata checked and normalized for storage. */
export interface PreparedMetadata {
  doc: MetadataDoc | null;
  /** JSON text of toNotebook(doc), or null. */
  json: string | null;
  /** Value problems and notices: stored and shown, never refused. */
  problems: MetadataProblem[];
}

export const NO_METADATA: PreparedMetadata = { doc: null, json: null, problems: [] };

/** Metadata over its size limits: refused with its problem, as every other refusal. */
function tooLarge(text: string): AppError {
  return new AppError('validation_failed', `metadata: ${text}`, {
    problems: [structural([], 'too_large', text)],
  });
}

/**
 * Checks metadata as it arrives (a JSON object, JSON text, or null for none). A structural
 * problem refuses the save with validation_failed: the message names each field and property,
 * details.problems lists every problem found.
 */
export function prepareMetadata(input: unknown): PreparedMetadata {
  if (input === null || input === undefined) return NO_METADATA;
  const over = typeof input === 'string' ? textTooLong(input) : valueTooLong(input);
  if (over !== null) throw tooLarge(over);
  const result = parseMetadata(input);
  if (!result.ok) {
    const blocking = result.problems.filter((problem) => problem.blocksSaving);
    throw new AppError(
      'validation_failed',
      `metadata: ${blocking.map((problem) => problem.message).join('; ')}`,
      { problems: result.problems },
    );
  }
  const prepared = fromDoc(result.doc, result.problems);
  // The stored form writes out what the input may leave implicit (each field's type), so it
  // can be longer; the limit holds for it too.
  const stored = prepared.json === null ? null : storedTooLong(prepared.json);
  if (stored !== null) throw tooLarge(stored);
  return prepared;
}

/** A document made by an operation (from a template, a duplicate): checked again as stored. */
export function prepareDoc(doc: MetadataDoc): PreparedMetadata {
  return prepareMetadata(toNotebook(doc));
}

function fromDoc(doc: MetadataDoc, problems: MetadataProblem[]): PreparedMetadata {
  return { doc, json: JSON.stringify(toNotebook(doc)), problems };
}

/**
 * The stored document of an entry, or null for none. Stored metadata always parses (it was
 * checked on save, and reading is idempotent); one that does not (saved by an older version)
 * reads as null here, and its JSON is kept as it is: the entry can still be edited, given new
 * metadata, linked or deleted.
 */
export function storedDoc(row: Pick<EntryRow, 'metadata'>): MetadataDoc | null {
  const result = readStored(row);
  return result?.ok ? result.doc : null;
}

function readStored(row: Pick<EntryRow, 'metadata'>): ReturnType<typeof parseMetadata> | null {
  return row.metadata === null ? null : parseMetadata(JSON.parse(row.metadata) as unknown);
}

/**
 * The stored document of an entry whose fields are to be copied (a duplicate, an entry made
 * from a template): one that no longer reads stops the copy, rather than let it go on
 * without the fields.
 */
export function fieldsToCopy(row: Pick<EntryRow, 'id' | 'metadata'>): MetadataDoc | null {
  const result = readStored(row);
  if (result === null) return null;
  if (result.ok) return result.doc;
  const first = result.problems.find((p) => p.blocksSaving) ?? result.problems[0];
  throw new AppError(
    'internal',
    `entry ${row.id}: its stored metadata no longer reads (${first?.message ?? 'unknown problem'}); nothing was copied`,
  );
}

/**
 * Tags as stored: trimmed, each once, in the order given, the first spelling kept. Once as
 * the tag index and search take them (searchText: letter case and Unicode form aside), so
 * "café" composed and "cafe" + U+0301 are one tag, not two that list and search as one.
 */
export function normalizeTags(tags: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of tags) {
    const tag = raw.trim();
    const key = searchText(tag);
    if (tag === '' || seen.has(key)) continue;
    seen.add(key);
    out.push(tag);
  }
  return out;
}

export interface EntryValues {
  uuid: string;
  kind: EntryKind;
  title: string;
  body: string;
  tags: string[];
  metadata: PreparedMetadata;
  owner_id: number;
  template_id: number | null;
  usage_event_id: number | null;
  created_at: string;
  updated_at: string;
  version: number;
  deleted_at: string | null;
  station_id: number | null;
}

function columns(values: EntryValues): Record<string, unknown> {
  return {
    uuid: values.uuid,
    kind: values.kind,
    title: values.title,
    title_search: searchText(values.title),
    body: values.body,
    tags: JSON.stringify(values.tags),
    metadata: values.metadata.json,
    problems: JSON.stringify(values.metadata.problems),
    field_count: values.metadata.doc?.fields.length ?? 0,
    owner_id: values.owner_id,
    template_id: values.template_id,
    usage_event_id: values.usage_event_id,
    created_at: values.created_at,
    updated_at: values.updated_at,
    version: values.version,
    deleted_at: values.deleted_at,
    station_id: values.station_id,
  };
}

/** Inserts an entry and its derived rows; call inside a transaction. Returns its id. */
export function insertEntry(db: Db, values: EntryValues): number {
  const id = Number(
    cachedStatement(
      db,
      `INSERT INTO notebook_entries (uuid, kind, title, title_search, body, tags, metadata,
         problems, field_count, owner_id, template_id, usage_event_id, created_at, updated_at,
         version, deleted_at, station_id)
       VALUES (@uuid, @kind, @title, @title_search, @body, @tags, @metadata, @problems,
         @field_count, @owner_id, @template_id, @usage_event_id, @created_at, @updated_at,
         @version, @deleted_at, @station_id)`,
    ).run(columns(values)).lastInsertRowid,
  );
  writeDerived(db, id, values);
  return id;
}

/** Replaces every column of an entry (but its id) and its derived rows; inside a transaction. */
export function replaceEntry(db: Db, id: number, values: EntryValues): void {
  cachedStatement(
    db,
    `UPDATE notebook_entries SET uuid = @uuid, kind = @kind, title = @title,
       title_search = @title_search, body = @body, tags = @tags, metadata = @metadata,
       problems = @problems, field_count = @field_count, owner_id = @owner_id,
       template_id = @template_id, usage_event_id = @usage_event_id, created_at = @created_at,
       updated_at = @updated_at, version = @version, deleted_at = @deleted_at,
       station_id = @station_id
     WHERE id = @id`,
  ).run({ ...columns(values), id });
  writeDerived(db, id, values);
}

/** The values of a stored entry, to change some of them and replace it. */
export function valuesOf(row: EntryRow): EntryValues {
  return {
    uuid: row.uuid,
    kind: row.kind,
    title: row.title,
    body: row.body,
    tags: JSON.parse(row.tags) as string[],
    metadata: {
      doc: storedDoc(row),
      json: row.metadata,
      problems: JSON.parse(row.problems) as MetadataProblem[],
    },
    owner_id: row.owner_id,
    template_id: row.template_id,
    usage_event_id: row.usage_event_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    version: row.version,
    deleted_at: row.deleted_at,
    station_id: row.station_id,
  };
}

/** The derived rows of one entry; a deleted entry has none (it is never found). */
function writeDerived(db: Db, entryId: number, values: EntryValues): void {
  cachedStatement(db, 'DELETE FROM notebook_tags WHERE entry_id = ?').run(entryId);
  cachedStatement(db, 'DELETE FROM notebook_metadata_index WHERE entry_id = ?').run(entryId);
  // The text index reads its content from notebook_metadata_lines: it is told what goes.
  const lines = cachedStatement(db, 'SELECT text FROM notebook_metadata_lines WHERE entry_id = ?')
    .pluck()
    .get(entryId) as string | undefined;
  if (lines !== undefined) {
    cachedStatement(
      db,
      `INSERT INTO notebook_metadata_text (notebook_metadata_text, rowid, text)
       VALUES ('delete', ?, ?)`,
    ).run(entryId, lines);
    cachedStatement(db, 'DELETE FROM notebook_metadata_lines WHERE entry_id = ?').run(entryId);
  }
  cachedStatement(db, 'DELETE FROM notebook_search_keys WHERE entry_id = ?').run(entryId);
  if (values.deleted_at !== null) return;
  cachedStatement(
    db,
    `INSERT INTO notebook_search_keys (entry_id, reader, kind, title_search, updated_at)
     VALUES (?, ?, ?, ?, ?)`,
  ).run(
    entryId,
    isTemplate(values.kind) ? 0 : values.owner_id,
    values.kind,
    searchText(values.title),
    values.updated_at,
  );
  const tag = cachedStatement(
    db,
    'INSERT OR IGNORE INTO notebook_tags (entry_id, tag, tag_key) VALUES (?, ?, ?)',
  );
  for (const name of values.tags) tag.run(entryId, name, searchText(name));
  const doc = values.metadata.doc;
  if (!doc) return;
  const rows = metadataIndexRows(doc);
  const insert = cachedStatement(
    db,
    `INSERT INTO notebook_metadata_index (entry_id, name, type, text, num, unit, date, bool)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const row of rows) {
    insert.run(
      entryId,
      row.name,
      row.type,
      row.text,
      row.num,
      row.unit,
      row.date,
      row.bool === null ? null : row.bool ? 1 : 0,
    );
  }
  const text = rows
    .map((row) => row.text)
    .filter((t) => t !== '')
    .join('\n');
  if (text !== '') {
    cachedStatement(db, 'INSERT INTO notebook_metadata_lines (entry_id, text) VALUES (?, ?)').run(
      entryId,
      text,
    );
    cachedStatement(db, 'INSERT INTO notebook_metadata_text (rowid, text) VALUES (?, ?)').run(
      entryId,
      text,
    );
  }
}

export function entryById(db: Db, id: number): EntryRow | undefined {
  return cachedStatement(db, 'SELECT * FROM notebook_entries WHERE id = ?').get(id) as
    EntryRow | undefined;
}

export function entryByUuid(db: Db, uuid: string): EntryRow | undefined {
  return cachedStatement(db, 'SELECT * FROM notebook_entries WHERE uuid = ?').get(
    uuid.toLowerCase(),
  ) as EntryRow | undefined;
}
