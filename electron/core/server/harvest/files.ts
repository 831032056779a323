/**
 * File and transfer records from every station (spec 002), read by any authenticated user. An
 * admin sees everything; anyone else only files of instruments granted to them
 * (user_instrument_access) and transfers of those files. Anything else is answered exactly as
 * a record that does not exist: never counted, never matched by a filter.
 */
import { z } from 'zod';
import { parseArk } from '../../../../shared/ark.js';
import {
  DEFAULT_PAGE_SIZE,
  fileOut,
  MAX_PAGE_SIZE,
  TRANSFER_STATUSES,
  transferOut,
  type Envelope,
  type FileOut,
  type TransferOut,
} from '../../../../shared/harvest/management.js';
import type { Db } from '../../db/open.js';
import type { Role } from '../auth.js';
import { parseDateTime, storedIso } from '../nemo/datetime.js';
import { NotFound, ValidationProblems, problem, type Problem } from './problems.js';
import { pageParams, wholeNumber } from './routing.js';

export interface Reader {
  id: number;
  role: Role;
}

export { fileOut, transferOut, type FileOut, type TransferOut };

export const fileExample: FileOut = {
  id: 1041,
  uuid: '0193a1f2-7c1e-7b55-9d7a-2f1c9e0b4d11',
  instrument_id: 7,
  persistent_id: 'ark:99999/fk4d7q2x9m1r',
  persistent_id_type: 'ark',
  source_path: 'D:\\Data\\2026-11-20\\grid3_0001.dm4',
  filename: 'grid3_0001.dm4',
  size: 67_108_864,
  xxhash: '6f1ed002ab5595859014ebf0951522d9',
  hash_algorithm: 'xxh3-128',
  first_discovered_at: '2026-11-20T09:15:33.120Z',
  metadata_: { file_info: { mime_type: 'application/octet-stream' } },
};

export const transferExample: TransferOut = {
  id: 2210,
  uuid: '0193a1f2-8a30-7f12-8c55-11aa0b2c3d4e',
  file_id: 1041,
  status: 'completed',
  storage_location_id: 1,
  destination_path: '/mnt/archive/TEM camera/2026/11/20/2026-11-20/grid3_0001.dm4',
  bytes_transferred: 67_108_864,
  dest_checksum: '6f1ed002ab5595859014ebf0951522d9',
  checksum_verified: true,
  started_at: '2026-11-20T09:15:38.201Z',
  completed_at: '2026-11-20T09:15:41.003Z',
  error: '',
  note: '',
};

export const fileQuery = z.object({
  ...pageParams,
  instrument_id: z.number().int().optional().describe('files of one instrument'),
  persistent_id: z.string().optional().describe('an ARK; ark:/... is the same identifier'),
  filename: z.string().optional().describe('the file name, exactly'),
  first_discovered_at__gte: z.string().optional().describe('discovered at or after (ISO 8601)'),
  first_discovered_at__lte: z.string().optional().describe('discovered at or before (ISO 8601)'),
  metadata_key: z
    .string()
    .optional()
    .describe('a metadata_ key, dotted for nesting (file_info.mime_type); with metadata_value'),
  metadata_value: z.string().optional().describe('the value metadata_key must have'),
});

export const transferQuery = z.object({
  ...pageParams,
  file_id: z.number().int().optional().describe('transfers of one file'),
  status: z.enum(TRANSFER_STATUSES).optional(),
});

interface Clause {
  sql: string;
  args: unknown[];
}

/** Instruments a reader may see the files of: every one for an admin, else the granted ones. */
function visibleInstruments(reader: Reader, column: string): Clause {
  if (reader.role === 'admin') return { sql: '1', args: [] };
  return {
    sql: `${column} IN (SELECT instrument_id FROM user_instrument_access WHERE user_id = ?)`,
    args: [reader.id],
  };
}

/** What a reader may see: every file for an admin, else only granted instruments'. */
export function visibleFiles(reader: Reader): Clause {
  return visibleInstruments(reader, 'f.instrument_id');
}

/** The instruments whose files a reader may see, by name (what a files filter offers). */
export function readableInstruments(db: Db, reader: Reader): { id: number; name: string }[] {
  const visible = visibleInstruments(reader, 'i.id');
  return db
    .prepare(`SELECT i.id, i.name FROM instruments i WHERE ${visible.sql} ORDER BY i.name, i.id`)
    .all(...visible.args) as { id: number; name: string }[];
}

type Query = Record<string, string | undefined>;

/**
 * The query as one value per parameter: of a parameter given more than once (Fastify hands it
 * over as a list), the last value, as FastAPI reads a scalar query parameter (and Django's
 * QueryDict.get, which the NEMO routes follow: nemo/params.ts lastValue). An unknown parameter,
 * repeated or not, is then never looked at: ignored, as both ignore it.
 */
export function lastValues(query: Record<string, string | string[] | undefined>): Query {
  const last: Query = {};
  for (const [name, value] of Object.entries(query)) {
    last[name] = Array.isArray(value) ? value[value.length - 1] : value;
  }
  return last;
}

/**
 * A whole number of any length, negative ones too (as FastAPI's `int` reads them): a number
 * out of a parameter's range is named for its range (pagingOf), an id below 1 or past any
 * there can be finds nothing. Given empty, it is no number (FastAPI: int_parsing), not left out.
 */
function integerParam(query: Query, name: string, problems: Problem[]): number | undefined {
  const text = query[name];
  if (text === undefined) return undefined;
  const value = wholeNumber(text);
  if (value === null) {
    problems.push(problem(['query', name], 'must be a whole number', 'int_parsing'));
    return undefined;
  }
  return value;
}

/**
 * A date-time filter, read as the NEMO filters read theirs (nemo/datetime.ts): a real calendar
 * date and time, wall-clock time in the server's zone when it carries no offset.
 */
function instantParam(
  query: Query,
  name: string,
  timeZone: string,
  problems: Problem[],
): string | undefined {
  const text = query[name];
  if (text === undefined || text === '') return undefined;
  const dateOnly = DATE_ONLY_RE.exec(text.trim());
  const parsed = parseDateTime(text, timeZone);
  if (parsed === null) {
    problems.push(
      problem(
        ['query', name],
        'must be a real ISO 8601 date or date-time (YYYY-MM-DD[THH:MM[:SS[.fff]]][Z|±HH:MM])',
        'datetime_parsing',
      ),
    );
    return undefined;
  }
  if (dateOnly && name.endsWith('__lte')) {
    // A date alone as an upper bound means the whole of that day, in the server's zone.
    const [, y, m, d] = dateOnly.map(Number) as [number, number, number, number];
    const next = new Date(Date.UTC(y, m - 1, d + 1));
    const nextDay = `${next.toISOString().slice(0, 10)}T00:00`;
    const end = parseDateTime(nextDay, timeZone);
    if (end !== null) return storedIso(end.ms - 1);
  }
  // Stored times have whole milliseconds (parsed.ms is cut to them): ">= 10:00:00.0005" is
  // ">= 10:00:00.001", as the NEMO filters take it; "<= 10:00:00.0005" is "<= 10:00:00.000".
  if (parsed.subMillisecond && name.endsWith('__gte')) return storedIso(parsed.ms + 1);
  return storedIso(parsed.ms);
}

const DATE_ONLY_RE = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;

export interface Paging {
  page: number;
  size: number;
}

export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type Envelope };

export function pagingOf(query: Query, problems: Problem[]): Paging {
  const page = integerParam(query, 'page', problems) ?? 1;
  const size = integerParam(query, 'size', problems) ?? DEFAULT_PAGE_SIZE;
  if (page < 1)
    problems.push(problem(['query', 'page'], 'must be 1 or more', 'greater_than_equal'));
  // The type names the bound that is broken, as FastAPI's Query(ge=1, le=1000) does.
  if (size < 1 || size > MAX_PAGE_SIZE) {
    problems.push(
      problem(
        ['query', 'size'],
        `must be between 1 and ${MAX_PAGE_SIZE}`,
        size < 1 ? 'greater_than_equal' : 'less_than_equal',
      ),
    );
  }
  return { page, size };
}

/**
 * A dotted metadata key as a JSON path with every segment quoted. No quote, backslash or NUL:
 * SQLite's path would end at a NUL and fail the query (a 500), not match.
 */
function jsonPath(key: string): string | null {
  const parts = key.split('.');
  if (parts.some((p) => p === '' || /["\\\0]/.test(p))) return null;
  return `$${parts.map((p) => `."${p}"`).join('')}`;
}

/** A number as JSON writes it (RFC 8259). */
const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

export function fileFilters(query: Query, timeZone: string, problems: Problem[]): Clause[] {
  const clauses: Clause[] = [];
  const instrumentId = integerParam(query, 'instrument_id', problems);
  if (instrumentId !== undefined)
    clauses.push({ sql: 'f.instrument_id = ?', args: [instrumentId] });
  if (query.persistent_id) {
    const ark = parseArk(query.persistent_id);
    if (!ark.ok) problems.push(problem(['query', 'persistent_id'], ark.message, 'ark'));
    else clauses.push({ sql: 'f.persistent_id = ?', args: [ark.ark] });
  }
  if (query.filename) {
    // In either Unicode form ("é" composed, or "e" + U+0301 as a Mac names files): both forms
    // of the name asked for, so the name's index still answers. A name stored half in one
    // form, half in the other, is not found so; no file system writes one.
    const forms = [...new Set([query.filename.normalize('NFC'), query.filename.normalize('NFD')])];
    clauses.push({ sql: `f.filename IN (${forms.map(() => '?').join(', ')})`, args: forms });
  }
  const from = instantParam(query, 'first_discovered_at__gte', timeZone, problems);
  if (from !== undefined) clauses.push({ sql: 'f.first_discovered_at >= ?', args: [from] });
  const to = instantParam(query, 'first_discovered_at__lte', timeZone, problems);
  if (to !== undefined) clauses.push({ sql: 'f.first_discovered_at <= ?', args: [to] });
  const key = query.metadata_key;
  const value = query.metadata_value;
  if (key) {
    const path = jsonPath(key);
    if (path === null) {
      problems.push(
        problem(
          ['query', 'metadata_key'],
          'must be a key or dotted keys (a.b), without quotes, backslashes or NUL',
        ),
      );
    } else if (value === undefined) {
      clauses.push({ sql: 'json_type(f.metadata_, ?) IS NOT NULL', args: [path] });
    } else {
      // The value as the station stored it: text as text, numbers by value, true/false. A
      // number only as JSON writes one: "0x10", " 16 " or "+16" is text, which no number is.
      const number =
        JSON_NUMBER.test(value) && Number.isFinite(Number(value)) ? Number(value) : null;
      // Text compared composed (NFC), but where the value is printable ASCII: nfc() is a call
      // into JavaScript per file, and such a value equals only itself in either form.
      const text = /^[ -~]*$/.test(value)
        ? 'json_extract(f.metadata_, ?)'
        : 'nfc(json_extract(f.metadata_, ?))';
      clauses.push({
        sql: `CASE json_type(f.metadata_, ?)
                WHEN 'text' THEN ${text} = ?
                WHEN 'integer' THEN json_extract(f.metadata_, ?) = ?
                WHEN 'real' THEN json_extract(f.metadata_, ?) = ?
                WHEN 'true' THEN ? = 'true'
                WHEN 'false' THEN ? = 'false'
                ELSE 0 END`,
        args: [path, path, value.normalize('NFC'), path, number, path, number, value, value],
      });
    }
  } else if (value !== undefined && value !== '') {
    problems.push(problem(['query', 'metadata_key'], 'is needed with metadata_value', 'missing'));
  }
  return clauses;
}

function joinClauses(clauses: Clause[]): Clause {
  return {
    sql: clauses.length ? clauses.map((c) => `(${c.sql})`).join(' AND ') : '1',
    args: clauses.flatMap((c) => c.args),
  };
}

export interface FileRow {
  id: number;
  uuid: string;
  instrument_id: number;
  persistent_id: string;
  persistent_id_type: string;
  source_path: string;
  filename: string;
  size: number;
  xxhash: string | null;
  hash_algorithm: string;
  first_discovered_at: string;
  metadata_: string;
}

export const FILE_COLUMNS = `f.id, f.uuid, f.instrument_id, f.persistent_id, f.persistent_id_type,
  f.source_path, f.filename, f.size, f.xxhash, f.hash_algorithm, f.first_discovered_at,
  f.metadata_`;

export function fileJson(row: FileRow): FileOut {
  return { ...row, metadata_: JSON.parse(row.metadata_) as Record<string, unknown> };
}

/**
 * The files `reader` may read that match `query` (the REST filters, as text). `timeZone` is
 * the server's: date-times without an offset are wall-clock time there.
 */
export function listFiles(
  db: Db,
  reader: Reader,
  raw: Record<string, string | string[] | undefined>,
  timeZone: string,
): Envelope<FileOut> {
  // Every problem of the query at once: paging and filters.
  const problems: Problem[] = [];
  const query = lastValues(raw);
  const paging = pagingOf(query, problems);
  const filters = fileFilters(query, timeZone, problems);
  if (problems.length) throw new ValidationProblems(problems);
  const where = joinClauses([visibleFiles(reader), ...filters]);
  return db.transaction(() => {
    const total = db
      .prepare(`SELECT count(*) FROM harvest_files f WHERE ${where.sql}`)
      .pluck()
      .get(...where.args) as number;
    const rows = db
      .prepare(
        `SELECT ${FILE_COLUMNS} FROM harvest_files f WHERE ${where.sql}
         ORDER BY f.id LIMIT ? OFFSET ?`,
      )
      .all(...where.args, paging.size, (paging.page - 1) * paging.size) as FileRow[];
    return { items: rows.map(fileJson), total, ...paging };
  })();
}

export function getFile(db: Db, reader: Reader, id: number): FileOut {
  const visible = visibleFiles(reader);
  const row = db
    .prepare(`SELECT ${FILE_COLUMNS} FROM harvest_files f WHERE f.id = ? AND ${visible.sql}`)
    .get(id, ...visible.args) as FileRow | undefined;
  if (!row) throw new NotFound(`no file with id ${id}`);
  return fileJson(row);
}

interface TransferRow extends Omit<TransferOut, 'checksum_verified'> {
  checksum_verified: number;
}

const TRANSFER_COLUMNS = `t.id, t.uuid, t.file_id, t.status, t.storage_location_id,
  t.destination_path, t.bytes_transferred, t.dest_checksum, t.checksum_verified, t.started_at,
  t.completed_at, t.error, t.note`;

function transferJson(row: TransferRow): TransferOut {
  return { ...row, checksum_verified: row.checksum_verified === 1 };
}

export function listTransfers(
  db: Db,
  reader: Reader,
  raw: Record<string, string | string[] | undefined>,
): Envelope<TransferOut> {
  const problems: Problem[] = [];
  const query = lastValues(raw);
  const paging = pagingOf(query, problems);
  const clauses: Clause[] = [visibleFiles(reader)];
  const fileId = integerParam(query, 'file_id', problems);
  if (fileId !== undefined) clauses.push({ sql: 't.file_id = ?', args: [fileId] });
  if (query.status) {
    if (!(TRANSFER_STATUSES as readonly string[]).includes(query.status)) {
      problems.push(problem(['query', 'status'], 'must be completed, skipped or failed', 'enum'));
    } else clauses.push({ sql: 't.status = ?', args: [query.status] });
  }
  if (problems.length) throw new ValidationProblems(problems);
  const where = joinClauses(clauses);
  const from = 'harvest_transfers t JOIN harvest_files f ON f.id = t.file_id';
  return db.transaction(() => {
    const total = db
      .prepare(`SELECT count(*) FROM ${from} WHERE ${where.sql}`)
      .pluck()
      .get(...where.args) as number;
    const rows = db
      .prepare(
        `SELECT ${TRANSFER_COLUMNS} FROM ${from} WHERE ${where.sql} ORDER BY t.id LIMIT ? OFFSET ?`,
      )
      .all(...where.args, paging.size, (paging.page - 1) * paging.size) as TransferRow[];
    return { items: rows.map(transferJson), total, ...paging };
  })();
}

/**
 * The latest `limit` transfers of a file the reader may see, oldest first, and how many it has
 * in all: a file retried for weeks can have thousands, and its completed one is the newest.
 */
export function latestTransfersOf(
  db: Db,
  reader: Reader,
  fileId: number,
  limit: number,
): { items: TransferOut[]; total: number } {
  const visible = visibleFiles(reader);
  const from = `harvest_transfers t JOIN harvest_files f ON f.id = t.file_id
     WHERE t.file_id = ? AND ${visible.sql}`;
  return db.transaction(() => {
    const total = db
      .prepare(`SELECT count(*) FROM ${from}`)
      .pluck()
      .get(fileId, ...visible.args) as number;
    const rows = db
      .prepare(`SELECT ${TRANSFER_COLUMNS} FROM ${from} ORDER BY t.id DESC LIMIT ?`)
      .all(fileId, ...visible.args, limit) as TransferRow[];
    return { items: rows.reverse().map(transferJson), total };
  })();
}

export function getTransfer(db: Db, reader: Reader, id: number): TransferOut {
  const visible = visibleFiles(reader);
  const row = db
    .prepare(
      `SELECT ${TRANSFER_COLUMNS} FROM harvest_transfers t JOIN harvest_files f ON f.id = t.file_id
       WHERE t.id = ? AND ${visible.sql}`,
    )
    .get(id, ...visible.args) as TransferRow | undefined;
  if (!row) throw new NotFound(`no transfer with id ${id}`);
  return transferJson(row);
}
