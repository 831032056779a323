import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { statFiles } from '../../../electron/core/harvest/copyBatch.js';
import {
  folderFilter,
  scanFolder,
  type FoundFile,
} from '../../../electron/core/harvest/discover.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tree(): string {
  const root = mkdtempSync(join(tmpdir(), 'labstation-walk-'));
  dirs.push(root);
  for (const d of ['a', 'a/deep', 'b', 'empty']) mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, 'top.dat'), 'x');
  writeFileSync(join(root, 'a', 'one.dat'), 'xx');
  writeFileSync(join(root, 'a', 'deep', 'two.dat'), 'xxx');
  writeFileSync(join(root, 'b', 'three.dat'), 'xxxx');
  writeFileSync(join(root, 'b', 'skip.tmp'), 'temporary');
  symlinkSync(join(root, 'top.dat'), join(root, 'b', 'link.dat'));
  return root;
}

const names = (files: FoundFile[]) => files.map((f) => f.relativePath).sort();

describe('scanFolder', () => {
  it('hands over each folder’s files as it reaches them, every accepted file once', async () => {
    const root = tree();
    const folder = { path: root, include: [], exclude: ['*.tmp'] };
    const handed: FoundFile[][] = [];
    await scanFolder(folder, folderFilter(folder), (files) => handed.push(files));
    // One call per folder that holds accepted files; the empty folder gives none.
    expect(handed).toHaveLength(4);
    for (const group of handed) {
      expect(new Set(group.map((f) => f.relativePath.split('/').slice(0, -1).join('/'))).size).toBe(
        1,
      );
    }
    const whole = handed.flat();
    expect(names(whole)).toEqual(['a/deep/two.dat', 'a/one.dat', 'b/three.dat', 'top.dat']);
    expect(whole.find((f) => f.relativePath === 'b/three.dat')?.size).toBe(4);
  });

  it('throws when the watched folder itself cannot be read, and hands over nothing', async () => {
    const folder = { path: join(tmpdir(), 'labstation-no-such-folder'), include: [], exclude: [] };
    const handed: FoundFile[][] = [];
    await expect(
      scanFolder(folder, folderFilter(folder), (files) => handed.push(files)),
    ).rejects.toThrow(/ENOENT/);
    expect(handed).toEqual([]);
  });

  it('finds the same files when the stat calls are answered elsewhere, in groups', async () => {
    const root = tree();
    // More files in one folder than one group of stat calls holds.
    mkdirSync(join(root, 'many'));
    for (let i = 0; i < 1100; i++) writeFileSync(join(root, 'many', `m${i}.dat`), 'x'.repeat(i));
    const folder = { path: root, include: [], exclude: ['*.tmp'] };
    const here: FoundFile[] = [];
    await scanFolder(folder, folderFilter(folder), (files) => here.push(...files));
    const calls: number[] = [];
    const there: FoundFile[] = [];
    await scanFolder(
      folder,
      folderFilter(folder),
      (files) => there.push(...files),
      (paths) => {
        calls.push(paths.length);
        return statFiles(paths);
      },
    );
    const byPath = (a: FoundFile, b: FoundFile) => a.absolutePath.localeCompare(b.absolutePath);
    expect(there.sort(byPath)).toEqual(here.sort(byPath));
    expect(there).toHaveLength(1104);
    expect(there.find((f) => f.relativePath === 'many/m999.dat')?.size).toBe(999);
    expect(Math.max(...calls)).toBe(1024);
  });

  it('leaves out a file that is gone by the time it is looked at', async () => {
    const root = tree();
    const folder = { path: root, include: [], exclude: ['*.tmp'] };
    const found: FoundFile[] = [];
    await scanFolder(
      folder,
      folderFilter(folder),
      (files) => found.push(...files),
      (paths) => {
        // Listed with its folder, gone when it is looked at.
        const doomed = join(root, 'a', 'one.dat');
        if (paths.includes(doomed)) rmSync(doomed);
        return statFiles(paths);
      },
    );
    expect(names(found)).toEqual(['a/deep/two.dat', 'b/three.dat', 'top.dat']);
  });
});
