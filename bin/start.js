#!/usr/bin/env node
// `npm start`: the desktop app when Electron is there (its binary is downloaded on the first
// start, which needs internet), browser mode otherwise.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sqliteBinding } from './native.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const require = createRequire(import.meta.url);

/**
 * Whether the electron package holds its binary (what its index.js checks before it downloads
 * one): path.txt names the executable under dist/.
 */
function electronInstalled(packageDir) {
  const pathFile = join(packageDir, 'path.txt');
  return (
    existsSync(pathFile) && existsSync(join(packageDir, 'dist', readFileSync(pathFile, 'utf8')))
  );
}

/**
 * Downloads the binary the way the package's own install does, its progress shown; a failure
 * is told in one line (what went wrong), not as the downloader's stack trace.
 */
function downloadElectron(packageDir) {
  process.stderr.write('Downloading the Electron binary (the first start needs internet)...\n');
  const result = spawnSync(process.execPath, [join(packageDir, 'install.js')], {
    stdio: ['ignore', 'inherit', 'pipe'],
    encoding: 'utf8',
  });
  if (result.status === 0) return true;
  const said = (result.stderr ?? '')
    .split('\n')
    .map((line) => line.trim())
    .find((line) => line !== '' && !line.startsWith('at '));
  process.stderr.write(
    `The Electron binary could not be downloaded: ${said ?? result.error?.message ?? `exit ${result.status}`}\n`,
  );
  return false;
}

/** The Electron binary, downloaded the first time; null when it cannot be had. */
function electronBinary() {
  try {
    const packageDir = dirname(require.resolve('electron/package.json'));
    const overridden = process.env.ELECTRON_OVERRIDE_DIST_PATH !== undefined;
    if (!overridden && !electronInstalled(packageDir) && !downloadElectron(packageDir)) {
      return null;
    }
    return require('electron');
  } catch (error) {
    process.stderr.write(
      `Electron is not available: ${error instanceof Error ? error.message : error}\n`,
    );
    return null;
  }
}

function browserMode(reason) {
  const dataDir = process.env.LABSTATION_DATA ?? join(root, '.labstation-data');
  process.stderr.write(
    `${reason}\nRunning in browser mode instead: the station core in Node, data in ${dataDir}.\n` +
      'Open the printed address in a browser.\n',
  );
  runUntilExit(
    spawn(
      process.execPath,
      [join(root, 'bin', 'labstation.js'), 'station', '--data', dataDir, '--demo', ...args],
      { stdio: ['ignore', 'inherit', 'inherit'], detached: GROUP_OF_ITS_OWN },
    ),
  );
}

/**
 * The app runs in a process group of its own (not on Windows, where that opens a console
 * window), and the first SIGTERM, SIGINT or SIGHUP this process gets is passed on to it, once:
 * the app closes on the first and would end in the middle of closing on a second. In this
 * process's group, a Ctrl+C in the terminal reached the app two or three times (from the
 * terminal, and passed on by npm and by this process); not passed on, a signal sent to this
 * process alone (a kill, a service manager) left the app running without it.
 */
const GROUP_OF_ITS_OWN = process.platform !== 'win32';

/** This process ends with `child`, passing it the first signal it gets (GROUP_OF_ITS_OWN). */
function runUntilExit(child) {
  let passed = false;
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
    process.on(signal, () => {
      if (!passed) child.kill(signal);
      passed = true;
    });
  }
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

const binary = electronBinary();
if (!binary) {
  browserMode('The desktop app needs the Electron binary.');
} else {
  let binding;
  try {
    binding = sqliteBinding({
      root,
      runtime: 'electron',
      target: require('electron/package.json').version,
    });
  } catch (error) {
    browserMode(
      `The desktop app cannot open its database: ${error instanceof Error ? error.message : error}.`,
    );
  }
  if (binding) {
    runUntilExit(
      spawn(binary, [root, ...args], {
        stdio: ['ignore', 'inherit', 'inherit'],
        detached: GROUP_OF_ITS_OWN,
        env: { ...process.env, LABSTATION_SQLITE_BINDING: binding },
      }),
    );
  }
}
