import { describe, expect, it } from 'vitest';
import { basename } from 'node:path';
import { alternativeName } from '../../../electron/core/harvest/place.js';

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
