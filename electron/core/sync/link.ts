/**
 * The station's link to its server, as configured in the data dir: the server's address and
 * the station's key, given once (`labstation station --server URL --key KEY`, or by staff in the
 * station's settings) and used at every start. Changing them restarts the sync client.
 */
import axios from 'axios';
import type { z } from 'zod';
import type { SyncStatus } from '../../../shared/api.js';
import { getSetting, setSetting } from '../station/settings.js';
import type { Station, SyncControl } from '../station/station.js';
import { AppError, fieldError } from '../util/errors.js';
import { resetSyncCursor } from './apply.js';
import { startSync, type SyncClient, type SyncClientOptions } from './client.js';
import { stationHeaders } from './identity.js';
import { SYNC_CHANGES_PATH } from './protocol.js';

/** An http(s) base URL, normalised to end in "/"; anything else is refused naming the field. */
export function serverAddress(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw fieldError('server', 'must be an address such as http://labstation.example.org:8080/');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw fieldError('server', 'must start with http:// or https://');
  }
  if (url.username || url.password || url.search || url.hash) {
    throw fieldError('server', 'must be the server address alone, without user, query or #');
  }
  return url.href.endsWith('/') ? url.href : `${url.href}/`;
}

export type SyncTuning = Pick<
  SyncClientOptions,
  'batchSize' | 'tickMs' | 'waitSeconds' | 'backoffBaseMs' | 'backoffCapMs'
> & { firstPullTimeoutMs?: number };

/** Said of an address that answers, but not as a Labstation server does. */
const NOT_LABSTATION = 'answers, but is not a Labstation server (no sync API there)';

export class SyncLink implements SyncControl {
  private client: SyncClient | null = null;
  /** start, stop and configure run one at a time: two clients must never push at once. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly station: Station,
    private readonly tuning: SyncTuning = {},
  ) {}

  settings(): { server: string | null; keySet: boolean } {
    return {
      server: getSetting(this.station.db, 'sync.server'),
      keySet: getSetting(this.station.db, 'sync.key') !== null,
    };
  }

  /** The running client's state; null while no server is set (the station says standalone). */
  status(): SyncStatus | null {
    return this.client ? { configured: true, ...this.client.state } : null;
  }

  /**
   * Resolves once the server has answered a pull (so a data dir restored from a backup knows it
   * before it harvests: sync/restored.ts), or after `timeoutMs` without one (offline: the
   * harvest goes on alone), or at once without a server.
   */
  async pulled(timeoutMs: number): Promise<void> {
    await this.queue;
    await this.client?.firstPull(timeoutMs).catch(() => undefined);
  }

  /** A request to the server for the station UI (booking); `unavailable` without a link. */
  request<T>(
    method: 'GET' | 'POST',
    path: string,
    options: { params?: Record<string, string>; body?: unknown; schema: z.ZodType<T> },
  ): Promise<T> {
    if (!this.client) {
      return Promise.reject(
        new AppError('unavailable', 'this station has no server link; book on the server'),
      );
    }
    return this.client.request<T>(method, path, options);
  }

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Starts syncing when the data dir names a server and a key; resolves at once otherwise. */
  start(): Promise<void> {
    return this.serial(() => this.startNow());
  }

  stop(): Promise<void> {
    return this.serial(() => this.stopNow());
  }

  private async startNow(): Promise<void> {
    const server = getSetting(this.station.db, 'sync.server');
    const key = getSetting(this.station.db, 'sync.key');
    if (server === null || key === null || this.client) return;
    this.client = await startSync({ station: this.station, server, key, ...this.tuning });
  }

  private async stopNow(): Promise<void> {
    const client = this.client;
    this.client = null;
    await client?.stop();
  }

  /**
   * Sets (or with `server` null, removes) the server and key, then restarts the link. A key the
   * server refuses is not kept; an unreachable server is kept (the station syncs once it can).
   */
  configure(input: { server: string | null; key?: string | undefined }): Promise<void> {
    return this.serial(async () => {
      if (input.server === null || input.server.trim() === '') {
        await this.stopNow();
        setSetting(this.station.db, 'sync.server', null);
        setSetting(this.station.db, 'sync.key', null);
        setSetting(this.station.db, 'sync.lastSyncAt', null);
        resetSyncCursor(this.station.db);
        return;
      }
      const server = serverAddress(input.server);
      const previous = getSetting(this.station.db, 'sync.server');
      const previousKey = getSetting(this.station.db, 'sync.key');
      // The stored key belongs to the stored server: another address needs its own key.
      const key =
        input.key?.trim() || (previous === server ? getSetting(this.station.db, 'sync.key') : null);
      if (!key) {
        throw fieldError('key', "is needed: the station's key from the server's admin page");
      }
      await this.checkKey(server, key);
      await this.stopNow();
      setSetting(this.station.db, 'sync.server', server);
      setSetting(this.station.db, 'sync.key', key);
      // A pull position on one server means nothing on another: start from the whole facility.
      // So with another key: it may be another station's (another tool, other instruments),
      // whose configuration the server sends only in a whole pull, or as it changes.
      if (previous !== server || previousKey !== key) {
        resetSyncCursor(this.station.db);
        // Nor has this link synced yet.
        setSetting(this.station.db, 'sync.lastSyncAt', null);
      }
      this.station.log.info({ server }, 'sync: server set');
      await this.startNow();
    });
  }

  private async checkKey(server: string, key: string): Promise<void> {
    let answer: unknown;
    try {
      answer = (
        await axios.get(new URL(SYNC_CHANGES_PATH.slice(1), server).href, {
          params: { cursor: 0, wait: 0 },
          headers: stationHeaders(this.station.db, key),
          timeout: 10_000,
          maxRedirects: 0,
        })
      ).data;
    } catch (error) {
      const status = axios.isAxiosError(error) ? error.response?.status : undefined;
      if (status === 401) throw fieldError('key', 'the server does not accept this key');
      if (status === 409) {
        // Held by another Labstation (server/sync/stationAuth.ts): the server says which.
        const detail = axios.isAxiosError(error)
          ? (error.response?.data as { detail?: unknown } | undefined)?.detail
          : undefined;
        // Not kept: nothing here asks again, so whoever sets it does, once that one is gone.
        throw fieldError(
          'key',
          `${typeof detail === 'string' ? detail : 'is in use by another Labstation'} ` +
            'The key was not kept: set it again then.',
        );
      }
      if (status === 404) {
        throw fieldError('server', NOT_LABSTATION);
      }
      if (status !== undefined && status >= 300 && status < 400) {
        throw fieldError(
          'server',
          `answers ${status}, a redirect: give the address of the Labstation server itself`,
        );
      }
      // Unreachable or busy: kept, and retried by the sync client with backoff.
      return;
    }
    // Answered, and as a Labstation server answers a first pull: a delta with its cursor. A
    // web server answering every path with a page is not one, and would be sent the key at
    // every retry.
    const delta = answer as { cursor?: unknown; full?: unknown } | null;
    if (typeof delta !== 'object' || delta === null || typeof delta.cursor !== 'number') {
      throw fieldError('server', NOT_LABSTATION);
    }
  }
}
