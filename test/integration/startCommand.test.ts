/**
 * `npm start` (bin/start.js) where the Electron binary cannot be had: the download is tried
 * (against a mirror on a closed loopback port, with an empty cache, so it fails here as it does
 * offline), its failure is told in one line rather than as the downloader's stack trace, and
 * the app runs in browser mode, its station answering at the printed address. A SIGTERM sent to
 * the start command alone ends the station it started too, and a Ctrl+C (a SIGINT to the start
 * command's whole process group, passed on once more by npm) closes it cleanly: one signal
 * reaches it, not a second that would end it in the middle of closing.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

const root = join(import.meta.dirname, '..', '..');
const electronDir = dirname(createRequire(import.meta.url).resolve('electron/package.json'));
const pathFile = join(electronDir, 'path.txt');
/** With the binary there, `npm start` opens the desktop app: nothing of this to test. */
const installed =
  existsSync(pathFile) && existsSync(join(electronDir, 'dist', readFileSync(pathFile, 'utf8')));

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Started {
  child: ChildProcess;
  data: string;
  url: string;
  stderr: () => string;
  /** The start command's exit code. */
  exited: Promise<number | null>;
}

const started: Started[] = [];

/** `node bin/start.js` in a process group of its own, as a terminal starts it; once ready. */
async function startInBrowserMode(): Promise<Started> {
  const data = join(tempDir('labstation-start-'), 'data');
  const child = spawn(process.execPath, [join(root, 'bin', 'start.js'), '--port', '0'], {
    env: {
      ...process.env,
      LABSTATION_DATA: data,
      LABSTATION_LOG_LEVEL: 'warn',
      ELECTRON_MIRROR: `http://127.0.0.1:${await closedPort()}/`,
      electron_config_cache: tempDir('labstation-electron-cache-'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    void exited.then(() => reject(new Error(`start exited: ${stderr}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /ready at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(line);
      if (match) resolve(match[1]);
    });
  });
  const start = { child, data, url, stderr: () => stderr, exited };
  started.push(start);
  return start;
}

afterEach(() => {
  // Whatever a failed test left running: the start command's group, and the station it started
  // (in a group of its own), found by its data dir.
  for (const { child, data } of started.splice(0)) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Gone already.
    }
    try {
      execFileSync('pkill', ['-KILL', '-f', data]);
    } catch {
      // None left (pkill exits 1).
    }
  }
});

describe.skipIf(installed)('npm start without the Electron binary', () => {
  it('says in one line why there is no desktop app, and runs browser mode', async () => {
    const { child, data, url, stderr, exited } = await startInBrowserMode();
    expect(stderr()).toMatch(/^The Electron binary could not be downloaded: \S.*$/m);
    expect(stderr()).toContain('The desktop app needs the Electron binary.');
    expect(stderr()).toContain(
      `Running in browser mode instead: the station core in Node, data in ${data}.`,
    );
    // Not the downloader's stack trace, nor the electron package's advice to reinstall it.
    expect(stderr()).not.toMatch(/^\s+at /m);
    expect(stderr()).not.toContain('npx install-electron');
    expect((await fetch(url)).status).toBe(200);
    expect(existsSync(join(data, 'labstation.db'))).toBe(true);

    // The station runs in a process of its own: it ends with the start command.
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(fetch(url)).rejects.toThrow();
  });

  it('a Ctrl+C closes the station cleanly, however often it is passed on', async () => {
    const { child, data, url, exited, stderr } = await startInBrowserMode();
    // The station is in a process group of its own: the terminal's SIGINT reaches it only as
    // the start command passes it on, once (a second, while it closes, would end it).
    const station = Number(
      execFileSync('pgrep', ['-f', `station --data ${data}`], { encoding: 'utf8' }),
    );
    const groupOf = (pid: number): number =>
      Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[2]);
    expect(groupOf(child.pid!)).toBe(child.pid);
    expect(groupOf(station)).toBe(station);
    // The terminal's SIGINT to the whole foreground group, and npm's passed on to its child.
    process.kill(-child.pid!, 'SIGINT');
    child.kill('SIGINT');
    // The station closed (exit 0), not ended by a second signal while closing (exit 1).
    expect(await exited, stderr()).toBe(0);
    await expect(fetch(url)).rejects.toThrow();
  });
});
