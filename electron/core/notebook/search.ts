/**
 * notebook.search in SQL over the derived tables (migration 8). Each metadata condition
 * becomes `e.id IN (SELECT entry_id FROM notebook_metadata_index WHERE name = ? AND ...)`,
 * which seeks one index by field name, with exactly the meaning of matchesQuery()
 * (shared/metadata/search.ts): an entry matches when one of its rows does.
 */
import {
  dateQueryBounds,
  likeContainsPattern,
  searchText,
  type MetadataQuery,
} from '../../../shared/metadata/index.js';
import type { ApiParsedArgs } from '../../../shared/api.js';
import type { NotebookEntrySummary } from '../../../shared/notebookApi.js';
import type { Db } from '../db/open.js';
import type { UserRow } from '../station/records.js';
import { TEMPLATE_KINDS_SQL } from './store.js';
import { SUMMARY_COLUMNS, SUMMARY_JOINS, toSummary, type SummaryRow } from './views.js';

export interface SqlCondition {
  sql: string;
  params: unknown[];
}

const ROWS = 'SELECT entry_id FROM notebook_metadata_index WHERE';

/** The trigram index needs three characters; shorter text scans the rows. */
function trigramPhrase(text: string): string | null {
  return [...text].length >= 3 ? `"${text.replaceAll('"', '""')}"` : null;
}

/** One metadata query as a condition on `e.id`. */
export function metadataCondition(query: MetadataQuery): SqlCondition {
  switch (query.kind) {
    case 'equals':
      return {
        sql: `e.id IN (${ROWS} name = ? AND text = ?)`,
        params: [query.field, searchText(query.value)],
      };
    case 'contains':
      return {
        sql: `e.id IN (${ROWS} name = ? AND text LIKE ? ESCAPE '\\')`,
        params: [query.field, likeContainsPattern(query.text)],
      };
    case 'numberBetween': {
      const terms = ['name = ?', 'num IS NOT NULL'];
      const params: unknown[] = [query.field];
      if (query.min !== undefined) {
        terms.push('num >= ?');
        params.push(query.min);
      }
      if (query.max !== undefined) {
        terms.push('num <= ?');
        params.push(query.max);
      }
      if (query.unit !== undefined) {
        terms.push('unit = ?');
        params.push(query.unit);
      }
      return { sql: `e.id IN (${ROWS} ${terms.join(' AND ')})`, params };
    }
    case 'dateBetween': {
      const { min, max } = dateQueryBounds(query);
      const terms = ['name = ?', 'date IS NOT NULL'];
      const params: unknown[] = [query.field];
      if (min !== null) {
        terms.push('date >= ?');
        params.push(min);
      }
      if (max !== null) {
        terms.push('date <= ?');
        params.push(max);
      }
      return { sql: `e.id IN (${ROWS} ${terms.join(' AND ')})`, params };
    }
    case 'checkbox':
      return {
        sql: `e.id IN (${ROWS} name = ? AND bool = ?)`,
        params: [query.field, query.checked ? 1 : 0],
      };
    case 'anyFieldContains': {
      const pattern = likeContainsPattern(query.text);
      const phrase = trigramPhrase(searchText(query.text));
      // Candidates from the trigram index, confirmed on the entry's own rows.
      if (phrase !== null) {
        return {
          sql:
            `e.id IN (SELECT rowid FROM notebook_metadata_text WHERE notebook_metadata_text MATCH ?)` +
            ` AND EXISTS (SELECT 1 FROM notebook_metadata_index r WHERE r.entry_id = e.id` +
            ` AND r.text LIKE ? ESCAPE '\\')`,
          params: [phrase, pattern],
        };
      }
      return { sql: `e.id IN (${ROWS} text LIKE ? ESCAPE '\\')`, params: [pattern] };
    }
  }
}

/** The WHERE clause of a search: what the actor sees, narrowed by every condition given. */
export function searchWhere(
  actor: Pick<UserRow, 'id'>,
  args: ApiParsedArgs<'notebook.search'>,
): SqlCondition {
  const terms = ['e.deleted_at IS NULL', `(e.owner_id = ? OR e.kind IN ${TEMPLATE_KINDS_SQL})`];
  const params: unknown[] = [actor.id];
  if (args.kind !== undefined) {
    terms.push('e.kind = ?');
    params.push(args.kind);
  }
  if (args.title !== undefined && args.title.trim() !== '') {
    terms.push(`e.title_search LIKE ? ESCAPE '\\'`);
    params.push(likeContainsPattern(args.title.trim()));
  }
  for (const tag of new Set((args.tags ?? []).map((t) => t.trim()))) {
    terms.push('e.id IN (SELECT entry_id FROM notebook_tags WHERE tag = ?)');
    params.push(tag);
  }
  for (const query of args.metadata ?? []) {
    const condition = metadataCondition(query);
    terms.push(condition.sql);
    params.push(...condition.params);
  }
  return { sql: terms.join(' AND '), params };
}

export interface SearchResult {
  entries: NotebookEntrySummary[];
  total: number;
}

export function searchEntries(
  db: Db,
  actor: Pick<UserRow, 'id'>,
  args: ApiParsedArgs<'notebook.search'>,
): SearchResult {
  const where = searchWhere(actor, args);
  // Prepared per call: the text depends on the conditions, too many shapes to keep them all.
  const rows = db
    .prepare(
      `SELECT ${SUMMARY_COLUMNS} FROM notebook_entries e ${SUMMARY_JOINS}
     WHERE ${where.sql} ORDER BY e.updated_at DESC, e.id DESC LIMIT ?`,
    )
    .all(...where.params, args.limit ?? 100) as SummaryRow[];
  const total = db
    .prepare(`SELECT count(*) FROM notebook_entries e WHERE ${where.sql}`)
    .pluck()
    .get(...where.params) as number;
  return { entries: rows.map(toSummary), total };
}
