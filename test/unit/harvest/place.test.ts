import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { noHardLinks } from '../../../electron/core/harvest/hardLinks.js';
import { alternativeName, leadsOutside } from '../../../electron/core/harvest/place.js';
import { inFolders } from '../../../electron/core/harvest/storageGuard.js';

const bytes = (path: string): number => Buffer.byteLength(basename(path));

describe('alternativeName', () => {
  it('numbers a name before its extension', () => {
    expect(alternativeName('/a/b/scan.tif', 1)).toBe('/a/b/scan (1).tif');
    expect(alternativeName('/a/b/notes', 12)).toBe('/a/b/notes (12)');
    expect(alternativeName('/a/b.d/.hidden', 2)).toBe('/a/b.d/.hidden (2)');
  });

  it('keeps a 255-byte name within 255 bytes, the extension kept', () => {
    const long = `/store/${'c'.repeat(251)}.txt`;
    const named = alternativeName(long, 1);
    expect(bytes(named)).toBe(255);
    expect(named).toMatch(/^\/store\/c+ \(1\)\.txt$/);
    expect(bytes(alternativeName(long, 1000))).toBe(255);
  });

  it('cuts between characters, never inside one', () => {
    // 85 three-byte characters: 255 bytes.
    const named = alternativeName(`/s/${'€'.repeat(85)}`, 7);
    expect(bytes(named)).toBeLessThanOrEqual(255);
    expect(basename(named)).toMatch(/^€+ \(7\)$/);
  });

  it('treats a very long "extension" as part of the name', () => {
    const named = alternativeName(`/s/a.${'x'.repeat(250)}`, 3);
    expect(bytes(named)).toBe(255);
    expect(named.endsWith(' (3)')).toBe(true);
  });
});

describe('leadsOutside', () => {
  it('keeps a folder of a storage location on a whole drive (its base a root) inside it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'labstation-root-'));
    mkdirSync(join(dir, 'sem'));
    mkdirSync(join(dir, 'se'));
    try {
      // A base that ends in its separator, as "/" and "E:\\" do: every folder is inside.
      expect(await leadsOutside('/', join(dir, 'sem', '2026'))).toBeNull();
      expect(await leadsOutside('/', '/')).toBeNull();
      expect(await leadsOutside(dir, join(dir, 'sem'))).toBeNull();
      expect(await leadsOutside(join(dir, 'sem'), dir)).toBe(dir);
      expect(await leadsOutside(join(dir, 'se'), join(dir, 'sem', 'x'))).toBe(join(dir, 'sem'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('noHardLinks', () => {
  it("takes a FAT32 or exFAT drive's EISDIR on Windows as no hard links, elsewhere not", () => {
    for (const code of ['EPERM', 'EXDEV', 'ENOTSUP', 'EMLINK']) {
      expect(noHardLinks(code, 'linux'), code).toBe(true);
      expect(noHardLinks(code, 'win32'), code).toBe(true);
    }
    expect(noHardLinks('EISDIR', 'win32')).toBe(true);
    expect(noHardLinks('EISDIR', 'linux')).toBe(false);
    expect(noHardLinks('EEXIST', 'win32')).toBe(false);
    expect(noHardLinks(undefined, 'win32')).toBe(false);
  });
});

describe('inFolders', () => {
  it('compares without letter case where the file system has none (Windows, macOS)', () => {
    expect(inFolders(['SEM'], 'sem/2026/a.tif', true)).toBe(true);
    expect(inFolders(['SEM'], 'Sem', true)).toBe(true);
    expect(inFolders(['SEM'], 'sem/2026/a.tif', false)).toBe(false);
    expect(inFolders(['SEM'], 'SEM/2026/a.tif', false)).toBe(true);
    expect(inFolders(['SEM'], 'SEMx/a.tif', true)).toBe(false);
    expect(inFolders([''], 'anything', false)).toBe(true);
  });
});
