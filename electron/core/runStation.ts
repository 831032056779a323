import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createStationServer, loadOrCreateRpcToken } from './http/stationServer.js';
import { Harvester } from './harvest/engine.js';
import { takeDataDirLock } from './harvest/lock.js';
import { DEMO_BUNDLE, RENDERER_DIR } from './paths.js';
import { importBundle } from './station/facility.js';
import { getSetting, setSetting } from './station/settings.js';
import { Station } from './station/station.js';
import { serverAddress, SyncLink, type SyncTuning } from './sync/link.js';
import { RESTORE_CHECK_WAIT_MS } from './sync/restored.js';
import { AppError } from './util/errors.js';
import type { Logger } from './util/log.js';
import { stopThenClose } from './util/shutdown.js';

export interface RunStationOptions {
  dataDir: string;
  host?: string;
  port?: number;
  demo?: boolean;
  log?: Logger;
  /** Sync with this server (base URL), authenticated by the station key; kept in the data dir. */
  server?: string;
  key?: string;
  syncTuning?: SyncTuning;
}

export interface RunningStation {
  station: Station;
  server: FastifyInstance;
  sync: SyncLink;
  harvester: Harvester;
  url: string;
  token: string;
  close(): Promise<void>;
}

/** Opens the data dir, loads the demo facility if asked, and serves UI and RPC on loopback. */
export async function runStation(options: RunStationOptions): Promise<RunningStation> {
  // First, before the database is opened: a second station on the data dir touches nothing.
  const running = takeDataDirLock(options.dataDir);
  let station: Station;
  try {
    station = Station.open({
      dataDir: options.dataDir,
      ...(options.log ? { log: options.log } : {}),
    });
  } catch (error) {
    running.release();
    throw error;
  }
  const sync = new SyncLink(station, options.syncTuning);
  const harvester = new Harvester({
    db: station.db,
    log: station.log,
    tool: () => station.stationTool,
    emit: (event) => station.emit(event),
    lockFile: join(options.dataDir, 'harvest.lock'),
    waitForLock: true,
  });
  station.attach({ sync, harvest: harvester });
  try {
    if (options.demo) {
      const empty = station.db.prepare('SELECT count(*) FROM tools').pluck().get() === 0;
      if (empty) await importBundle(station.db, JSON.parse(readFileSync(DEMO_BUNDLE, 'utf8')));
    }
    if (getSetting(station.db, 'mode') === 'server') {
      throw new AppError(
        'conflict',
        `${options.dataDir} holds a server's data; a station needs its own data dir`,
      );
    }
    if (options.server !== undefined || options.key !== undefined) {
      if (!options.server || !options.key) {
        throw new AppError('bad_request', '--server and --key go together');
      }
      // Kept in the data dir: the next start syncs without them. The same flags given again
      // (a service's command line) after staff changed the link in Settings leave that be:
      // they would put back the server and key staff moved the station away from.
      const linkHash = (text: string): string => createHash('sha256').update(text).digest('hex');
      const flags = linkHash(`${serverAddress(options.server)}\n${options.key.trim()}`);
      const applied = getSetting(station.db, 'sync.startFlags');
      const stored = linkHash(
        `${getSetting(station.db, 'sync.server') ?? ''}\n${getSetting(station.db, 'sync.key') ?? ''}`,
      );
      if (flags === applied && stored !== flags) {
        station.log.warn(
          { server: getSetting(station.db, 'sync.server') },
          'sync: --server and --key are those of an earlier start; the link set in Settings since ' +
            'is kept (start without them, or with others, to change it)',
        );
        await sync.start();
      } else {
        await sync.configure({ server: options.server, key: options.key });
        setSetting(station.db, 'sync.startFlags', flags);
      }
    } else {
      await sync.start();
    }
    if (station.stationTool === null) {
      throw new AppError(
        'bad_request',
        'this station has no tool yet: import a facility bundle with a "station": {"tool": ...} ' +
          '(labstation import --data DIR FILE.json), or start with --demo',
      );
    }
    const token = loadOrCreateRpcToken(options.dataDir, (options.port ?? 0) === 0);
    const server = await createStationServer({ station, token, rendererDir: RENDERER_DIR });
    const host = options.host ?? '127.0.0.1';
    await server.listen({ host, port: options.port ?? 0 });
    const address = server.server.address();
    const port = typeof address === 'object' && address ? address.port : options.port;
    station.startIdleWatch();
    // The first walk of big folders takes a while: the UI is up meanwhile. It waits for the
    // server's first answer, which tells a data dir restored from a backup (sync/restored.ts).
    let closing = false;
    sync
      .pulled(RESTORE_CHECK_WAIT_MS)
      .then(() => (closing ? undefined : harvester.start()))
      .catch((error: unknown) => station.log.error({ err: error }, 'harvest did not start'));
    return {
      station,
      server,
      sync,
      harvester,
      token,
      url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
      async close() {
        closing = true;
        await stopThenClose(
          {
            server: () => server.close(),
            harvest: () => harvester.stop(),
            sync: () => sync.stop(),
          },
          () => {
            station.close();
            running.release();
          },
          { log: station.log },
        );
      },
    };
  } catch (error) {
    await sync.stop();
    station.close();
    running.release();
    throw error;
  }
}
