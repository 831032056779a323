import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import type { Db } from '../../db/open.js';
import type { Logger } from '../../util/log.js';
import {
  HISTORY_PAGE,
  MAX_PUSH_BATCH,
  MAX_WAIT_SECONDS,
  STATION_CLOCK_HEADER,
  SYNC_CHANGES_PATH,
  SYNC_HARVEST_HISTORY_PATH,
  SYNC_PUSH_PATH,
  type FacilityDelta,
  type PushRecord,
} from '../../sync/protocol.js';
import type { ApiDocs } from '../openapi/registry.js';
import { describeSyncApi } from './docs.js';
import { changeMark, facilityDelta, latestChange } from './export.js';
import { harvestHistory } from './exportHarvest.js';
import { ingestBatch } from './ingest.js';
import { noteMovesTaken } from './formerRights.js';
import { jsonObject, uuid } from './records.js';
import { registerStationReservationRoutes } from './reservationRoutes.js';
import { refusalNow, stationAuth, stationNow } from './stationAuth.js';

export interface SyncApiDeps {
  db: Db;
  log: Logger;
  /** How often a held long-poll looks for new changes (other processes may write them). */
  pollMs?: number;
  /** Where the routes describe themselves for /openapi.json. */
  docs?: ApiDocs;
}

const pushBody = z.object({
  records: z
    .array(
      z.object({
        id: z.number().int().positive(),
        kind: z.string(),
        uuid: z.string().min(1).max(64),
        payload: jsonObject,
      }),
    )
    .max(MAX_PUSH_BATCH),
});

const changesQuery = z.object({
  cursor: z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .describe('The cursor of the last delta applied; 0 for everything.'),
  wait: z.coerce
    .number()
    .min(0)
    .max(MAX_WAIT_SECONDS)
    .default(0)
    .describe('Seconds to hold the request while nothing is newer than the cursor.'),
  mark: z
    .string()
    .max(64)
    .optional()
    .describe(
      'The cursor_mark that came with the cursor: another change of that number on the ' +
        'server (a restored database) makes the delta full.',
    ),
});

const historyQuery = z.object({
  instrument: uuid.describe('The uuid of an instrument this station runs.'),
  after: z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .describe("The `next` of the page before (the server's id of its last file); 0 to begin."),
});

/** 400 for a query that does not parse: its first problem, under the parameter it names. */
function refuseQuery(reply: FastifyReply, error: z.ZodError): FastifyReply {
  const issue = error.issues[0];
  return reply.code(400).send({ [String(issue?.path[0] ?? 'query')]: [issue?.message] });
}

/**
 * Held long-polls: one timer checks the change log while any is waiting, and wakes those whose
 * cursor is behind, and those whose station would be refused now: a key replaced or a station
 * deleted logs no change, and its pull is answered 401 at once, not when its wait ends.
 * Changes may come from this process or another (`labstation import`).
 */
class ChangeWaiters {
  private readonly waiters = new Set<{
    cursor: number;
    refused: () => string | null;
    wake: () => void;
  }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly pollMs: number,
  ) {}

  wait(
    cursor: number,
    ms: number,
    signal: AbortSignal,
    refused: () => string | null,
  ): Promise<void> {
    return new Promise((resolve) => {
      const waiter = { cursor, refused, wake: () => done() };
      const timeout = setTimeout(() => done(), ms);
      const done = (): void => {
        clearTimeout(timeout);
        signal.removeEventListener('abort', done);
        this.waiters.delete(waiter);
        if (this.waiters.size === 0 && this.timer) {
          clearInterval(this.timer);
          this.timer = undefined;
        }
        resolve();
      };
      signal.addEventListener('abort', done);
      this.waiters.add(waiter);
      this.timer ??= setInterval(() => this.check(), this.pollMs);
    });
  }

  private check(): void {
    const latest = latestChange(this.db);
    for (const waiter of [...this.waiters]) {
      if (latest > waiter.cursor || waiter.refused() !== null) waiter.wake();
    }
  }

  wakeAll(): void {
    for (const waiter of [...this.waiters]) waiter.wake();
  }
}

/** The station's clock as its pull gives it (STATION_CLOCK_HEADER), in one form; null: none. */
function stationClock(request: {
  headers: Record<string, string | string[] | undefined>;
}): string | null {
  const value = request.headers[STATION_CLOCK_HEADER];
  if (typeof value !== 'string' || value.length > 64) return null;
  const at = Date.parse(value);
  return Number.isFinite(at) ? new Date(at).toISOString() : null;
}

/**
 * The sync API stations speak to (see electron/core/sync/protocol.ts): authenticated by the
 * station key, `Authorization: Station <key>`.
 */
export function registerSyncApi(app: FastifyInstance, deps: SyncApiDeps): void {
  const { db, log } = deps;
  const waiters = new ChangeWaiters(db, deps.pollMs ?? 250);
  if (deps.docs) describeSyncApi(deps.docs, { pushBody, changesQuery, historyQuery });
  app.addHook('preClose', (done) => {
    waiters.wakeAll();
    done();
  });

  const authenticate = stationAuth(app, { db, log });
  registerStationReservationRoutes(app, { db, log, ...(deps.docs ? { docs: deps.docs } : {}) });

  // Pushed records are read with JSON.parse itself, in a scope of their own: a station stores
  // notebook fields and sidecar keys named `__proto__` (own keys, as JSON.parse makes them), and
  // Fastify's parser would refuse the whole batch for one. The ingest builds its rows from the
  // fields it knows and passes metadata on as parsed (jsonObject), so no key is assigned.
  void app.register((scope, _options, done) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser(
      'application/json',
      { parseAs: 'string' },
      (_request, body, parsed) => {
        try {
          parsed(null, JSON.parse(String(body)) as unknown);
        } catch (error) {
          parsed(
            Object.assign(new Error(`the body is not valid JSON: ${(error as Error).message}`), {
              statusCode: 400,
            }),
          );
        }
      },
    );
    scope.post(SYNC_PUSH_PATH, { onRequest: authenticate }, (request, reply) => {
      const parsed = pushBody.safeParse(request.body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        return reply
          .code(400)
          .send({ detail: `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}` });
      }
      const records = parsed.data.records as PushRecord[];
      // As it is now, the body read: a key replaced, a station disabled or deleted since the
      // request was let in stores nothing (nothing awaits from here to the batch's commit).
      const now = stationNow(db, request);
      if ('refused' in now) return reply.code(401).send({ detail: now.refused });
      const station = now.station;
      // What it had taken from this data dir before: a station that had more acknowledged
      // sends again what this server lost (restored from a backup; sync/resend.ts).
      const install = station.install;
      const before = install
        ? ((db
            .prepare(
              `SELECT install_acked_through, install_ack_seq FROM stations
               WHERE id = ? AND install_id = ?`,
            )
            .get(station.id, install) as
            | { install_acked_through: number | null; install_ack_seq: number | null }
            | undefined) ?? { install_acked_through: null, install_ack_seq: null })
        : undefined;
      const result = ingestBatch(db, station, records);
      if (result.error) {
        log.warn({ station: station.name, error: result.error }, 'sync push: record refused');
      }
      if (!install || !before) return result;
      let ackSeq = before.install_ack_seq;
      if (result.acked.length) {
        // The highest outbox id taken from the data dir that holds the key (sync/restored.ts),
        // and the number of this push, which moves also when the records it took are older.
        ackSeq = db
          .prepare(
            `UPDATE stations SET install_acked_through = max(coalesce(install_acked_through, 0), ?),
               install_ack_seq = coalesce(install_ack_seq, 0) + 1
             WHERE id = ? AND install_id = ? RETURNING install_ack_seq`,
          )
          .pluck()
          .get(Math.max(...result.acked), station.id, install) as number | null;
      }
      return {
        ...result,
        acked_before: before.install_acked_through,
        ack_seq_before: before.install_ack_seq,
        ack_seq: ackSeq ?? null,
      };
    });
    done();
  });

  app.get(SYNC_CHANGES_PATH, { onRequest: authenticate }, async (request, reply) => {
    const parsed = changesQuery.safeParse(request.query);
    if (!parsed.success) return refuseQuery(reply, parsed.error);
    const { cursor, wait, mark } = parsed.data;
    const current = mark === undefined || mark === changeMark(db, cursor);
    if (wait > 0 && cursor > 0 && current && latestChange(db) === cursor) {
      const aborted = new AbortController();
      reply.raw.once('close', () => aborted.abort());
      await waiters.wait(cursor, wait * 1000, aborted.signal, refusalNow(db, request));
      if (aborted.signal.aborted && reply.raw.destroyed) return reply;
    }
    // Re-read the station: its tool may have changed while the request waited, and its key
    // been replaced, or the station disabled or deleted: that is answered as it would be now.
    const now = stationNow(db, request);
    if ('refused' in now) return reply.code(401).send({ detail: now.refused });
    // Its cursor says what it applied: the moves off a tool or instrument among them end the
    // rights they left it (formerRights.ts), as of the station's clock when it asked.
    noteMovesTaken(
      db,
      now.station,
      cursor,
      mark,
      stationClock(request) ?? new Date().toISOString(),
    );
    const held = db
      .prepare(
        'SELECT install_id, install_acked_through, install_ack_seq FROM stations WHERE id = ?',
      )
      .get(now.station.id) as {
      install_id: string | null;
      install_acked_through: number | null;
      install_ack_seq: number | null;
    };
    const delta: FacilityDelta = facilityDelta(db, now.station, cursor, mark);
    const install = request.station!.install;
    if (install && install === held.install_id) {
      if (held.install_acked_through !== null) {
        delta.acked_through = held.install_acked_through;
        // Null beside it: a count from before the pushes were numbered (sync/resend.ts).
        delta.ack_seq = held.install_ack_seq;
      }
    }
    return delta;
  });

  app.get(SYNC_HARVEST_HISTORY_PATH, { onRequest: authenticate }, (request, reply) => {
    const parsed = historyQuery.safeParse(request.query);
    if (!parsed.success) return refuseQuery(reply, parsed.error);
    const { instrument, after } = parsed.data;
    const page = harvestHistory(db, request.station!.id, instrument, after, HISTORY_PAGE);
    if (page === null) {
      return reply
        .code(403)
        .send({ detail: `instrument ${instrument}: this station does not run that instrument` });
    }
    return page;
  });
}
