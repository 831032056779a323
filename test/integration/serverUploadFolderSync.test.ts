/**
 * An upload the server placed but did not record (it stopped between the link and the record)
 * is recorded when its station asks for it again: its copy must be durable before it counts,
 * with the folders its placement made, which that server (restarted since) no longer knows.
 * No test can cut the power, so this one reads the system calls of a real `labstation serve`
 * (strace, where it is installed) and checks which folders it fsynced. The stop between link
 * and record is the server's test hook, which fails every placement right after its link.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { facilityBundle } from '../fixtures/facility.js';
import {
  creator,
  loginJwt,
  runCli,
  startServer,
  startStation,
  tempDir,
  waitFor,
  writeJson,
  type ServerProcess,
} from './helpers.js';
import { fsyncedPaths, hasStrace, traceFsyncs } from './strace.js';

const ADMIN = { email: 'admin@example.org', password: 'admin password 1' };

/** Stops a server started under strace: its own process, strace's child, then strace ends. */
async function stopTraced(server: ServerProcess): Promise<void> {
  const pid = Number(execFileSync('pgrep', ['-P', String(server.child.pid)], { encoding: 'utf8' }));
  process.kill(pid, 'SIGTERM');
  await server.exited;
}

it.runIf(hasStrace)(
  'an upload placed before its record fsyncs, when recorded, each folder its placement made, up to the storage location',
  async () => {
    const root = tempDir('labstation-upload-folder-sync-');
    const serverDir = join(root, 'server');
    const store = join(root, 'store');
    const watch = join(root, 'acquisition');
    mkdirSync(store);
    mkdirSync(join(watch, 'run', 'deep'), { recursive: true });
    const bundle = facilityBundle();
    delete bundle.station;
    const imported = await runCli([
      'import',
      '--data',
      serverDir,
      writeJson(root, 'b.json', bundle),
    ]);
    expect(imported.code, imported.stderr).toBe(0);

    // Configured over the API by a server not traced.
    let server = await startServer(serverDir, {
      LABSTATION_ADMIN_EMAIL: ADMIN.email,
      LABSTATION_ADMIN_PASSWORD: ADMIN.password,
    });
    const jwt = await loginJwt(server.url, ADMIN);
    const api = creator(server.url, jwt);
    const account = await api('/api/service-accounts', { name: 'sem-pc' });
    const location = await api('/api/storage-locations', {
      name: 'archive',
      type: 'server',
      base_path: store,
    });
    const serverDb = new Database(join(serverDir, 'labstation.db'), { readonly: true });
    await api('/api/instruments', {
      name: 'SEM camera',
      tool_id: serverDb.prepare("SELECT id FROM tools WHERE name = 'SEM'").pluck().get(),
      service_account_id: account.id,
      watch: [{ path: watch }],
      stability_seconds: 1,
      storage_location_id: location.id,
      destination_template: 'made/{relative_path}',
    });
    await server.stop();

    const trace = join(root, 'trace');
    server = await startServer(
      serverDir,
      { LABSTATION_INJECT: 'upload.placed-unrecorded' },
      traceFsyncs(trace),
    );
    const station = await startStation(join(root, 'station'), {}, [
      '--server',
      server.url,
      '--key',
      String(account.key),
    ]);
    try {
      writeFileSync(join(watch, 'run', 'deep', 'image.tif'), 'placed, then recorded');
      const done = await waitFor(
        'the upload recorded on the server',
        () =>
          serverDb
            .prepare("SELECT state, final_path FROM harvest_uploads WHERE state != 'receiving'")
            .get() as { state: string; final_path: string } | undefined,
        60_000,
      );
      expect(done).toEqual({ state: 'completed', final_path: 'made/run/deep/image.tif' });
    } finally {
      await station.stop();
      serverDb.close();
      await stopTraced(server);
    }
    expect(readFileSync(join(store, 'made', 'run', 'deep', 'image.tif'), 'utf8')).toBe(
      'placed, then recorded',
    );
    const synced = new Set(fsyncedPaths(readFileSync(trace, 'utf8')));
    for (const at of [
      join(store, 'made', 'run', 'deep'),
      join(store, 'made', 'run'),
      join(store, 'made'),
      store,
    ]) {
      expect(synced, at).toContain(at);
    }
  },
  120_000,
);
