import axios, { type AxiosInstance } from 'axios';
import type { z } from 'zod';
import type { CoreEvent } from '../../../shared/api.js';
import type { UploadAgainResult } from '../harvest/uploadAgain.js';
import type { Station } from '../station/station.js';
import { stationHeaders } from './identity.js';
import { cachedStatement } from '../db/statements.js';
import { AppError } from '../util/errors.js';
import { injected } from '../util/failpoint.js';
import { adoptAnswers, adoptResolutions, adoptValidations } from './adoptAnswers.js';
import { applyDelta, syncCursor, syncCursorMark } from './apply.js';
import { Backoff } from './backoff.js';
import { ClockSkew } from './clockSkew.js';
import { parseFacilityDelta } from './deltaSchema.js';
import { HeldRecords, HOLD_MS } from './heldRecords.js';
import { HistoryFetch } from './historyFetch.js';
import { getSetting, setSetting } from '../station/settings.js';
import { LinkStatus } from './linkStatus.js';
import { PushLoop } from './pushLoop.js';
import { requestServer } from './request.js';
import { noteRestored } from './restored.js';
import type { ServerCounts } from './pushAnswer.js';
import { resendLost, resendLostPushes, sentMarks, type SentMarks } from './resend.js';
import { pause } from '../util/pause.js';
import { describeFailure } from './serverFailure.js';
import { PUSH_KINDS_SQL, STATION_CLOCK_HEADER, SYNC_CHANGES_PATH } from './protocol.js';

export interface SyncState {
  /** The last exchange with the server succeeded. */
  online: boolean;
  lastSyncAt: string | null;
  /** Outbox rows not yet acknowledged by the server. */
  waiting: number;
  /** Among `waiting`: records the server refused at their last try, set aside (holdRecord). */
  refused: number;
  /** Why the oldest of them was refused, naming the people, projects and tools it means. */
  refusedReason: string | null;
  lastError: string | null;
  /** The server's reason for refusing this station's key (LinkStatus.keyRefused). */
  keyRefused: string | null;
  /** This station's clock minus the server's (s), from its last answer; null before one. */
  clockSkewSeconds: number | null;
}

export interface SyncClientOptions {
  station: Station;
  /** The server's base URL, e.g. http://server:8080/ */
  server: string;
  key: string;
  batchSize?: number;
  /** Push check when nothing nudged it (ms). */
  tickMs?: number;
  /** How long the server may hold a pull (s). */
  waitSeconds?: number;
  backoffBaseMs?: number;
  backoffCapMs?: number;
  /** How long a record the server refused is set aside before it is offered again (ms). */
  holdMs?: number;
}

/**
 * What waits to be pushed, and what the server refused (the first refusal's reason shown):
 * counted through the outbox's indexes of migration 50 (kind and record_uuid; refused rows
 * only), not by reading the rows, for the status asked every 5 s while the UI is open.
 */
export const WAITING_COUNT_SQL = `SELECT count(*) FROM outbox WHERE kind IN (${PUSH_KINDS_SQL})`;
export const REFUSED_COUNT_SQL = `SELECT count(*) AS count, (SELECT refusal FROM outbox
    WHERE refusal IS NOT NULL ORDER BY id LIMIT 1) AS reason
  FROM outbox WHERE refusal IS NOT NULL`;

/**
 * The station's side of sync: pushes the outbox in id order (deleting exactly the rows the
 * server acknowledged, only after its answer), and keeps a long-poll open for config changes.
 * Both retry with exponential backoff while the server is unreachable; the station keeps
 * working on its own database meanwhile.
 */
export class SyncClient {
  private readonly http: AxiosInstance;
  private readonly abort = new AbortController();
  private readonly pullBackoff: Backoff;
  private readonly waitSeconds: number;
  private stopped = false;
  private pullLoop: Promise<void> | null = null;
  private readonly link: LinkStatus;
  private readonly clock: ClockSkew;
  /** The records the server refused, set aside. */
  private readonly held: HeldRecords;
  private readonly push: PushLoop;
  /** Instruments' history pages, fetched beside the pull loop. */
  private readonly history: HistoryFetch;
  private waitingCache = 0;
  private refusedCache: { count: number; reason: string | null } = { count: 0, reason: null };
  private pulledOnce = false;
  private readonly pulledListeners = new Set<() => void>();
  private readonly onEvent = (event: CoreEvent): void => {
    if (
      event.type === 'usage.changed' ||
      event.type === 'tool.changed' ||
      event.type === 'notebook.changed'
    ) {
      this.nudge();
    }
  };

  constructor(private readonly options: SyncClientOptions) {
    const db = options.station.db;
    this.link = new LinkStatus(options.station.log, {
      load: () => getSetting(db, 'sync.lastSyncAt'),
      save: (at) => setSetting(db, 'sync.lastSyncAt', at),
    });
    this.clock = new ClockSkew(options.station.log);
    const base = options.server.endsWith('/') ? options.server.slice(0, -1) : options.server;
    this.http = axios.create({
      baseURL: base,
      headers: stationHeaders(options.station.db, options.key),
      timeout: 20_000,
      // Redirects would carry the key elsewhere.
      maxRedirects: 0,
    });
    this.http.interceptors.response.use(
      (response) => {
        this.clock.note(response.headers.date);
        return response;
      },
      (error: unknown) => {
        if (axios.isAxiosError(error)) this.clock.note(error.response?.headers.date);
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
    // The first hold may be shortened from the environment too (tests).
    this.held = new HeldRecords(
      options.station.db,
      options.station.log,
      options.holdMs ?? (Number(process.env.LABSTATION_SYNC_HOLD_MS) || HOLD_MS),
    );
    this.waitSeconds = options.waitSeconds ?? 25;
    // The cap may be lowered from the environment (tests, or a site that wants faster retries).
    const cap =
      options.backoffCapMs ?? (Number(process.env.LABSTATION_SYNC_BACKOFF_CAP_MS) || 30_000);
    this.push = new PushLoop({
      db: options.station.db,
      log: options.station.log,
      http: this.http,
      signal: this.abort.signal,
      link: this.link,
      held: this.held,
      backoff: new Backoff(options.backoffBaseMs ?? 500, cap),
      batchSize: options.batchSize ?? 100,
      tickMs: options.tickMs ?? 5_000,
      stopped: () => this.stopped,
      resendLost: (server, sentBefore) => this.resendLost(server, sentBefore),
      uploadLost: (transferUuid) => this.uploadAgain(transferUuid),
    });
    this.pullBackoff = new Backoff(options.backoffBaseMs ?? 500, cap);
    this.history = new HistoryFetch(
      options.station,
      this.http,
      this.abort.signal,
      () => this.stopped,
    );
  }

  /**
   * The server refused a transfer completed into one of its `server` storage locations for
   * lacking its upload: the harvest uploads the file again, as the record says, and the record,
   * set aside meanwhile, goes again at once when that is done. When it cannot be (the source
   * gone or changed, the harvest not running), the record is offered again after its hold, and
   * refused so again, until it can.
   */
  private uploadAgain(transferUuid: string): void {
    const log = this.options.station.log;
    void this.options.station
      .uploadAgain(transferUuid)
      .catch((error: unknown): UploadAgainResult => ({
        ok: false,
        reason: error instanceof Error ? error.message : String(error),
      }))
      .then((result) => {
        if (this.stopped) return;
        if (!result.ok) {
          // The upload under way releases the record when it is done.
          if (result.busy) return;
          log.warn(
            { transfer: transferUuid, reason: result.reason },
            'sync: the server holds no upload of a file this station transferred to it ' +
              '(restored from a backup?), and the file could not be sent again now; its transfer ' +
              'is offered again later',
          );
          return;
        }
        log.warn(
          { transfer: transferUuid },
          'sync: the server held no upload of a file this station transferred to it (restored ' +
            'from a backup?); the file was sent again, and its transfer goes again',
        );
        this.held.releaseRecord('harvest_transfer', transferUuid);
        this.nudge();
      });
  }

  private get db(): Station['db'] {
    return this.options.station.db;
  }

  private get log(): Station['log'] {
    return this.options.station.log;
  }

  start(): void {
    // A new start of the link offers the records set aside again (the server may take them).
    this.held.releaseHeld();
    this.options.station.events.on('event', this.onEvent);
    this.pullLoop = this.runPullLoop();
    this.nudge();
  }

  get state(): SyncState {
    if (!this.stopped) {
      this.waitingCache = cachedStatement(this.db, WAITING_COUNT_SQL).pluck().get() as number;
      const refused = cachedStatement(this.db, REFUSED_COUNT_SQL).get() as {
        count: number;
        reason: string | null;
      };
      this.refusedCache = refused;
    }
    const refused = this.refusedCache;
    return {
      online: this.link.online,
      lastSyncAt: this.link.lastSyncAt,
      waiting: this.waitingCache,
      refused: refused.count,
      refusedReason: refused.reason,
      clockSkewSeconds: this.clock.seconds,
      keyRefused: this.link.keyRefused,
      lastError:
        this.link.pushError ??
        this.link.pullError ??
        this.history.error ??
        (refused.count === 0
          ? null
          : `${refused.count} ${refused.count === 1 ? 'record' : 'records'} refused by the ` +
            'server (set aside, offered again later; the rest still goes)'),
    };
  }

  /** Resolves once a pull succeeded; rejects after `timeoutMs` without one. */
  firstPull(timeoutMs: number): Promise<void> {
    if (this.pulledOnce) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pulledListeners.delete(done);
        reject(
          new AppError(
            'bad_request',
            `this station has no tool yet and could not get its facility from ${this.options.server}: ` +
              `${this.link.pullError ?? 'no answer'}`,
          ),
        );
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      this.pulledListeners.add(done);
    });
  }

  /**
   * A request of the station UI that only the server can answer (booking): the server's own
   * error (code, message, details) is rethrown as such; no answer at all is `unavailable`, and
   * so is an answer that does not fit `schema` (nothing of it reaches the caller).
   */
  async request<T>(
    method: 'GET' | 'POST',
    path: string,
    options: { params?: Record<string, string>; body?: unknown; schema: z.ZodType<T> },
  ): Promise<T> {
    if (this.stopped) throw new AppError('unavailable', 'the server link is being restarted');
    return requestServer(
      {
        http: this.http,
        signal: this.abort.signal,
        log: this.log,
        offline: () => {
          this.link.online = false;
        },
        succeeded: () => this.link.succeeded(),
      },
      method,
      path,
      options,
    );
  }

  /** Pushes soon: called after each outbox write (through the station's events) and on a tick. */
  nudge(): void {
    this.push.nudge();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.waitingCache = this.state.waiting; // kept for readers after the database closes
    this.stopped = true;
    this.options.station.events.off('event', this.onEvent);
    this.push.cancelTimer();
    this.abort.abort();
    await Promise.allSettled([this.push.running, this.pullLoop, this.history.running]);
    this.link.keep();
  }

  /** The server's counts are below what it had acknowledged: what it lost is queued again. */
  private resendLost(server: ServerCounts, sentBefore: SentMarks): void {
    const byId =
      server.through === undefined ? 0 : resendLost(this.db, server.through, sentBefore.through);
    const byPush =
      server.seq === undefined ? 0 : resendLostPushes(this.db, server.seq, sentBefore.seq);
    const resent = byId + byPush;
    if (resent === 0) return;
    this.log.warn(
      { ackedThrough: server.through, ackSeq: server.seq, sentBefore, records: resent },
      'sync: the server no longer has records it took from this station (restored from a ' +
        'backup?): they are sent again',
    );
    this.nudge();
  }

  private async runPullLoop(): Promise<void> {
    // The first pull answers at once, so the station knows soon whether it is online.
    let first = true;
    while (!this.stopped) {
      try {
        const cursor = syncCursor(this.db);
        const mark = cursor > 0 ? syncCursorMark(this.db) : undefined;
        // After a failed pull, the next answers at once: a held one would leave the station
        // showing "offline" for up to its wait after the server is back.
        const wait = cursor > 0 && !first && this.link.pullError === null ? this.waitSeconds : 0;
        // Tests: the first pull comes after the first push.
        if (first && injected('sync.late-first-pull')) {
          await new Promise((resolve) => setTimeout(resolve, 2000));
        }
        // What the server had acknowledged before this pull was sent: its answer cannot be
        // lower, unless it has lost records since (resend.ts).
        const sentBefore = sentMarks(this.db);
        const answer = await this.http.get<unknown>(SYNC_CHANGES_PATH, {
          params: { cursor, wait, ...(mark === undefined ? {} : { mark }) },
          headers: { [STATION_CLOCK_HEADER]: new Date().toISOString() },
          timeout: (wait + 15) * 1000,
          signal: this.abort.signal,
        });
        if (this.stopped) return;
        first = false;
        // Checked whole before anything is applied: an answer that does not parse fails the
        // pull (backoff, lastError naming the field), the cursor stays, nothing is stored.
        const data = parseFacilityDelta(answer.data);
        const wasOnline = this.link.online;
        const summary = applyDelta(this.db, data);
        const restored =
          typeof data.acked_through === 'number' ? noteRestored(this.db, data.acked_through) : null;
        if (restored !== null) {
          this.log.warn(
            { ackedThrough: data.acked_through, instruments: restored },
            'sync: this data dir is older than what the server took from it (restored from a ' +
              'backup?): its instruments wait for their file records from the server, so that ' +
              'files harvested since keep their ARKs',
          );
        }
        if (typeof data.acked_through === 'number') {
          // A null number beside the count: none of the numbered pushes is there (resend.ts).
          const seq = data.ack_seq === null ? 0 : data.ack_seq;
          this.resendLost({ through: data.acked_through, seq }, sentBefore);
        }
        this.link.succeeded();
        this.link.pullError = null;
        this.pullBackoff.reset();
        if (!this.pulledOnce) {
          this.pulledOnce = true;
          for (const listener of [...this.pulledListeners]) listener();
          this.pulledListeners.clear();
        }
        if (summary.reservationsChanged)
          this.options.station.emit({ type: 'reservations.changed' });
        if (summary.changed) {
          this.log.info({ cursor: summary.cursor }, 'sync: facility updated from the server');
          // A person or project the server lacked may be there now.
          this.held.releaseHeld('unknown_reference');
          this.nudge();
          const tool = summary.tool ?? this.options.station.stationTool;
          if (tool !== null) this.options.station.emit({ type: 'tool.changed', tool });
        }
        if (summary.usagesEnded.length) {
          this.log.warn(
            { usages: summary.usagesEnded },
            'sync: this station was moved to another tool; the usage in progress on the one it ' +
              'left was ended, its post-usage answers pending',
          );
          for (const usage of summary.usagesEnded) {
            this.options.station.emit({ type: 'usage.changed', usage });
          }
          this.nudge();
        }
        if (summary.harvestSkipped.length) {
          this.log.warn(
            { instruments: summary.harvestSkipped },
            'sync: instruments on a tool this station does not know were not taken',
          );
        }
        if (summary.runsDeclined.length) {
          // Once per run: its report is queued once, however often the server lists it.
          this.log.warn(
            { runs: summary.runsDeclined },
            'sync: the server queued harvest runs this station cannot take; they are reported ' +
              'failed, with the reason',
          );
        }
        if (summary.harvestChanged || summary.toolChanged || summary.runsAdded > 0) {
          // A new tool changes which instruments this station harvests, too.
          this.options.station.harvestFromServer({
            config: summary.harvestChanged || summary.toolChanged,
            runs: summary.runsAdded > 0,
          });
        }
        adoptAnswers(this.options.station, data);
        adoptValidations(this.options.station, data);
        adoptResolutions(this.options.station, data);
        // Back in touch after an outage: push what waited rather than at the next retry.
        if (!wasOnline) this.nudge();
        this.history.start();
      } catch (error) {
        if (this.stopped) return;
        this.link.warnUnreadable(error, this.link.pullError);
        this.link.failed('pull', error);
        const delay = this.pullBackoff.fail();
        this.log.debug(
          { err: describeFailure(error).message, retryInMs: delay },
          'sync: pull failed',
        );
        await this.sleep(delay);
      }
    }
  }

  /** Waits `ms`, or until the client stops or a change wakes the pull (LinkStatus.wakePull). */
  private sleep(ms: number): Promise<void> {
    return pause(ms, this.abort.signal, (wake) => (this.link.wakePull = wake));
  }
}

/**
 * Starts syncing a station with its server. A station without a tool yet (an empty data dir)
 * waits for its first pull, which brings its facility and the tool the server registered it for.
 */
export async function startSync(
  options: SyncClientOptions & { firstPullTimeoutMs?: number },
): Promise<SyncClient> {
  const client = new SyncClient(options);
  client.start();
  if (options.station.stationTool === null) {
    const timeoutMs = options.firstPullTimeoutMs ?? 60_000;
    // Said at once: the start waits on this, and a server that cannot be reached says nothing.
    options.station.log.info(
      { server: options.server, waitSeconds: timeoutMs / 1000 },
      'sync: this station has no facility yet; waiting for it from the server',
    );
    try {
      await client.firstPull(timeoutMs);
    } catch (error) {
      await client.stop();
      throw error;
    }
  }
  return client;
}
