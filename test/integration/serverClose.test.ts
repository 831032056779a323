/**
 * A server that closes (`labstation serve` after a SIGTERM) while a station's long-poll is held
 * on a keep-alive connection, as the station's HTTP agent keeps them: the close answers the
 * pull, ends its connection with the answer, and is done at once. Before, the connection stayed
 * open until its keep-alive timeout (about 70 s) and the close waited for it. The test's own
 * timeout (15 s) is the bound: a close that waited would fail it.
 */
import { Agent, get, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../electron/core/db/open.js';
import { createStationAccount } from '../../electron/core/server/accounts.js';
import { createServerApp } from '../../electron/core/server/app.js';
import type { FacilityDelta } from '../../electron/core/sync/protocol.js';
import { createLogger } from '../../electron/core/util/log.js';
import { tempDir, waitFor } from './helpers.js';

/** GET `url` through `agent`: the answer's status, connection header and parsed body. */
function getJson(
  url: string,
  key: string,
  agent: Agent,
): Promise<{ status: number; connection: string | undefined; body: FacilityDelta }> {
  return new Promise((resolve, reject) => {
    get(url, { agent, headers: { authorization: `Station ${key}` } }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          connection: res.headers.connection,
          body: JSON.parse(Buffer.concat(chunks).toString()) as FacilityDelta,
        }),
      );
    }).on('error', reject);
  });
}

describe('a server closing while a station pull is held', () => {
  it('answers the pull, ends its keep-alive connection and closes at once', async () => {
    const db = openDatabase(join(tempDir('labstation-server-close-'), 'server.db'));
    const agent = new Agent({ keepAlive: true });
    try {
      db.exec(`INSERT INTO settings (key, value) VALUES ('mode', '"server"');
        INSERT INTO tools (id, uuid, name, created_at, updated_at)
          VALUES (1, 't-sem', 'SEM', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z');`);
      const { key } = createStationAccount(db, { name: 'sem-pc', tool: 'SEM' });
      const app = await createServerApp({
        db,
        log: createLogger('silent'),
        jwtSecret: 'server-close-secret-0123456789abcdef',
        timeZone: () => 'UTC',
      });
      await app.listen({ host: '127.0.0.1', port: 0 });
      const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/sync/changes`;

      // A first pull, answered at once: its connection is kept alive for the next.
      const first = await getJson(`${url}?cursor=0`, key, agent);
      expect(first.status).toBe(200);
      expect(first.connection).toBe('keep-alive');
      // A marker of the test's own: the pull, once let in, notes when the station was seen.
      db.prepare('UPDATE stations SET last_seen_at = NULL').run();
      const held = getJson(
        `${url}?cursor=${first.body.cursor}&wait=30&mark=${first.body.cursor_mark}`,
        key,
        agent,
      );
      // Held: let in (on a busy machine that can take a while), and not answered (a change or
      // the close answers it).
      await waitFor('the pull let in', () =>
        db.prepare('SELECT last_seen_at FROM stations').pluck().get() === null ? undefined : true,
      );
      const heldStill = new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), 200));
      expect(await Promise.race([held.then(() => 'answered' as const), heldStill])).toBe('held');

      await app.close();
      const answer = await held;
      expect(answer.status).toBe(200);
      expect(answer.body.cursor).toBe(first.body.cursor);
      expect(answer.connection).toBe('close');
    } finally {
      agent.destroy();
      db.close();
    }
  }, 15_000);
});
