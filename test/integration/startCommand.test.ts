/**
 * `npm start` (bin/start.js) where the Electron binary cannot be had: the download is tried
 * (against a mirror on a closed loopback port, with an empty cache, so it fails here as it does
 * offline), its failure is told in one line rather than as the downloader's stack trace, and
 * the app runs in browser mode, its station answering at the printed address. A SIGTERM sent to
 * the start command alone ends the station it started too.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
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

describe.skipIf(installed)('npm start without the Electron binary', () => {
  it('says in one line why there is no desktop app, and runs browser mode', async () => {
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
      // A group of its own: whatever it started goes with it at the end, whatever happened.
      detached: true,
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        void exited.then(() => reject(new Error(`start exited: ${stderr}`)));
        createInterface({ input: child.stdout }).on('line', (line) => {
          const match = /ready at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(line);
          if (match) resolve(match[1]);
        });
      });
      expect(stderr).toMatch(/^The Electron binary could not be downloaded: \S.*$/m);
      expect(stderr).toContain('The desktop app needs the Electron binary.');
      expect(stderr).toContain(
        `Running in browser mode instead: the station core in Node, data in ${data}.`,
      );
      // Not the downloader's stack trace, nor the electron package's advice to reinstall it.
      expect(stderr).not.toMatch(/^\s+at /m);
      expect(stderr).not.toContain('npx install-electron');
      expect((await fetch(url)).status).toBe(200);
      expect(existsSync(join(data, 'labstation.db'))).toBe(true);

      // The station runs in a process of its own: it ends with the start command.
      child.kill('SIGTERM');
      await exited;
      await expect(fetch(url)).rejects.toThrow();
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    }
  });
});
