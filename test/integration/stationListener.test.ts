/**
 * The station's loopback listener across its starts and with many screens open: its token, its
 * event streams. A real `labstation station` process each; apart from stationProcess.test.ts so
 * that the event streams opened here share no process with its other tests.
 */
import { readFileSync } from 'node:fs';
import { get as httpGet, type ClientRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { facilityBundle } from '../fixtures/facility.js';
import { runCli, startStation, tempDir, writeJson, type StationProcess } from './helpers.js';

const running: StationProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function preparedDataDir(): Promise<string> {
  const dir = tempDir();
  const result = await runCli([
    'import',
    '--data',
    join(dir, 'data'),
    writeJson(dir, 'facility.json', facilityBundle()),
  ]);
  expect(result.code, result.stderr).toBe(0);
  return join(dir, 'data');
}

async function start(dataDir: string): Promise<StationProcess> {
  const station = await startStation(dataDir);
  running.push(station);
  return station;
}

describe('the station listener', () => {
  it('serves many event streams at once without a listener leak warning', async () => {
    const dataDir = await preparedDataDir();
    const st = await start(dataDir);
    // Plain requests, each closed by hand: nothing of them is left in a shared pool.
    const streams = await Promise.all(
      Array.from(
        { length: 12 },
        () =>
          new Promise<ClientRequest>((resolve, reject) => {
            const request = httpGet(
              `${st.url}events`,
              { headers: { authorization: `Bearer ${st.token}` }, agent: false },
              (res) => {
                expect(res.statusCode).toBe(200);
                resolve(request);
              },
            );
            request.on('error', reject);
          }),
      ),
    );
    // An event reaches the streams (and would print the warning, were there one to print).
    expect((await st.rpc('session.logon', { login: 'alice', pin: '1234' })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (const request of streams) request.destroy();
    await st.stop();
    expect(st.stderr()).not.toContain('MaxListenersExceededWarning');
  });

  it('makes a new token at each start on an ephemeral port, so one that a stopped station gave out opens nothing after; keeps it on a fixed port, where an open page reconnects', async () => {
    const dataDir = await preparedDataDir();
    const tokenFile = (): string => readFileSync(join(dataDir, 'rpc-token'), 'utf8').trim();
    let st = await start(dataDir);
    const first = st.token;
    expect(tokenFile()).toBe(first);
    await st.stop();
    // Whatever took the port meanwhile may have got the first token from a page still open.
    st = await start(dataDir);
    expect(st.token).not.toBe(first);
    expect(tokenFile()).toBe(st.token);
    const stale = await fetch(`${st.url}rpc/station.info`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${first}` },
      body: '{}',
    });
    expect(stale.status).toBe(401);
    const kept = st.token;
    const port = new URL(st.url).port;
    await st.stop();
    st = await startStation(dataDir, {}, ['--port', port]);
    running.push(st);
    expect(st.url).toBe(`http://127.0.0.1:${port}/`);
    expect(st.token).toBe(kept);
    expect((await st.rpc('station.info', {})).status).toBe(200);
    await st.stop();
  });

  // Mutation: closeConnectionsOnClose without its grace timer: the station waited on the
  // unread answer for as long as the client held it (a fresh-clone CI run hung 30 s on one).
  it('stops on SIGTERM while a client leaves a large answer unread', async () => {
    const dataDir = await preparedDataDir();
    const st = await start(dataDir);
    const page = await (await fetch(st.url)).text();
    const script = /<script[^>]* src="(?:\.?\/)?([^"]+\.js)"/.exec(page)?.[1];
    expect(script).toMatch(/^assets\//);
    // The script's map (over a megabyte), asked for and never read: the station's answer
    // waits on the client.
    const unread = await new Promise<{ req: ClientRequest; status: number | undefined }>(
      (resolve, reject) => {
        const req = httpGet(`${st.url}${script}.map`, (res) => {
          res.pause();
          resolve({ req, status: res.statusCode });
        });
        req.on('error', reject);
      },
    );
    expect(unread.status).toBe(200);
    st.child.kill('SIGTERM');
    const outcome = await Promise.race([
      st.exited,
      new Promise((resolve) => setTimeout(() => resolve('still running'), 15_000)),
    ]);
    unread.req.destroy();
    expect(outcome).toEqual({ code: 0, signal: null });
  });
});
