/**
 * notebook.search in SQL over the derived tables (migration 8). Each metadata condition
 * becomes `k.entry_id IN (SELECT entry_id FROM notebook_metadata_index WHERE name = ? AND ...)`,
 * which seeks one index by field name, with exactly the meaning of matchesQuery()
 * (shared/metadata/search.ts): an entry matches when one of its rows does. Who may see an
 * entry, its kind, title and order come from the slim notebook_search_keys rows, never from
 * the entries themselves; the page's summaries are read for its ids alone.
 */
import {
  dateQueryBounds,
  fieldKey,
  likeContainsPattern,
  searchText,
  queryUnit,
  type MetadataQuery,
} from '../../../shared/metadata/index.js';
import type { ApiParsedArgs } from '../../../shared/api.js';
import type { NotebookEntrySummary } from '../../../shared/notebookApi.js';
import type { Db } from '../db/open.js';
import type { UserRow } from '../station/records.js';
import { cachedStatement } from '../db/statements.js';
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

/** One metadata query as a condition on `k.entry_id`; the field's name composed, as stored. */
export function metadataCondition(query: MetadataQuery): SqlCondition {
  switch (query.kind) {
    case 'equals':
      return {
        sql: `k.entry_id IN (${ROWS} name = ? AND text = ?)`,
        params: [fieldKey(query.field), searchText(query.value.trim())],
      };
    case 'contains':
      return {
        sql: `k.entry_id IN (${ROWS} name = ? AND text LIKE ? ESCAPE '\\')`,
        params: [fieldKey(query.field), likeContainsPattern(query.text)],
      };
    case 'numberBetween': {
      const terms = ['name = ?', 'num IS NOT NULL'];
      const params: unknown[] = [fieldKey(query.field)];
      if (query.min !== undefined) {
        terms.push('num >= ?');
        params.push(query.min);
      }
      if (query.max !== undefined) {
        terms.push('num <= ?');
        params.push(query.max);
      }
      const unit = queryUnit(query.unit);
      if (unit !== null) {
        // Folded as the index holds it (metadataIndexRows).
        terms.push('unit = ?');
        params.push(unit);
      }
      return { sql: `k.entry_id IN (${ROWS} ${terms.join(' AND ')})`, params };
    }
    case 'dateBetween': {
      const { min, max } = dateQueryBounds(query);
      const terms = ['name = ?', 'date IS NOT NULL'];
      const params: unknown[] = [fieldKey(query.field)];
      if (min !== null) {
        terms.push('date >= ?');
        params.push(min);
      }
      if (max !== null) {
        terms.push('date <= ?');
        params.push(max);
      }
      return { sql: `k.entry_id IN (${ROWS} ${terms.join(' AND ')})`, params };
    }
    case 'checkbox':
      return {
        sql: `k.entry_id IN (${ROWS} name = ? AND bool = ?)`,
        params: [fieldKey(query.field), query.checked ? 1 : 0],
      };
    case 'anyFieldContains': {
      const needle = searchText(query.text);
      const pattern = likeContainsPattern(query.text);
      const phrase = trigramPhrase(needle);
      // The phrase is an exact substring match in the entry's lines (case-sensitive trigram
      // index over lowercased text); only a needle with a line break could span two values,
      // and only those are confirmed on the rows themselves.
      if (phrase !== null && !needle.includes('\n')) {
        return {
          sql: `k.entry_id IN (SELECT rowid FROM notebook_metadata_text WHERE notebook_metadata_text MATCH ?)`,
          params: [phrase],
        };
      }
      if (!needle.includes('\n')) {
        // Too short for trigrams: one pass over the entries' lines, not over every row.
        return {
          sql: `k.entry_id IN (SELECT entry_id FROM notebook_metadata_lines WHERE text LIKE ? ESCAPE '\\')`,
          params: [pattern],
        };
      }
      return { sql: `k.entry_id IN (${ROWS} text LIKE ? ESCAPE '\\')`, params: [pattern] };
    }
  }
}

/** The WHERE clause of a search: what the actor sees, narrowed by every condition given. */
export function searchWhere(
  actor: Pick<UserRow, 'id'>,
  args: ApiParsedArgs<'notebook.search'>,
): SqlCondition {
  // Deleted entries have no keys row.
  const terms = ['k.reader IN (0, ?)'];
  const params: unknown[] = [actor.id];
  if (args.kind !== undefined) {
    terms.push('k.kind = ?');
    params.push(args.kind);
  }
  if (args.title !== undefined && args.title.trim() !== '') {
    terms.push(`k.title_search LIKE ? ESCAPE '\\'`);
    params.push(likeContainsPattern(args.title.trim()));
  }
  for (const tag of new Set((args.tags ?? []).map((t) => t.trim()))) {
    terms.push('k.entry_id IN (SELECT entry_id FROM notebook_tags WHERE tag_key = ?)');
    params.push(searchText(tag));
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
  // One pass: the page and the count of all matches (a window over the same rows).
  const offset = args.offset ?? 0;
  const found = db
    .prepare(
      `SELECT k.entry_id, count(*) OVER () FROM notebook_search_keys k WHERE ${where.sql}
       ORDER BY k.updated_at DESC, k.entry_id DESC LIMIT ? OFFSET ?`,
    )
    .raw()
    .all(...where.params, args.limit ?? 100, offset) as [number, number][];
  const ids = found.map(([id]) => id);
  // The limit is at least 1: an empty first page means nothing matched; a page past the last
  // one is counted apart.
  const total = found.length
    ? found[0][1]
    : offset === 0
      ? 0
      : (db
          .prepare(`SELECT count(*) FROM notebook_search_keys k WHERE ${where.sql}`)
          .pluck()
          .get(...where.params) as number);
  const rows = cachedStatement(
    db,
    `SELECT ${SUMMARY_COLUMNS} FROM notebook_entries e ${SUMMARY_JOINS}
     WHERE e.id IN (SELECT value FROM json_each(?))`,
  ).all(JSON.stringify(ids)) as SummaryRow[];
  const byId = new Map(rows.map((row) => [row.id, row]));
  const entries = ids.flatMap((id) => {
    const row = byId.get(id);
    return row ? [toSummary(row)] : [];
  });
  return { entries, total };
}
