/**
 * A station keeps working while its server is down, and catches up when the server is back:
 * `labstation serve` stopped mid-use and started again on the same data dir, at the same
 * address (a proxy on loopback that stays put, so no other test can take the port meanwhile).
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { facilityBundle, goodPreAnswers } from '../fixtures/facility.js';
import { startFaultProxy, type FaultProxy } from './faultProxy.js';
import {
  runCli,
  startServer,
  startStation,
  tempDir,
  writeJson,
  createStationKey,
  type ServerProcess,
  type StationProcess,
  waitFor,
} from './helpers.js';

let server: ServerProcess | undefined;
let proxy: FaultProxy;
let station: StationProcess | undefined;

afterAll(async () => {
  await station?.stop();
  await proxy?.close();
  await server?.stop();
});

describe('server restart', () => {
  it('the station works offline while the server is down and catches up after its restart', async () => {
    const serverDir = join(tempDir(), 'server');
    const bundle = facilityBundle();
    delete bundle.station;
    await runCli(['import', '--data', serverDir, writeJson(tempDir(), 'b.json', bundle)]);
    const key = await createStationKey(serverDir, 'sem', 'SEM');
    server = await startServer(serverDir);
    proxy = await startFaultProxy({
      host: '127.0.0.1',
      port: Number(new URL(server.url).port),
      maxCuts: 0,
      probability: 0,
    });
    const stationDir = join(tempDir(), 'station');
    station = await startStation(stationDir, { LABSTATION_SYNC_BACKOFF_CAP_MS: '1000' }, [
      '--server',
      proxy.url,
      '--key',
      key,
    ]);
    const call = async (name: string, args: unknown): Promise<Record<string, unknown>> => {
      const res = await station!.rpc(name, args);
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
      return res.body as Record<string, unknown>;
    };
    const status = async (): Promise<{ online: boolean; waiting: number }> =>
      (await call('sync.status', {})) as unknown as { online: boolean; waiting: number };

    await server.stop();
    await call('session.logon', { login: 'alice', pin: '1234' });
    const uuids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const enabled = await call('toolControl.enable', {
        tool: 'SEM',
        project: 'Cathodes',
        answers: goodPreAnswers,
      });
      uuids.push((enabled.usage as { uuid: string }).uuid);
      await call('toolControl.disable', {
        tool: 'SEM',
        answers: { problem: 'No', notes: `run ${i}` },
      });
    }
    await waitFor('the station to see it is offline', async () =>
      (await status()).online ? undefined : true,
    );
    expect((await status()).waiting).toBeGreaterThan(0);

    server = await startServer(serverDir);
    proxy.forwardTo(Number(new URL(server.url).port));
    await waitFor(
      'the outbox to drain',
      async () => {
        const s = await status();
        return s.online && s.waiting === 0 ? true : undefined;
      },
      20_000,
    );
    const db = new Database(join(serverDir, 'labstation.db'), { readonly: true });
    const local = new Database(join(stationDir, 'labstation.db'), { readonly: true });
    try {
      const columns = 'uuid, start, "end", pre_run_data, run_data';
      const theirs = db.prepare(`SELECT ${columns} FROM usage_events ORDER BY uuid`).all();
      const mine = local.prepare(`SELECT ${columns} FROM usage_events ORDER BY uuid`).all();
      expect(theirs).toEqual(mine);
      expect(theirs).toHaveLength(uuids.length);
    } finally {
      db.close();
      local.close();
    }
  }, 60_000);
});
