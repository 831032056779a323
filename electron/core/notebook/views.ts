/** What the notebook calls answer: one entry in full, or list rows without text and metadata. */
import type { MetadataProblem } from '../../../shared/metadata/index.js';
import type {
  EntryKind,
  EntryUsageLink,
  NotebookEntrySummary,
  NotebookEntryView,
} from '../../../shared/notebookApi.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';

/** The columns of a summary, with the owner and the usage link joined; `e` is the entry. */
export const SUMMARY_COLUMNS = `e.id, e.uuid, e.kind, e.title, e.tags, e.field_count, e.owner_id,
  o.username AS owner_username, e.template_id, e.usage_event_id, ue.uuid AS usage_uuid,
  ut.name AS usage_tool, ue.start AS usage_start, ue."end" AS usage_end, e.created_at,
  e.updated_at, e.version`;

export const SUMMARY_JOINS = `JOIN users o ON o.id = e.owner_id
  LEFT JOIN usage_events ue ON ue.id = e.usage_event_id
  LEFT JOIN tools ut ON ut.id = ue.tool_id`;

export interface SummaryRow {
  id: number;
  uuid: string;
  kind: EntryKind;
  title: string;
  tags: string;
  field_count: number;
  owner_id: number;
  owner_username: string;
  template_id: number | null;
  usage_event_id: number | null;
  usage_uuid: string | null;
  usage_tool: string | null;
  usage_start: string | null;
  usage_end: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

function usageLink(row: SummaryRow): EntryUsageLink | null {
  if (row.usage_event_id === null || row.usage_uuid === null) return null;
  return {
    id: row.usage_event_id,
    uuid: row.usage_uuid,
    tool: row.usage_tool ?? '',
    start: row.usage_start ?? '',
    end: row.usage_end,
  };
}

function common(row: SummaryRow): Omit<NotebookEntrySummary, 'field_count'> {
  return {
    id: row.id,
    uuid: row.uuid,
    kind: row.kind,
    title: row.title,
    tags: JSON.parse(row.tags) as string[],
    owner: { id: row.owner_id, username: row.owner_username },
    template_id: row.template_id,
    usage_event: usageLink(row),
    created_at: row.created_at,
    updated_at: row.updated_at,
    version: row.version,
  };
}

export function toSummary(row: SummaryRow): NotebookEntrySummary {
  return { ...common(row), field_count: row.field_count };
}

export function entryView(db: Db, id: number): NotebookEntryView {
  const row = cachedStatement(
    db,
    `SELECT ${SUMMARY_COLUMNS}, e.body, e.metadata, e.problems
     FROM notebook_entries e ${SUMMARY_JOINS} WHERE e.id = ?`,
  ).get(id) as SummaryRow & { body: string; metadata: string | null; problems: string };
  return {
    ...common(row),
    body: row.body,
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, unknown>),
    problems: JSON.parse(row.problems) as MetadataProblem[],
  };
}
