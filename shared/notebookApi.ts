/**
 * The notebook calls of the station contract (spec 001): entries of four kinds with a title,
 * a main text, tags and their metadata, templates, duplicates, the link of an experiment to a
 * usage event, and search by metadata. Merged into `apiSchemas` (api.ts).
 *
 * Metadata crosses the carriers as the document's JSON object in Labstation's own form
 * (`toNotebook`); the core parses it with `parseMetadata` and refuses only what blocks saving
 * (structural problems). Value problems are stored with the entry and shown, never refused:
 * `required` and bad values do not block saving (spec 001).
 */
import { z } from 'zod';
import { metadataQuerySchema, type MetadataProblem } from './metadata/index.js';

export const ENTRY_KINDS = ['experiment', 'item', 'experiment_template', 'item_template'] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];
export const entryKind = z.enum(ENTRY_KINDS);

const id = z.number().int().positive();
const title = z.string().trim().min(1, 'must not be empty').max(500);
const body = z.string().max(1_000_000);
const tags = z.array(z.string().trim().min(1).max(100)).max(100);
/** The metadata document as a JSON object (or null for none); checked by parseMetadata. */
const metadata = z.unknown();

export const notebookApiSchemas = {
  /** The session user's entries and every template, newest change first. */
  'notebook.list': z
    .object({
      kind: entryKind.optional(),
      limit: z.number().int().min(1).max(500).optional(),
      /** Page further back: entries changed before this one (by updated_at, then id). */
      before_id: id.optional(),
    })
    .strict(),
  'notebook.get': z.object({ id }).strict(),
  /**
   * A new entry; with `template_id`, its fields (values included), main text and tags come from
   * that template, and the given title replaces the template's. `metadata` given as well is laid
   * over the template's: a field's properties over those of the template's field of the same
   * name, new fields added (the template's fields are always there, spec 001 rule 3).
   */
  'notebook.create': z
    .object({
      kind: entryKind,
      title,
      body: body.optional(),
      tags: tags.optional(),
      metadata: metadata.optional(),
      template_id: id.optional(),
    })
    .strict(),
  /**
   * Changes what is given. `version` is the version the editor started from: a stale one is
   * refused with `conflict`, so two windows never overwrite each other silently.
   */
  'notebook.update': z
    .object({
      id,
      version: z.number().int().min(1),
      title: title.optional(),
      body: body.optional(),
      tags: tags.optional(),
      metadata: metadata.optional(),
    })
    .strict(),
  /** A copy of the same kind; fields with blank_value_on_duplicate are cleared. */
  'notebook.duplicate': z.object({ id }).strict(),
  /** Deleted entries are kept (with deleted_at) and synced as deleted. */
  'notebook.delete': z.object({ id, version: z.number().int().min(1) }).strict(),
  /** Link an experiment to a usage event (null: unlink). Without `usage`: the one in progress. */
  'notebook.attachUsage': z
    .object({ id, usage: z.union([id, z.string().uuid(), z.null()]).optional() })
    .strict(),
  'notebook.search': z
    .object({
      kind: entryKind.optional(),
      /** Title contains this text, ignoring case (SQLite's LIKE would stop at a NUL). */
      title: z
        .string()
        .max(500)
        .regex(/^[^\0]*$/, 'must not hold a NUL character')
        .optional(),
      /** Every one of these tags. */
      tags: tags.optional(),
      /** Every one of these conditions on the metadata. */
      metadata: z.array(metadataQuerySchema).max(20).optional(),
      limit: z.number().int().min(1).max(500).optional(),
      /** Matches to pass over first (newest change first): the next page starts there. */
      offset: z.number().int().min(0).max(1_000_000).optional(),
    })
    .strict(),
  'notebook.tags': z.object({}).strict(),
} as const;

export interface EntryUsageLink {
  id: number;
  uuid: string;
  tool: string;
  start: string;
  end: string | null;
}

export interface NotebookEntryView {
  id: number;
  uuid: string;
  kind: EntryKind;
  title: string;
  body: string;
  tags: string[];
  /** The metadata document in Labstation's form (`toNotebook`), or null when there is none. */
  metadata: Record<string, unknown> | null;
  /** What the stored metadata's values break (never structural: that is refused on save). */
  problems: MetadataProblem[];
  owner: { id: number; username: string } | null;
  template_id: number | null;
  usage_event: EntryUsageLink | null;
  created_at: string;
  updated_at: string;
  /** Starts at 1; every update adds one. */
  version: number;
}

/** A list or search row: no main text or metadata, to keep lists light. */
export type NotebookEntrySummary = Omit<NotebookEntryView, 'body' | 'metadata' | 'problems'> & {
  field_count: number;
};

export interface NotebookApiResults {
  'notebook.list': { entries: NotebookEntrySummary[] };
  'notebook.get': { entry: NotebookEntryView };
  'notebook.create': { entry: NotebookEntryView };
  'notebook.update': { entry: NotebookEntryView };
  'notebook.duplicate': { entry: NotebookEntryView };
  'notebook.delete': { ok: true };
  'notebook.attachUsage': { entry: NotebookEntryView };
  'notebook.search': { entries: NotebookEntrySummary[]; total: number; took_ms: number };
  'notebook.tags': { tags: { tag: string; count: number }[] };
}
