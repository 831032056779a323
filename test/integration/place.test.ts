/** prepareFolder: destination folders made, checked to stay inside the storage, and memoized. */
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  letGoFolder,
  NONE_MADE,
  prepareHeldFolder,
  takeBackMade,
} from '../../electron/core/harvest/folderHolds.js';
import { placeFiles } from '../../electron/core/harvest/copyBatch.js';
import {
  forgetFolder,
  freeOrSameName,
  inFolder,
  placeWithoutClobber,
  prepareFolder,
} from '../../electron/core/harvest/place.js';
import { tempDir } from './helpers.js';

describe('prepareFolder', () => {
  it('makes a nested folder inside the storage location', async () => {
    const base = tempDir('labstation-place-');
    const folder = join(base, 'a', 'b', 'c');
    expect(await prepareFolder(base, folder)).toEqual({
      ok: true,
      made: [join(base, 'a'), join(base, 'a', 'b'), folder],
    });
    expect(existsSync(folder)).toBe(true);
    // There now: nothing made.
    forgetFolder(base, folder);
    expect(await prepareFolder(base, folder)).toEqual({ ok: true, made: [] });
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

  it('refuses a link to a folder beside the storage location whose name starts with its own', async () => {
    const root = tempDir('labstation-place-');
    const base = join(root, 'store');
    const beside = join(root, 'store-old');
    mkdirSync(base);
    mkdirSync(beside);
    symlinkSync(beside, join(base, 'link'));
    const folder = join(base, 'link', 'x');
    // "/root/store-old" starts with "/root/store" as text, not as a path.
    expect(await prepareFolder(base, folder)).toMatchObject({ ok: false, kind: 'outside' });
    expect(readdirSync(beside)).toEqual([]);
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
    expect(await prepareFolder(base, folder)).toEqual({ ok: true, made: [folder] });
    rmSync(folder, { recursive: true });
    // Memoized: no file-system call, so the folder is not made again...
    expect(await prepareFolder(base, folder)).toEqual({ ok: true, made: [] });
    expect(existsSync(folder)).toBe(false);
    // ...until a failure in it makes the caller forget it.
    forgetFolder(base, folder);
    expect(await prepareFolder(base, folder)).toEqual({ ok: true, made: [folder] });
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

/** The folders a check made for a transfer, as prepareHeldFolder answers them. */
async function held(base: string, folder: string): Promise<readonly string[]> {
  const checked = await prepareHeldFolder(base, folder);
  if (!checked.ok) throw new Error(`not ok: ${checked.kind}`);
  return checked.made;
}

describe('destination folders taken back after a transfer that placed nothing (folderHolds)', () => {
  it('takes back the folders its check made, deepest first; the base and a folder there before stay', async () => {
    const base = tempDir('labstation-holds-');
    mkdirSync(join(base, 'sem-1'));
    const folder = join(base, 'sem-1', '2026', '12', '03');
    const made = await held(base, folder);
    expect(made).toEqual([join(base, 'sem-1', '2026'), join(base, 'sem-1', '2026', '12'), folder]);
    await letGoFolder(folder, made, false);
    expect(readdirSync(base)).toEqual(['sem-1']);
    expect(readdirSync(join(base, 'sem-1'))).toEqual([]);
    // Its remembered check went with it: the next transfer makes it again.
    expect(await held(base, folder)).toEqual(made);
    expect(letGoFolder(folder, NONE_MADE, true)).toBeNull();
    expect(existsSync(folder)).toBe(true);
  });

  it('keeps a folder another transfer holds, whose last holder takes it back', async () => {
    const base = tempDir('labstation-holds-');
    const folder = join(base, 'a', 'b');
    const first = await held(base, folder);
    // The second transfer takes the check as it was: it made nothing.
    expect(await held(base, folder)).toEqual([]);
    expect(letGoFolder(folder, first, false)).toBeNull();
    // The other transfer places its partial there: the folder is there still.
    writeFileSync(join(folder, '.x.partial'), 'x');
    unlinkSync(join(folder, '.x.partial'));
    await letGoFolder(folder, NONE_MADE, false);
    expect(readdirSync(base)).toEqual([]);
  });

  it('stops below a folder another transfer holds, and leaves the rest to it', async () => {
    const base = tempDir('labstation-holds-');
    const day = join(base, 'y', 'm');
    const mine = join(day, 'd1');
    const other = join(day, 'd2');
    const made = await held(base, mine);
    const otherMade = await held(base, other);
    expect(otherMade).toEqual([other]);
    await letGoFolder(mine, made, false);
    // d1 went; m holds d2, held by a transfer under way.
    expect(readdirSync(day)).toEqual(['d2']);
    // That one fails too: everything goes.
    await letGoFolder(other, otherMade, false);
    expect(readdirSync(base)).toEqual([]);
  });

  it('keeps a folder holding a copy, and those above it', async () => {
    const base = tempDir('labstation-holds-');
    const day = join(base, 'y', 'm');
    const mine = join(day, 'd1');
    const other = join(day, 'd2');
    const made = await held(base, mine);
    const otherMade = await held(base, other);
    await letGoFolder(mine, made, false);
    writeFileSync(join(other, 'copy.dat'), 'x');
    expect(letGoFolder(other, otherMade, true)).toBeNull();
    expect(readdirSync(day)).toEqual(['d2']);
    // A copy put there by someone else than the transfers that made it: rmdir refuses it.
    const third = join(day, 'd3');
    const thirdMade = await held(base, third);
    writeFileSync(join(third, 'other.dat'), 'x');
    await letGoFolder(third, thirdMade, false);
    expect(readdirSync(day).sort()).toEqual(['d2', 'd3']);
  });

  it('takeBackMade (recovery): the empty ones go, deepest first; a held one stays, for its holder to take back', async () => {
    const base = tempDir('labstation-holds-');
    // What two interrupted attempts recorded: each its own line, sharing `y`.
    const y = join(base, 'y');
    const lines = [
      [y, join(y, 'm1'), join(y, 'm1', 'd')],
      [join(y, 'm2'), join(y, 'm2', 'd')],
    ];
    for (const line of lines) mkdirSync(line[line.length - 1], { recursive: true });
    // A transfer under way holds m2/d (it found it made: its check made nothing).
    const live = join(y, 'm2', 'd');
    expect(await held(base, live)).toEqual([]);
    writeFileSync(join(base, 'there-before.dat'), 'x');
    await takeBackMade(lines.flat());
    expect(readdirSync(y)).toEqual(['m2']);
    expect(readdirSync(join(y, 'm2'))).toEqual(['d']);
    // It placed nothing: what recovery left to it goes as it ends, and the base stays.
    await letGoFolder(live, NONE_MADE, false);
    expect(readdirSync(base)).toEqual(['there-before.dat']);
  });

  it('a transfer into a folder being taken back waits, and its check makes it again', async () => {
    const base = tempDir('labstation-holds-');
    const folder = join(base, 'a', 'b');
    const made = await held(base, folder);
    const removing = letGoFolder(folder, made, false);
    expect(removing).not.toBeNull();
    // Held as the removal is under way: checked once it is over.
    const again = held(base, folder);
    await removing;
    expect((await again).length).toBeGreaterThan(0);
    expect(existsSync(folder)).toBe(true);
    writeFileSync(join(folder, 'copy.dat'), 'x');
    expect(letGoFolder(folder, await again, true)).toBeNull();
  });
});

/** Runs `work` as on a share without hard links (every link refused with EXDEV). */
async function withoutHardLinks<T>(work: () => Promise<T> | T): Promise<T> {
  const before = process.env.LABSTATION_INJECT;
  process.env.LABSTATION_INJECT = 'harvest.no-hard-links';
  try {
    return await work();
  } finally {
    if (before === undefined) delete process.env.LABSTATION_INJECT;
    else process.env.LABSTATION_INJECT = before;
  }
}

describe('placing a verified copy never replaces a file (placeWithoutClobber, placeFiles)', () => {
  /** A folder holding a taken name and two partials, one for it and one for a free name. */
  function placed() {
    const folder = tempDir('labstation-place-');
    const taken = join(folder, 'taken.dat');
    const free = join(folder, 'free.dat');
    writeFileSync(taken, 'somebody else');
    const partials = [join(folder, '.taken.dat.a.partial'), join(folder, '.free.dat.b.partial')];
    for (const partial of partials) writeFileSync(partial, 'our copy');
    const [toTaken, toFree] = partials as [string, string];
    return { folder, taken, free, toTaken, toFree };
  }

  for (const links of [true, false]) {
    const where = links ? 'with hard links' : 'without hard links (the check, then a rename)';
    const run = <T>(work: () => Promise<T> | T): Promise<T> =>
      links ? Promise.resolve(work()) : withoutHardLinks(work);

    it(`${where}: a free name gets the copy, a taken one is refused and kept`, async () => {
      const { folder, taken, free, toTaken, toFree } = placed();
      expect(await run(() => placeWithoutClobber(toTaken, taken))).toBe(false);
      expect(await run(() => placeWithoutClobber(toFree, free))).toBe(true);
      expect(readFileSync(taken, 'utf8')).toBe('somebody else');
      expect(readFileSync(free, 'utf8')).toBe('our copy');
      // The refused partial stays for its caller (a numbered name next); the placed one went.
      expect(readdirSync(folder).sort()).toEqual(['.taken.dat.a.partial', 'free.dat', 'taken.dat']);
    });

    it(`${where}: the batch's worker places the same way`, async () => {
      const { folder, taken, free, toTaken, toFree } = placed();
      const results = await run(() =>
        placeFiles([
          { partial: toTaken, destination: taken },
          { partial: toFree, destination: free },
        ]),
      );
      expect(results).toEqual([{ outcome: 'taken' }, { outcome: 'placed', partialLeft: false }]);
      expect(readFileSync(taken, 'utf8')).toBe('somebody else');
      expect(readFileSync(free, 'utf8')).toBe('our copy');
      expect(readdirSync(folder).sort()).toEqual(['.taken.dat.a.partial', 'free.dat', 'taken.dat']);
    });
  }

  it('inFolder: placements in one folder, in any letter case, run one at a time', async () => {
    const folder = tempDir('labstation-place-');
    const order: string[] = [];
    const slow = (name: string) => async () => {
      order.push(`${name} begins`);
      await new Promise((resolve) => setTimeout(resolve, 30));
      order.push(`${name} ends`);
    };
    const failing = (): Promise<never> => {
      order.push('failing begins');
      return Promise.reject(new Error('no space left'));
    };
    await Promise.allSettled([
      inFolder(folder, slow('first')),
      inFolder(folder.toUpperCase(), failing),
      inFolder(folder, slow('third')),
    ]);
    // Where a check for a free name and the rename are two steps, an overlap could clobber.
    expect(order).toEqual([
      'first begins',
      'first ends',
      'failing begins',
      'third begins',
      'third ends',
    ]);
  });
});
