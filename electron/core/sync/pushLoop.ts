/**
 * The push loop: the outbox goes to the server (POST /sync/push) in id order, in batches, a
 * record the server refused alone; what the answer does to the outbox is pushAnswer.ts. It runs
 * when nudged (an outbox write, a pull that changed something) or on a tick, one push at a time,
 * and retries with its own backoff while the server is away, beside the pull loop.
 */
import axios, { type AxiosInstance } from 'axios';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { failpoint } from '../util/failpoint.js';
import { nowIso } from '../util/ids.js';
import type { Logger } from '../util/log.js';
import { pushResultSchema } from './answerSchema.js';
import type { Backoff } from './backoff.js';
import { HOLD_CAP_MS, type HeldRecords } from './heldRecords.js';
import { pushedPayload } from './entryChain.js';
import { BAD_IDENTITY } from './identity.js';
import type { LinkStatus } from './linkStatus.js';
import { parseAnswer } from './parseAnswer.js';
import { PUSH_KINDS_SQL, SYNC_PUSH_PATH, type PushRecord } from './protocol.js';
import { takePushAnswer, type PushedRow, type ServerCounts } from './pushAnswer.js';
import { sentMarks, type SentMarks } from './resend.js';
import { describeFailure } from './serverFailure.js';

/**
 * The next rows to push, oldest first. `+kind`: read in id order, never through the index on
 * kind and record_uuid (migration 50), which would read and sort every waiting row, 330 ms for
 * each batch of an outbox of 600,000 rows.
 */
export const PUSH_BATCH_SQL = `SELECT id, kind, record_uuid, payload, refusals FROM outbox
  WHERE +kind IN (${PUSH_KINDS_SQL})
    AND (held_until IS NULL OR held_until <= ? OR held_until > ?)
  ORDER BY id LIMIT ?`;

/**
 * Answers to a whole push that no resend of the same batch can change: the batch holds a record
 * the server cannot take.
 */
const BATCH_REFUSED = new Set([400, 413, 415, 422]);

/** Payload bytes (UTF-8) per push request, well under the server's 8 MiB body limit. */
const PUSH_BATCH_BYTES = 4 * 1024 * 1024;

export class PushLoop {
  private pushing: Promise<void> | null = null;
  private pushAgain = false;
  private timer: NodeJS.Timeout | undefined;
  /**
   * After the server refused a whole batch (a body it cannot parse, one too large), records up
   * to this outbox id go one at a time, so the one it cannot take is found and set aside.
   */
  private probeThrough: number | null = null;

  constructor(
    private readonly deps: {
      db: Db;
      log: Logger;
      http: AxiosInstance;
      signal: AbortSignal;
      link: LinkStatus;
      held: HeldRecords;
      backoff: Backoff;
      batchSize: number;
      /** Push check when nothing nudged it (ms). */
      tickMs: number;
      /** The client was stopped: nothing more is sent or scheduled. */
      stopped: () => boolean;
      /** The server's counts are below what it had acknowledged: what it lost goes again. */
      resendLost: (server: ServerCounts, sentBefore: SentMarks) => void;
      /** A transfer refused for lacking its upload on the server (pushAnswer.ts). */
      uploadLost: (transferUuid: string) => void;
    },
  ) {}

  /** The push under way, for a stop to wait for; null when none is. */
  get running(): Promise<void> | null {
    return this.pushing;
  }

  /** Pushes soon: called after each outbox write (through the station's events) and on a tick. */
  nudge(): void {
    if (this.deps.stopped()) return;
    if (this.pushing) {
      this.pushAgain = true;
      return;
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pushing = this.pushAll().finally(() => {
      this.pushing = null;
      if (this.pushAgain && !this.deps.stopped()) {
        this.pushAgain = false;
        this.nudge();
      }
    });
  }

  /** No push is scheduled any more (the client is stopping). */
  cancelTimer(): void {
    clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (this.deps.stopped()) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.nudge(), ms);
    this.timer.unref();
  }

  private async pushAll(): Promise<void> {
    const { db, log, link, held, backoff, stopped } = this.deps;
    try {
      for (;;) {
        if (stopped()) return;
        const rows = cachedStatement(db, PUSH_BATCH_SQL).all(
          nowIso(),
          // A hold ending further off than the longest hold was set while this station's clock
          // was ahead (it says so: clockSkewSeconds), and is over.
          nowIso(() => Date.now() + HOLD_CAP_MS),
          this.probeThrough === null ? this.deps.batchSize : 1,
        ) as PushedRow[];
        if (this.probeThrough !== null && (rows.length === 0 || rows[0].id > this.probeThrough)) {
          this.probeThrough = null;
          continue;
        }
        // A record refused before goes alone: the server likely refuses it again, and a batch
        // behind it would be sent only to be sent once more.
        const refusedAt = rows.findIndex((r) => r.refusals > 0);
        if (refusedAt >= 0) rows.length = Math.max(refusedAt, 1);
        const releasesAtSend = held.releases;
        if (rows.length === 0) {
          link.pushError = null;
          backoff.reset();
          this.schedule(this.deps.tickMs);
          return;
        }
        // A batch also stops at 4 MiB of payload (the server takes 8 MiB per request), counted
        // in bytes as sent (text beyond ASCII takes two to four); the first record always goes,
        // and no record can be larger (notebook entries: MAX_PUSHED_ENTRY_BYTES).
        let bytes = 0;
        const fits = rows.findIndex((r, i) => {
          bytes += Buffer.byteLength(r.payload);
          return i > 0 && bytes > PUSH_BATCH_BYTES;
        });
        if (fits > 0) rows.length = fits;
        const records = pushRecords(db, rows);
        // What the server had acknowledged before this batch: its count cannot be lower,
        // unless it has lost records since (resend.ts).
        const sentBefore = sentMarks(db);
        let answer: unknown;
        try {
          ({ data: answer } = await this.deps.http.post<unknown>(
            SYNC_PUSH_PATH,
            { records },
            { signal: this.deps.signal },
          ));
        } catch (error) {
          const status = axios.isAxiosError(error) ? error.response?.status : undefined;
          // A 400 of the station's identity headers is not the batch's fault: nothing is set aside.
          const identity =
            axios.isAxiosError(error) &&
            (error.response?.data as { code?: unknown } | undefined)?.code === BAD_IDENTITY;
          if (stopped() || status === undefined || !BATCH_REFUSED.has(status) || identity) {
            throw error;
          }
          link.succeeded();
          // The server cannot take this batch as it is, and never will: find the record.
          if (rows.length > 1) this.probeThrough = rows[rows.length - 1].id;
          else {
            const reason = describeFailure(error).message;
            held.holdRecord(rows[0], { code: `http_${status}`, reason }, releasesAtSend);
          }
          continue;
        }
        if (stopped()) return;
        // Checked whole before any row is deleted: an answer that does not parse fails the push
        // (backoff, pushError naming the field), and the batch goes again; the server takes a
        // record sent twice as once.
        const data = parseAnswer(pushResultSchema, answer, 'push answer', 'no outbox row deleted');
        link.succeeded();
        failpoint('sync.push.before-ack');
        const outcome = takePushAnswer(
          data,
          { rows, sentBefore, releasesAtSend },
          { db, log, held, resendLost: this.deps.resendLost, uploadLost: this.deps.uploadLost },
        );
        if (outcome.kind === 'held') continue;
        if (outcome.kind === 'failed') {
          link.pushError = outcome.error;
          this.schedule(backoff.fail());
          return;
        }
        link.pushError = null;
        backoff.reset();
      }
    } catch (error) {
      if (stopped()) return;
      link.warnUnreadable(error, link.pushError);
      link.failed('push', error);
      const delay = backoff.fail();
      log.debug({ err: describeFailure(error).message, retryInMs: delay }, 'sync: push failed');
      this.schedule(delay);
    }
  }
}

/** The outbox rows as a push sends them (a notebook entry's as made from what the server may hold). */
export function pushRecords(db: Db, rows: PushedRow[]): PushRecord[] {
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    uuid: r.record_uuid,
    payload: pushedPayload(db, r),
  }));
}
