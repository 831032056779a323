/**
 * What the station knows of its link to the server, as its status line shows it: whether the
 * last exchange went through, when one last did, and why the push or the pull loop last failed.
 * Apart from the loops because each one's answer changes what the other shows: the server
 * answering a push ends the pull's "unreachable", and cuts its backoff short.
 */
import { nowIso } from '../util/ids.js';
import type { Logger } from '../util/log.js';
import { BadAnswerError } from './parseAnswer.js';
import { describeFailure } from './serverFailure.js';

/** How far behind the kept last sync time may be: written at most this often. */
const KEEP_EVERY_MS = 60_000;

/** Where the last sync time is kept across restarts (the data dir's settings). */
export interface KeptSyncTime {
  load(): string | null;
  save(at: string): void;
}

export class LinkStatus {
  /** The last exchange with the server succeeded. */
  online = false;
  lastSyncAt: string | null;
  /** The last sync time as last kept. */
  private keptAt: string | null;
  /** Why the push loop last failed; null once a push went through. */
  pushError: string | null = null;
  /** Why the pull loop last failed; null once a pull went through. */
  pullError: string | null = null;
  /**
   * The server's reason for refusing this station's key (401: unknown, replaced, or the station
   * disabled) or for holding it for another Labstation (409); null once an exchange went
   * through. Not an outage that passes: the status line says it in words.
   */
  keyRefused: string | null = null;
  /** Ends the pull loop's wait out of its backoff; set while it waits. */
  wakePull: (() => void) | null = null;
  private pushUnreachable = false;
  private pullUnreachable = false;

  constructor(
    private readonly log: Logger,
    private readonly kept?: KeptSyncTime,
  ) {
    this.lastSyncAt = kept?.load() ?? null;
    this.keptAt = this.lastSyncAt;
  }

  succeeded(): void {
    this.online = true;
    this.keyRefused = null;
    this.lastSyncAt = nowIso();
    if (
      this.keptAt === null ||
      Date.parse(this.lastSyncAt) - Date.parse(this.keptAt) >= KEEP_EVERY_MS
    ) {
      this.keep();
    }
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

  /** Keeps the last sync time now (each minute, and when the link stops). */
  keep(): void {
    if (this.lastSyncAt === null || this.lastSyncAt === this.keptAt) return;
    this.kept?.save(this.lastSyncAt);
    this.keptAt = this.lastSyncAt;
  }

  failed(kind: 'push' | 'pull', error: unknown): void {
    const { message, reachable, answer } = describeFailure(error);
    // 401: the key is refused; 409: another Labstation holds it (server/sync/stationAuth.ts).
    // Said as the last failure says it: a server not reached since tells nothing of the key.
    const keyRefused = answer?.status === 401 || answer?.status === 409;
    this.keyRefused = keyRefused ? answer.reason : null;
    if (!reachable || keyRefused) this.online = false;
    if (kind === 'push') {
      this.pushError = message;
      this.pushUnreachable = !reachable;
    } else {
      this.pullError = message;
      this.pullUnreachable = !reachable;
    }
  }

  /**
   * An answer of the push or pull loop that does not parse is not a passing outage: the server
   * sends what this station cannot read (a bug, or an incompatible version). Said once per new
   * reason (`previous` is the loop's last error), not at each retry.
   */
  warnUnreadable(error: unknown, previous: string | null): void {
    if (!(error instanceof BadAnswerError) || error.message === previous) return;
    this.log.warn(
      { problems: error.issues.slice(0, 10), count: error.issues.length },
      `sync: ${error.summary}`,
    );
  }
}
