/**
 * A watched folder given a new path on the same station: the share it is on mounted elsewhere,
 * a drive letter changed, the folder moved with its files. Files are known by their path
 * (records.ts latestBySource), so without this every file there would be found anew at the new
 * path: recorded again under a new ARK (the old one left dangling), and the old folder's failed
 * records tried for ever at a path that is no more. The records are moved under the new path,
 * by their path relative to the folder, as an instrument's history is when it moves between
 * stations (sync/history.ts placement): a file found there with the same size and mtime is
 * then the recorded one, keeping its ARK and not copied again; one with other bytes is a new
 * version, as at any path.
 *
 * Only a change that says which folder became which is taken so: one folder no longer watched
 * and one watched newly, neither inside the other. A folder moved inside or around another
 * keeps its files' paths (they are found by them as they are), and with two folders changed at
 * once which one became which cannot be told.
 */
import { join } from 'node:path';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { nowIso } from '../util/ids.js';
import { NEXT_UPDATED_AT, enqueueFile, sourcePathIs } from './records.js';
import { CASE_BLIND_NAMES, sourceKey } from './storageGuard.js';

/** A folder's path as compared: without trailing separators, in the file system's case. */
function folderKey(path: string, caseBlind?: boolean): string {
  return sourceKey(path.replace(/[\\/]+$/, ''), caseBlind);
}

/** The one folder of an instrument's watch list that `after` names anew, else null. */
export function movedFolder(
  before: readonly { path: string }[],
  after: readonly { path: string }[],
  caseBlind?: boolean,
): { from: string; to: string } | null {
  const key = (path: string): string => folderKey(path, caseBlind);
  const beforeKeys = new Set(before.map((w) => key(w.path)));
  const afterKeys = new Set(after.map((w) => key(w.path)));
  const gone = before.filter((w) => !afterKeys.has(key(w.path)));
  const added = after.filter((w) => !beforeKeys.has(key(w.path)));
  if (gone.length !== 1 || added.length !== 1) return null;
  const from = gone[0].path;
  const to = added[0].path;
  const inside = (outer: string, inner: string): boolean =>
    key(inner).startsWith(key(outer)) && /^[\\/]/.test(key(inner).slice(key(outer).length));
  if (inside(from, to) || inside(to, from)) return null;
  return { from, to };
}

/**
 * Moves the instrument's file records of the folder `watchBefore` names and `watchAfter` no
 * longer does (JSON watch lists, as stored) under the folder it names instead; run inside the
 * transaction that stores `watchAfter`. A record whose new path another record of the
 * instrument holds already (that folder was watched before) stays where it is. Returns how many
 * records moved, with the move, or null when the change is no move.
 */
export function moveFolderRecords(
  db: Db,
  instrumentId: number,
  watchBefore: string,
  watchAfter: string,
  caseBlind?: boolean,
): { from: string; to: string; records: number } | null {
  const blind = caseBlind ?? CASE_BLIND_NAMES;
  const moved = movedFolder(
    JSON.parse(watchBefore) as { path: string }[],
    JSON.parse(watchAfter) as { path: string }[],
    caseBlind,
  );
  if (moved === null) return null;
  const fromKey = folderKey(moved.from, caseBlind);
  const rows = (
    cachedStatement(
      db,
      'SELECT id, watch_path, relative_path FROM harvest_files WHERE instrument_id = ?',
    ).all(instrumentId) as { id: number; watch_path: string; relative_path: string }[]
  ).filter((row) => folderKey(row.watch_path, caseBlind) === fromKey);
  // Whether a record holds a path already: one of another folder, which keeps it (the old
  // folder's records are under the old folder, apart from the new one).
  const held = cachedStatement(
    db,
    `SELECT 1 FROM harvest_files f WHERE f.instrument_id = ? AND ${sourcePathIs('f')} LIMIT 1`,
  );
  // A change the server must see: its record of the file follows (records.ts enqueueFile).
  const move = cachedStatement(
    db,
    `UPDATE harvest_files SET watch_path = ?, source_path = ?, updated_at = ${NEXT_UPDATED_AT}
       WHERE id = ?`,
  );
  // Decided before any moves: a version moved first would hold its path against the next.
  const moving = rows
    .map((row) => ({ id: row.id, sourcePath: join(moved.to, ...row.relative_path.split('/')) }))
    .filter(
      ({ sourcePath }) =>
        held.get(instrumentId, sourcePath, blind ? 1 : 0, sourcePath) === undefined,
    );
  for (const { id, sourcePath } of moving) {
    move.run(moved.to, sourcePath, nowIso(), id);
    enqueueFile(db, id);
  }
  return { ...moved, records: moving.length };
}
