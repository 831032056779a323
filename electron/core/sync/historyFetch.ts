/**
 * The fetch of instruments' history pages (GET /sync/harvest/history, stored by history.ts),
 * run beside the pull loop so a long one holds up no delta. Its own errors, too: a failure is
 * shown and logged but does not count as the pull's, and the next pull tries again.
 */
import axios, { type AxiosInstance } from 'axios';
import type { Station } from '../station/station.js';
import { historyPageSchema } from './answerSchema.js';
import { pendingHistory, takeHistoryPage } from './history.js';
import { parseAnswer } from './parseAnswer.js';
import { SYNC_HARVEST_HISTORY_PATH } from './protocol.js';
import { describeFailure } from './serverFailure.js';

export class HistoryFetch {
  /** Why an instrument's history could not be fetched, until it is. */
  private readonly errors = new Map<number, string>();
  /** The fetch under way, beside the pull loop. */
  private run: Promise<void> | null = null;

  constructor(
    private readonly station: Station,
    private readonly http: AxiosInstance,
    private readonly signal: AbortSignal,
    /** The client was stopped: nothing more is fetched, stored or logged. */
    private readonly stopped: () => boolean,
  ) {}

  /** Why the first instrument that failed could not be fetched; undefined while none did. */
  get error(): string | undefined {
    return [...this.errors.values()][0];
  }

  /** The fetch under way, for a stop to wait for; null when none is. */
  get running(): Promise<void> | null {
    return this.run;
  }

  /** Started after every pull while any instrument waits; one fetch at a time. */
  start(): void {
    if (this.run !== null || this.stopped()) return;
    if (pendingHistory(this.station.db).length === 0) {
      this.errors.clear();
      return;
    }
    this.run = this.fetch()
      .catch((error: unknown) => {
        if (!this.stopped()) this.station.log.warn({ err: error }, 'sync: history not taken');
      })
      .finally(() => {
        this.run = null;
      });
  }

  /**
   * The file records of instruments given to this station that were made before it had them,
   * page by page; each instrument is harvested once all of its are here. A failure is logged
   * and shown, and does not count as the pull's: the next pull tries again.
   */
  private async fetch(): Promise<void> {
    const { db, log } = this.station;
    // The harvest sees these instruments as waiting first: one it ran until now (a local one
    // that took the server's uuid) would otherwise go on recording, with new ARKs, files whose
    // records are on their way.
    await this.station.reloadHarvest();
    for (const pending of pendingHistory(db)) {
      if (this.stopped()) return;
      let after = pending.after;
      let taken = 0;
      try {
        for (;;) {
          const { data: answer } = await this.http.get<unknown>(SYNC_HARVEST_HISTORY_PATH, {
            params: { instrument: pending.uuid, after },
            timeout: 60_000,
            signal: this.signal,
          });
          if (this.stopped()) return;
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
          if (takeHistoryPage(db, pending.instrumentId, data)) break;
          after = data.next ?? after;
        }
      } catch (error) {
        if (this.stopped()) return;
        const status = axios.isAxiosError(error) ? error.response?.status : undefined;
        if (status === 404 && serverNotFound(error)) {
          // A server older than this route holds no history to wait for. Its own answer only:
          // a 404 page of a proxy in between that does not pass the route on fails the fetch,
          // as an unreachable server does; taken as "no history", it would have this station
          // record the instrument's files again, under new ARKs.
          takeHistoryPage(db, pending.instrumentId, { files: [], next: null });
          log.warn({ instrument: pending.name }, 'sync: the server sends no history');
        } else if (status === 403 && pending.fromServer === 0) {
          // Configured here, and run by another station on the server: none of its records
          // for this one to wait for.
          takeHistoryPage(db, pending.instrumentId, { files: [], next: null });
          log.warn(
            { instrument: pending.name },
            'sync: the server runs this instrument on another station; no history taken',
          );
        } else {
          const message = `the records of ${pending.name} harvested before: ${describeFailure(error).message}`;
          this.errors.set(pending.instrumentId, message);
          log.warn({ instrument: pending.name, err: message }, 'sync: history');
          continue;
        }
      }
      this.errors.delete(pending.instrumentId);
      log.info(
        { instrument: pending.name, files: taken },
        'sync: the records of files harvested before took their place; harvesting the instrument',
      );
      // Runs triggered meanwhile waited for the history: they go now.
      this.station.harvestFromServer({ config: true, runs: true });
    }
  }
}

/**
 * Whether a 404 is the server's own answer to a path it has no route for, `{"detail":
 * "Not found."}` (server/app.ts), not a page of something in between.
 */
function serverNotFound(error: unknown): boolean {
  if (!axios.isAxiosError(error)) return false;
  const data: unknown = error.response?.data;
  return (
    typeof data === 'object' &&
    data !== null &&
    (data as { detail?: unknown }).detail === 'Not found.'
  );
}
