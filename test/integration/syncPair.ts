/**
 * A server's data dir (filled by `labstation import` of a bundle, with a station key for SEM)
 * and a station that has pulled its facility, both opened in this process on real SQLite files:
 * for tests of the station's push and its answer handling (pushLoop.ts pushRecords,
 * pushAnswer.ts, heldRecords.ts) against the real server ingest (server/sync/ingest.ts), HTTP
 * left out.
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Db } from '../../electron/core/db/open.js';
import { openServerData } from '../../electron/core/server/dataDir.js';
import { facilityDelta, type StationAccount } from '../../electron/core/server/sync/export.js';
import { ingestBatch } from '../../electron/core/server/sync/ingest.js';
import { Station } from '../../electron/core/station/station.js';
import { applyDelta } from '../../electron/core/sync/apply.js';
import type { HeldRecords } from '../../electron/core/sync/heldRecords.js';
import { takePushAnswer, type PushedRow } from '../../electron/core/sync/pushAnswer.js';
import { pushRecords } from '../../electron/core/sync/pushLoop.js';
import { sentMarks } from '../../electron/core/sync/resend.js';
import { createLogger, type Logger } from '../../electron/core/util/log.js';
import { createStationKey, runCli, tempDir, writeJson } from './helpers.js';

export interface SyncPair {
  server: Db;
  account: StationAccount;
  station: Station;
  log: Logger;
  close(): void;
}

/** The server from `bundle` (its tool SEM has the station sem-pc) and its station, synced. */
export async function syncPair(prefix: string, bundle: unknown): Promise<SyncPair> {
  const root = tempDir(prefix);
  const serverDir = join(root, 'server');
  const imported = await runCli(['import', '--data', serverDir, writeJson(root, 'b.json', bundle)]);
  expect(imported.code, imported.stderr).toBe(0);
  await createStationKey(serverDir, 'sem-pc', 'SEM');
  const server = openServerData(serverDir);
  const account = server
    .prepare("SELECT id, uuid, name, tool_id FROM stations WHERE name = 'sem-pc'")
    .get() as StationAccount;
  const log = createLogger('silent');
  const station = Station.open({ dataDir: join(root, 'station'), log });
  applyDelta(station.db, facilityDelta(server, account, 0));
  return {
    server,
    account,
    station,
    log,
    close() {
      station.close();
      server.close();
    },
  };
}

/** Pushes what the outbox offers now, batch after batch, as the push loop does. */
export function pushAll(pair: SyncPair, held: HeldRecords): void {
  const db = pair.station.db;
  for (let round = 0; round < 20; round++) {
    const rows = db
      .prepare(
        `SELECT id, kind, record_uuid, payload, refusals FROM outbox
         WHERE held_until IS NULL ORDER BY id`,
      )
      .all() as PushedRow[];
    // A record refused before goes alone, as in the push loop.
    const refusedAt = rows.findIndex((r) => r.refusals > 0);
    if (refusedAt >= 0) rows.length = Math.max(refusedAt, 1);
    if (!rows.length) return;
    const answer = ingestBatch(pair.server, pair.account, pushRecords(db, rows));
    takePushAnswer(
      answer,
      { rows, sentBefore: sentMarks(db), releasesAtSend: held.releases },
      { db, log: pair.log, held, resendLost: () => undefined },
    );
  }
  throw new Error('the outbox never emptied');
}
