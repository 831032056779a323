/**
 * The filters of the harvest API's record lists against the per-instrument rule (spec 002: a
 * regular user sees only files of instruments granted through UserInstrumentAccess, and only
 * transfers of those files): a filter narrows what the reader may see, never widens it, and
 * narrows it to what it names. Two instruments, files and transfers on each, written straight
 * into a real SQLite file; a real fastify instance (app.inject).
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { createApiToken } from '../../electron/core/server/auth.js';
import { createServerApp } from '../../electron/core/server/app.js';
import { createLogger } from '../../electron/core/util/log.js';
import { tempDir } from './helpers.js';

const T0 = '2026-03-01T10:00:00.000Z';
let db: Db;
let app: FastifyInstance;
const tokens = { admin: '', granted: '', staff: '' };

/**
 * Instrument 1 (granted to user 2) holds files 1 and 2; instrument 2 holds file 3. User 3 is
 * staff, with no grant.
 */
function seed(): void {
  const user = db.prepare(
    `INSERT INTO users (id, uuid, username, email, first_name, last_name, role, is_staff,
       is_active, created_at, updated_at) VALUES (?, ?, ?, ?, '', '', ?, 0, 1, ?, ?)`,
  );
  user.run(1, 'u-1', 'admin', 'admin@example.org', 'admin', T0, T0);
  user.run(2, 'u-2', 'granted', 'granted@example.org', 'user', T0, T0);
  user.run(3, 'u-3', 'staff', 'staff@example.org', 'staff', T0, T0);
  db.prepare(
    `INSERT INTO tools (id, uuid, name, category, operational, visible, shutdown, created_at,
       updated_at) VALUES (1, 't-1', 'TEM', '', 1, 1, 0, ?, ?)`,
  ).run(T0, T0);
  const instrument = db.prepare(
    `INSERT INTO instruments (id, uuid, name, tool_id, destination_template, created_at,
       updated_at) VALUES (?, ?, ?, 1, '{filename}', ?, ?)`,
  );
  instrument.run(1, 'i-1', 'camera', T0, T0);
  instrument.run(2, 'i-2', 'detector', T0, T0);
  const file = db.prepare(
    `INSERT INTO harvest_files (id, uuid, instrument_id, persistent_id, watch_path,
       relative_path, source_path, filename, size, mtime_ms, first_discovered_at, updated_at)
     VALUES (?, ?, ?, ?, '/data', ?, ?, ?, 3, 1, ?, ?)`,
  );
  const transfer = db.prepare(
    `INSERT INTO harvest_transfers (id, uuid, file_id, status, started_at, error)
     VALUES (?, ?, ?, 'failed', ?, 'disk full')`,
  );
  for (const [id, instrumentId] of [
    [1, 1],
    [2, 1],
    [3, 2],
  ] as const) {
    const name = `f${id}.tif`;
    file.run(
      id,
      `f-${id}`,
      instrumentId,
      `ark:99999/fk4f${id}`,
      name,
      `/data/${name}`,
      name,
      T0,
      T0,
    );
    transfer.run(id, `x-${id}`, id, T0);
  }
  db.prepare(
    'INSERT INTO user_instrument_access (instrument_id, user_id, granted_at) VALUES (1, 2, ?)',
  ).run(T0);
  tokens.admin = createApiToken(db, 1).token;
  tokens.granted = createApiToken(db, 2).token;
  tokens.staff = createApiToken(db, 3).token;
}

beforeAll(async () => {
  db = openDatabase(join(tempDir('labstation-record-filters-'), 'server.db'));
  db.prepare("INSERT INTO settings (key, value) VALUES ('mode', '\"server\"')").run();
  seed();
  app = await createServerApp({
    db,
    log: createLogger('silent'),
    jwtSecret: 'record-filters-test-secret-0123456789',
    timeZone: () => 'UTC',
  });
  await app.ready();
});

afterAll(async () => {
  await app.close();
  db.close();
});

/** The ids and total of one page of a list, as `who` reads it. */
async function listed(who: keyof typeof tokens, url: string): Promise<[number[], number]> {
  const res = await app.inject({
    method: 'GET',
    url,
    headers: { authorization: `Token ${tokens[who]}` },
  });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json<{ items: { id: number }[]; total: number }>();
  return [body.items.map((item) => item.id), body.total];
}

describe('record filters within the grants', () => {
  it('lists the transfers of one file only where the reader may see the file', async () => {
    expect(await listed('admin', '/api/transfers?file_id=3')).toEqual([[3], 1]);
    expect(await listed('granted', '/api/transfers?file_id=1')).toEqual([[1], 1]);
    // File 3 is on an instrument not granted: its transfers are not there for this user.
    expect(await listed('granted', '/api/transfers?file_id=3')).toEqual([[], 0]);
    expect(await listed('granted', '/api/transfers?file_id=3&status=failed')).toEqual([[], 0]);
  });
});

describe('the instrument filter of the file list', () => {
  it('lists the files of the instrument named, and none of another one', async () => {
    expect(await listed('admin', '/api/files?instrument_id=1')).toEqual([[1, 2], 2]);
    expect(await listed('admin', '/api/files?instrument_id=2')).toEqual([[3], 1]);
    expect(await listed('granted', '/api/files?instrument_id=1')).toEqual([[1, 2], 2]);
    expect(await listed('granted', '/api/files?instrument_id=2')).toEqual([[], 0]);
  });
});

describe('the lists of a reader who is not an admin', () => {
  it('hold only what the grants allow, for staff as for any other user', async () => {
    expect(await listed('admin', '/api/files')).toEqual([[1, 2, 3], 3]);
    expect(await listed('granted', '/api/files')).toEqual([[1, 2], 2]);
    expect(await listed('granted', '/api/transfers')).toEqual([[1, 2], 2]);
    // Staff are not admins: no grant, no records (as their detail reads answer 404).
    expect(await listed('staff', '/api/files')).toEqual([[], 0]);
    expect(await listed('staff', '/api/transfers')).toEqual([[], 0]);
    expect(await listed('staff', '/api/transfers?file_id=1')).toEqual([[], 0]);
  });
});
