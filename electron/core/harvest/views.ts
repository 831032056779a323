/**
 * The station's file and transfer records as the UI, the CLI and the API read them: the views,
 * the file list and its search by ARK or path (with the path index it reads). The records
 * themselves are written on the harvest's path (records.ts).
 */
import { isTestArk, parseArk } from '../../../shared/ark.js';
import type { HarvestFileView, HarvestTransferView } from '../../../shared/api.js';
import type { FileState } from '../../../shared/harvest/management.js';
import { likeContains, likePrefix } from '../../../shared/sqlLike.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { sourcePathIs } from './records.js';
import { CASE_BLIND_NAMES, sourceKey } from './storageGuard.js';

interface TransferRow {
  id: number;
  uuid: string;
  file_id: number;
  persistent_id: string;
  status: HarvestTransferView['status'];
  storage_location: string | null;
  destination_path: string | null;
  bytes_transferred: number;
  dest_checksum: string | null;
  checksum_verified: number;
  started_at: string;
  completed_at: string | null;
  error: string;
  note: string;
}

const TRANSFER_SELECT = `SELECT t.id, t.uuid, t.file_id, f.persistent_id, t.status,
    l.name AS storage_location, t.destination_path, t.bytes_transferred, t.dest_checksum,
    t.checksum_verified, t.started_at, t.completed_at, t.error, t.note
  FROM harvest_transfers t JOIN harvest_files f ON f.id = t.file_id
  LEFT JOIN storage_locations l ON l.id = t.storage_location_id`;

function transferView(row: TransferRow): HarvestTransferView {
  return { ...row, checksum_verified: row.checksum_verified === 1 };
}

export function listTransfers(
  db: Db,
  filter: { fileId?: number | undefined; limit?: number | undefined } = {},
): HarvestTransferView[] {
  const rows =
    filter.fileId === undefined
      ? cachedStatement(db, `${TRANSFER_SELECT} ORDER BY t.id DESC LIMIT ?`).all(filter.limit ?? -1)
      : cachedStatement(
          db,
          `${TRANSFER_SELECT} WHERE t.file_id = ? ORDER BY t.id DESC LIMIT ?`,
        ).all(filter.fileId, filter.limit ?? -1);
  return (rows as TransferRow[]).map(transferView);
}

type FileViewRow = Omit<
  HarvestFileView,
  'metadata_' | 'test_identifier' | 'mtime' | 'last_transfer' | 'usage_event'
> & {
  metadata_: string;
  mtime_ms: number;
  usage_event: string | null;
};

const FILE_SELECT = `SELECT f.id, f.uuid, f.persistent_id, f.persistent_id_type,
    i.name AS instrument, f.source_path, f.relative_path, f.filename, f.size, f.mtime_ms,
    f.xxhash, f.hash_algorithm, f.first_discovered_at,
    coalesce(e.uuid, f.usage_elsewhere ->> '$.usage_event') AS usage_event, f.metadata_,
    f.state, f.attempts, f.next_attempt_at
  FROM harvest_files f JOIN instruments i ON i.id = f.instrument_id
  LEFT JOIN usage_events e ON e.id = f.usage_event_id`;

function fileView(db: Db, row: FileViewRow): HarvestFileView {
  const { mtime_ms: mtimeMs, metadata_, ...rest } = row;
  return {
    ...rest,
    mtime: new Date(mtimeMs).toISOString(),
    metadata_: JSON.parse(metadata_) as Record<string, unknown>,
    test_identifier: isTestArk(row.persistent_id),
    last_transfer: listTransfers(db, { fileId: row.id, limit: 1 })[0] ?? null,
  };
}

export interface FileFilter {
  state?: FileState | undefined;
  limit?: number | undefined;
  beforeId?: number | undefined;
  /**
   * An ARK (either form) finds its file; other text, the files whose path holds it. Trimmed
   * by the caller (the API's schema).
   */
  search?: string | undefined;
}

/**
 * Adds the records made since the last time to the path index (migration 12), in one
 * statement: 4 to 7 us per record, where a trigger per record cost 45 (FTS5 writes a segment
 * per statement in a trigger). Run by the harvest as each walk starts (the records of the last
 * interval), not on the way of each file; a search reads the records made since as they are
 * (listFiles). Cheap when there is nothing to add.
 */
export function indexPaths(db: Db): void {
  const through = indexedThrough(db);
  const newest = cachedStatement(db, 'SELECT max(id) FROM harvest_files').pluck().get() as
    number | null;
  if (newest === null || newest <= through) return;
  db.transaction(() => {
    // The path composed (NFC), as searches compare it (listFiles): the index holds the
    // decomposed path of a file from a Mac ("e" and U+0301 for "é") as "é" too.
    cachedStatement(
      db,
      `INSERT INTO harvest_files_path (rowid, relative_path)
         SELECT id, nfc(relative_path) FROM harvest_files WHERE id > ? AND id <= ? ORDER BY id`,
    ).run(through, newest);
    cachedStatement(db, 'UPDATE harvest_files_path_through SET through = ?').run(newest);
  }).immediate();
}

/** The newest record in the path index: those after it are not indexed yet. */
function indexedThrough(db: Db): number {
  return cachedStatement(db, 'SELECT through FROM harvest_files_path_through')
    .pluck()
    .get() as number;
}

/**
 * `text` as a query of the path index (migration 12) that finds the records whose path may
 * hold it: one phrase of its trigrams, without case. Null for text of fewer than three
 * characters, which has no trigram.
 */
function trigramQuery(text: string): string | null {
  return [...text].length < 3 ? null : `"${text.replace(/"/g, '""')}"`;
}

/** A Windows path: a drive letter, or a share (`\\server\share`), with either slash. */
const WINDOWS_PATH = /^(?:[A-Za-z]:[\\/]|[\\/]{2}[^\\/])/;

/** The watched folders of every instrument, as configured. */
function watchedFolders(db: Db): string[] {
  return (cachedStatement(db, 'SELECT watch FROM instruments').pluck().all() as string[]).flatMap(
    (watch) => (JSON.parse(watch) as { path: string }[]).map((w) => w.path),
  );
}

/**
 * A path as compared with another on its system: on Windows with either slash and A to Z in
 * either case (its file system's own rule, for these letters), as a folder may be configured
 * `D:/Data` and shown `D:\Data\...`. Both keep their length, so a prefix found so is as long
 * in the text as written.
 */
function comparablePath(path: string, windows: boolean): string {
  return windows ? sourceKey(path.replace(/\\/g, '/'), true) : path;
}

/**
 * A whole source path, as a file's details show it (a watched folder, then the path below it),
 * as that folder and the part below it (composed, NFC, as `text` is, with `/` between folders,
 * as relative paths are stored); null for other text. So a path pasted from the details finds
 * its file, where the index holds the part below the folder only.
 */
function belowWatchedFolder(
  folders: string[],
  text: string,
): { folder: string; below: string; windows: boolean } | null {
  // The longest first: a folder watched inside another names its own files.
  for (const folder of [...folders].sort((a, b) => b.length - a.length)) {
    const windows = WINDOWS_PATH.test(folder);
    const bare = folder.replace(/[\\/]+$/, '').normalize('NFC');
    const written = comparablePath(text, windows);
    const watched = comparablePath(bare, windows);
    if (written === watched) return { folder, below: '', windows };
    if (written.startsWith(watched) && /^[\\/]/.test(text.slice(bare.length))) {
      const below = text.slice(bare.length + 1);
      return { folder, below: windows ? below.replace(/\\/g, '/') : below, windows };
    }
  }
  return null;
}

/**
 * The condition that a record's relative path holds `text` (composed, NFC), as the index
 * compares it (indexPaths: the path composed) and ignoring case for A to Z: a Mac's "café"
 * ("cafe" and U+0301) holds "caf" and "café", not "cafe", whether indexed yet or not.
 * Printable-ASCII text (almost every search) reads the path as stored first: nfc() is a call
 * into JavaScript, and for every record a scan of 1,000,000 paths took 0.6 s with it against
 * 0.05 s without. Such text found there is in the path composed too, but where its last
 * letter takes a combining mark that follows ("cafe" in "cafe" U+0301): so only a path it is
 * found in, and that holds more than ASCII, is composed to be sure: a search that finds many
 * files reads a page of them (the CLI, all of them, each printed), one that finds none reads
 * every path as before.
 */
function pathHolds(text: string): { sql: string; params: unknown[] } {
  const pattern = likeContains(text);
  if (!/^[ -~]*$/.test(text)) {
    return { sql: `nfc(f.relative_path) LIKE ? ESCAPE '\\'`, params: [pattern] };
  }
  // A CASE, whose branches SQLite reads in order and stops at the first that holds (OR and
  // AND, in a value, read both sides): nfc() only for a path found that is not all ASCII (as
  // many characters as UTF-8 bytes; a GLOB of a character class took 5 times as long).
  return {
    sql: `CASE WHEN f.relative_path NOT LIKE ? ESCAPE '\\' THEN 0
            WHEN length(f.relative_path) = octet_length(f.relative_path) THEN 1
            ELSE nfc(f.relative_path) LIKE ? ESCAPE '\\' END`,
    params: [pattern, pattern],
  };
}

/**
 * The relative path as it is compared with `path` whole (a path below a watched folder):
 * composed (NFC) where `path` is not all printable ASCII. Such a path equals or begins only
 * paths that are printable ASCII where it is, in either form: a combining mark after it would
 * follow a "/" or end the path, which it does not compose with.
 */
function pathAsCompared(path: string): string {
  return /^[ -~]*$/.test(path) ? 'f.relative_path' : 'nfc(f.relative_path)';
}

/** Newest first; `beforeId` pages further back. */
export function listFiles(db: Db, filter: FileFilter = {}): HarvestFileView[] {
  const where: string[] = [];
  const params: unknown[] = [];
  // Compared composed (NFC) on both sides: "é" typed finds "e" + U+0301 (a Mac's names) too.
  let search = filter.search?.normalize('NFC');
  let phrase: string | null = null;
  const folders = search ? watchedFolders(db) : [];
  const source = search ? belowWatchedFolder(folders, search) : null;
  if (source) {
    // That file, or the files of that folder: the path itself, not text it may hold. On
    // Windows, records made while the folder was configured with the other slash or in other
    // case (`C:/Data`, `c:\data`) are its files too: their source paths name the same files.
    if (source.windows) {
      where.push(`rtrim(replace(f.watch_path, '/', '\\'), '\\') = ? COLLATE NOCASE`);
      params.push(source.folder.replace(/\//g, '\\').replace(/\\+$/, ''));
    } else {
      where.push('f.watch_path = ?');
      params.push(source.folder);
    }
    const below = source.below.replace(/\/+$/, '');
    if (below !== '') {
      const path = pathAsCompared(below);
      if (source.windows) {
        // Case-blind for A to Z, as the folder was (LIKE, its own wildcards escaped).
        where.push(`(${path} LIKE ? ESCAPE '\\' OR ${path} LIKE ? ESCAPE '\\')`);
        params.push(likePrefix(below).slice(0, -1), likePrefix(`${below}/`));
      } else {
        // As written: the path itself, or one after "below/" in byte order ("/" + 1 is "0").
        where.push(`(${path} = ? OR (${path} > ? AND ${path} < ?))`);
        params.push(below, `${below}/`, `${below}0`);
      }
      // Through the path index, as text it holds: a path pasted and left in the search box is
      // searched again at each change of the harvest, and must not read every record.
      phrase = trigramQuery(below);
    }
    search = undefined;
  } else if (search?.startsWith('/') || (search !== undefined && WINDOWS_PATH.test(search))) {
    // A whole source path under a folder no longer watched (changed since, or the instrument
    // moved here with its records): that file, by its path as stored, through its index
    // (records.ts latestBySource). A Windows path with either slash and A to Z in either
    // case: a station there stores it with "\", a record from elsewhere (its history, pushed
    // by another client) may hold "/".
    const windows = WINDOWS_PATH.test(search);
    const spellings = windows
      ? [search.replace(/\//g, '\\'), search.replace(/\\/g, '/')]
      : [search];
    const stored = `f.instrument_id IN (SELECT id FROM instruments) AND ${sourcePathIs('f')}`;
    for (const path of spellings) {
      const args = [path, windows || CASE_BLIND_NAMES ? 1 : 0, path];
      if (cachedStatement(db, `SELECT 1 FROM harvest_files f WHERE ${stored}`).get(...args)) {
        where.push(stored);
        params.push(...args);
        search = undefined;
        break;
      }
    }
  }
  if (search !== undefined && folders.some((folder) => WINDOWS_PATH.test(folder))) {
    // Relative paths are stored with "/": a part of a Windows path typed with "\" finds them.
    search = search.replace(/\\/g, '/');
  }
  if (search) {
    const ark = parseArk(search);
    if (ark.ok) {
      where.push('f.persistent_id = ?');
      params.push(ark.ark);
    } else {
      // No path holds a NUL (and FTS5 would read the text only up to it).
      if (search.includes('\0')) return [];
      phrase = trigramQuery(search);
      // The index folds case beyond A to Z; LIKE has the last word, case-blind for ASCII
      // letters only, as a person typing a name expects (and as without the index).
      const holds = pathHolds(search);
      where.push(holds.sql);
      params.push(...holds.params);
    }
  }
  if (filter.state) {
    where.push('f.state = ?');
    params.push(filter.state);
  }
  const limit = filter.limit ?? -1;
  const page = (
    extraWhere: string[],
    extraParams: unknown[],
    from = '',
    id = 'f.id',
    count = limit,
  ): FileViewRow[] => {
    const all = [...where, ...extraWhere];
    const args = [...params, ...extraParams];
    if (filter.beforeId !== undefined) {
      all.push(`${id} < ?`);
      args.push(filter.beforeId);
    }
    return cachedStatement(
      db,
      `${FILE_SELECT} ${from} ${all.length ? `WHERE ${all.join(' AND ')}` : ''}
         ORDER BY ${id} DESC LIMIT ?`,
    ).all(...args, count) as FileViewRow[];
  };
  if (phrase === null) return page([], []).map((r) => fileView(db, r));
  // A search through the path index (migration 12), which holds the records up to `through`:
  // those made since (one walk's worth at most, while the harvest runs) are read as they are,
  // and come first, being the newest; then the index, newest first, which stops as soon as
  // the page is full. Nothing is written here: a search is a read, from the CLI too.
  const through = indexedThrough(db);
  const newer = page(['f.id > ?'], [through]);
  const left = limit < 0 ? -1 : limit - newer.length;
  const indexed =
    left === 0
      ? []
      : page(
          ['harvest_files_path MATCH ?', 'p.rowid <= ?'],
          [phrase, through],
          'JOIN harvest_files_path p ON p.rowid = f.id',
          'p.rowid',
          left,
        );
  return [...newer, ...indexed].map((r) => fileView(db, r));
}

export function getFileView(db: Db, id: number): HarvestFileView | null {
  const row = cachedStatement(db, `${FILE_SELECT} WHERE f.id = ?`).get(id) as
    FileViewRow | undefined;
  return row ? fileView(db, row) : null;
}
