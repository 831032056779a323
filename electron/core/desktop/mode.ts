/**
 * The desktop app's role on this PC: a station (the default) or the facility's server. The
 * choice lives in a small JSON file in the app's user-data folder; each role has its own data
 * dir, so switching loses nothing and switching back finds everything as it was. Electron-free,
 * so it runs (and is tested) in plain Node; electron/main.ts only relaunches the app.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { z } from 'zod';
import { createAccount } from '../server/accounts.js';
import { openServerData } from '../server/dataDir.js';
import { AppError, fieldError } from '../util/errors.js';

export interface DesktopPaths {
  /** The JSON file holding the choice. */
  config: string;
  stationData: string;
  serverData: string;
}

export function desktopPaths(userData: string, env: NodeJS.ProcessEnv = process.env): DesktopPaths {
  return {
    config: join(userData, 'labstation.json'),
    stationData: env.LABSTATION_DATA ?? join(userData, 'data'),
    serverData: env.LABSTATION_SERVER_DATA ?? join(userData, 'server-data'),
  };
}

const configSchema = z.object({
  mode: z.enum(['station', 'server']).catch('station'),
  port: z.number().int().min(1).max(65535).catch(8080),
  network: z.boolean().catch(false),
});

export type DesktopConfig = z.infer<typeof configSchema>;

export const DEFAULT_DESKTOP_CONFIG: DesktopConfig = {
  mode: 'station',
  port: 8080,
  network: false,
};

/** The stored choice; a missing or unreadable file means the defaults (a station). */
export function readDesktopConfig(file: string): DesktopConfig {
  if (!existsSync(file)) return { ...DEFAULT_DESKTOP_CONFIG };
  try {
    const parsed = configSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : { ...DEFAULT_DESKTOP_CONFIG };
  } catch {
    return { ...DEFAULT_DESKTOP_CONFIG };
  }
}

/** Written whole and renamed into place, so a crash leaves the old choice or the new one. */
export function writeDesktopConfig(file: string, config: DesktopConfig): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, file);
}

export interface SwitchInput {
  mode: 'station' | 'server';
  port?: number | undefined;
  network?: boolean | undefined;
  admin_email?: string | undefined;
  admin_password?: string | undefined;
}

/**
 * The port the server would listen on is free here now: switched with it taken (another
 * program's 8080, a port below 1024 for a user), the server could not start after the
 * relaunch, nor at any start after it, and no window would be left to switch back from.
 */
async function checkPortFree(host: string, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      const why =
        error.code === 'EADDRINUSE'
          ? 'is in use by another program'
          : error.code === 'EACCES'
            ? 'needs rights this user lacks (ports below 1024)'
            : `cannot be used (${error.code ?? error.message})`;
      reject(fieldError('port', `${port} ${why}; choose another`));
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/**
 * Records the switch to `input.mode`, ready for the relaunch. A server needs someone who can
 * log in to it: its data dir must already have an admin, or the input names the first one
 * (and only then: station staff cannot add admins to an existing server).
 */
export async function switchDesktopMode(
  paths: DesktopPaths,
  input: SwitchInput,
): Promise<DesktopConfig> {
  const current = readDesktopConfig(paths.config);
  const next: DesktopConfig = {
    mode: input.mode,
    port: input.port ?? current.port,
    network: input.network ?? current.network,
  };
  if (input.mode === 'server') {
    await checkPortFree(next.network ? '0.0.0.0' : '127.0.0.1', next.port);
    const db = openServerData(paths.serverData);
    try {
      const admins = db
        .prepare("SELECT count(*) FROM users WHERE role = 'admin' AND is_active = 1")
        .pluck()
        .get() as number;
      const email = input.admin_email?.trim() ?? '';
      // Station staff may name the first admin of a new server, never add one to a server that
      // has its admins (that is for those admins, on its admin page).
      if (admins > 0 && email) {
        throw fieldError('admin_email', 'this server has its admins already; leave it empty');
      }
      if (admins === 0) {
        if (!email) throw fieldError('admin_email', 'a new server needs its first admin');
        if (!input.admin_password) throw fieldError('admin_password', 'must be given');
        try {
          await createAccount(db, { email, password: input.admin_password, role: 'admin' });
        } catch (error) {
          // createAccount names its own fields (email, password, username): name ours.
          const match = error instanceof AppError ? /^(\w+): (.*)$/s.exec(error.message) : null;
          if (!match) throw error;
          throw fieldError(match[1] === 'password' ? 'admin_password' : 'admin_email', match[2]);
        }
      }
    } finally {
      db.close();
    }
  }
  writeDesktopConfig(paths.config, next);
  return next;
}
