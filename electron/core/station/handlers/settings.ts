/**
 * The sync.status and settings.* calls of the station's handler map (station.ts): the server
 * link's state, and what staff may change (the server link, the desktop app's mode).
 */
import { AppError } from '../../util/errors.js';
import type { HandlerContext, HandlersOf } from './context.js';

export type SettingsContext = Pick<
  HandlerContext,
  'db' | 'sync' | 'desktop' | 'staffLoggedOn' | 'requireStaff' | 'emit'
>;

export function settingsHandlers(ctx: SettingsContext): HandlersOf<'sync' | 'settings'> {
  const { db } = ctx;
  const handlers: HandlersOf<'sync' | 'settings'> = {
    'sync.status': () => {
      const linked = ctx.sync()?.status();
      // Why the server refused a record names people and their usage: for staff only (the
      // status line shows on the kiosk to whoever stands there).
      if (linked) return ctx.staffLoggedOn() ? linked : { ...linked, refusedReason: null };
      const waiting = db.prepare('SELECT count(*) FROM outbox').pluck().get() as number;
      return {
        configured: false,
        online: false,
        lastSyncAt: null,
        waiting,
        refused: 0,
        refusedReason: null,
        lastError: null,
        keyRefused: null,
        clockSkewSeconds: null,
      };
    },
    'settings.get': () => {
      ctx.requireStaff('see the station settings');
      return {
        sync: ctx.sync()?.settings() ?? { server: null, keySet: false },
        desktop: ctx.desktop()?.current() ?? null,
      };
    },
    'settings.setSync': async (args) => {
      ctx.requireStaff('change the server link');
      const sync = ctx.sync();
      if (!sync) throw new AppError('bad_request', 'this station runs without a server link');
      await sync.configure(args);
      ctx.emit({ type: 'settings.changed' });
      return handlers['sync.status']({});
    },
    'settings.setDesktopMode': async (args) => {
      ctx.requireStaff('switch the app between station and server');
      const desktop = ctx.desktop();
      if (!desktop) {
        throw new AppError(
          'bad_request',
          'only the desktop app switches modes; run `labstation serve` for a server',
        );
      }
      // This is the station: there is nothing to switch to, and no restart to promise.
      if (args.mode === 'station') {
        throw new AppError('bad_request', 'mode: this app runs as a station already');
      }
      await desktop.switchTo(args);
      return { restarting: true as const };
    },
  };
  return handlers;
}
