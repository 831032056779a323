// better-sqlite3 for the desktop app. Electron runs its own Node with another native-module
// ABI than the Node that runs the CLI and the tests, so one build in node_modules cannot serve
// both. This builds a second copy for Electron in .electron-native/ (a prebuilt binary when
// one is published for this Electron, else compiled against Electron's headers; both need
// internet once) and leaves node_modules as it is.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

function run(command, args, cwd, env) {
  const result = spawnSync(command, args, { cwd, env, stdio: 'inherit' });
  return result.status === 0;
}

/**
 * Returns the path of a better_sqlite3.node built for `runtime` (electron or node) at `target`
 * (its version), building it under `root`/.electron-native when it is not there yet.
 */
export function sqliteBinding({ root, runtime, target, nodedir }) {
  const source = dirname(require.resolve('better-sqlite3/package.json'));
  const version = require('better-sqlite3/package.json').version;
  const dir = join(root, '.electron-native', `better-sqlite3-${version}-${runtime}-${target}`);
  const binding = join(dir, 'build', 'Release', 'better_sqlite3.node');
  if (existsSync(binding)) return binding;

  process.stderr.write(`Building better-sqlite3 ${version} for ${runtime} ${target} in ${dir}\n`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  cpSync(source, dir, {
    recursive: true,
    filter: (path) => !(basename(path) === 'build' && dirname(path) === source),
  });
  // npm sets nodedir (this machine's Node headers) for its own builds; Electron needs its own.
  const env = { ...process.env };
  delete env.npm_config_nodedir;
  delete env.NPM_CONFIG_NODEDIR;
  const prebuilt = join(dirname(require.resolve('prebuild-install/package.json')), 'bin.js');
  const fetched =
    runtime === 'electron' &&
    run(process.execPath, [prebuilt, '--runtime', runtime, '--target', target], dir, env);
  if (!fetched) {
    const gyp =
      process.env.npm_config_node_gyp ??
      join(
        dirname(process.execPath),
        '..',
        'lib',
        'node_modules',
        'npm',
        'node_modules',
        'node-gyp',
        'bin',
        'node-gyp.js',
      );
    const args = [gyp, 'rebuild', '--release', `--runtime=${runtime}`, `--target=${target}`];
    if (runtime === 'electron') args.push('--dist-url=https://electronjs.org/headers');
    if (nodedir) args.push(`--nodedir=${nodedir}`);
    if (!run(process.execPath, args, dir, env) || !existsSync(binding)) {
      throw new Error(`could not build better-sqlite3 for ${runtime} ${target} (see above)`);
    }
  }
  return binding;
}
