import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// This file is compiled to dist/electron/core/paths.js; the app root is three levels up.
const here = dirname(fileURLToPath(import.meta.url));

export const APP_ROOT = join(here, '..', '..', '..');
export const RENDERER_DIR = join(APP_ROOT, 'dist', 'renderer');
export const RESOURCES_DIR = join(APP_ROOT, 'resources');
export const DEMO_BUNDLE = join(RESOURCES_DIR, 'demo-facility.json');
