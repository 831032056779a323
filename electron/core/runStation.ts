import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { createStationServer, loadOrCreateRpcToken } from './http/stationServer.js';
import { DEMO_BUNDLE, RENDERER_DIR } from './paths.js';
import { importBundle } from './station/facility.js';
import { Station } from './station/station.js';
import { AppError } from './util/errors.js';
import type { Logger } from './util/log.js';

export interface RunStationOptions {
  dataDir: string;
  host?: string;
  port?: number;
  demo?: boolean;
  log?: Logger;
}

export interface RunningStation {
  station: Station;
  server: FastifyInstance;
  url: string;
  token: string;
  close(): Promise<void>;
}

/** Opens the data dir, loads the demo facility if asked, and serves UI and RPC on loopback. */
export async function runStation(options: RunStationOptions): Promise<RunningStation> {
  const station = Station.open({
    dataDir: options.dataDir,
    ...(options.log ? { log: options.log } : {}),
  });
  try {
    if (options.demo) {
      const empty = station.db.prepare('SELECT count(*) FROM tools').pluck().get() === 0;
      if (empty) await importBundle(station.db, JSON.parse(readFileSync(DEMO_BUNDLE, 'utf8')));
    }
    if (station.stationTool === null) {
      throw new AppError(
        'bad_request',
        'this station has no tool yet: import a facility bundle with a "station": {"tool": ...} ' +
          '(labstation import --data DIR FILE.json), or start with --demo',
      );
    }
    const token = loadOrCreateRpcToken(options.dataDir);
    const server = await createStationServer({ station, token, rendererDir: RENDERER_DIR });
    const host = options.host ?? '127.0.0.1';
    await server.listen({ host, port: options.port ?? 0 });
    const address = server.server.address();
    const port = typeof address === 'object' && address ? address.port : options.port;
    station.startIdleWatch();
    return {
      station,
      server,
      token,
      url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
      async close() {
        await server.close();
        station.close();
      },
    };
  } catch (error) {
    station.close();
    throw error;
  }
}
