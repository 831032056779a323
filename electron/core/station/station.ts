import { EventEmitter } from 'node:events';
import { dirname } from 'node:path';
import type { z } from 'zod';
import {
  apiSchemas,
  isApiName,
  type ApiName,
  type ApiParsedArgs,
  type ApiResult,
  type CoreEvent,
  type HarvestFileView,
  type HarvestStatus,
  type HarvestTransferView,
  type SessionInfo,
  type StationSettingsView,
  type SyncStatus,
  type UsageEventView,
} from '../../../shared/api.js';
import type { Db } from '../db/open.js';
import { openStationDatabase } from './database.js';
import {
  SYNC_RESERVATION_CANCEL_PATH,
  SYNC_RESERVATION_FORM_PATH,
  SYNC_RESERVATIONS_PATH,
} from '../sync/protocol.js';
import {
  bookedReservationSchema,
  cancelledReservationSchema,
  reservationFormSchema,
} from '../sync/answerSchema.js';
import { AppError } from '../util/errors.js';
import { nowIso } from '../util/ids.js';
import { createLogger, type Logger } from '../util/log.js';
import { retryNow } from '../harvest/records.js';
import { idleHarvestStatus } from '../harvest/status.js';
import { getFileView, listFiles, listTransfers } from '../harvest/views.js';
import { notebookHandlers } from '../notebook/handlers.js';
import { formatIssues } from '../util/issues.js';
import { checkLogon, decoy } from './logon.js';
import {
  activeProjectsOf,
  activeUsageOf,
  findProject,
  findTool,
  findUser,
  isQualified,
  projectSummary,
  queryUsage,
  toolInfo,
  fileUsageView,
  userSummary,
  type UserRow,
} from './records.js';
import {
  currentReservation,
  dropStationReservation,
  reservationsSyncedAt,
  storeStationReservation,
  upcomingReservations,
  viewOfSynced,
} from './reservations.js';
import { getSetting } from './settings.js';
import {
  clearShutdown,
  completePending,
  disableTool,
  enableTool,
  forceEndTool,
  toolStatus,
  validateUsage,
} from './toolControl.js';

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
  retry(fileId: number): void;
  /** Makes every failed file of the instruments harvested here due now; how many. */
  retryAll(): number;
  /** Re-reads the configuration (and re-deploys schedules), then walks every folder. */
  rescanNow(): Promise<void>;
  /** Starts the harvest runs queued in the database (from the server) one after the other. */
  runQueued(): void;
}

export interface StationOptions {
  dataDir: string;
  log?: Logger;
  clock?: () => number;
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
  private sync: SyncControl | null = null;
  private desktop: DesktopControl | null = null;
  private harvest: HarvestControl | null = null;
  /** Log-on attempts run one at a time, so parallel guesses cannot slip past the lock. */
  private logonQueue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly db: Db,
    readonly log: Logger,
    private readonly clock: () => number = Date.now,
  ) {
    this.lastInputAt = clock();
    this.handlers = this.buildHandlers();
  }

  static open(options: StationOptions): Station {
    const db = openStationDatabase(options.dataDir);
    return new Station(db, options.log ?? createLogger(), options.clock);
  }

  close(): void {
    this.stopIdleWatch();
    this.db.close();
  }

  /** Validates raw arguments with the contract's schema and runs the handler. */
  async call(name: string, rawArgs: unknown): Promise<unknown> {
    if (!isApiName(name)) throw new AppError('not_found', `no call named ${JSON.stringify(name)}`);
    const args = rawArgs ?? {};
    const parsed = apiSchemas[name].safeParse(args);
    if (!parsed.success) {
      const problems = formatIssues(parsed.error.issues, '(arguments)', args);
      throw new AppError('bad_request', `${name}: ${problems.join('; ')}`, { problems });
    }
    if (!READ_CALLS.has(name)) this.lastInputAt = this.clock();
    const handler = this.handlers[name] as (args: unknown) => unknown;
    return await handler(parsed.data);
  }

  emit(event: CoreEvent): void {
    this.events.emit('event', event);
  }

  get stationTool(): string | null {
    return getSetting(this.db, 'station.tool');
  }

  /**
   * A station controls its own tool only: a usage it recorded for another would be refused by
   * its server (which takes a station's records for the tool it was registered for) and, until
   * then, held there. Reading another tool's state stays open.
   */
  private requireOwnTool(tool: string | number, doing: string): void {
    const own = this.stationTool;
    if (own === null) return;
    const name = findTool(this.db, tool).name;
    if (name !== own) {
      throw new AppError(
        'forbidden',
        `tool: this station runs ${JSON.stringify(own)}; ${doing} ${JSON.stringify(name)} at its own station`,
      );
    }
  }

  /**
   * The runner (CLI or desktop shell) attaches the server link and, in the desktop, itself.
   * A station that serves people makes the decoy PIN hash now, ahead of the first log-on
   * (logon.ts); a one-shot command (`harvest --once`, `files`) never needs it, and skips the
   * 90 ms it costs.
   */
  attach(controls: {
    sync?: SyncControl;
    desktop?: DesktopControl;
    harvest?: HarvestControl;
  }): void {
    void decoy();
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

  /** Called by the shell when it sees keyboard or pointer input (Electron's powerMonitor). */
  touch(): void {
    this.lastInputAt = this.clock();
  }

  /** The idle rule: log the UI session off, and optionally force-end usage after longer. */
  checkIdle(): void {
    const idleMs = this.clock() - this.lastInputAt;
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
        const usage = forceEndTool(this.db, null, tool, this.now());
        this.log.info({ usage: usage.uuid }, 'idle: usage force-ended, post-usage answers pending');
        this.emit({ type: 'tool.changed', tool });
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
  }

  stopIdleWatch(): void {
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.idleTimer = undefined;
  }

  private now(): string {
    return nowIso(this.clock);
  }

  private actor(): UserRow {
    if (!this.session) throw new AppError('unauthenticated', 'log on first');
    return findUser(this.db, this.session.userId);
  }

  private server(): SyncControl {
    if (!this.sync || this.sync.status() === null) {
      throw new AppError('unavailable', 'this station has no server link; book on the server');
    }
    return this.sync;
  }

  /**
   * A file as whoever is at the screen may see it. Its metadata_ holds who made it and the
   * usage's answers (usage_context), and the destination of a file made during a usage may be
   * named after them ({user}, {project}, {usage_event}): for someone logged on only, as the
   * usage history is.
   */
  private forViewer(file: HarvestFileView): HarvestFileView {
    if (this.session) return file;
    const last = file.last_transfer;
    return {
      ...file,
      usage_event: null,
      metadata_: {},
      last_transfer: last && this.transferForViewer(last, file.usage_event),
    };
  }

  /**
   * A transfer of a file made during `usage` for a screen nobody is logged on to: where it went
   * is left out (forViewer). The reason stays, as the screen must say why a file failed, with
   * the destination's folder cut out of it.
   */
  private transferForViewer(
    transfer: HarvestTransferView,
    usage: string | null,
  ): HarvestTransferView {
    if (this.session || usage === null) return transfer;
    const destination = transfer.destination_path;
    const folder = destination === null ? '.' : dirname(destination);
    const redact = (text: string): string =>
      folder === '.' || folder === '/' || folder === '' ? text : text.split(folder).join('…');
    return {
      ...transfer,
      destination_path: null,
      error: redact(transfer.error),
      note: redact(transfer.note),
    };
  }

  private staffLoggedOn(): boolean {
    if (!this.session) return false;
    const user = this.db
      .prepare('SELECT is_staff FROM users WHERE id = ?')
      .pluck()
      .get(this.session.userId);
    return user === 1;
  }

  private requireStaff(what: string): UserRow {
    const actor = this.actor();
    if (actor.is_staff !== 1) throw new AppError('forbidden', `only staff can ${what}`);
    return actor;
  }

  private sessionInfo(): SessionInfo | null {
    if (!this.session) return null;
    const user = findUser(this.db, this.session.userId);
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
          return checkLogon(db, login, pin, now, getSetting(db, 'security.lockMinutes'));
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
      'toolControl.status': ({ tool }) => toolStatus(db, tool),
      'toolControl.enable': (args) => {
        this.requireOwnTool(args.tool, 'enable');
        let usage: UsageEventView;
        try {
          usage = enableTool(db, this.actor(), args, this.now());
        } catch (error) {
          // A problem report in the pre-usage answers may have shut the tool down.
          if (error instanceof AppError && error.code === 'tool_shutdown') {
            this.emit({ type: 'tool.changed', tool: String(args.tool) });
          }
          throw error;
        }
        this.changed(usage.tool_name, usage.uuid);
        return { usage };
      },
      'toolControl.disable': (args) => {
        const usage = disableTool(db, this.actor(), args, this.now());
        this.changed(usage.tool_name, usage.uuid);
        return { usage };
      },
      'toolControl.forceEnd': ({ tool }) => {
        // A usage this station recorded on a tool it ran before can still be ended here (its
        // server takes a station's records for its former tools, and no other station may).
        if (!activeUsageOf(db, findTool(db, tool).id)) this.requireOwnTool(tool, 'force-end');
        const usage = forceEndTool(db, this.actor(), tool, this.now());
        this.changed(usage.tool_name, usage.uuid);
        return { usage };
      },
      'toolControl.validate': ({ usage: ref }) => {
        const usage = validateUsage(db, this.actor(), ref, this.now());
        this.changed(usage.tool_name, usage.uuid);
        return { usage };
      },
      'toolControl.clearShutdown': ({ tool }) => {
        this.requireOwnTool(tool, 'bring back');
        const status = clearShutdown(db, this.actor(), tool, this.now());
        this.changed(status.tool.name);
        return status;
      },
      'usage.history': ({ tool, user, from, to }) => {
        this.actor();
        const toolRow = findTool(db, tool);
        return {
          tool: toolInfo(toolRow),
          events: queryUsage(db, {
            toolId: toolRow.id,
            ...(user === undefined ? {} : { userId: findUser(db, user).id }),
            ...(from === undefined ? {} : { from: boundary(from, 'from') }),
            ...(to === undefined ? {} : { to: boundary(to, 'to') }),
          }),
        };
      },
      'usage.pending': () => ({ pending: this.pendingFor(this.actor().id) }),
      'usage.completePending': (args) => {
        const usage = completePending(db, this.actor(), args, this.now());
        this.changed(usage.tool_name, usage.uuid);
        return { usage };
      },
      'sync.status': () => {
        const linked = this.sync?.status();
        // Why the server refused a record names people and their usage: for staff only (the
        // status line shows on the kiosk to whoever stands there).
        if (linked) return this.staffLoggedOn() ? linked : { ...linked, refusedReason: null };
        const waiting = db.prepare('SELECT count(*) FROM outbox').pluck().get() as number;
        return {
          configured: false,
          online: false,
          lastSyncAt: null,
          waiting,
          refused: 0,
          refusedReason: null,
          lastError: null,
          clockSkewSeconds: null,
        };
      },
      'settings.get': () => {
        this.requireStaff('see the station settings');
        return {
          sync: this.sync?.settings() ?? { server: null, keySet: false },
          desktop: this.desktop?.current() ?? null,
        };
      },
      'settings.setSync': async (args) => {
        this.requireStaff('change the server link');
        if (!this.sync)
          throw new AppError('bad_request', 'this station runs without a server link');
        await this.sync.configure(args);
        return this.handlers['sync.status']({});
      },
      'settings.setDesktopMode': async (args) => {
        this.requireStaff('switch the app between station and server');
        if (!this.desktop) {
          throw new AppError(
            'bad_request',
            'only the desktop app switches modes; run `labstation serve` for a server',
          );
        }
        await this.desktop.switchTo(args);
        return { restarting: true as const };
      },
      'harvest.status': () => this.harvest?.status() ?? idleHarvestStatus(db),
      'harvest.files': (args) => ({
        files: listFiles(db, {
          state: args.state,
          limit: args.limit ?? 100,
          beforeId: args.before_id,
          search: args.search,
        }).map((f) => this.forViewer(f)),
      }),
      'harvest.file': ({ id }) => {
        const file = getFileView(db, id);
        if (!file) throw new AppError('not_found', `no harvested file with id ${id}`);
        return {
          file: this.forViewer(file),
          transfers: listTransfers(db, { fileId: id }).map((t) =>
            this.transferForViewer(t, file.usage_event),
          ),
          // Who made it and with which project: for someone logged on (forViewer).
          usage: this.session ? fileUsageView(db, id) : null,
        };
      },
      'harvest.retry': ({ file_id: fileId }) => {
        this.actor();
        if (this.harvest) this.harvest.retry(fileId);
        else if (!retryNow(db, fileId)) {
          throw new AppError('conflict', `file ${fileId} has no failed transfer to retry`);
        }
        const file = getFileView(db, fileId) as HarvestFileView;
        this.emit({ type: 'harvest.changed' });
        return { file };
      },
      'harvest.retryAll': () => {
        this.actor();
        if (!this.harvest) throw new AppError('bad_request', 'no harvest runs on this station');
        const count = this.harvest.retryAll();
        this.emit({ type: 'harvest.changed' });
        return { count };
      },
      'harvest.rescan': async () => {
        this.actor();
        if (!this.harvest) throw new AppError('bad_request', 'no harvest runs on this station');
        await this.harvest.rescanNow();
        return { ok: true as const };
      },
      ...notebookHandlers({
        db,
        actor: () => this.actor(),
        now: () => this.now(),
        stationTool: () => this.stationTool,
        changed: (entry) => this.emit({ type: 'notebook.changed', entry }),
      }),
      'reservations.upcoming': ({ limit }) => {
        const viewer = this.session ? findUser(db, this.session.userId) : null;
        const status = this.sync?.status() ?? null;
        return {
          reservations: upcomingReservations(db, viewer, this.now(), limit ?? 100),
          linked: status !== null,
          online: status?.online ?? false,
          synced_at: reservationsSyncedAt(db),
        };
      },
      'reservations.current': ({ user }) => {
        const actor = this.actor();
        const person = user === undefined ? actor : findUser(db, user);
        if (person.id !== actor.id && actor.is_staff !== 1) {
          throw new AppError('forbidden', "only staff can see someone else's reservation");
        }
        const tool = this.stationTool;
        const questions = tool === null ? [] : toolInfo(findTool(db, tool)).pre_usage_questions;
        return currentReservation(db, person, questions, new Date(this.clock()));
      },
      'reservations.form': async ({ project }) => {
        this.actor();
        const projectRow = findProject(db, project);
        return await this.server().request('GET', SYNC_RESERVATION_FORM_PATH, {
          params: { project_uuid: projectRow.uuid },
          schema: reservationFormSchema,
        });
      },
      'reservations.book': async ({ project, start, end, answers }) => {
        const actor = this.actor();
        const projectRow = findProject(db, project);
        const { reservation } = await this.server().request('POST', SYNC_RESERVATIONS_PATH, {
          body: { user_uuid: actor.uuid, project_uuid: projectRow.uuid, start, end, answers },
          schema: bookedReservationSchema,
        });
        // Listed at once; the next pull brings the same record.
        storeStationReservation(db, reservation);
        this.emit({ type: 'reservations.changed' });
        return { reservation: viewOfSynced(reservation, actor) };
      },
      'reservations.cancel': async ({ uuid }) => {
        const actor = this.actor();
        // Dropped here only once the server says it cancelled it.
        await this.server().request('POST', SYNC_RESERVATION_CANCEL_PATH, {
          body: { user_uuid: actor.uuid, reservation_uuid: uuid },
          schema: cancelledReservationSchema,
        });
        dropStationReservation(db, uuid);
        this.emit({ type: 'reservations.changed' });
        return { ok: true as const };
      },
      'users.list': ({ tool }) => {
        const actor = this.actor();
        if (actor.is_staff !== 1) throw new AppError('forbidden', 'only staff can list users');
        const toolRow = findTool(db, tool);
        const rows = db
          .prepare(
            `SELECT * FROM users u WHERE u.is_active = 1 AND (u.is_staff = 1 OR EXISTS
               (SELECT 1 FROM qualifications q WHERE q.user_id = u.id AND q.tool_id = ?))
             ORDER BY u.last_name, u.first_name, u.username`,
          )
          .all(toolRow.id) as UserRow[];
        return {
          users: rows.map((u) => ({
            ...userSummary(u),
            projects: activeProjectsOf(db, u.id).map(projectSummary),
          })),
        };
      },
    };
  }
}

/** As the contract's own refusal of an argument: the problem in details.problems too. */
function badBoundary(problem: string): AppError {
  return new AppError('bad_request', problem, { problems: [problem] });
}

/**
 * History bounds: a date alone means that whole day in the station's local time zone (from
 * its start, to its end); a date-time is taken as given. Everything is folded to UTC text so it
 * compares with the stored times.
 */
export function boundary(value: string, side: 'from' | 'to'): string {
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (date) {
    const [y, m, d] = [Number(date[1]), Number(date[2]), Number(date[3])];
    const day = new Date(y, m - 1, d);
    if (day.getFullYear() !== y || day.getMonth() !== m - 1 || day.getDate() !== d) {
      throw badBoundary(`${side}: ${value} is not a real date`);
    }
    if (side === 'to') day.setDate(d + 1);
    return day.toISOString();
  }
  const time = new Date(value);
  const [, y, m, d] = /^(\d{4})-(\d{2})-(\d{2})/.exec(value) ?? [];
  const real = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  if (
    Number.isNaN(time.getTime()) ||
    real.getUTCMonth() !== Number(m) - 1 ||
    real.getUTCDate() !== Number(d)
  ) {
    throw badBoundary(`${side}: ${value} is not a real date-time`);
  }
  return time.toISOString();
}
