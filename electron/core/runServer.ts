import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { openDatabase, type Db } from './db/open.js';
import { startMailWorker } from './mail/worker.js';
import { createAccount } from './server/accounts.js';
import { createServerApp } from './server/app.js';
import { randomSecret } from './server/secrets.js';
import { getSetting, setSetting } from './station/settings.js';
import { AppError } from './util/errors.js';
import type { Logger } from './util/log.js';

/**
 * Opens a data dir for server use: refuses a station's data, fixes the mode, and makes the
 * JWT signing secret on first use.
 */
export function openServerData(dataDir: string): Db {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const db = openDatabase(join(dataDir, 'labstation.db'));
  const mode = getSetting(db, 'mode');
  if (mode === 'station') {
    db.close();
    throw new AppError(
      'conflict',
      `${dataDir} holds a station's data; a server needs its own data dir`,
    );
  }
  if (mode === null) setSetting(db, 'mode', 'server');
  if (getSetting(db, 'server.jwtSecret') === null)
    setSetting(db, 'server.jwtSecret', randomSecret(32));
  return db;
}

/** Checks an IANA time zone name (Europe/Zurich, America/New_York, UTC) against Intl. */
export function checkTimeZone(name: string): string {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    throw new AppError(
      'validation_failed',
      `time zone: ${JSON.stringify(name)} is not an IANA time zone name (e.g. Europe/Zurich)`,
    );
  }
}

export function serverTimeZone(db: Db): string {
  return getSetting(db, 'server.timeZone') ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
}

export interface RunServerOptions {
  dataDir: string;
  host: string;
  port: number;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  /** The zone of naive date-times in the NEMO API; kept in the data dir once given. */
  timeZone?: string | undefined;
}

export interface RunningServer {
  app: FastifyInstance;
  db: Db;
  url: string;
  close(): Promise<void>;
}

export async function runServer(options: RunServerOptions): Promise<RunningServer> {
  const db = openServerData(options.dataDir);
  try {
    if (options.timeZone !== undefined) {
      setSetting(db, 'server.timeZone', checkTimeZone(options.timeZone));
    }
    const env = options.env ?? process.env;
    const admins = db
      .prepare("SELECT count(*) FROM users WHERE role = 'admin'")
      .pluck()
      .get() as number;
    if (admins === 0 && env.LABSTATION_ADMIN_EMAIL && env.LABSTATION_ADMIN_PASSWORD) {
      await createAccount(db, {
        email: env.LABSTATION_ADMIN_EMAIL,
        password: env.LABSTATION_ADMIN_PASSWORD,
        role: 'admin',
      });
      options.log.info({ email: env.LABSTATION_ADMIN_EMAIL }, 'created the first admin');
    }
    const app = await createServerApp({
      db,
      log: options.log,
      jwtSecret: getSetting(db, 'server.jwtSecret')!,
      timeZone: () => serverTimeZone(db),
    });
    await app.listen({ host: options.host, port: options.port });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : options.port;
    const host = options.host.includes(':') ? `[${options.host}]` : options.host;
    const url = `http://${host}:${port}/`;
    const mail = startMailWorker({
      db,
      log: options.log,
      dataDir: options.dataDir,
      listenUrl: url,
      env,
    });
    return {
      app,
      db,
      url,
      async close() {
        await app.close();
        await mail.stop();
        db.close();
      },
    };
  } catch (error) {
    db.close();
    throw error;
  }
}
