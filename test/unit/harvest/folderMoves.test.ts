/** Which change of a watch list moves a folder's file records (harvest/folderMoves.ts). */
import { describe, expect, it } from 'vitest';
import { movedFolder } from '../../../electron/core/harvest/folderMoves.js';

const w = (...paths: string[]): { path: string }[] => paths.map((path) => ({ path }));

describe('movedFolder', () => {
  it('takes one folder no longer watched and one watched newly as a move', () => {
    expect(movedFolder(w('/mnt/a/raw'), w('/mnt/b/raw'))).toEqual({
      from: '/mnt/a/raw',
      to: '/mnt/b/raw',
    });
    // Others unchanged around it.
    expect(movedFolder(w('/x', '/mnt/a/raw', '/y'), w('/y', '/mnt/b/raw', '/x'))).toEqual({
      from: '/mnt/a/raw',
      to: '/mnt/b/raw',
    });
    expect(movedFolder(w('D:\\Data'), w('E:\\Data'), true)).toEqual({
      from: 'D:\\Data',
      to: 'E:\\Data',
    });
  });

  it('takes no change that does not say which folder became which', () => {
    // Nothing changed, or only a trailing separator, or (where case does not count) its case.
    expect(movedFolder(w('/a'), w('/a'))).toBeNull();
    expect(movedFolder(w('/a'), w('/a/'))).toBeNull();
    expect(movedFolder(w('D:\\Data'), w('d:\\data\\'), true)).toBeNull();
    // Where case counts, another case is another folder.
    expect(movedFolder(w('/Data'), w('/data'), false)).toEqual({ from: '/Data', to: '/data' });
    // Added or removed only, or two changed at once.
    expect(movedFolder(w('/a'), w('/a', '/b'))).toBeNull();
    expect(movedFolder(w('/a', '/b'), w('/a'))).toBeNull();
    expect(movedFolder(w('/a', '/b'), w('/c', '/d'))).toBeNull();
    expect(movedFolder(w(), w('/a'))).toBeNull();
    // Inside or around the old one: its files keep their paths, found by them as they are.
    expect(movedFolder(w('/data'), w('/data/raw'))).toBeNull();
    expect(movedFolder(w('/data/raw'), w('/data'))).toBeNull();
    expect(movedFolder(w('/'), w('/data'))).toBeNull();
    expect(movedFolder(w('D:\\Data'), w('d:\\data\\raw'), true)).toBeNull();
    // A name that only starts the same is not inside.
    expect(movedFolder(w('/data'), w('/data2'))).toEqual({ from: '/data', to: '/data2' });
  });
});
