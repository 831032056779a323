/**
 * Which found files the intake (intake.ts) makes candidates: not one recorded with the same
 * size, mtime and path, still there; and with which usage: the one on the tool when the file
 * was first seen, or, for a file written before the harvest started, when it was written; and
 * under which of overlapping watched folders: the deepest that takes it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../../electron/core/db/open.js';
import { openDatabase } from '../../../electron/core/db/open.js';
import type { Instrument, WatchFolder } from '../../../electron/core/harvest/config.js';
import { folderFilter, type FoundFile } from '../../../electron/core/harvest/discover.js';
import { Intake, type IntakeHost } from '../../../electron/core/harvest/intake.js';
import type { StabilityChecks } from '../../../electron/core/harvest/stability.js';
import type { TransferQueue } from '../../../electron/core/harvest/transferQueue.js';
import type { Logger } from '../../../electron/core/util/log.js';

const folder: WatchFolder = { path: '/watched', include: [], exclude: [] };
const instrument = { id: 1, tool_id: 1, name: 'sem-1', watch: [folder] } as Instrument;
const NOW = Date.parse('2026-02-01T12:00:00.000Z');

let db: Db;
beforeEach(() => {
  db = openDatabase(':memory:');
});
afterEach(() => db.close());

interface Added {
  path: string;
  usage: number | null;
  folder: string;
  relativePath: string;
}

/** An intake whose stability check notes what it is given; nothing is a candidate yet. */
function intake(): { intake: Intake; added: Added[] } {
  const added: Added[] = [];
  const stability = {
    update: () => false,
    add: (...args: unknown[]) =>
      added.push({
        path: args[3] as string,
        usage: args[8] as number | null,
        folder: (args[2] as WatchFolder).path,
        relativePath: args[4] as string,
      }),
  } as unknown as StabilityChecks;
  const transfers = { reads: () => false } as unknown as TransferQueue;
  const host = { filterOf: (f: WatchFolder) => folderFilter(f) } as unknown as IntakeHost;
  const made = new Intake(db, {} as Logger, () => NOW, stability, transfers, host);
  return { intake: made, added };
}

function found(name: string, size: number, mtimeMs: number): FoundFile {
  return { absolutePath: `/watched/${name}`, relativePath: name, size, mtimeMs };
}

describe('Intake.take', () => {
  it('passes over a file recorded with the same size and mtime, and takes any other', () => {
    const records = new Map([
      ['/watched/same.dat', { size: 4, mtime_ms: 1000, state: 'done' }],
      ['/watched/grown.dat', { size: 4, mtime_ms: 1000, state: 'done' }],
      ['/watched/touched.dat', { size: 4, mtime_ms: 1000, state: 'done' }],
      ['/watched/back.dat', { size: 4, mtime_ms: 1000, state: 'gone' }],
    ]);
    const { intake: taking, added } = intake();
    taking.take(
      instrument,
      folder,
      [
        found('same.dat', 4, 1000),
        found('grown.dat', 5, 1000),
        found('touched.dat', 4, 2000),
        found('back.dat', 4, 1000),
        found('new.dat', 4, 1000),
      ],
      records,
    );
    expect(added.map((a) => a.path)).toEqual([
      '/watched/grown.dat',
      '/watched/touched.dat',
      '/watched/back.dat',
      '/watched/new.dat',
    ]);
  });

  it('gives a file the usage of its first sighting, or of its writing when written before the start', () => {
    const at = '2026-01-01T00:00:00.000Z';
    db.exec(`
      INSERT INTO users (id, uuid, username, created_at, updated_at) VALUES (1, 'u-1', 'ada', '${at}', '${at}');
      INSERT INTO projects (id, uuid, name, created_at, updated_at) VALUES (1, 'p-1', 'P', '${at}', '${at}');
      INSERT INTO tools (id, uuid, name, created_at, updated_at) VALUES (1, 't-1', 'SEM', '${at}', '${at}');
      INSERT INTO usage_events (id, uuid, user_id, operator_id, project_id, tool_id, start, "end", updated_at)
        VALUES (3, 'e-3', 1, 1, 1, 1, '2026-01-10T00:00:00.000Z', '2026-01-11T00:00:00.000Z', '${at}');
      INSERT INTO usage_events (id, uuid, user_id, operator_id, project_id, tool_id, start, updated_at)
        VALUES (4, 'e-4', 1, 1, 1, 1, '2026-02-01T11:00:00.000Z', '${at}');
    `);
    const { intake: taking, added } = intake();
    taking.startedAt = NOW - 60_000;
    const during = Date.parse('2026-01-10T12:00:00.000Z');
    taking.take(
      instrument,
      folder,
      [found('old.dat', 1, during), found('fresh.dat', 1, NOW - 1000)],
      new Map(),
    );
    expect(added.map(({ path, usage }) => ({ path, usage }))).toEqual([
      { path: '/watched/old.dat', usage: 3 },
      { path: '/watched/fresh.dat', usage: 4 },
    ]);
    // After the first walk: a file copied in with its old mtime came in now; one given back by
    // its copy, recorded before the start, was written when its mtime says (mutation: both now).
    taking.walkedSinceStart.add(instrument.id);
    taking.consider(instrument, folder, '/watched/copied-in.dat', 1, during);
    const before = new Date(NOW - 120_000).toISOString();
    taking.consider(instrument, folder, '/watched/given-back.dat', 1, during, undefined, before);
    expect(added.slice(2).map(({ path, usage }) => ({ path, usage }))).toEqual([
      { path: '/watched/copied-in.dat', usage: 4 },
      { path: '/watched/given-back.dat', usage: 3 },
    ]);
  });

  // Mutation: Intake.consider taking a file for whichever folder reports it.
  it('files a file of two overlapping folders under the deepest that takes it, whoever reports it', () => {
    const outer: WatchFolder = { path: '/data', include: [], exclude: [] };
    const inner: WatchFolder = { path: '/data/eds', include: ['*.emd'], exclude: [] };
    const innermost: WatchFolder = { path: '/data/eds/maps', include: ['*.emd'], exclude: ['old'] };
    const three: Instrument = { ...instrument, watch: [outer, inner, innermost] };
    const { intake: taking, added } = intake();
    taking.consider(three, outer, '/data/eds/run-7/a.emd', 1, NOW - 1000);
    taking.consider(three, outer, '/data/eds/run-7/b.tif', 1, NOW - 1000);
    taking.consider(three, outer, '/data/eds/maps/c.emd', 1, NOW - 1000);
    taking.consider(three, inner, '/data/eds/maps/d.emd', 1, NOW - 1000);
    taking.consider(three, outer, '/data/eds/maps/old/e.emd', 1, NOW - 1000);
    expect(added.map(({ path, folder, relativePath }) => [path, folder, relativePath])).toEqual([
      ['/data/eds/run-7/a.emd', '/data/eds', 'run-7/a.emd'],
      ['/data/eds/run-7/b.tif', '/data', 'eds/run-7/b.tif'],
      ['/data/eds/maps/c.emd', '/data/eds/maps', 'c.emd'],
      ['/data/eds/maps/d.emd', '/data/eds/maps', 'd.emd'],
      // In a folder the innermost skips: the one above takes it.
      ['/data/eds/maps/old/e.emd', '/data/eds', 'maps/old/e.emd'],
    ]);
  });
});
