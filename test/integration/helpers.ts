import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const CLI = join(import.meta.dirname, '..', '..', 'bin', 'labstation.js');

export function tempDir(prefix = 'labstation-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real `labstation` command (the built one) and collects its output. A command that
 * hangs is killed after the longest test's time, so a failing test leaves no process behind.
 */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runNodeScript(CLI, args, env);
}

/** A built script run in Node, as runCli runs the CLI; killed after `timeoutMs`. */
export function runNodeScript(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 180_000,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      env: { ...process.env, ...env },
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export function writeJson(dir: string, name: string, value: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
}

/** `labstation import --data dataDir` of `bundle` (written to a file of its own first). */
export function importBundle(dataDir: string, bundle: unknown): Promise<CliResult> {
  return runCli(['import', '--data', dataDir, writeJson(tempDir(), 'bundle.json', bundle)]);
}

export interface StationProcess {
  child: ChildProcess;
  url: string;
  token: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  rpc(name: string, args: unknown): Promise<{ status: number; body: unknown }>;
  stop(): Promise<void>;
  /** What the process wrote to stderr so far (its log, at LABSTATION_LOG_LEVEL). */
  stderr(): string;
}

/** Starts `labstation station` on an ephemeral loopback port and waits for its ready line. */
export function startStation(
  dataDir: string,
  env: NodeJS.ProcessEnv = {},
  extraArgs: string[] = [],
): Promise<StationProcess> {
  const child = spawn(
    process.execPath,
    [CLI, 'station', '--data', dataDir, '--port', '0', ...extraArgs],
    {
      env: { ...process.env, LABSTATION_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error(`station did not start: ${stderr}`)), 20_000);
    void exited.then(({ code }) => reject(new Error(`station exited ${code}: ${stderr}`)));
    lines.on('line', (line) => {
      const match = /ready at (http:\/\/\S+\/)#token=(\S+)/.exec(line);
      if (!match) return;
      clearTimeout(timer);
      const [, url, token] = match as unknown as [string, string, string];
      resolve({
        child,
        url,
        token,
        exited,
        async rpc(name, args) {
          const res = await fetch(`${url}rpc/${name}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body: JSON.stringify(args),
          });
          return { status: res.status, body: await res.json() };
        },
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
        stderr: () => stderr,
      });
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
  /** What the process wrote to stderr so far (its log, at LABSTATION_LOG_LEVEL). */
  stderr(): string;
}

/**
 * Starts `labstation serve` on an ephemeral loopback port and waits for its ready line. `wrap`:
 * a command the server runs under (`['strace', ...]`), which gets Node and its arguments last.
 */
export function startServer(
  dataDir: string,
  env: NodeJS.ProcessEnv = {},
  wrap: string[] = [],
): Promise<ServerProcess> {
  const command = [...wrap, process.execPath, CLI, 'serve', '--data', dataDir, '--port', '0'];
  const child = spawn(command[0], command.slice(1), {
    env: { ...process.env, LABSTATION_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 20_000);
    void exited.then(({ code }) => reject(new Error(`server exited ${code}: ${stderr}`)));
    lines.on('line', (line) => {
      const match = /server ready at (http:\/\/\S+\/)/.exec(line);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        child,
        url: match[1],
        exited,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
        stderr: () => stderr,
      });
    });
  });
}

/**
 * Polls `check` every 100 ms until it returns something other than undefined; a check that
 * throws is tried again. Fails after `ms`, with the last error if there was one.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  ms = 15_000,
): Promise<T> {
  const until = Date.now() + ms;
  let last: Error | undefined;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error instanceof Error ? error : new Error(String(error));
    }
    if (Date.now() > until)
      throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Registers a station on a server data dir with the real CLI; returns its key. */
export async function createStationKey(
  serverDir: string,
  name: string,
  tool: string,
): Promise<string> {
  const made = await runCli([
    'admin',
    'station',
    'create',
    '--data',
    serverDir,
    '--name',
    name,
    '--tool',
    tool,
  ]);
  if (made.code !== 0) throw new Error(`admin station create: ${made.stderr}`);
  return made.stdout.trim().split('\n').pop()!;
}

export interface HttpReply {
  status: number;
  body: Record<string, unknown>;
}

/** Logs in to a running server (`POST /auth/jwt/login`, as the web UI does); returns the JWT. */
export async function loginJwt(
  serverUrl: string,
  user: { email: string; password: string },
): Promise<string> {
  const res = await fetch(`${serverUrl}auth/jwt/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: user.email, password: user.password }).toString(),
  });
  if (res.status !== 200) throw new Error(`login ${user.email}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** A request to a running server with a JWT (or API token), JSON in and out. */
export async function serverRequest(
  serverUrl: string,
  jwt: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<HttpReply> {
  const res = await fetch(`${serverUrl}${path.slice(1)}`, {
    method,
    headers: {
      authorization: `Bearer ${jwt}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/**
 * A poster of new records to a running server's API as `jwt`'s holder (an admin making
 * service accounts, storage locations, instruments): each call expects 201 and answers the
 * record made; anything else throws with the status and the body.
 */
export function creator(
  serverUrl: string,
  jwt: string,
): (path: string, body: unknown) => Promise<Record<string, unknown>> {
  return async (path, body) => {
    const res = await serverRequest(serverUrl, jwt, 'POST', path, body);
    if (res.status !== 201) {
      throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    return res.body;
  };
}
