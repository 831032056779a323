/**
 * Every test gets its own station: a temp data dir, a facility bundle imported with the real
 * CLI, and `labstation station --port 0` as a child process whose stdout names the UI URL.
 */
import { spawn, execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test as base } from '@playwright/test';

export { expect } from '@playwright/test';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// LABSTATION_E2E_CLI runs the suite against another build of the command (a packaged app).
const CLI = process.env.LABSTATION_E2E_CLI ?? join(ROOT, 'bin', 'labstation.js');
const READY = /Labstation station ready at (http:\/\/\S+#token=\S+)/;

export interface BundleUser {
  username: string;
  email?: string;
  first_name?: string;
  last_name?: string;
  badge_number?: string;
  pin?: string;
  is_staff?: boolean;
  projects?: string[];
  qualified_tools?: string[];
}

export interface FacilityBundle {
  users: BundleUser[];
  projects: { name: string; application_identifier?: string; active?: boolean }[];
  tools: { name: string; pre_usage_questions?: unknown[]; post_usage_questions?: unknown[] }[];
  station: { tool: string; idle_logoff_minutes?: number; idle_force_end_minutes?: number };
  /** Harvest configuration (issue 4), passed through to `labstation import` as given. */
  storage_locations?: { name: string; type: 'local'; base_path: string }[];
  instruments?: Record<string, unknown>[];
  hooks?: Record<string, unknown>[];
}

export interface RunningStation {
  url: string;
  dataDir: string;
  /** The station's log (stdout and stderr), for failure messages. */
  output(): string;
  /** Stops its process (SIGTERM), as a service stopped or a crash would leave the page. */
  stop(): Promise<void>;
  /** Starts it again on its data dir and port: the page open on it may reach it again. */
  restart(): Promise<void>;
}

async function waitForReady(child: ChildProcess, output: () => string): Promise<string> {
  return await new Promise<string>((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => {
      reject(new Error(`the station did not get ready within 30 s:\n${output()}`));
    }, 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const match = READY.exec(buffer);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the station exited (${code}) before it was ready:\n${output()}`));
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

export const test = base.extend<{
  /** A temporary folder for the test's own files (acquisition folders, archives). */
  scratchDir: string;
  /**
   * A station on `bundle`; `beforeStart` runs on its data dir after the import and before the
   * station starts (earlier runs of the CLI, a state set up in its database).
   */
  startStation: (
    bundle: FacilityBundle,
    beforeStart?: (dataDir: string, cli: string) => Promise<void> | void,
  ) => Promise<RunningStation>;
}>({
  // Playwright reads a fixture's dependencies from its first parameter's pattern: none here.
  // eslint-disable-next-line no-empty-pattern
  scratchDir: async ({}, use) => {
    const dir = await mkdtemp(join(tmpdir(), 'labstation-e2e-scratch-'));
    await use(dir);
    await rm(dir, { recursive: true, force: true });
  },
  // Depends on scratchDir so that the stations, which may watch folders in it, stop before it
  // is removed: Playwright tears a fixture down before the fixtures it depends on.
  startStation: async ({ page, scratchDir: _scratchDir }, use) => {
    const children: ChildProcess[] = [];
    const dirs: string[] = [];
    await use(async (bundle, beforeStart) => {
      const dataDir = await mkdtemp(join(tmpdir(), 'labstation-e2e-'));
      dirs.push(dataDir);
      const bundleFile = join(dataDir, 'bundle.json');
      await writeFile(bundleFile, JSON.stringify(bundle, null, 2));
      await promisify(execFile)(process.execPath, [CLI, 'import', '--data', dataDir, bundleFile], {
        cwd: ROOT,
      });
      if (beforeStart) await beforeStart(dataDir, CLI);
      let log = '';
      const launch = async (port: string): Promise<{ child: ChildProcess; url: string }> => {
        const child = spawn(process.execPath, [CLI, 'station', '--data', dataDir, '--port', port], {
          cwd: ROOT,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        children.push(child);
        child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
        child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
        return { child, url: await waitForReady(child, () => log) };
      };
      let running = await launch('0');
      const url = running.url;
      return {
        url,
        dataDir,
        output: () => log,
        stop: () => stop(running.child),
        async restart() {
          running = await launch(new URL(url).port);
        },
      };
    });
    await page.close();
    await Promise.all(children.map(stop));
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  },
});
