/**
 * GET /api/experiments/ and /api/experiments/{usage_event_id}/ (issue 7): for each usage event,
 * the experiment record that the metadata-harvesting rules of spec 000 build from it and its
 * tool's reservations (shared/experiment/), or why there is none, with the file records of the
 * tool's instruments first discovered during the usage and the notebook experiments linked to
 * it. Paged and filtered exactly as
 * usage_events: one result per usage event.
 */
import {
  buildExperimentRecord,
  type ExperimentView,
  type LinkedNotebookEntry,
} from '../../../../shared/experiment/index.js';
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';
import {
  FILE_COLUMNS,
  fileJson,
  visibleFiles,
  type FileRow,
  type Reader,
} from '../harvest/files.js';
import { usageEvents, type Resource } from './resources.js';
import {
  RESERVATION_COLUMNS,
  USAGE_EVENT_COLUMNS,
  reservationJson,
  usageEventJson,
  type ReservationRow,
  type UsageEventRow,
} from './serialize.js';

/** One result: the usage event, its record or why none, its files and notebook entries. */
export type ExperimentJson = ExperimentView;
export type LinkedEntry = LinkedNotebookEntry;

/** What the docs need: the same path, filters and ordering as usage_events. */
export const EXPERIMENTS = {
  name: 'experiments',
  table: 'usage_events',
  columns: USAGE_EVENT_COLUMNS,
  filters: usageEvents.filters,
  ordering: usageEvents.ordering,
} as const;

export function experimentsResource(
  db: Db,
  now: () => Date = () => new Date(),
): Resource<UsageEventRow, ExperimentJson> {
  return {
    ...EXPERIMENTS,
    serialize: (row, timeZone, reader) => experimentOf(db, row, timeZone, reader, now()),
  };
}

function experimentOf(
  db: Db,
  row: UsageEventRow,
  timeZone: string,
  reader: Reader,
  now: Date,
): ExperimentJson {
  const usage = usageEventJson(row, timeZone);
  const until = row.end ?? now.toISOString();
  // Reservations of the tool, or of an area holding it (a booking of the area holds all its
  // tools), that overlap the usage; the rules pick the one that overlaps most. An area counts
  // where it held the tool during the usage: its tools changed since do not rewrite the record.
  const toolAreas = cachedStatement(
    db,
    `SELECT DISTINCT area_id FROM area_tool_spans
     WHERE tool_id = ? AND held_from < ? AND (held_until IS NULL OR held_until > ?)`,
  )
    .pluck()
    .all(row.tool_id, until, row.start) as number[];
  const reservations = (
    cachedStatement(
      db,
      `SELECT ${RESERVATION_COLUMNS} FROM reservations
         WHERE (tool_id = ? OR (tool_id IS NULL AND area_id IN (SELECT value FROM json_each(?))))
           AND cancelled = 0 AND start < ? AND "end" > ?`,
    ).all(row.tool_id, JSON.stringify(toolAreas), until, row.start) as ReservationRow[]
  ).map((r) => reservationJson(r, timeZone));
  const result = buildExperimentRecord(usage, reservations, { now: now.getTime(), toolAreas });
  // Only the files of instruments the reader may read, as /api/files shows them. Those the
  // station linked to this usage (the usage on the tool when it first saw them), and those it
  // linked to none that it first saw during the usage on the tool's instruments: not by time
  // alone, which a station clock set back puts inside an earlier usage of another person.
  const visible = visibleFiles(reader);
  const files = (
    cachedStatement(
      db,
      `SELECT ${FILE_COLUMNS} FROM harvest_files f
         WHERE f.usage_event_id = ? AND ${visible.sql}
       UNION ALL
       SELECT ${FILE_COLUMNS} FROM instruments i
         JOIN harvest_files f ON f.instrument_id = i.id
         WHERE i.tool_id = ? AND f.first_discovered_at >= ? AND f.first_discovered_at <= ?
           AND f.usage_event_id IS NULL AND ${visible.sql}
       ORDER BY first_discovered_at, id`,
    ).all(row.id, ...visible.args, row.tool_id, row.start, until, ...visible.args) as FileRow[]
  ).map(fileJson);
  const notebook = (
    cachedStatement(
      db,
      `SELECT uuid, title, tags, metadata, updated_at FROM notebook_entries
         WHERE usage_event_id = ? AND deleted_at IS NULL ORDER BY id`,
    ).all(row.id) as {
      uuid: string;
      title: string;
      tags: string;
      metadata: string | null;
      updated_at: string;
    }[]
  ).map((entry): LinkedEntry => ({
    uuid: entry.uuid,
    title: entry.title,
    tags: JSON.parse(entry.tags) as string[],
    metadata:
      entry.metadata === null ? null : (JSON.parse(entry.metadata) as Record<string, unknown>),
    updated_at: entry.updated_at,
  }));
  return {
    id: row.id,
    usage_event: usage,
    record: result.ok ? result.record : null,
    reason: result.ok ? null : result.reason,
    reservation: result.ok ? result.record.reservation : result.reservation,
    attempts: result.attempts,
    files,
    notebook_entries: notebook,
  };
}
