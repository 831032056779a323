import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase, type Db, type OpenOptions } from '../db/open.js';
import { migrations } from '../db/migrations.js';
import { getSetting, setSetting } from '../station/settings.js';
import { AppError } from '../util/errors.js';
import { randomSecret } from './secrets.js';

/**
 * Opens a data dir for server use: refuses a station's data, fixes the mode, and makes the
 * JWT signing secret on first use. Here, not in runServer.ts, so that the `admin` and `mail`
 * commands open one without loading the server (fastify, every route).
 */
export function openServerData(dataDir: string, options: OpenOptions = {}): Db {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const db = openDatabase(join(dataDir, 'labstation.db'), migrations, options);
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
