/**
 * The desktop shell. It only wires things: window, tray, single-instance lock, lock mode, idle
 * watch, IPC to the core, and the app's role on this PC (station or server, chosen in the
 * station's settings and kept in <userData>/labstation.json). The application itself lives in
 * electron/core and runs without it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  Menu,
  nativeImage,
  powerMonitor,
  protocol,
  session,
  shell,
  Tray,
  type IpcMainInvokeEvent,
  type MenuItemConstructorOptions,
} from 'electron';
import type { ApiName, CoreEvent, RpcEnvelope, ToolStatus } from '../shared/api.js';
import {
  APP_INDEX_URL,
  APP_SCHEME,
  APP_SCHEME_PRIVILEGES,
  serveAppRequest,
} from './core/desktop/appScheme.js';
import {
  desktopPaths,
  readDesktopConfig,
  switchDesktopMode,
  writeDesktopConfig,
  type DesktopConfig,
} from './core/desktop/mode.js';
import { hardenedWebPreferences, isOwnPage, isWebLink } from './core/desktop/policy.js';
import { APP_ROOT, DEMO_BUNDLE, RENDERER_DIR, RESOURCES_DIR } from './core/paths.js';
import { runServer, type RunningServer } from './core/runServer.js';
import { importBundle } from './core/station/facility.js';
import { getSetting } from './core/station/settings.js';
import { Station } from './core/station/station.js';
import { SystemIdleReadings } from './core/station/systemIdle.js';
import { Harvester } from './core/harvest/engine.js';
import { takeDataDirLock, type HarvestLock } from './core/harvest/lock.js';
import { SyncLink } from './core/sync/link.js';
import { RESTORE_CHECK_WAIT_MS } from './core/sync/restored.js';
import { toApiError } from './core/util/errors.js';
import { createLogger } from './core/util/log.js';
import { stopThenClose } from './core/util/shutdown.js';

/** The station page, served by the app's own scheme (core/desktop/appScheme.ts), not file://. */
const INDEX_URL = APP_INDEX_URL;
const paths = desktopPaths(app.getPath('userData'));
const log = createLogger();

let config: DesktopConfig = readDesktopConfig(paths.config);
let station: Station | undefined;
let sync: SyncLink | undefined;
let harvester: Harvester | undefined;
let server: RunningServer | undefined;
/** The station's hold on its data dir (a CLI station there meanwhile is refused). */
let stationLock: HarvestLock | undefined;
let window: BrowserWindow | undefined;
let tray: Tray | undefined;
/** Quitting: what runs is being ended (closeAll), then the app quits. */
let quitting: 'no' | 'closing' | 'ready' = 'no';
/** What the window may show: the station page, or the local server's origin. */
let ownPage: { page?: string; origin?: string } = { page: INDEX_URL };

// Before the app is ready, as Electron requires: app:// is a standard, secure scheme (privileges
// and why in appScheme.ts). Its requests are answered once the station starts (serveAppScheme).
protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: APP_SCHEME_PRIVILEGES }]);

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', () => {
    // Started again while this one quits (closeAll can take seconds): start anew once it has.
    if (quitting !== 'no') {
      app.relaunch();
      return;
    }
    if (!window) return;
    if (window.isMinimized()) window.restore();
    window.focus();
  });
  app.on('window-all-closed', () => app.quit());
  app.on('will-quit', (event) => {
    if (quitting === 'ready') return;
    event.preventDefault();
    if (quitting === 'closing') return;
    quitting = 'closing';
    void closeAll().finally(() => {
      quitting = 'ready';
      app.quit();
    });
  });
  app.on('web-contents-created', (_event, contents) => {
    // No navigation away from the app, no new windows; http(s) links open in the browser.
    contents.on('will-navigate', (event, url) => {
      if (isOwnPage(url, ownPage)) return;
      event.preventDefault();
      // A link meant for the current tab (a notebook url field with open_in_current_tab):
      // the app's window stays the app; a web link opens in the browser instead.
      if (isWebLink(url)) void shell.openExternal(url);
    });
    contents.setWindowOpenHandler(({ url }) => {
      if (isWebLink(url) && !isOwnPage(url, ownPage)) void shell.openExternal(url);
      return { action: 'deny' };
    });
    // No <webview> (webviewTag is off too): one would be a page of its own preferences.
    contents.on('will-attach-webview', (event) => event.preventDefault());
  });
  app
    .whenReady()
    .then(() => (config.mode === 'server' ? startServerMode() : startStationMode()))
    .catch((error: unknown) => {
      // Without a window nothing would show that the app failed, and the single-instance lock
      // would keep every later start from doing anything.
      const message = error instanceof Error ? error.message : String(error);
      if (config.mode !== 'server') {
        dialog.showErrorBox('Labstation could not start', message);
        app.exit(1);
        return;
      }
      // A server that cannot start (its port taken since) would fail at every start, with no
      // window to switch back from: the way back to the station is offered here.
      const choice = dialog.showMessageBoxSync({
        type: 'error',
        title: 'Labstation could not start',
        message: 'The server could not start.',
        detail: `${message}\n\nThe station's data is kept; starting as a station changes nothing on the server.`,
        buttons: ['Quit', 'Start as a station'],
        defaultId: 1,
        cancelId: 0,
      });
      if (choice === 1) {
        writeDesktopConfig(paths.config, { ...config, mode: 'station' });
        app.relaunch();
      }
      app.exit(choice === 1 ? 0 : 1);
    });
}

/** Ends what runs before the app quits, the database last (util/shutdown.ts). */
async function closeAll(): Promise<void> {
  const [harvest, link, web, core] = [harvester, sync, server, station];
  await stopThenClose(
    {
      harvest: harvest && (() => harvest.stop()),
      sync: link && (() => link.stop()),
      server: web && (() => web.close()),
    },
    () => {
      core?.close();
      stationLock?.release();
    },
    { log },
  );
}

/**
 * The station window's page and assets, from the built renderer only, on the session the window
 * uses (the default one: its webPreferences name no partition).
 */
function serveAppScheme(): void {
  session.defaultSession.protocol.handle(APP_SCHEME, (request) =>
    serveAppRequest(request, RENDERER_DIR),
  );
}

function denyPermissions(): void {
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) =>
    callback(false),
  );
  // Checks too (a page asking whether it has a permission, without a prompt): none is had.
  session.defaultSession.setPermissionCheckHandler(() => false);
}

/** Starts again in the mode just recorded; the reply to the settings call goes out first. */
function relaunchSoon(): void {
  setTimeout(() => {
    quitting = 'closing';
    void closeAll().finally(() => {
      app.relaunch();
      app.exit(0);
    });
  }, 300);
}

async function startStationMode(): Promise<void> {
  denyPermissions();
  serveAppScheme();
  stationLock = takeDataDirLock(paths.stationData);
  station = Station.open({ dataDir: paths.stationData, log });
  if (station.stationTool === null && process.argv.includes('--demo')) {
    await importBundle(station.db, JSON.parse(readFileSync(DEMO_BUNDLE, 'utf8')) as unknown);
  }
  sync = new SyncLink(station);
  const stationCore = station;
  const stationHarvest = new Harvester({
    db: stationCore.db,
    log,
    tool: () => stationCore.stationTool,
    emit: (event) => stationCore.emit(event),
    lockFile: join(paths.stationData, 'harvest.lock'),
    waitForLock: true,
  });
  harvester = stationHarvest;
  station.attach({
    sync,
    harvest: stationHarvest,
    desktop: {
      current: () => ({ mode: 'station', port: config.port, network: config.network }),
      async switchTo(input) {
        if (input.mode === 'station') return;
        config = await switchDesktopMode(paths, input);
        relaunchSoon();
      },
    },
  });
  // A station configured for a server syncs at once; one without a tool waits for its facility.
  await sync.start();
  ipcMain.handle('labstation:call', handleCall);
  station.events.on('event', forwardEvent);
  station.startIdleWatch();
  // Copies run in worker threads: the window stays responsive whatever the file sizes. The
  // harvest waits for the server's first answer, which tells a data dir restored from a backup
  // (core/sync/restored.ts).
  sync
    .pulled(RESTORE_CHECK_WAIT_MS)
    .then(() => (quitting !== 'no' ? undefined : stationHarvest.start()))
    .catch((error: unknown) => log.error({ err: error }, 'harvest did not start'));
  watchInput();
  createWindow(true);
  void window?.loadURL(INDEX_URL);
  applyLockMode(false);
  createTray();
}

async function startServerMode(): Promise<void> {
  denyPermissions();
  server = await runServer({
    dataDir: paths.serverData,
    host: config.network ? '0.0.0.0' : '127.0.0.1',
    port: config.port,
    log,
  });
  const local = `http://127.0.0.1:${config.port}/`;
  ownPage = { origin: new URL(local).origin };
  createWindow(false);
  void window?.loadURL(local);
  createTray();
}

/** Only our own page may call the core; arguments are validated by the core's schemas. */
async function handleCall(
  event: IpcMainInvokeEvent,
  name: ApiName,
  args: unknown,
): Promise<RpcEnvelope> {
  // The station window's own top frame only: not another window, not a frame within it.
  const frame = event.senderFrame;
  const fromOwnWindow =
    window !== undefined &&
    event.sender === window.webContents &&
    frame !== null &&
    frame === event.sender.mainFrame;
  if (!station || !fromOwnWindow || !isOwnPage(frame?.url ?? '', { page: INDEX_URL })) {
    return {
      ok: false,
      error: { code: 'forbidden', message: 'calls are accepted from the app window only' },
    };
  }
  try {
    return { ok: true, result: await station.call(String(name), args) };
  } catch (error) {
    const apiError = toApiError(error);
    if (apiError.code === 'internal') station.log.error({ err: error, name }, 'call failed');
    return { ok: false, error: apiError };
  }
}

function forwardEvent(event: CoreEvent): void {
  window?.webContents.send('labstation:event', event);
  if (event.type === 'tool.changed') updateTray();
  if (event.type === 'session.changed') applyLockMode(event.reason === 'logon');
}

/** The window, hardened the same in both modes; only the station gets the preload. */
function createWindow(withPreload: boolean): void {
  window = new BrowserWindow({
    width: 1280,
    height: 900,
    minWidth: 1024,
    minHeight: 768,
    title: config.mode === 'server' ? 'Labstation server' : 'Labstation',
    icon: join(RESOURCES_DIR, 'icon.png'),
    webPreferences: hardenedWebPreferences(
      withPreload ? join(APP_ROOT, 'dist', 'electron', 'preload.cjs') : undefined,
    ),
  });
  // No menu (no reload, no developer tools, no quit past lock mode), except on macOS: there
  // copy, paste, cut and select all reach a text field only through the Edit menu's roles. Its
  // app menu holds About alone: the role's own holds Quit (Cmd+Q), which a kiosk still obeys.
  Menu.setApplicationMenu(
    process.platform === 'darwin'
      ? Menu.buildFromTemplate([
          { label: app.name, submenu: [{ role: 'about' }] },
          { role: 'editMenu' },
        ])
      : null,
  );
  window.on('closed', () => (window = undefined));
}

/** Lock mode: a full-screen kiosk that covers the desktop until someone logs on. */
function applyLockMode(loggedOn: boolean): void {
  if (!station || !window) return;
  const lock = getSetting(station.db, 'station.lockMode') && !loggedOn;
  window.setKiosk(lock);
  window.setAlwaysOnTop(lock, 'screen-saver');
  window.setClosable(!lock);
}

function createTray(): void {
  tray = new Tray(nativeImage.createFromPath(join(RESOURCES_DIR, 'tray.png')));
  tray.on('click', () => window?.show());
  updateTray();
}

function serverMenu(): MenuItemConstructorOptions[] {
  const address = `http://${config.network ? '<this PC>' : '127.0.0.1'}:${config.port}/`;
  return [
    { label: `Labstation server at ${address}`, enabled: false },
    { label: 'Show', click: () => window?.show() },
    {
      label: 'Switch this PC back to station mode…',
      click: () => void confirmSwitchToStation(),
    },
  ];
}

/** The server stops for every station and browser user: asked first, never by accident. */
async function confirmSwitchToStation(): Promise<void> {
  const { response } = await dialog.showMessageBox({
    type: 'warning',
    buttons: ['Cancel', 'Stop the server and switch'],
    defaultId: 0,
    cancelId: 0,
    message: 'Switch this PC back to station mode?',
    detail:
      'The facility server stops: stations keep working offline and sync again once a ' +
      'server runs. The server data stays on this PC.',
  });
  if (response !== 1) return;
  writeDesktopConfig(paths.config, { ...config, mode: 'station' });
  relaunchSoon();
}

function updateTray(): void {
  if (!tray) return;
  if (config.mode === 'server') {
    tray.setToolTip('Labstation server');
    tray.setContextMenu(Menu.buildFromTemplate(serverMenu()));
    return;
  }
  const tool = station?.stationTool;
  if (!station || !tool) return;
  void station
    .call('toolControl.status', { tool })
    .then((result) => {
      const status = result as ToolStatus;
      const state =
        status.state === 'in_use'
          ? `in use by ${status.active?.user_name ?? '?'} since ${status.active?.start ?? '?'}`
          : status.state === 'shutdown'
            ? `shut down: ${status.shutdown?.reason ?? ''}`
            : status.operational
              ? 'idle'
              : 'idle, not operational (staff only)';
      tray?.setToolTip(`Labstation: ${tool} ${state}`);
      tray?.setContextMenu(
        Menu.buildFromTemplate([
          { label: `${tool}: ${state}`, enabled: false },
          { label: 'Show', click: () => window?.show() },
        ]),
      );
    })
    .catch((error: unknown) => station?.log.warn({ err: error }, 'tray update failed'));
}

/**
 * Real keyboard or pointer input anywhere on the PC counts as someone at the station, as long
 * as the desktop tells it (core/station/systemIdle.ts).
 */
function watchInput(): void {
  const readings = new SystemIdleReadings();
  setInterval(() => {
    const recent = readings.note(powerMonitor.getSystemIdleTime(), Date.now(), () =>
      station?.log.warn(
        'idle: the desktop has said 0 s since the last input for half an hour; only input in ' +
          "the station's window counts now",
      ),
    );
    if (recent) station?.touch();
  }, 10_000).unref();
}
