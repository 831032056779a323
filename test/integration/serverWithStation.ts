/**
 * A `labstation serve` on loopback with a `labstation station --server URL --key KEY` syncing to
 * it, both real processes, for the tests of what people do on the server's web page
 * (serverWeb, serverValidate): the demo facility, its first three people given e-mails and
 * passwords to log in with, Sam as staff.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { facilityBundle } from '../fixtures/facility.js';
import {
  createStationKey,
  runCli,
  startServer,
  startStation,
  tempDir,
  writeJson,
  type ServerProcess,
  type StationProcess,
} from './helpers.js';

export const ALICE = { email: 'alice@example.org', password: 'alice password 1' };
export const BOB = { email: 'bob@example.org', password: 'bob password 12' };
export const SAM = { email: 'sam@example.org', password: 'staff password 1' };

export interface ServerWithStation {
  serverDir: string;
  server: ServerProcess;
  /** The server's database, read-only. */
  serverDb: Database.Database;
  stationDir: string;
  station: StationProcess;
  stationKey: string;
}

/** The facility bundle the server imports: Alice a user, Bob `bobRole`, Sam staff. */
function serverBundle(bobRole: 'user' | 'admin'): Record<string, unknown> {
  const bundle = facilityBundle();
  delete bundle.station;
  const users = bundle.users as Record<string, unknown>[];
  users[0] = { ...users[0], ...ALICE };
  users[1] = { ...users[1], ...BOB, role: bobRole };
  users[2] = { ...users[2], ...SAM, role: 'staff' };
  return bundle;
}

/** Starts both; the station registered as `stationName` for the SEM. */
export async function startServerWithStation(
  stationName: string,
  bobRole: 'user' | 'admin',
): Promise<ServerWithStation> {
  const serverDir = join(tempDir(), 'server');
  const bundle = writeJson(tempDir(), 'b.json', serverBundle(bobRole));
  const imported = await runCli(['import', '--data', serverDir, bundle]);
  expect(imported.stderr).toBe('');
  const stationKey = await createStationKey(serverDir, stationName, 'SEM');
  const server = await startServer(serverDir);
  const serverDb = new Database(join(serverDir, 'labstation.db'), { readonly: true });
  const stationDir = join(tempDir(), 'station');
  const station = await startStation(stationDir, { LABSTATION_SYNC_BACKOFF_CAP_MS: '1500' }, [
    '--server',
    server.url,
    '--key',
    stationKey,
  ]);
  return { serverDir, server, serverDb, stationDir, station, stationKey };
}

/**
 * Stops what startServerWithStation started, as each test file holds it at the end (a test may
 * have stopped or replaced the station); a part that never started is passed over.
 */
export async function stopServerWithStation(parts: {
  station?: StationProcess;
  serverDb?: Database.Database;
  server?: ServerProcess;
}): Promise<void> {
  await parts.station?.stop();
  parts.serverDb?.close();
  await parts.server?.stop();
}
