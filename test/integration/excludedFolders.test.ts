/**
 * A folder that a watched folder's exclude leaves out is not walked at all (discover.ts
 * scanFolder): one that cannot be read is then no problem of the harvest, as the files in it
 * are not wanted. Run as nobody when the tests run as root, who reads every folder.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

describe('an excluded folder', () => {
  it('is not walked: one that cannot be read is not reported', () => {
    const base = tempDir('labstation-excluded-');
    const root = join(base, 'w');
    mkdirSync(join(root, 'ok'), { recursive: true });
    mkdirSync(join(root, 'private'));
    writeFileSync(join(root, 'ok', 'a.tif'), 'a');
    writeFileSync(join(root, 'private', 'b.tif'), 'b');
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      chmodSync(base, 0o711);
      // The run's own temporary root (test/tempRoot.ts, mode 700); never a shared /tmp.
      if (basename(tmpdir()).startsWith('labstation-test-')) chmodSync(tmpdir(), 0o711);
    }
    chmodSync(root, 0o755);
    chmodSync(join(root, 'ok'), 0o755);
    chmodSync(join(root, 'ok', 'a.tif'), 0o644);
    chmodSync(join(root, 'private'), asRoot ? 0o700 : 0o000);
    const discover = join(import.meta.dirname, '..', '..', 'dist', 'electron', 'core', 'harvest');
    const script = `
      const { folderFilter, scanFolder } = await import(${JSON.stringify(
        pathToFileURL(join(discover, 'discover.js')).href,
      )});
      if (process.getuid() === 0) { process.setgid(65534); process.setuid(65534); }
      const folder = { path: ${JSON.stringify(root)}, include: [], exclude: ['private'] };
      const found = [];
      const unread = await scanFolder(folder, folderFilter(folder), (files) =>
        found.push(...files.map((f) => f.relativePath)));
      console.log(JSON.stringify({ found, unread: unread.map((u) => u.path) }));`;
    try {
      const walked = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
      });
      expect(walked.status, walked.stderr).toBe(0);
      expect(JSON.parse(walked.stdout)).toEqual({ found: ['ok/a.tif'], unread: [] });
    } finally {
      chmodSync(join(root, 'private'), 0o700);
    }
  });
});
