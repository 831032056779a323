import {
  watch as fsWatch,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../integration/helpers.js';
import { listFiles, statFiles } from '../../../electron/core/harvest/copyBatch.js';
import {
  folderFilter,
  scanFolder,
  type FoundFile,
} from '../../../electron/core/harvest/discover.js';
import { watchFolder, watchMode } from '../../../electron/core/harvest/watchers.js';

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

/**
 * A watch on a fresh folder (or on `made`), recording what it reports, ready before it is
 * returned. With `throughLink`, the watched path is a symbolic link to the folder (`real`).
 */
async function watching(
  exclude: string[] = ['*.tmp'],
  throughLink = false,
  made = mkdtempSync(join(tmpdir(), 'labstation-watch-')),
) {
  const real = made;
  dirs.push(real);
  const root = throughLink ? `${real}-link` : real;
  if (throughLink) {
    symlinkSync(real, root);
    dirs.push(root);
  }
  const folder = { path: root, include: [], exclude };
  const seen = { paths: new Set<string>(), folders: [] as string[], bursts: 0 };
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  const watch = watchFolder(folder, folderFilter(folder), {
    onPath: (path) => seen.paths.add(path),
    onFolder: (path) => seen.folders.push(path),
    onBurst: () => (seen.bursts += 1),
    onError: (error) => {
      throw error;
    },
    onReady: ready,
  });
  watches.push(watch);
  await isReady;
  return { root, real, seen, watch };
}

const watches: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(watches.splice(0).map((w) => w.close()));
});

/** Waits until `check` holds (waitFor wants a value, not false). */
const until = (what: string, check: () => boolean): Promise<true> =>
  waitFor(what, () => check() || undefined, 10_000);

/**
 * A watch that names a file written at the top, then reports each folder of a tree moved in
 * whole (no event names its files).
 */
async function fileAndTreeSeen(): Promise<Awaited<ReturnType<typeof watching>>> {
  const watched = await watching();
  const { root, seen } = watched;
  writeFileSync(join(root, 'top.dat'), 'x');
  await until('top.dat', () => seen.paths.has(join(root, 'top.dat')));
  const outside = mkdtempSync(join(tmpdir(), 'labstation-tree-'));
  dirs.push(outside);
  mkdirSync(join(outside, 'run', 'a', 'deep'), { recursive: true });
  writeFileSync(join(outside, 'run', 'a', 'deep', 'two.dat'), 'xx');
  renameSync(join(outside, 'run'), join(root, 'run'));
  const folders = ['run', 'run/a', 'run/a/deep'].map((d) => join(root, d));
  await until('the moved folders', () => folders.every((d) => seen.folders.includes(d)));
  return watched;
}

/** A watched folder that is a symbolic link is watched where it leads, files named under it. */
async function linkedFolderWatched(): Promise<void> {
  const { root, real, seen } = await watching(['*.tmp'], true);
  writeFileSync(join(real, 'top.dat'), 'x');
  await until('top.dat', () => seen.paths.has(join(root, 'top.dat')));
  mkdirSync(join(real, 'run'));
  await until('the new folder', () => seen.folders.includes(join(root, 'run')));
  writeFileSync(join(real, 'run', 'a.dat'), 'x');
  await until('run/a.dat', () => seen.paths.has(join(root, 'run', 'a.dat')));
  expect([...seen.paths].every((p) => p.startsWith(`${root}/`))).toBe(true);
}

describe('watchFolder, folder by folder (LABSTATION_WATCH=folders, the default but on Windows)', () => {
  it('names the files written in watched folders and reports each folder that appears', async () => {
    const { root, seen } = await fileAndTreeSeen();

    // A folder is reported once its watch is up (its files are read then): a file written in
    // it is named, and the folder is not reported again.
    const deep = join(root, 'run', 'a', 'deep');
    const reports = (): number => seen.folders.filter((d) => d === deep).length;
    expect(reports()).toBe(1);
    writeFileSync(join(deep, 'three.dat'), 'xxx');
    await until('three.dat', () => seen.paths.has(join(deep, 'three.dat')));
    writeFileSync(join(deep, 'four.dat'), 'xxxx');
    await until('four.dat', () => seen.paths.has(join(deep, 'four.dat')));
    expect(reports()).toBe(1);
    expect(seen.bursts).toBe(0);
  });

  it('follows a folder renamed, and one removed and made again under its name', async () => {
    const { root, seen } = await fileAndTreeSeen();

    // An instrument ends a run by renaming its folder: the tree is watched under the new name.
    renameSync(join(root, 'run'), join(root, 'run-001'));
    const deep = join(root, 'run-001', 'a', 'deep');
    await until('the renamed run', () => seen.folders.includes(deep));
    writeFileSync(join(deep, 'five.dat'), 'x');
    await until('five.dat', () => seen.paths.has(join(deep, 'five.dat')));

    // Removed, then made again: the new folder (another inode) is watched, not the old one's
    // ended watch kept.
    rmSync(join(root, 'run-001'), { recursive: true });
    const reportsBefore = seen.folders.length;
    mkdirSync(join(root, 'run-001'));
    await until('run-001 made again', () =>
      seen.folders.slice(reportsBefore).includes(join(root, 'run-001')),
    );
    writeFileSync(join(root, 'run-001', 'six.dat'), 'x');
    await until('six.dat', () => seen.paths.has(join(root, 'run-001', 'six.dat')));
    expect(seen.bursts).toBe(0);
  });

  // Mutation: folderOf without the time of birth (the inode alone): the folder made again with
  // the old inode is taken for the old one, whose watch never said it went under this name.
  it('watches a folder made again, with the old inode, where one renamed to its name was removed', async (ctx) => {
    const made = mkdtempSync(join(tmpdir(), 'labstation-watch-'));
    mkdirSync(join(made, 'run'));
    // Another watch of the folder, set up first, under its first name: inotify then reports the
    // folder's own removal by that name to every watch of it (libuv keeps one path an inode).
    const first = fsWatch(join(made, 'run'), () => undefined);
    first.on('error', () => undefined);
    try {
      const { root, seen } = await watching(['*.tmp'], false, made);
      renameSync(join(root, 'run'), join(root, 'run-001'));
      await until('the renamed run', () => seen.folders.includes(join(root, 'run-001')));
      const old = statSync(join(root, 'run-001')).ino;
      rmSync(join(root, 'run-001'), { recursive: true });
      const reportsBefore = seen.folders.length;
      mkdirSync(join(root, 'run-001'));
      // Where the file system gives the new folder the old inode (ext4 does at once).
      if (statSync(join(root, 'run-001')).ino !== old) return ctx.skip();
      await until('run-001 made again', () =>
        seen.folders.slice(reportsBefore).includes(join(root, 'run-001')),
      );
      writeFileSync(join(root, 'run-001', 'six.dat'), 'x');
      await until('six.dat', () => seen.paths.has(join(root, 'run-001', 'six.dat')));
    } finally {
      first.close();
    }
  });

  it('says the watched folder itself went, even when one is made again in its place', async () => {
    const { root, watch } = await watching();
    expect(watch.watched()).toMatch(/^\d+:\d+:[\d.]+$/);
    rmSync(root, { recursive: true });
    mkdirSync(root);
    // The walks set up its watch anew (watches.ts renew): the new folder may have the old inode.
    await until('the watch to say so', () => watch.watched() === 'the watch failed');
  });

  it(
    'watches a folder that is a symbolic link where it leads, naming files under the link',
    linkedFolderWatched,
  );

  it('watches no folder the filter skips', async () => {
    const { root, seen } = await watching(['.*', 'scratch']);
    mkdirSync(join(root, 'scratch'));
    mkdirSync(join(root, '.cache'));
    mkdirSync(join(root, 'kept'));
    await until('kept', () => seen.folders.includes(join(root, 'kept')));
    writeFileSync(join(root, 'scratch', 'x.dat'), 'x');
    writeFileSync(join(root, '.cache', 'y.dat'), 'y');
    writeFileSync(join(root, 'kept', 'z.dat'), 'z');
    await until('z.dat', () => seen.paths.has(join(root, 'kept', 'z.dat')));
    expect([...new Set(seen.folders)]).toEqual([join(root, 'kept')]);
    expect([...seen.paths].filter((p) => /x\.dat|y\.dat/.test(p))).toEqual([]);
  });

  it('watches a folder whose name starts with two dots, as the walk reads it', async () => {
    // Only ".." itself climbs out of the watched folder; "..raw" is a folder in it.
    const { root, seen } = await watching(['*.tmp']);
    mkdirSync(join(root, '..raw'));
    await until('..raw', () => seen.folders.includes(join(root, '..raw')));
    writeFileSync(join(root, '..raw', 'a.dat'), 'x');
    await until('..raw/a.dat', () => seen.paths.has(join(root, '..raw', 'a.dat')));
  });

  it('watches the folders of a tree there at the start, and does not follow links', async () => {
    const real = mkdtempSync(join(tmpdir(), 'labstation-watch-'));
    dirs.push(real);
    const elsewhere = mkdtempSync(join(tmpdir(), 'labstation-elsewhere-'));
    dirs.push(elsewhere);
    mkdirSync(join(real, 'old', 'deeper'), { recursive: true });
    symlinkSync(elsewhere, join(real, 'linked'));
    const { seen } = await watching(['*.tmp'], false, real);
    writeFileSync(join(real, 'old', 'deeper', 'a.dat'), 'x');
    await until('old/deeper/a.dat', () => seen.paths.has(join(real, 'old', 'deeper', 'a.dat')));
    writeFileSync(join(elsewhere, 'b.dat'), 'x');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect([...seen.paths].some((p) => p.includes('b.dat'))).toBe(false);
    // Folders there at the start are not reported: the walk at ready reads them.
    expect(seen.folders).toEqual([]);
  });

  it('asks for a walk after a burst of events, once it has ended', async () => {
    const { root, seen } = await watching();
    for (let i = 0; i < 1200; i++) writeFileSync(join(root, `f${i}.dat`), 'x');
    await until('the walk after the burst', () => seen.bursts === 1);
    // A few events more are no burst.
    for (let i = 0; i < 5; i++) writeFileSync(join(root, `g${i}.dat`), 'x');
    await until('g4.dat', () => seen.paths.has(join(root, 'g4.dat')));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(seen.bursts).toBe(1);
  });
});

describe('watchMode', () => {
  afterEach(() => {
    delete process.env.LABSTATION_WATCH;
    delete process.env.CHOKIDAR_USEPOLLING;
  });

  it('watches folder by folder on Linux, as LABSTATION_WATCH says, and polls for CHOKIDAR_USEPOLLING', () => {
    expect(watchMode()).toBe(process.platform === 'linux' ? 'folders' : 'whole');
    for (const mode of ['folders', 'whole', 'poll'] as const) {
      process.env.LABSTATION_WATCH = mode;
      expect(watchMode()).toBe(mode);
    }
    delete process.env.LABSTATION_WATCH;
    // chokidar's own switch, as a station set up for chokidar may still have it.
    for (const [value, polls] of [
      ['1', true],
      ['true', true],
      ['0', false],
      ['False', false],
    ]) {
      process.env.CHOKIDAR_USEPOLLING = value as string;
      expect(watchMode() === 'poll', `CHOKIDAR_USEPOLLING=${value}`).toBe(polls);
    }
    process.env.LABSTATION_WATCH = 'folders';
    process.env.CHOKIDAR_USEPOLLING = '1';
    expect(watchMode()).toBe('folders');
  });
});

describe('watchFolder, polled by chokidar (LABSTATION_WATCH=poll)', () => {
  beforeAll(() => {
    process.env.LABSTATION_WATCH = 'poll';
  });
  afterAll(() => {
    delete process.env.LABSTATION_WATCH;
  });

  it('reports the folder whose entries changed, and a folder that appears', async () => {
    const { root, seen } = await watching();
    await new Promise((resolve) => setTimeout(resolve, 200));
    writeFileSync(join(root, 'polled.dat'), 'x');
    await until('the polled folder', () => seen.folders.includes(root));
    mkdirSync(join(root, 'run'));
    await until('the new folder', () => seen.folders.includes(join(root, 'run')));
  });
});

describe('watchFolder, the whole tree in one watch (as on Windows: LABSTATION_WATCH=whole)', () => {
  beforeAll(() => {
    process.env.LABSTATION_WATCH = 'whole';
  });
  afterAll(() => {
    delete process.env.LABSTATION_WATCH;
  });

  it('names the files written, and reports a tree moved in with each of its folders', async () => {
    const { root, seen } = await fileAndTreeSeen();

    // A file written in a folder below, and a folder renamed as an instrument ends a run.
    const deep = join(root, 'run', 'a', 'deep');
    writeFileSync(join(deep, 'three.dat'), 'xxx');
    await until('three.dat', () => seen.paths.has(join(deep, 'three.dat')));
    renameSync(join(root, 'run'), join(root, 'run-001'));
    await until('the renamed run', () => seen.folders.includes(join(root, 'run-001', 'a', 'deep')));
    expect(seen.bursts).toBe(0);
  });

  it(
    'watches a folder that is a symbolic link where it leads, naming files under the link',
    linkedFolderWatched,
  );

  it('reports nothing in a folder the filter skips', async () => {
    const { root, seen } = await watching(['.*', 'scratch']);
    mkdirSync(join(root, 'scratch', 'below'), { recursive: true });
    mkdirSync(join(root, '.cache'));
    mkdirSync(join(root, 'kept'));
    await until('kept', () => seen.folders.includes(join(root, 'kept')));
    writeFileSync(join(root, 'scratch', 'x.dat'), 'x');
    writeFileSync(join(root, 'scratch', 'below', 'w.dat'), 'w');
    writeFileSync(join(root, '.cache', 'y.dat'), 'y');
    writeFileSync(join(root, 'kept', 'z.dat'), 'z');
    await until('z.dat', () => seen.paths.has(join(root, 'kept', 'z.dat')));
    expect([...new Set(seen.folders)]).toEqual([join(root, 'kept')]);
    expect([...seen.paths].filter((p) => /[xyw]\.dat/.test(p))).toEqual([]);
  });

  it('asks for a walk after a burst of events, once it has ended', async () => {
    const { root, seen } = await watching();
    for (let i = 0; i < 1200; i++) writeFileSync(join(root, `f${i}.dat`), 'x');
    // Node builds the recursive watch on Linux in JavaScript, which hands these events on
    // over several seconds (Windows has its own, in the kernel): a pause may end a burst
    // early, and its rest be a second one.
    await waitFor('the walk after the burst', () => seen.bursts >= 1 || undefined, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const bursts = seen.bursts;
    for (let i = 0; i < 5; i++) writeFileSync(join(root, `g${i}.dat`), 'x');
    await until('g4.dat', () => seen.paths.has(join(root, 'g4.dat')));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(seen.bursts).toBe(bursts);
  }, 60_000);

  it('sets up nothing, quietly, on a folder that is not there (yet): a walk finds it', async () => {
    const errors: Error[] = [];
    const missing = join(tmpdir(), `labstation-missing-${process.pid}-${Date.now()}`);
    const folder = { path: missing, include: [], exclude: [] };
    const watch = watchFolder(folder, folderFilter(folder), {
      onPath: () => undefined,
      onFolder: () => undefined,
      onBurst: () => undefined,
      onError: (error) => errors.push(error),
      onReady: () => undefined,
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await watch.close();
    expect(errors).toEqual([]);
  });
});

describe('listFiles', () => {
  it('lists the regular files directly in each folder with their size; none for a missing one', () => {
    const root = tree();
    const [top, b, missing] = listFiles([root, join(root, 'b'), join(root, 'no-such')]);
    expect(top.map((f) => f.path)).toEqual([join(root, 'top.dat')]);
    // The inode tells a file put back in its place from the one listed before (listings.ts).
    expect(top[0].ino).toBe(statSync(join(root, 'top.dat')).ino);
    expect(b.map((f) => [f.path, f.size]).sort()).toEqual([
      [join(root, 'b', 'skip.tmp'), 9],
      [join(root, 'b', 'three.dat'), 4],
    ]);
    expect(missing).toEqual([]);
  });
});
