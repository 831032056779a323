import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The app's root: the nearest folder above `from` that holds a package.json. This file runs
 * from dist/electron/core/ (tsc's output: the Electron shell, the benches), from a chunk in
 * dist/cli/ (the bundled command, scripts/bundleCli.js) and from electron/core/ (the tests), so
 * a fixed number of levels up would be right for only one of them.
 */
export function appRootAbove(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const APP_ROOT = appRootAbove(dirname(fileURLToPath(import.meta.url)));
export const RENDERER_DIR = join(APP_ROOT, 'dist', 'renderer');
export const RESOURCES_DIR = join(APP_ROOT, 'resources');
export const DEMO_BUNDLE = join(RESOURCES_DIR, 'demo-facility.json');
