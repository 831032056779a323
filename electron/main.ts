/**
 * The desktop shell. It only wires things: window, tray, single-instance lock, lock mode, idle
 * watch, IPC to the core. The application itself lives in electron/core and runs without it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  Menu,
  nativeImage,
  powerMonitor,
  session,
  shell,
  Tray,
  type IpcMainInvokeEvent,
} from 'electron';
import type { ApiName, CoreEvent, RpcEnvelope, ToolStatus } from '../shared/api.js';
import { APP_ROOT, DEMO_BUNDLE, RENDERER_DIR, RESOURCES_DIR } from './core/paths.js';
import { importBundle } from './core/station/facility.js';
import { getSetting } from './core/station/settings.js';
import { Station } from './core/station/station.js';
import { toApiError } from './core/util/errors.js';

const INDEX_URL = pathToFileURL(join(RENDERER_DIR, 'index.html')).href;
const dataDir = process.env.LABSTATION_DATA ?? join(app.getPath('userData'), 'data');

let station: Station | undefined;
let window: BrowserWindow | undefined;
let tray: Tray | undefined;

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', () => {
    if (!window) return;
    if (window.isMinimized()) window.restore();
    window.focus();
  });
  app.on('window-all-closed', () => app.quit());
  app.on('will-quit', () => station?.close());
  app.on('web-contents-created', (_event, contents) => {
    // No navigation away from the app, no new windows; http(s) links open in the browser.
    contents.on('will-navigate', (event, url) => {
      if (url !== INDEX_URL) event.preventDefault();
    });
    contents.setWindowOpenHandler(({ url }) => {
      if (/^https?:\/\//.test(url)) void shell.openExternal(url);
      return { action: 'deny' };
    });
  });
  app
    .whenReady()
    .then(start)
    .catch((error: unknown) => {
      // Without a window nothing would show that the app failed, and the single-instance lock
      // would keep every later start from doing anything.
      dialog.showErrorBox(
        'Labstation could not start',
        error instanceof Error ? error.message : String(error),
      );
      app.exit(1);
    });
}

async function start(): Promise<void> {
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) =>
    callback(false),
  );
  station = Station.open({ dataDir });
  if (station.stationTool === null && process.argv.includes('--demo')) {
    await importBundle(station.db, JSON.parse(readFileSync(DEMO_BUNDLE, 'utf8')) as unknown);
  }
  ipcMain.handle('labstation:call', handleCall);
  station.events.on('event', forwardEvent);
  station.startIdleWatch();
  watchInput();
  createWindow();
  createTray();
}

/** Only our own page may call the core; arguments are validated by the core's schemas. */
async function handleCall(
  event: IpcMainInvokeEvent,
  name: ApiName,
  args: unknown,
): Promise<RpcEnvelope> {
  if (!station || event.senderFrame?.url !== INDEX_URL) {
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

function createWindow(): void {
  window = new BrowserWindow({
    width: 1280,
    height: 900,
    minWidth: 1024,
    minHeight: 768,
    title: 'Labstation',
    icon: join(RESOURCES_DIR, 'icon.png'),
    webPreferences: {
      preload: join(APP_ROOT, 'dist', 'electron', 'preload.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      spellcheck: false,
    },
  });
  Menu.setApplicationMenu(null);
  void window.loadURL(INDEX_URL);
  window.on('closed', () => (window = undefined));
  applyLockMode(false);
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

function updateTray(): void {
  const tool = station?.stationTool;
  if (!tray || !station || !tool) return;
  void station
    .call('toolControl.status', { tool })
    .then((result) => {
      const status = result as ToolStatus;
      const state =
        status.state === 'in_use'
          ? `in use by ${status.active?.user_name ?? '?'} since ${status.active?.start ?? '?'}`
          : status.state === 'shutdown'
            ? `shut down: ${status.shutdown?.reason ?? ''}`
            : 'idle';
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

/** Real keyboard or pointer input anywhere on the PC counts as someone at the station. */
function watchInput(): void {
  setInterval(() => {
    if (powerMonitor.getSystemIdleTime() < 15) station?.touch();
  }, 10_000).unref();
}
