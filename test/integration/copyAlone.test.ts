/**
 * bench/copyAlone.ts, the harvest's copy functions run without a station (a contender of
 * bench:transfer): it must copy what a harvest would, verified and placed, and say so only
 * then. Needs `npm run build` first (npm test does it).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runNodeScript, tempDir, type CliResult } from './helpers.js';

const SCRIPT = join(import.meta.dirname, '..', '..', 'dist', 'bench', 'copyAlone.js');

const copyAlone = (args: string[]): Promise<CliResult> => runNodeScript(SCRIPT, args);

/**
 * Every file below `root`, by relative path, with the SHA-256 of its bytes (a deep comparison
 * of megabytes of buffers takes vitest seconds).
 */
function filesBelow(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.set(relative(root, path), createHash('sha256').update(readFileSync(path)).digest('hex'));
  }
  return out;
}

/** Small files in two folders, an empty one, and one big enough to be copied on its own. */
function sourceTree(): { source: string; bytes: number } {
  const source = tempDir('copy-alone-src-');
  mkdirSync(join(source, 'a'));
  mkdirSync(join(source, 'b', 'c'), { recursive: true });
  const files: [string, number][] = [
    ['a/one.bin', 100 * 1024],
    ['a/two.bin', 1],
    ['a/empty.bin', 0],
    ['b/c/three.bin', 300 * 1024],
    ['big.bin', 5 * 1024 * 1024],
  ];
  for (const [path, size] of files) writeFileSync(join(source, path), randomBytes(size));
  return { source, bytes: files.reduce((n, [, size]) => n + size, 0) };
}

describe('bench/copyAlone.js', () => {
  it('copies a tree, small files in batches and a big one alone, byte for byte', async () => {
    const { source, bytes } = sourceTree();
    const dest = join(tempDir('copy-alone-dest-'), 'out');
    const result = await copyAlone([source, dest]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`copyAlone: 5 files, ${bytes} bytes verified and placed\n`);
    // Every file at its name with its content, and no partial left.
    const copied = filesBelow(dest);
    expect(copied.size).toBe(5);
    expect(copied).toEqual(filesBelow(source));
  });

  it('exits 1 and names the file when a name is taken, leaving what was there', async () => {
    const { source } = sourceTree();
    const dest = join(tempDir('copy-alone-dest-'), 'out');
    mkdirSync(join(dest, 'a'), { recursive: true });
    writeFileSync(join(dest, 'a', 'one.bin'), 'already here');
    const result = await copyAlone([source, dest, '1']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`not verified: ${join(dest, 'a', 'one.bin')}`);
    expect(result.stderr).toContain('"taken"');
    expect(readFileSync(join(dest, 'a', 'one.bin'), 'utf8')).toBe('already here');
  });

  it('exits 2 with its usage when an argument is missing or wrong', async () => {
    for (const args of [[], ['only-source'], ['a', 'b', '0']]) {
      const result = await copyAlone(args);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe('usage: copyAlone.js SOURCE DEST [THREADS]\n');
    }
  });
});
