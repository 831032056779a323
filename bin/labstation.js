#!/usr/bin/env node
// The `labstation` command: runs the bundled CLI (`npm run build` writes dist/; the bundle in
// dist/cli/ is made by scripts/bundleCli.js).
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('labstation: dist/cli/cli.js is missing; run `npm run build` first\n');
  process.exit(2);
}
// Output read by a program that stops reading (`labstation files | head`) is not an error.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});
const { main } = await import(cli.href);
process.exitCode = await main(process.argv.slice(2));
