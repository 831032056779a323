#!/usr/bin/env node
// `npm start`: the desktop app when Electron is there (its binary is downloaded on the first
// start, which needs internet), browser mode otherwise.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sqliteBinding } from './native.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const require = createRequire(import.meta.url);

/** The Electron binary; requiring the package downloads it the first time. */
function electronBinary() {
  try {
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
  const child = spawn(
    process.execPath,
    [join(root, 'bin', 'labstation.js'), 'station', '--data', dataDir, '--demo', ...args],
    { stdio: 'inherit' },
  );
  child.on('exit', (code) => process.exit(code ?? 0));
}

const binary = electronBinary();
if (!binary) {
  browserMode(
    'The Electron binary is not installed (it downloads on the first start, with internet).',
  );
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
    const child = spawn(binary, [root, ...args], {
      stdio: 'inherit',
      env: { ...process.env, LABSTATION_SQLITE_BINDING: binding },
    });
    child.on('exit', (code) => process.exit(code ?? 0));
  }
}
