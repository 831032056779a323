/**
 * npm run bench:search — "Find a file" (harvest.files search) on a station database holding
 * 1,000,000 file records (BENCH_FILES), with the path index of migration 12 against the scan it
 * replaced (LIKE '%text%' over every record, newest first, as listFiles ran before), in the
 * same invocation on the same database. The records are made at schema version 11, then the
 * database is opened at the latest version: the migration indexes them, and its time is what
 * a station pays once at its upgrade. Then 10,000 new records are made, as the harvest makes
 * them, and indexPaths adds them to the index in bulk, as the harvest does after a walk: what
 * the index costs per new file, beside what making the record costs. Each query runs
 * BENCH_RUNS times (20); the median and the slowest are printed as a markdown table.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Database } from 'better-sqlite3';
import { likeContains, likePrefix } from '../shared/sqlLike.js';
import { migrations } from '../electron/core/db/migrations.js';
import { openDatabase } from '../electron/core/db/open.js';
import { indexPaths, listFiles } from '../electron/core/harvest/views.js';
import { machineLine, markdown, median, positiveInt } from './common.js';

const FILES = positiveInt('BENCH_FILES', 1_000_000);
const RUNS = positiveInt('BENCH_RUNS', 20);
const NOW = '2026-01-05T10:00:00.000Z';

/** A path as instruments write them: runs of grids of frames, a few kinds of file. */
function pathOf(i: number): string {
  const kinds = ['tif', 'emd', 'dm4', 'txt'];
  return `run-${Math.floor(i / 10_000)}/grid-${Math.floor(i / 100) % 100}/frame-${i}.${kinds[i % 4]}`;
}

/** Inserts records `from` to `to` - 1 in one transaction; returns the milliseconds it took. */
function insertRecords(db: Database, from: number, to: number): number {
  const insert = db.prepare(
    `INSERT INTO harvest_files (id, uuid, instrument_id, persistent_id, watch_path, relative_path,
       source_path, filename, size, mtime_ms, first_discovered_at, updated_at, state)
     VALUES (?, ?, 1, ?, '/data', ?, ?, ?, 1000, 1, ?, ?, 'done')`,
  );
  const started = performance.now();
  db.transaction(() => {
    for (let i = from; i < to; i++) {
      const path = pathOf(i);
      const name = path.slice(path.lastIndexOf('/') + 1);
      insert.run(i + 1, `f-${i}`, `ark:99999/fk4b${i}`, path, `/data/${path}`, name, NOW, NOW);
    }
  })();
  return performance.now() - started;
}

function timeRuns(work: () => number): { median: number; max: number; rows: number } {
  let rows = work();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    rows = work();
    times.push(performance.now() - started);
  }
  return { median: median(times), max: Math.max(...times), rows };
}

const ratio = (value: number): string => `${value < 10 ? value.toFixed(1) : value.toFixed(0)}x`;
const ms = (value: number): string => (value < 10 ? value.toFixed(2) : value.toFixed(0));

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'labstation-bench-search-'));
  const file = join(dir, 'labstation.db');
  try {
    const before = openDatabase(file, migrations.slice(0, 11));
    before.exec(`INSERT INTO settings (key, value) VALUES ('mode', '"station"');
      INSERT INTO tools (uuid, name, created_at, updated_at) VALUES ('t', 'SEM', '${NOW}', '${NOW}');
      INSERT INTO instruments (uuid, name, tool_id, destination_template, watch, created_at, updated_at)
        VALUES ('i', 'sem-1', 1, '{relative_path}', '[{"path":"/data"}]', '${NOW}', '${NOW}')`);
    for (let at = 0; at < FILES; at += 100_000) {
      insertRecords(before, at, Math.min(FILES, at + 100_000));
    }
    before.pragma('wal_checkpoint(TRUNCATE)');
    before.close();
    const sizeBefore = statSync(file).size;

    const started = performance.now();
    const db = openDatabase(file);
    const migrationMs = performance.now() - started;
    db.pragma('wal_checkpoint(TRUNCATE)');
    const sizeAfter = statSync(file).size;
    const insertMs = insertRecords(db, FILES, FILES + 10_000);
    // A search before they are indexed reads them as they are (listFiles), then the index.
    const unindexed = timeRuns(() => listFiles(db, { search: 'no-such-run', limit: 100 }).length);
    const indexStarted = performance.now();
    indexPaths(db);
    const indexMs = performance.now() - indexStarted;
    const total = FILES + 10_000;

    const scan = db.prepare(
      `SELECT f.* FROM harvest_files f WHERE f.relative_path LIKE ? ESCAPE '\\'
         AND f.id < ? ORDER BY f.id DESC LIMIT 100`,
    );
    // A whole source path (as a file's details show it), as listFiles read it before it went
    // through the index: that path, or the paths below it, of every record.
    const scanBelow = db.prepare(
      `SELECT f.* FROM harvest_files f WHERE f.watch_path = '/data'
         AND (f.relative_path = ? OR f.relative_path LIKE ? ESCAPE '\\')
         AND f.id < ? ORDER BY f.id DESC LIMIT 100`,
    );
    const cases: { label: string; search: string; beforeId?: number; below?: string }[] = [
      { label: 'one file (a frame number)', search: 'frame-123457' },
      { label: 'no file', search: 'no-such-run' },
      { label: 'a folder of 100 files', search: 'run-42/grid-7/' },
      { label: 'most files (.tif), first page', search: '.tif' },
      { label: 'most files (.tif), page at the middle', search: '.tif', beforeId: total / 2 },
      { label: 'case ignored (RUN-42/GRID-7/)', search: 'RUN-42/GRID-7/' },
      { label: 'two characters (no trigram: scan)', search: 'zz' },
      {
        label: 'a whole source path (one file)',
        search: '/data/run-42/grid-7/frame-420712.tif',
        below: 'run-42/grid-7/frame-420712.tif',
      },
      { label: 'a whole folder path', search: '/data/run-42/grid-7', below: 'run-42/grid-7' },
    ];
    const rows = cases.map(({ label, search, beforeId, below }) => {
      const indexed = timeRuns(() => listFiles(db, { search, beforeId, limit: 100 }).length);
      const before = beforeId ?? Number.MAX_SAFE_INTEGER;
      const scanned = timeRuns(() =>
        below === undefined
          ? scan.all(likeContains(search), before).length
          : scanBelow.all(below, likePrefix(`${below}/`), before).length,
      );
      if (indexed.rows !== scanned.rows) {
        throw new Error(`${label}: ${indexed.rows} files with the index, ${scanned.rows} without`);
      }
      return [
        label,
        String(indexed.rows),
        ms(indexed.median),
        ms(indexed.max),
        ms(scanned.median),
        ms(scanned.max),
        ratio(scanned.median / indexed.median),
      ];
    });
    db.close();

    const lines = [
      machineLine(),
      `${total.toLocaleString('en-US')} file records; medians of ${RUNS} runs, in ms. ` +
        'With the index: listFiles (one page of 100 views). Scan: the LIKE query alone (no views).',
      '',
      markdown(
        ['search', 'files', 'index median', 'index max', 'scan median', 'scan max', 'scan / index'],
        rows,
        [false, true, true, true, true, true, true],
      ),
      '',
      `migration 12 (indexing ${FILES.toLocaleString('en-US')} records): ${(migrationMs / 1000).toFixed(2)} s; ` +
        `database ${(sizeBefore / 2 ** 20).toFixed(0)} MiB before, ${(sizeAfter / 2 ** 20).toFixed(0)} MiB after`,
      `10,000 new records: ${ms(insertMs)} ms to make them (one transaction), ` +
        `${ms(indexMs)} ms to index them (indexPaths: ${((indexMs / 10_000) * 1000).toFixed(1)} µs per record); ` +
        `before that, a search that finds no file took ${ms(unindexed.median)} ms (median; max ${ms(unindexed.max)})`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
