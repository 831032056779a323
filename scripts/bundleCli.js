#!/usr/bin/env node
// Bundles the `labstation` command (`npm run build:core`, after tsc): dist/electron/cli.js and
// the two worker entries it starts become a few files in dist/cli/, which bin/labstation.js runs.
//
// Why: a command's start was mostly Node's module loader. A station loaded about 750 files
// (ours, zod, fastify, ajv, axios, pino, ...), each resolved, read and compiled on its own, for
// 1.1 CPU s before it was ready; bundled, 0.7 s (BENCHMARKS.md, "Command start").
// The commands still import what they need when they run: each dynamic import() is its own chunk.
//
// The Electron shell (dist/electron/main.js), the benches and the tests keep the files tsc
// writes. better-sqlite3 (a native module) and hash-wasm (required on first use, hasher.ts) stay
// in node_modules; swagger-ui-dist is files to serve, found through its package.json.
import { readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'cli');

rmSync(out, { recursive: true, force: true });
await build({
  // Workers are started by URL, `new URL('./copyWorker.js', import.meta.url)`: as entries they
  // land in the same folder as the chunk that names them.
  input: {
    cli: join(root, 'dist/electron/cli.js'),
    copyWorker: join(root, 'dist/electron/core/harvest/copyWorker.js'),
    secretWorker: join(root, 'dist/electron/core/util/secretWorker.js'),
  },
  platform: 'node',
  external: [/^node:/, 'better-sqlite3', 'hash-wasm', 'swagger-ui-dist', 'fsevents'],
  logLevel: 'warn',
  output: { dir: out, format: 'esm', chunkFileNames: '[name]-[hash].js' },
});

// A worker URL that names no file would not fail: the pools then run on the calling thread
// (copyPool.ts, secretPool.ts), and a harvest would hash on the engine's thread unnoticed.
const missing = [];
for (const name of readdirSync(out).filter((file) => file.endsWith('.js'))) {
  const text = readFileSync(join(out, name), 'utf8');
  for (const match of text.matchAll(/new URL\(["'](\.\/[^"']+)["'], import\.meta\.url\)/g)) {
    if (!existsSync(join(out, match[1]))) missing.push(`${name}: ${match[1]}`);
  }
}
if (missing.length > 0) {
  process.stderr.write(
    `bundleCli: worker files missing from dist/cli:\n  ${missing.join('\n  ')}\n`,
  );
  process.exit(1);
}
