/**
 * A Labstation server with a station synced to it, for the server UI tests: a temp data dir,
 * the facility imported with the real CLI (people with e-mail and password), a registered
 * station, `labstation serve --port 0` and `labstation station --server URL --key KEY`.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, test as base, type Page } from '@playwright/test';
import Database from 'better-sqlite3';
import { facilityBundle, goodPreAnswers } from '../fixtures/facility.js';

export { expect };

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = process.env.LABSTATION_E2E_CLI ?? join(ROOT, 'bin', 'labstation.js');
const run = promisify(execFile);

export const PEOPLE = {
  alice: { email: 'alice@example.org', password: 'alice password 1', pin: '1234' },
  bob: { email: 'bob@example.org', password: 'bob password 12', pin: '2345' },
  sam: { email: 'sam@example.org', password: 'staff password 1', pin: '9999' },
  ada: { email: 'ada@example.org', password: 'admin password 1', pin: '' },
} as const;

export interface ServerSetup {
  /** The server's UI, e.g. http://127.0.0.1:1234/ */
  serverUrl: string;
  serverDir: string;
  /** The station's UI with its token, e.g. http://127.0.0.1:1235/#token=... */
  stationUrl: string;
  /** The station's key on the server (as `admin station create` printed it). */
  stationKey: string;
  /** Calls the station's contract over its loopback carrier. */
  stationRpc(name: string, args: unknown): Promise<Record<string, unknown>>;
  /** Stops the server process (the station keeps running). */
  stopServer(): Promise<void>;
  /** Starts the server again, on the same data dir and port. */
  restartServer(): Promise<void>;
  output(): string;
}

function waitForLine(child: ChildProcess, pattern: RegExp, output: () => string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(
      () => reject(new Error(`not ready within 30 s:\n${output()}`)),
      30_000,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const match = pattern.exec(buffer);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before it was ready:\n${output()}`));
    });
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

function serverBundle(): Record<string, unknown> {
  const bundle = facilityBundle();
  delete bundle.station;
  const users = bundle.users as Record<string, unknown>[];
  users[0] = { ...users[0], email: PEOPLE.alice.email, password: PEOPLE.alice.password };
  users[1] = { ...users[1], email: PEOPLE.bob.email, password: PEOPLE.bob.password };
  users[2] = { ...users[2], email: PEOPLE.sam.email, password: PEOPLE.sam.password, role: 'staff' };
  users.push({
    username: 'ada',
    first_name: 'Ada',
    last_name: 'Admin',
    email: PEOPLE.ada.email,
    password: PEOPLE.ada.password,
    role: 'admin',
  });
  return bundle;
}

export const test = base.extend<{ startServer: () => Promise<ServerSetup> }>({
  startServer: async ({ page }, use) => {
    const children: ChildProcess[] = [];
    const dirs: string[] = [];
    await use(async () => {
      const base = await mkdtemp(join(tmpdir(), 'labstation-e2e-server-'));
      dirs.push(base);
      const serverDir = join(base, 'server');
      const bundleFile = join(base, 'bundle.json');
      await writeFile(bundleFile, JSON.stringify(serverBundle(), null, 2));
      await run(process.execPath, [CLI, 'import', '--data', serverDir, bundleFile], { cwd: ROOT });
      const made = await run(
        process.execPath,
        [CLI, 'admin', 'station', 'create', '--data', serverDir, '--name', 'sem', '--tool', 'SEM'],
        { cwd: ROOT },
      );
      const key = made.stdout.trim().split('\n').pop() ?? '';

      let log = '';
      const start = (args: string[], ready: RegExp): Promise<string> => {
        const child = spawn(process.execPath, [CLI, ...args], {
          cwd: ROOT,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, LABSTATION_SYNC_BACKOFF_CAP_MS: '1500' },
        });
        children.push(child);
        child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
        child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
        return waitForLine(child, ready, () => log);
      };
      const serverUrl = await start(
        ['serve', '--data', serverDir, '--port', '0'],
        /server ready at (http:\/\/\S+\/)/,
      );
      let server = children[children.length - 1];
      const stationUrl = await start(
        [
          'station',
          '--data',
          join(base, 'station'),
          '--port',
          '0',
          '--server',
          serverUrl,
          '--key',
          key,
        ],
        /station ready at (http:\/\/\S+#token=\S+)/,
      );
      const [origin, token] = stationUrl.split('#token=') as [string, string];
      return {
        serverUrl,
        serverDir,
        stationUrl,
        stationKey: key,
        output: () => log,
        async stopServer() {
          if (server) await stop(server);
        },
        async restartServer() {
          await start(
            ['serve', '--data', serverDir, '--port', new URL(serverUrl).port],
            /server ready at (http:\/\/\S+\/)/,
          );
          server = children[children.length - 1];
        },
        async stationRpc(name, args) {
          const res = await fetch(`${origin}rpc/${name}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body: JSON.stringify(args),
          });
          const body = (await res.json()) as Record<string, unknown>;
          if (!res.ok) throw new Error(`${name}: ${res.status} ${JSON.stringify(body)}`);
          return body;
        },
      };
    });
    await page.close();
    await Promise.all(children.reverse().map(stop));
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  },
});

/** Logs `who` in on the server's page, as a person types it. */
export async function logIn(
  page: Page,
  setup: ServerSetup,
  who: { email: string; password: string },
): Promise<void> {
  await page.goto(setup.serverUrl);
  await page.getByLabel('E-mail').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByTestId('account-name')).toBeVisible();
}

/** One row of the server's database (opened read-only for the query), as the test asks it. */
export function serverRow<Row>(
  setup: ServerSetup,
  sql: string,
  ...params: unknown[]
): Row | undefined {
  const db = new Database(join(setup.serverDir, 'labstation.db'), { readonly: true });
  try {
    return db.prepare(sql).get(...params) as Row | undefined;
  } finally {
    db.close();
  }
}

/**
 * Runs one write on the server's database, beside the running server (WAL, its busy timeout):
 * for a state no page or station makes by itself.
 */
export function serverWrite(setup: ServerSetup, sql: string, ...params: unknown[]): number {
  const db = new Database(join(setup.serverDir, 'labstation.db'));
  try {
    db.pragma('busy_timeout = 5000');
    return db.prepare(sql).run(...params).changes;
  } finally {
    db.close();
  }
}

/** Alice logs on at the station and enables the SEM for Cathodes: the usage event's UUID. */
export async function aliceEnablesSem(setup: ServerSetup): Promise<string> {
  await setup.stationRpc('session.logon', { login: 'alice', pin: PEOPLE.alice.pin });
  const enabled = await setup.stationRpc('toolControl.enable', {
    tool: 'SEM',
    project: 'Cathodes',
    answers: goodPreAnswers,
  });
  return (enabled.usage as { uuid: string }).uuid;
}
