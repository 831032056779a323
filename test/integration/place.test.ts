/** prepareFolder: destination folders made, checked to stay inside the storage, and memoized. */
import { existsSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forgetFolder, freeOrSameName, prepareFolder } from '../../electron/core/harvest/place.js';
import { tempDir } from './helpers.js';

describe('prepareFolder', () => {
  it('makes a nested folder inside the storage location', async () => {
    const base = tempDir('labstation-place-');
    const folder = join(base, 'a', 'b', 'c');
    expect(await prepareFolder(base, folder)).toEqual({ ok: true });
    expect(existsSync(folder)).toBe(true);
  });

  it('refuses a folder that a symbolic link leads outside, and never remembers it', async () => {
    const base = tempDir('labstation-place-');
    const outside = tempDir('labstation-outside-');
    symlinkSync(outside, join(base, 'link'));
    const folder = join(base, 'link', 'x', 'y');
    const first = await prepareFolder(base, folder);
    expect(first).toMatchObject({ ok: false, kind: 'outside' });
    expect(await prepareFolder(base, folder)).toMatchObject({ ok: false, kind: 'outside' });
    // Refused before anything is made where the link leads.
    expect(readdirSync(outside)).toEqual([]);
  });

  it('names a storage location that is missing or not a folder', async () => {
    const root = tempDir('labstation-place-');
    const missing = join(root, 'gone');
    const missingCheck = await prepareFolder(missing, join(missing, 'x'));
    expect(missingCheck).toMatchObject({ ok: false, kind: 'base' });
    expect(existsSync(missing)).toBe(false);
    const file = join(root, 'file');
    writeFileSync(file, 'x');
    expect(await prepareFolder(file, join(file, 'x'))).toEqual({
      ok: false,
      kind: 'base',
      error: null,
    });
  });

  it('takes a folder checked moments ago as it was, until it is forgotten', async () => {
    const base = tempDir('labstation-place-');
    const folder = join(base, 'day');
    expect(await prepareFolder(base, folder)).toEqual({ ok: true });
    rmSync(folder, { recursive: true });
    // Memoized: no file-system call, so the folder is not made again...
    expect(await prepareFolder(base, folder)).toEqual({ ok: true });
    expect(existsSync(folder)).toBe(false);
    // ...until a failure in it makes the caller forget it.
    forgetFolder(base, folder);
    expect(await prepareFolder(base, folder)).toEqual({ ok: true });
    expect(existsSync(folder)).toBe(true);
  });

  it('freeOrSameName: the same content at a numbered name, looked for in the first few only', async () => {
    const base = tempDir('labstation-place-');
    const name = (n: number) => join(base, n === 0 ? 'a.dat' : `a (${n}).dat`);
    for (let n = 0; n <= 10; n += 1) writeFileSync(name(n), String(n));
    const holding = (wanted: number) => (path: string) => Promise.resolve(path === name(wanted));
    expect(await freeOrSameName(name(0), holding(3))).toEqual({ name: name(3), same: true });
    // Past the first eight numbered names, only a free one is looked for.
    expect(await freeOrSameName(name(0), holding(10))).toEqual({ name: name(11), same: false });
    // One that cannot be read is not the same.
    const unreadable = (): Promise<boolean> =>
      Promise.reject(Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }));
    expect(await freeOrSameName(name(0), unreadable)).toEqual({ name: name(11), same: false });
  });
});
