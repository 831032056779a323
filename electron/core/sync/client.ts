import axios, { type AxiosInstance } from 'axios';
import type { z } from 'zod';
import type { CoreEvent } from '../../../shared/api.js';
import { CLOCK_SKEW_WARN_SECONDS, clockSkewWarning } from '../../../shared/clock.js';
import type { Db } from '../db/open.js';
import type { Station } from '../station/station.js';
import { BAD_IDENTITY, stationHeaders } from './identity.js';
import { adoptServerValidation } from '../station/serverValidations.js';
import { adoptServerAnswers } from '../station/toolControl.js';
import { enqueueUsage } from '../station/outbox.js';
import { enqueueFile } from '../harvest/records.js';
import { ERROR_CODES, type ErrorCode } from '../../../shared/errors.js';
import { cachedStatement } from '../db/statements.js';
import { AppError } from '../util/errors.js';
import { failpoint, injected } from '../util/failpoint.js';
import { nowIso } from '../util/ids.js';
import { applyDelta, syncCursor, syncCursorMark } from './apply.js';
import { Backoff } from './backoff.js';
import { historyPageSchema, pushResultSchema } from './answerSchema.js';
import { parseFacilityDelta } from './deltaSchema.js';
import { BadAnswerError, parseAnswer } from './parseAnswer.js';
import { pendingHistory, takeHistoryPage } from './history.js';
import { noteRestored } from './restored.js';
import { countStartsAnew, keepSent, resendLost, sentThrough } from './resend.js';
import {
  PUSH_KINDS_SQL,
  SYNC_CHANGES_PATH,
  SYNC_HARVEST_HISTORY_PATH,
  SYNC_PUSH_PATH,
  type FacilityDelta,
  type PushKind,
  type PushRecord,
} from './protocol.js';

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
 * A record the server refuses is set aside this long after its first refusal, twice as long
 * after each next one up to HOLD_CAP_MS, then offered again; a change of the facility pulled
 * from the server (for a record naming something the server lacked), or a new start of the
 * link, offers it again sooner (an admin may have added the person it names).
 */
/**
 * The records a station sends again when the server says it lacks them (PushError.missing),
 * by the server's table name: those a later record names.
 */
const SENT_AGAIN = new Map<
  string,
  { table: string; kind: 'usage_event' | 'harvest_file'; enqueue: (db: Db, id: number) => void }
>([
  ['usage_events', { table: 'usage_events', kind: 'usage_event', enqueue: enqueueUsage }],
  ['harvest_files', { table: 'harvest_files', kind: 'harvest_file', enqueue: enqueueFile }],
]);

export const HOLD_MS = 10 * 60_000;
const HOLD_CAP_MS = 6 * 3_600_000;

/** Answers to a whole push that no resend of the same batch can change: the batch holds a record the server cannot take. */
const BATCH_REFUSED = new Set([400, 413, 415, 422]);

const UUID_RE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/**
 * `text` with each uuid of a person, project, tool or usage event held here followed by what
 * it is ("user_uuid: no record 01a2… (person "dave") on the server"): the server knows only
 * the uuid. What the station shows of a usage anyway (who, which tool, since when), nothing
 * more: no notebook titles. Shown to staff only (sync.status).
 */
export function nameUuids(db: Station['db'], text: string): string {
  const lookups: [string, string][] = [
    ['person', 'SELECT username FROM users WHERE uuid = ?'],
    ['project', 'SELECT name FROM projects WHERE uuid = ?'],
    ['tool', 'SELECT name FROM tools WHERE uuid = ?'],
    [
      'usage',
      `SELECT u.username || ' on ' || t.name || ' from ' || e.start FROM usage_events e
         JOIN users u ON u.id = e.user_id JOIN tools t ON t.id = e.tool_id WHERE e.uuid = ?`,
    ],
  ];
  return text.replace(UUID_RE, (uuid) => {
    for (const [what, sql] of lookups) {
      const name = cachedStatement(db, sql).pluck().get(uuid.toLowerCase()) as string | undefined;
      if (name !== undefined) return `${uuid} (${what} ${JSON.stringify(name)})`;
    }
    return uuid;
  });
}

function describe(error: unknown): { message: string; reachable: boolean } {
  if (axios.isAxiosError(error)) {
    const status = error.response?.status;
    if (status !== undefined) {
      const detail = (error.response?.data as { detail?: unknown } | undefined)?.detail;
      const text = typeof detail === 'string' ? detail : error.message;
      return { message: `server answered ${status}: ${text}`, reachable: status < 500 };
    }
    return { message: `server unreachable: ${error.code ?? error.message}`, reachable: false };
  }
  return { message: error instanceof Error ? error.message : String(error), reachable: true };
}

/**
 * The station's side of sync: pushes the outbox in id order (deleting exactly the rows the
 * server acknowledged, only after its answer), and keeps a long-poll open for config changes.
 * Both retry with exponential backoff while the server is unreachable; the station keeps
 * working on its own database meanwhile.
 */
/** Payload characters per push request, well under the server's 8 MiB body limit. */
const PUSH_BATCH_BYTES = 4 * 1024 * 1024;

export class SyncClient {
  private readonly http: AxiosInstance;
  private readonly abort = new AbortController();
  private readonly pushBackoff: Backoff;
  private readonly pullBackoff: Backoff;
  private readonly batchSize: number;
  private readonly tickMs: number;
  private readonly waitSeconds: number;
  private stopped = false;
  private pushing: Promise<void> | null = null;
  private pushAgain = false;
  private pushTimer: NodeJS.Timeout | undefined;
  private pullLoop: Promise<void> | null = null;
  private pushError: string | null = null;
  private pullError: string | null = null;
  /** Why an instrument's history (sync/history.ts) could not be fetched, until it is. */
  private readonly historyErrors = new Map<number, string>();
  /** The history fetch under way (fetchHistory), beside the pull loop. */
  private historyRun: Promise<void> | null = null;
  private pushUnreachable = false;
  private pullUnreachable = false;
  private wakePull: (() => void) | null = null;
  private online = false;
  private lastSyncAt: string | null = null;
  private waitingCache = 0;
  private refusedCache: { count: number; reason: string | null } = { count: 0, reason: null };
  private readonly holdMs: number;
  private clockSkew: number | null = null;
  private clockWarned = false;
  /**
   * After the server refused a whole batch (a body it cannot parse, one too large), records up
   * to this outbox id go one at a time, so the one it cannot take is found and set aside.
   */
  private probeThrough: number | null = null;
  /** Counts releaseHeld: a refusal that comes back after a release is offered again at once. */
  private releases = 0;
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
        this.noteServerDate(response.headers.date);
        return response;
      },
      (error: unknown) => {
        if (axios.isAxiosError(error)) this.noteServerDate(error.response?.headers.date);
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
    this.batchSize = options.batchSize ?? 100;
    this.holdMs = options.holdMs ?? HOLD_MS;
    this.tickMs = options.tickMs ?? 5_000;
    this.waitSeconds = options.waitSeconds ?? 25;
    // The cap may be lowered from the environment (tests, or a site that wants faster retries).
    const cap =
      options.backoffCapMs ?? (Number(process.env.LABSTATION_SYNC_BACKOFF_CAP_MS) || 30_000);
    this.pushBackoff = new Backoff(options.backoffBaseMs ?? 500, cap);
    this.pullBackoff = new Backoff(options.backoffBaseMs ?? 500, cap);
  }

  private get db(): Station['db'] {
    return this.options.station.db;
  }

  private get log(): Station['log'] {
    return this.options.station.log;
  }

  start(): void {
    // A new start of the link offers the records set aside again (the server may take them).
    this.releaseHeld();
    this.options.station.events.on('event', this.onEvent);
    this.pullLoop = this.runPullLoop();
    this.nudge();
  }

  get state(): SyncState {
    if (!this.stopped) {
      this.waitingCache = this.db
        .prepare(`SELECT count(*) FROM outbox WHERE kind IN (${PUSH_KINDS_SQL})`)
        .pluck()
        .get() as number;
      const refused = cachedStatement(
        this.db,
        `SELECT count(*) AS count, (SELECT refusal FROM outbox WHERE refusal IS NOT NULL
           ORDER BY id LIMIT 1) AS reason FROM outbox WHERE refusal IS NOT NULL`,
      ).get() as { count: number; reason: string | null };
      this.refusedCache = refused;
    }
    const refused = this.refusedCache;
    return {
      online: this.online,
      lastSyncAt: this.lastSyncAt,
      waiting: this.waitingCache,
      refused: refused.count,
      refusedReason: refused.reason,
      clockSkewSeconds: this.clockSkew,
      lastError:
        this.pushError ??
        this.pullError ??
        [...this.historyErrors.values()][0] ??
        (refused.count === 0
          ? null
          : `${refused.count} ${refused.count === 1 ? 'record' : 'records'} refused by the ` +
            'server (set aside, offered again later; the rest still goes)'),
    };
  }

  /**
   * Sets a record the server refused aside until `holdMs` from now, with why: the records
   * queued after it still go. It is offered again then, when the facility changes, or when the
   * link starts again; it leaves the outbox only once the server takes it.
   */
  private holdRecord(
    row: { id: number; payload: string; refusals: number },
    refusal: { code: string; reason: string },
    releasesAtSend: number,
    waitsFor: string | null = null,
  ): void {
    // Not when the facility changed while it was on its way: what it names may be there now.
    if (this.releases !== releasesAtSend) return;
    const named = nameUuids(this.db, refusal.reason);
    const refusals = row.refusals;
    const holdMs = Math.min(this.holdMs * 2 ** Math.min(refusals, 20), HOLD_CAP_MS);
    const until = new Date(Date.now() + holdMs).toISOString();
    // Nor when the row changed on its way: a pull that took the server's people and tools
    // rewrote its uuids (apply.ts localId), and it goes again as it is now.
    const held = cachedStatement(
      this.db,
      `UPDATE outbox SET held_until = ?, refusal = ?, refusal_code = ?, refusals = refusals + 1,
         waits_for = ?
       WHERE id = ? AND payload = ?`,
    ).run(until, named, refusal.code, waitsFor, row.id, row.payload);
    if (held.changes === 0) return;
    // Once per record, not at each offer: the status line keeps saying it meanwhile.
    if (refusals === 0) {
      this.log.warn(
        { id: row.id, reason: named, retryAt: until },
        'sync: the server refused a record; it is set aside and the rest still goes',
      );
    }
  }

  /**
   * Offers records set aside again at the next push: every one (a new start of the link), or
   * those refused for naming something the server lacked (the facility changed).
   */
  private releaseHeld(onlyCode?: string): void {
    this.releases += 1;
    cachedStatement(
      this.db,
      `UPDATE outbox SET held_until = NULL
       WHERE held_until IS NOT NULL AND (? IS NULL OR refusal_code = ?)`,
    ).run(onlyCode ?? null, onlyCode ?? null);
  }

  /**
   * The server lacks a record this station made and pushed before (it acknowledged it, so the
   * outbox no longer holds it): a new server, or one restored from a backup. It is queued
   * again as it is now, unless a version of it is queued already; the record that named it
   * waits for it (waits_for).
   */
  private sendAgain(missing: { table: string; uuid: string }): void {
    const again = SENT_AGAIN.get(missing.table);
    if (!again) return;
    const queued = cachedStatement(
      this.db,
      'SELECT 1 FROM outbox WHERE kind = ? AND record_uuid = ?',
    ).get(again.kind, missing.uuid);
    if (queued) return;
    const id = cachedStatement(this.db, `SELECT id FROM ${again.table} WHERE uuid = ?`)
      .pluck()
      .get(missing.uuid) as number | undefined;
    if (id === undefined) return;
    this.db.transaction(() => again.enqueue(this.db, id))();
    this.log.warn(
      { kind: again.kind, uuid: missing.uuid },
      'sync: the server lacks a record it took before (a new server, or one restored from a ' +
        'backup); it is sent again',
    );
  }

  /** Offers again at once the records set aside until the server had one of these. */
  private releaseWaiting(uuids: string[]): void {
    if (!uuids.length) return;
    cachedStatement(
      this.db,
      `UPDATE outbox SET held_until = NULL, waits_for = NULL
       WHERE waits_for IN (SELECT value FROM json_each(?))`,
    ).run(JSON.stringify(uuids));
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
              `${this.pullError ?? 'no answer'}`,
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
    let answer: unknown;
    try {
      ({ data: answer } = await this.http.request<unknown>({
        method,
        url: path,
        params: options.params,
        data: options.body,
        timeout: 15_000,
        signal: this.abort.signal,
      }));
    } catch (error) {
      const body = axios.isAxiosError(error)
        ? (error.response?.data as { code?: unknown; message?: unknown; details?: unknown })
        : undefined;
      if (
        typeof body?.code === 'string' &&
        (ERROR_CODES as readonly string[]).includes(body.code) &&
        typeof body.message === 'string'
      ) {
        // The server's "unauthenticated" is about the station's key, not the person logged on
        // here (whom the UI would log off on that code).
        const code = body.code === 'unauthenticated' ? 'forbidden' : (body.code as ErrorCode);
        throw new AppError(code, body.message, body.details);
      }
      const status = axios.isAxiosError(error) ? error.response?.status : undefined;
      // 409: the key is held by another Labstation (server/sync/stationAuth.ts).
      if (status === 401 || status === 403 || status === 409) {
        throw new AppError(
          'forbidden',
          `the server refused this station's key (${describe(error).message}); ask an admin`,
        );
      }
      const { message, reachable } = describe(error);
      if (!reachable) this.online = false;
      throw new AppError(
        'unavailable',
        `cannot reach the server now (${message}); try again later`,
      );
    }
    // Checked before the caller stores or shows any of it: an answer this station cannot read
    // (a bug, another version, a proxy's page) fails as the server being away does.
    let data: T;
    try {
      data = parseAnswer(
        options.schema,
        answer,
        `answer to ${method} ${path}`,
        'nothing of it used',
      );
    } catch (error) {
      const problems = error instanceof BadAnswerError ? error.issues : [];
      this.log.warn(
        { path, problems: problems.slice(0, 10), count: problems.length },
        "sync: the server's answer does not parse; nothing of it was used",
      );
      throw new AppError(
        'unavailable',
        `${error instanceof Error ? error.message : String(error)}; try again later`,
      );
    }
    this.succeeded();
    return data;
  }

  /** Pushes soon: called after each outbox write (through the station's events) and on a tick. */
  nudge(): void {
    if (this.stopped) return;
    if (this.pushing) {
      this.pushAgain = true;
      return;
    }
    clearTimeout(this.pushTimer);
    this.pushTimer = undefined;
    this.pushing = this.pushAll().finally(() => {
      this.pushing = null;
      if (this.pushAgain && !this.stopped) {
        this.pushAgain = false;
        this.nudge();
      }
    });
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.waitingCache = this.state.waiting; // kept for readers after the database closes
    this.stopped = true;
    this.options.station.events.off('event', this.onEvent);
    clearTimeout(this.pushTimer);
    this.abort.abort();
    await Promise.allSettled([this.pushing, this.pullLoop, this.historyRun]);
  }

  private schedulePush(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.pushTimer);
    this.pushTimer = setTimeout(() => this.nudge(), ms);
    this.pushTimer.unref();
  }

  /**
   * Measures this station's clock against the server's `Date` header (RFC 9110: whole seconds,
   * cut down, so the server's time was half a second past it on average) and logs when the
   * difference goes past CLOCK_SKEW_WARN_SECONDS, or back within it.
   */
  private noteServerDate(header: unknown): void {
    if (typeof header !== 'string') return;
    const server = Date.parse(header);
    if (!Number.isFinite(server)) return;
    const skew = Math.round((Date.now() - server - 500) / 1000);
    this.clockSkew = skew;
    // Said once each way: a clock about a minute off would otherwise log on every answer.
    const warning = clockSkewWarning(skew);
    if (warning && !this.clockWarned) {
      this.clockWarned = true;
      this.log.warn({ clockSkewSeconds: skew }, warning);
    } else if (this.clockWarned && Math.abs(skew) < CLOCK_SKEW_WARN_SECONDS - 15) {
      this.clockWarned = false;
      this.log.info(
        { clockSkewSeconds: skew },
        "this station's clock agrees with the server's again",
      );
    }
  }

  private succeeded(): void {
    this.online = true;
    this.lastSyncAt = nowIso();
    // The server answers again: an "unreachable" of the other direction is out of date, and a
    // pull waiting out its backoff may go now.
    if (this.pushUnreachable) {
      this.pushError = null;
      this.pushUnreachable = false;
    }
    if (this.pullUnreachable) {
      this.pullError = null;
      this.pullUnreachable = false;
      this.wakePull?.();
    }
  }

  private failed(kind: 'push' | 'pull', error: unknown): void {
    const { message, reachable } = describe(error);
    // 401: the key is refused; 409: another Labstation holds it (server/sync/stationAuth.ts).
    if (!reachable || /^server answered 40[19]\b/.test(message)) this.online = false;
    if (kind === 'push') {
      this.pushError = message;
      this.pushUnreachable = !reachable;
    } else {
      this.pullError = message;
      this.pullUnreachable = !reachable;
    }
  }

  private async pushAll(): Promise<void> {
    try {
      for (;;) {
        if (this.stopped) return;
        const rows = cachedStatement(
          this.db,
          `SELECT id, kind, record_uuid, payload, refusals FROM outbox
           WHERE kind IN (${PUSH_KINDS_SQL})
             AND (held_until IS NULL OR held_until <= ? OR held_until > ?)
           ORDER BY id LIMIT ?`,
        ).all(
          nowIso(),
          // A hold ending further off than the longest hold was set while this station's clock
          // was ahead (it says so: clockSkewSeconds), and is over.
          nowIso(() => Date.now() + HOLD_CAP_MS),
          this.probeThrough === null ? this.batchSize : 1,
        ) as {
          id: number;
          kind: PushKind;
          record_uuid: string;
          payload: string;
          refusals: number;
        }[];
        if (this.probeThrough !== null && (rows.length === 0 || rows[0].id > this.probeThrough)) {
          this.probeThrough = null;
          continue;
        }
        // A record refused before goes alone: the server likely refuses it again, and a batch
        // behind it would be sent only to be sent once more.
        const refusedAt = rows.findIndex((r) => r.refusals > 0);
        if (refusedAt >= 0) rows.length = Math.max(refusedAt, 1);
        const releasesAtSend = this.releases;
        if (rows.length === 0) {
          this.pushError = null;
          this.pushBackoff.reset();
          this.schedulePush(this.tickMs);
          return;
        }
        // A batch also stops at 4 MiB of payload (the server takes 8 MiB per request); the
        // first record always goes, and no record can be larger (notebook entries are capped).
        let bytes = 0;
        const fits = rows.findIndex((r, i) => {
          bytes += r.payload.length;
          return i > 0 && bytes > PUSH_BATCH_BYTES;
        });
        if (fits > 0) rows.length = fits;
        const records: PushRecord[] = rows.map((r) => ({
          id: r.id,
          kind: r.kind,
          uuid: r.record_uuid,
          payload: JSON.parse(r.payload) as Record<string, unknown>,
        }));
        // What the server had acknowledged before this batch: its count cannot be lower,
        // unless it has lost records since (resend.ts).
        const sentBefore = sentThrough(this.db);
        let answer: unknown;
        try {
          ({ data: answer } = await this.http.post<unknown>(
            SYNC_PUSH_PATH,
            { records },
            { signal: this.abort.signal },
          ));
        } catch (error) {
          const status = axios.isAxiosError(error) ? error.response?.status : undefined;
          // A 400 of the station's identity headers is not the batch's fault: nothing is set aside.
          const identity =
            axios.isAxiosError(error) &&
            (error.response?.data as { code?: unknown } | undefined)?.code === BAD_IDENTITY;
          if (this.stopped || status === undefined || !BATCH_REFUSED.has(status) || identity) {
            throw error;
          }
          this.succeeded();
          // The server cannot take this batch as it is, and never will: find the record.
          if (rows.length > 1) this.probeThrough = rows[rows.length - 1].id;
          else {
            const reason = describe(error).message;
            this.holdRecord(rows[0], { code: `http_${status}`, reason }, releasesAtSend);
          }
          continue;
        }
        if (this.stopped) return;
        // Checked whole before any row is deleted: an answer that does not parse fails the push
        // (backoff, pushError naming the field), and the batch goes again; the server takes a
        // record sent twice as once.
        const data = parseAnswer(pushResultSchema, answer, 'push answer', 'no outbox row deleted');
        this.succeeded();
        failpoint('sync.push.before-ack');
        const sent = new Set(rows.map((r) => r.id));
        const acked = data.acked.filter((id) => sent.has(id));
        // Before this batch is kept: what the server lost is what it had before it.
        if (data.acked_before === null) countStartsAnew(this.db, sentBefore);
        else if (typeof data.acked_before === 'number') {
          this.resendLost(data.acked_before, sentBefore);
        }
        // Kept a while: a server restored from a backup gets them again (resend.ts).
        this.db.transaction(() => keepSent(this.db, acked))();
        this.releaseWaiting(rows.filter((r) => acked.includes(r.id)).map((r) => r.record_uuid));
        for (const id of data.stale) {
          const row = rows.find((r) => r.id === id);
          // A newer version of the record in the same batch, taken: this one is a resend whose
          // answer was lost, and the server already had the newer one from it.
          const resent = rows.some(
            (r) => r.id > id && r.record_uuid === row?.record_uuid && acked.includes(r.id),
          );
          if (resent) {
            this.log.debug(
              { kind: row?.kind, uuid: row?.record_uuid },
              'sync: an older version sent again; the server holds the newer one from this station',
            );
            continue;
          }
          this.log.warn(
            { kind: row?.kind, uuid: row?.record_uuid },
            'sync: the server holds a newer version of this record; the older one was dropped',
          );
        }
        if (data.error) {
          const refused = data.error;
          const row = rows.find((r) => r.id === refused.id);
          if (row && !acked.includes(refused.id)) {
            const missing = refused.code === 'unknown_reference' ? refused.missing : undefined;
            if (missing) this.sendAgain(missing);
            this.holdRecord(
              row,
              {
                code: refused.code,
                reason: `${refused.kind} ${refused.uuid} refused: ${refused.detail}`,
              },
              releasesAtSend,
              missing?.uuid ?? null,
            );
            continue;
          }
          this.pushError = `${refused.kind} ${refused.uuid} refused: ${refused.detail}`;
          this.schedulePush(this.pushBackoff.fail());
          return;
        }
        if (acked.length === 0) {
          this.pushError = 'the server acknowledged nothing';
          this.schedulePush(this.pushBackoff.fail());
          return;
        }
        this.pushError = null;
        this.pushBackoff.reset();
      }
    } catch (error) {
      if (this.stopped) return;
      this.warnUnreadable(error, this.pushError);
      this.failed('push', error);
      const delay = this.pushBackoff.fail();
      this.log.debug({ err: describe(error).message, retryInMs: delay }, 'sync: push failed');
      this.schedulePush(delay);
    }
  }

  /**
   * An answer of the push or pull loop that does not parse is not a passing outage: the server
   * sends what this station cannot read (a bug, or an incompatible version). Said once per new
   * reason (`previous` is the loop's last error), not at each retry.
   */
  private warnUnreadable(error: unknown, previous: string | null): void {
    if (!(error instanceof BadAnswerError) || error.message === previous) return;
    this.log.warn(
      { problems: error.issues.slice(0, 10), count: error.issues.length },
      `sync: ${error.summary}`,
    );
  }

  /** The server's count is below what it had acknowledged: what it lost is queued again. */
  private resendLost(ackedThrough: number, sentBefore: number): void {
    const resent = resendLost(this.db, ackedThrough, sentBefore);
    if (resent === 0) return;
    this.log.warn(
      { ackedThrough, sentBefore, records: resent },
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
        const wait = cursor > 0 && !first && this.pullError === null ? this.waitSeconds : 0;
        // Tests: the first pull comes after the first push.
        if (first && injected('sync.late-first-pull')) {
          await new Promise((resolve) => setTimeout(resolve, 2000));
        }
        // What the server had acknowledged before this pull was sent: its answer cannot be
        // lower, unless it has lost records since (resend.ts).
        const sentBefore = sentThrough(this.db);
        const answer = await this.http.get<unknown>(SYNC_CHANGES_PATH, {
          params: { cursor, wait, ...(mark === undefined ? {} : { mark }) },
          timeout: (wait + 15) * 1000,
          signal: this.abort.signal,
        });
        if (this.stopped) return;
        first = false;
        // Checked whole before anything is applied: an answer that does not parse fails the
        // pull (backoff, lastError naming the field), the cursor stays, nothing is stored.
        const data = parseFacilityDelta(answer.data);
        const wasOnline = this.online;
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
          this.resendLost(data.acked_through, sentBefore);
        }
        this.succeeded();
        this.pullError = null;
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
          this.releaseHeld('unknown_reference');
          this.nudge();
          const tool = summary.tool ?? this.options.station.stationTool;
          if (tool !== null) this.options.station.emit({ type: 'tool.changed', tool });
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
        this.adoptAnswers(data);
        this.adoptValidations(data);
        // Back in touch after an outage: push what waited rather than at the next retry.
        if (!wasOnline) this.nudge();
        this.startHistory();
      } catch (error) {
        if (this.stopped) return;
        this.warnUnreadable(error, this.pullError);
        this.failed('pull', error);
        const delay = this.pullBackoff.fail();
        this.log.debug({ err: describe(error).message, retryInMs: delay }, 'sync: pull failed');
        await this.sleep(delay);
      }
    }
  }

  /**
   * Fetches the history of instruments given to this station (sync/history.ts) beside the pull
   * loop, so a long one holds up no delta. Started after every pull while any waits.
   */
  private startHistory(): void {
    if (this.historyRun !== null || this.stopped) return;
    if (pendingHistory(this.db).length === 0) {
      this.historyErrors.clear();
      return;
    }
    this.historyRun = this.fetchHistory()
      .catch((error: unknown) => {
        if (!this.stopped) this.log.warn({ err: error }, 'sync: history not taken');
      })
      .finally(() => {
        this.historyRun = null;
      });
  }

  /**
   * The file records of instruments given to this station that were made before it had them,
   * page by page; each instrument is harvested once all of its are here. A failure is logged
   * and shown, and does not count as the pull's: the next pull tries again.
   */
  private async fetchHistory(): Promise<void> {
    // The harvest sees these instruments as waiting first: one it ran until now (a local one
    // that took the server's uuid) would otherwise go on recording, with new ARKs, files whose
    // records are on their way.
    await this.options.station.reloadHarvest();
    for (const pending of pendingHistory(this.db)) {
      if (this.stopped) return;
      let after = pending.after;
      let taken = 0;
      try {
        for (;;) {
          const { data: answer } = await this.http.get<unknown>(SYNC_HARVEST_HISTORY_PATH, {
            params: { instrument: pending.uuid, after },
            timeout: 60_000,
            signal: this.abort.signal,
          });
          if (this.stopped) return;
          // Checked whole before any of it is stored: a page that does not parse fails the
          // fetch as an unreachable server does (shown, logged, tried again after the next
          // pull from the page it stopped at).
          const data = parseAnswer(
            historyPageSchema,
            answer,
            'history page',
            'nothing of it taken',
          );
          taken += data.files.length;
          if (takeHistoryPage(this.db, pending.instrumentId, data)) break;
          after = data.next ?? after;
        }
      } catch (error) {
        if (this.stopped) return;
        if (axios.isAxiosError(error) && error.response?.status === 404) {
          // A server older than this route holds no history to wait for.
          takeHistoryPage(this.db, pending.instrumentId, { files: [], next: null });
          this.log.warn({ instrument: pending.name }, 'sync: the server sends no history');
        } else {
          const message = `the records of ${pending.name} harvested before: ${describe(error).message}`;
          this.historyErrors.set(pending.instrumentId, message);
          this.log.warn({ instrument: pending.name, err: message }, 'sync: history');
          continue;
        }
      }
      this.historyErrors.delete(pending.instrumentId);
      this.log.info(
        { instrument: pending.name, files: taken },
        'sync: the records of files harvested before took their place; harvesting the instrument',
      );
      // Runs triggered meanwhile waited for the history: they go now.
      this.options.station.harvestFromServer({ config: true, runs: true });
    }
  }

  /** Post-usage answers given on the server for events of this station become its own. */
  private adoptAnswers(delta: FacilityDelta): void {
    for (const answer of delta.answers ?? []) {
      try {
        const taken = adoptServerAnswers(this.db, answer, nowIso());
        if (taken === null) continue;
        const tool = taken.tool;
        this.log.info({ usage: answer.usage_uuid }, 'sync: post-usage answers given on the server');
        if (taken.withdrawnBeyond.length) {
          this.log.warn(
            { usage: answer.usage_uuid, withdrawn: taken.withdrawnBeyond },
            'sync: the answers kept (given on the server) withdraw less than this station ' +
              'recorded from its own answers; staff should settle the difference',
          );
        }
        this.options.station.emit({ type: 'usage.changed', usage: answer.usage_uuid });
        this.options.station.emit({ type: 'tool.changed', tool });
      } catch (error) {
        this.log.warn({ err: error, usage: answer.usage_uuid }, 'sync: answers not taken');
      }
    }
  }

  /** Validations given by staff on the server for events of this station become its own. */
  private adoptValidations(delta: FacilityDelta): void {
    for (const validation of delta.validations ?? []) {
      try {
        const taken = adoptServerValidation(this.db, validation, nowIso());
        if (taken === null) continue;
        this.log.info({ usage: validation.usage_uuid }, 'sync: validated on the server');
        this.options.station.emit({ type: 'usage.changed', usage: validation.usage_uuid });
        this.options.station.emit({ type: 'tool.changed', tool: taken.tool });
      } catch (error) {
        this.log.warn({ err: error, usage: validation.usage_uuid }, 'sync: validation not taken');
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.abort.signal;
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wakePull = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakePull = done;
      signal.addEventListener('abort', done);
    });
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
