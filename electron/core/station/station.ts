import { EventEmitter } from 'node:events';
import type { z } from 'zod';
import {
  apiSchemas,
  isApiName,
  type ApiName,
  type ApiParsedArgs,
  type ApiResult,
  type CoreEvent,
  type HarvestStatus,
  type SessionInfo,
  type StationSettingsView,
  type SyncStatus,
} from '../../../shared/api.js';
import type { Db } from '../db/open.js';
import type { UploadAgainResult } from '../harvest/uploadAgain.js';
import { openStationDatabase } from './database.js';
import { AppError } from '../util/errors.js';
import { monotonicMs } from '../util/clock.js';
import { nowIso } from '../util/ids.js';
import { createLogger, type Logger } from '../util/log.js';
import { notebookHandlers } from '../notebook/handlers.js';
import { formatIssues } from '../util/issues.js';
import { illFormedArgument, illFormedTextPath } from '../../../shared/wellFormed.js';
import type { HandlerContext } from './handlers/context.js';
import { harvestHandlers } from './handlers/harvest.js';
import { reservationHandlers } from './handlers/reservations.js';
import { settingsHandlers } from './handlers/settings.js';
import { toolControlHandlers } from './handlers/toolControl.js';
import { usageHandlers } from './handlers/usage.js';
import { userHandlers } from './handlers/users.js';
import { checkLogon } from './logon.js';
import {
  activeProjectsOf,
  findTool,
  findUser,
  isQualified,
  projectSummary,
  queryUsage,
  toolInfo,
  userSummary,
  type UserRow,
} from './records.js';
import { getSetting } from './settings.js';
import { forceEndTool, toolStatus } from './toolControl.js';

export type Handlers = {
  [N in ApiName]: (args: ApiParsedArgs<N>) => ApiResult<N> | Promise<ApiResult<N>>;
};

/** The station's link to a server (electron/core/sync/link.ts), when one is attached. */
export interface SyncControl {
  /** null while the station has no server. */
  status(): SyncStatus | null;
  settings(): StationSettingsView['sync'];
  configure(input: { server: string | null; key?: string | undefined }): Promise<void>;
  /**
   * A request only the server can answer (booking), its answer checked with `schema`; AppError
   * `unavailable` when offline or when the answer does not fit.
   */
  request<T>(
    method: 'GET' | 'POST',
    path: string,
    options: { params?: Record<string, string>; body?: unknown; schema: z.ZodType<T> },
  ): Promise<T>;
}

/** What the desktop shell lets staff change: the app's role on this PC. */
export interface DesktopControl {
  current(): NonNullable<StationSettingsView['desktop']>;
  switchTo(input: {
    mode: 'station' | 'server';
    port?: number | undefined;
    network?: boolean | undefined;
    admin_email?: string | undefined;
    admin_password?: string | undefined;
  }): Promise<void>;
}

/** The harvest engine (electron/core/harvest/engine.ts), when one runs. */
export interface HarvestControl {
  status(): HarvestStatus;
  /** Makes a failed file due now; `held`: its copy waits for its source to be stable again. */
  retry(fileId: number): { held: boolean };
  /** Makes every failed file of the instruments harvested here due now; how many. */
  retryAll(): number;
  /**
   * Uploads again the file of a transfer completed into a `server` storage location whose
   * upload the server lost (harvest/uploadAgain.ts).
   */
  uploadAgain(transferUuid: string): Promise<UploadAgainResult>;
  /** Re-reads the configuration (and re-deploys schedules), then walks every folder. */
  rescanNow(): Promise<void>;
  /** Starts the harvest runs queued in the database (from the server) one after the other. */
  runQueued(): void;
}

export interface StationOptions {
  dataDir: string;
  log?: Logger;
  /** The wall clock: the times recorded. */
  clock?: () => number;
  /**
   * The clock the idle rule measures on, which should only go forward: on the wall clock, the
   * PC's time set on three hours force-ended a usage at once and billed the three hours, and
   * set back kept whoever walked away logged on. By default util/clock.ts monotonicMs, or
   * `clock` when a test gives only that.
   */
  elapsed?: () => number;
}

/**
 * Calls that only read. They do not count as someone using the station: a screen makes them
 * on its own (the Data tab every few seconds while files arrive, every open screen on each
 * change), and would otherwise keep the idle rule from ever logging off whoever walked away.
 * What counts is a call that changes something, and `session.touch`, which the screen sends
 * on keyboard, pointer and wheel input.
 */
const READ_CALLS: ReadonlySet<ApiName> = new Set([
  'station.info',
  'session.current',
  'toolControl.status',
  'usage.history',
  'usage.pending',
  'users.list',
  'sync.status',
  'settings.get',
  'harvest.status',
  'harvest.files',
  'harvest.file',
  'notebook.list',
  'notebook.get',
  'notebook.search',
  'notebook.tags',
  'reservations.upcoming',
  'reservations.current',
  'reservations.form',
]);

/** How often a running station looks for a bundle imported into its data dir meanwhile. */
const IMPORT_CHECK_MS = 2_000;

/**
 * The station core: one database, the person logged on at the instrument (one at a time, as at
 * the physical PC), the idle rule, and the handler map that both carriers dispatch to.
 */
export class Station {
  readonly events = new EventEmitter<{ event: [CoreEvent] }>();
  readonly handlers: Handlers;
  private session: { userId: number; startedAt: string } | null = null;
  private lastInputAt: number;
  private idleTimer: NodeJS.Timeout | undefined;
  /** The check for a bundle imported meanwhile (checkImport), and the import it last saw. */
  private importTimer: NodeJS.Timeout | undefined;
  private importSeen: string | null = null;
  private sync: SyncControl | null = null;
  private desktop: DesktopControl | null = null;
  private harvest: HarvestControl | null = null;
  /** Log-on attempts run one at a time, so parallel guesses cannot slip past the lock. */
  private logonQueue: Promise<unknown> = Promise.resolve();

  private readonly clock: () => number;
  /** See StationOptions.elapsed. */
  private readonly elapsed: () => number;

  constructor(
    readonly db: Db,
    readonly log: Logger,
    clock?: () => number,
    elapsed?: () => number,
  ) {
    this.clock = clock ?? Date.now;
    this.elapsed = elapsed ?? clock ?? monotonicMs;
    this.lastInputAt = this.elapsed();
    // One listener per screen's event stream (http/stationServer.ts), and the sync link's: as
    // many as there are pages open, not a leak past ten.
    this.events.setMaxListeners(0);
    this.handlers = this.buildHandlers();
  }

  static open(options: StationOptions): Station {
    const db = openStationDatabase(options.dataDir);
    return new Station(db, options.log ?? createLogger(), options.clock, options.elapsed);
  }

  close(): void {
    this.stopIdleWatch();
    this.db.close();
  }

  /** Validates raw arguments with the contract's schema and runs the handler. */
  async call(name: string, rawArgs: unknown): Promise<unknown> {
    if (!isApiName(name)) throw new AppError('not_found', `no call named ${JSON.stringify(name)}`);
    const args = rawArgs ?? {};
    // Both carriers (the HTTP /rpc and the desktop's IPC) come through here: a lone surrogate
    // anywhere in the arguments, keys too, would be stored as text that reads back otherwise.
    const illFormed = illFormedTextPath(args);
    if (illFormed !== null) {
      const problem = illFormedArgument(illFormed);
      throw new AppError('bad_request', `${name}: ${problem}`, { problems: [problem] });
    }
    const parsed = apiSchemas[name].safeParse(args);
    if (!parsed.success) {
      const problems = formatIssues(parsed.error.issues, '(arguments)', args);
      throw new AppError('bad_request', `${name}: ${problems.join('; ')}`, { problems });
    }
    const handler = this.handlers[name] as (args: unknown) => unknown;
    const result = await handler(parsed.data);
    // Input that counts against the idle log-off: a call that did something. A refused one (a
    // wrong PIN, a call the person may not make) would let any program on the machine keep
    // the session of whoever is logged on alive.
    if (!READ_CALLS.has(name)) this.lastInputAt = this.elapsed();
    return result;
  }

  emit(event: CoreEvent): void {
    this.events.emit('event', event);
  }

  get stationTool(): string | null {
    return getSetting(this.db, 'station.tool');
  }

  /** The runner (CLI or desktop shell) attaches the server link and, in the desktop, itself. */
  attach(controls: {
    sync?: SyncControl;
    desktop?: DesktopControl;
    harvest?: HarvestControl;
  }): void {
    if (controls.sync) this.sync = controls.sync;
    if (controls.harvest) this.harvest = controls.harvest;
    if (controls.desktop) this.desktop = controls.desktop;
  }

  /** Re-reads the harvest configuration and walks the folders; resolves once done. */
  reloadHarvest(): Promise<void> {
    return this.harvest?.rescanNow() ?? Promise.resolve();
  }

  /** The sync client applied harvest configuration or runs from the server. */
  harvestFromServer(change: { config: boolean; runs: boolean }): void {
    if (this.harvest) {
      if (change.config) {
        this.harvest.rescanNow().catch((error: unknown) => {
          this.log.error({ err: error }, 'harvest: configuration from the server not applied');
        });
      }
      if (change.runs) this.harvest.runQueued();
    }
    this.emit({ type: 'harvest.changed' });
  }

  /**
   * The server refused a transfer completed into one of its `server` storage locations: it
   * holds no upload of the file (UPLOAD_MISSING). The file is uploaded again, as the transfer
   * record says, by the harvest (harvest/uploadAgain.ts).
   */
  uploadAgain(transferUuid: string): Promise<UploadAgainResult> {
    return (
      this.harvest?.uploadAgain(transferUuid) ??
      Promise.resolve({ ok: false, reason: 'this station does not harvest now' })
    );
  }

  /** Called by the shell when it sees keyboard or pointer input (Electron's powerMonitor). */
  touch(): void {
    this.lastInputAt = this.elapsed();
  }

  /** The idle rule: log the UI session off, and optionally force-end usage after longer. */
  checkIdle(): void {
    const idleMs = this.elapsed() - this.lastInputAt;
    const logoffMs = getSetting(this.db, 'idle.logoffMinutes') * 60_000;
    if (this.session && idleMs >= logoffMs) {
      this.log.info({ userId: this.session.userId }, 'idle: logging the session off');
      this.session = null;
      this.emit({ type: 'session.changed', reason: 'idle' });
    }
    const forceEndMinutes = getSetting(this.db, 'idle.forceEndMinutes');
    const tool = this.stationTool;
    if (forceEndMinutes !== null && tool !== null && idleMs >= forceEndMinutes * 60_000) {
      if (toolStatus(this.db, tool).state === 'in_use') {
        // Ended when the limit passed, not at this check: a PC that slept (the idle clock
        // counts sleep) or a check that came late must not bill the time since.
        const overMs = idleMs - forceEndMinutes * 60_000;
        const usage = forceEndTool(
          this.db,
          null,
          tool,
          nowIso(() => this.clock() - overMs),
        );
        this.log.info({ usage: usage.uuid }, 'idle: usage force-ended, post-usage answers pending');
        // usage.changed too: a person still logged on (force-end sooner than log-off) is asked
        // for the post-usage answers now, as the screen re-reads pending forms on it.
        this.changed(tool, usage.uuid);
      }
    }
  }

  startIdleWatch(everyMs = 15_000): void {
    this.stopIdleWatch();
    this.idleTimer = setInterval(() => {
      try {
        this.checkIdle();
      } catch (error) {
        this.log.error({ err: error }, 'idle check failed');
      }
    }, everyMs);
    this.idleTimer.unref();
    this.importSeen = getSetting(this.db, 'harvest.importedAt');
    this.importTimer = setInterval(() => {
      try {
        this.checkImport();
      } catch (error) {
        this.log.error({ err: error }, 'import check failed');
      }
    }, IMPORT_CHECK_MS);
    this.importTimer.unref();
  }

  stopIdleWatch(): void {
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.idleTimer = undefined;
    if (this.importTimer) clearInterval(this.importTimer);
    this.importTimer = undefined;
  }

  /**
   * A bundle imported into this data dir while the station runs (`labstation import`, another
   * process) may change its tool's questions: the screens are told, as after a sync's delta,
   * and read the tool again. Else an open Enable form kept the old questions, and Enable was
   * refused for one it did not show.
   */
  private checkImport(): void {
    const imported = getSetting(this.db, 'harvest.importedAt');
    if (imported === this.importSeen) return;
    this.importSeen = imported;
    const tool = this.stationTool;
    if (tool !== null) this.emit({ type: 'tool.changed', tool });
  }

  private now(): string {
    return nowIso(this.clock);
  }

  private actor(): UserRow {
    const user = this.sessionUser();
    if (user === null) throw new AppError('unauthenticated', 'log on first');
    return user;
  }

  /**
   * The person logged on, or null. One the server turned off since (a pulled delta) is logged
   * off here at their next call, or staff rights would outlive the account.
   */
  private sessionUser(): UserRow | null {
    if (!this.session) return null;
    const user = findUser(this.db, this.session.userId);
    if (user.is_active === 1) return user;
    this.log.info({ user: user.username }, 'account turned off: logging the session off');
    this.session = null;
    this.emit({ type: 'session.changed', reason: 'deactivated' });
    return null;
  }

  private server(): SyncControl {
    if (!this.sync || this.sync.status() === null) {
      throw new AppError('unavailable', 'this station has no server link; book on the server');
    }
    return this.sync;
  }

  private staffLoggedOn(): boolean {
    return this.sessionUser()?.is_staff === 1;
  }

  private requireStaff(what: string): UserRow {
    const actor = this.actor();
    if (actor.is_staff !== 1) throw new AppError('forbidden', `only staff can ${what}`);
    return actor;
  }

  private sessionInfo(): SessionInfo | null {
    const user = this.sessionUser();
    if (user === null || !this.session) return null;
    const tool = this.stationTool;
    const toolRow = tool === null ? undefined : findTool(this.db, tool);
    return {
      user: userSummary(user),
      projects: activeProjectsOf(this.db, user.id).map(projectSummary),
      qualified:
        user.is_staff === 1 || (toolRow !== undefined && isQualified(this.db, user.id, toolRow.id)),
      pending: this.pendingFor(user.id),
      started_at: this.session.startedAt,
    };
  }

  private pendingFor(userId: number): SessionInfo['pending'] {
    return queryUsage(this.db, { userId, pendingOnly: true }).map((usage) => ({
      usage,
      questions: toolInfo(findTool(this.db, usage.tool_id)).post_usage_questions,
    }));
  }

  private changed(tool: string, usage?: string): void {
    this.emit({ type: 'tool.changed', tool });
    if (usage) this.emit({ type: 'usage.changed', usage });
  }

  private buildHandlers(): Handlers {
    const db = this.db;
    // What the handler modules (handlers/) use of the station, its private helpers included.
    const ctx: HandlerContext = {
      db,
      now: () => this.now(),
      clock: () => this.clock(),
      // Checked as actor() is: an account the server turned off since shows nothing more.
      session: () => (this.sessionUser() ? this.session : null),
      actor: () => this.actor(),
      requireStaff: (what) => this.requireStaff(what),
      staffLoggedOn: () => this.staffLoggedOn(),
      stationTool: () => this.stationTool,
      sync: () => this.sync,
      server: () => this.server(),
      desktop: () => this.desktop,
      harvest: () => this.harvest,
      pendingFor: (userId) => this.pendingFor(userId),
      emit: (event) => this.emit(event),
      changed: (tool, usage) => this.changed(tool, usage),
    };
    return {
      'station.info': () => ({
        role: 'station',
        tool: this.stationTool,
        idle: {
          logoffMinutes: getSetting(db, 'idle.logoffMinutes'),
          forceEndMinutes: getSetting(db, 'idle.forceEndMinutes'),
        },
        lockMode: getSetting(db, 'station.lockMode'),
      }),
      'session.logon': async ({ login, pin }) => {
        const attempt = this.logonQueue.then(() => {
          const now = new Date(this.clock());
          return checkLogon(
            db,
            login,
            pin,
            now,
            getSetting(db, 'security.lockMinutes'),
            ({ scope, user, until, locks }) =>
              scope === 'station'
                ? this.log.warn(
                    { locked_until: until, locks },
                    'log-on: the station locked after wrong PINs for different logins',
                  )
                : this.log.warn(
                    { user: user ?? '(unknown login)', locked_until: until, locks },
                    'log-on: a login locked after wrong PINs',
                  ),
          );
        });
        this.logonQueue = attempt.catch(() => undefined);
        const user = await attempt;
        const now = new Date(this.clock());
        this.session = { userId: user.id, startedAt: now.toISOString() };
        this.log.info({ user: user.username }, 'logged on');
        this.emit({ type: 'session.changed', reason: 'logon' });
        return this.sessionInfo()!;
      },
      'session.logoff': () => {
        if (this.session) this.emit({ type: 'session.changed', reason: 'logoff' });
        this.session = null;
        return { ok: true };
      },
      'session.current': () => ({ session: this.sessionInfo() }),
      'session.touch': () => ({ ok: true }),
      ...toolControlHandlers(ctx),
      ...usageHandlers(ctx),
      ...settingsHandlers(ctx),
      ...harvestHandlers(ctx),
      ...notebookHandlers({
        db,
        actor: () => this.actor(),
        now: () => this.now(),
        stationTool: () => this.stationTool,
        changed: (entry) => this.emit({ type: 'notebook.changed', entry }),
      }),
      ...reservationHandlers(ctx),
      ...userHandlers(ctx),
    };
  }
}
