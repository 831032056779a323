/**
 * Another process holding the database's write lock for longer than busy_timeout (a large
 * `labstation import` beside a running station or server): a write refused for it is
 * `unavailable` (503), to try again, not an internal error; the write goes once the lock is
 * given back.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ALICE,
  startServerWithStation,
  stopServerWithStation,
  type ServerWithStation,
} from './serverWithStation.js';
import { loginJwt, serverRequest, startStation, tempDir, type StationProcess } from './helpers.js';

const BUSY = {
  code: 'unavailable',
  message:
    'the database is busy: another Labstation process (an import, say) is writing to it; try ' +
    'again in a few seconds',
};

/** Holds the write lock of the database in `dir` until the returned function is called. */
function holdWriteLock(dir: string): () => void {
  const holder = new Database(join(dir, 'labstation.db'));
  holder.exec('BEGIN IMMEDIATE');
  return () => {
    holder.exec('ROLLBACK');
    holder.close();
  };
}

describe('a write while another process holds the lock', () => {
  let station: StationProcess | undefined;
  let parts: ServerWithStation | undefined;
  afterEach(async () => {
    await station?.stop();
    if (parts) await stopServerWithStation(parts);
    station = undefined;
    parts = undefined;
  });

  // Mutation: toApiError without asAppError: 500 "internal error; see the station log".
  it('is refused by the station as unavailable, and goes after', async () => {
    const dir = tempDir();
    station = await startStation(dir, {}, ['--demo']);
    expect((await station.rpc('session.logon', { login: 'alice', pin: '1234' })).status).toBe(200);
    const release = holdWriteLock(dir);
    let refused;
    try {
      refused = await station.rpc('notebook.create', { kind: 'experiment', title: 'Run 7' });
    } finally {
      release();
    }
    expect(refused).toEqual({ status: 503, body: BUSY });
    const made = await station.rpc('notebook.create', { kind: 'experiment', title: 'Run 7' });
    expect(made.status).toBe(200);
    expect(station.stderr()).not.toMatch(/request failed/);
  }, 30_000);

  // Mutation: the server's error handler without asAppError: 500 "Internal server error.".
  it('is refused by the server as 503 with Retry-After, and goes after', async () => {
    parts = await startServerWithStation('sem-busy', 'user');
    const jwt = await loginJwt(parts.server.url, ALICE);
    const release = holdWriteLock(parts.serverDir);
    let res: Response;
    try {
      res = await fetch(`${parts.server.url}auth/jwt/logout`, {
        method: 'POST',
        headers: { authorization: `Bearer ${jwt}` },
      });
    } finally {
      release();
    }
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toEqual({ detail: BUSY.message, code: 'unavailable' });
    // The login is still good (nothing was written), and its logout goes now.
    expect((await serverRequest(parts.server.url, jwt, 'POST', '/auth/jwt/logout')).status).toBe(
      204,
    );
  }, 30_000);
});
