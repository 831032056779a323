#!/usr/bin/env node
// `npm start`: the desktop app when the Electron binary is installed, browser mode otherwise.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);

function electronBinary() {
  try {
    const require = createRequire(import.meta.url);
    const pkgDir = dirname(require.resolve('electron/package.json'));
    const pathFile = join(pkgDir, 'path.txt');
    if (!existsSync(pathFile)) return null;
    const binary = join(pkgDir, 'dist', readFileSync(pathFile, 'utf8').trim());
    return existsSync(binary) ? binary : null;
  } catch {
    return null;
  }
}

const binary = electronBinary();
if (binary) {
  const child = spawn(binary, [root, ...args], { stdio: 'inherit' });
  child.on('exit', (code) => process.exit(code ?? 0));
} else {
  const dataDir = process.env.LABSTATION_DATA ?? join(root, '.labstation-data');
  process.stderr.write(
    'The Electron binary is not installed (it downloads on the first `npx electron` with internet).\n' +
      `Running in browser mode instead: the station core in Node, data in ${dataDir}.\n` +
      'Open the printed address in a browser.\n',
  );
  const child = spawn(
    process.execPath,
    [join(root, 'bin', 'labstation.js'), 'station', '--data', dataDir, '--demo', ...args],
    { stdio: 'inherit' },
  );
  child.on('exit', (code) => process.exit(code ?? 0));
}
