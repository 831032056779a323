/**
 * The include and exclude globs of a watched folder as a facility bundle gives them, through
 * the real `labstation import` and `labstation harvest --once`: without an exclude the default
 * one leaves out hidden and temporary files; an exclude given replaces the default.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importBundle, tempDir } from './helpers.js';
import { filesOf, harvestOnce } from './harvestSetup.js';

/** A one-instrument station watching `src` with this filter (none given: left out). */
async function watching(filter: { include?: string[]; exclude?: string[] }) {
  const root = tempDir('labstation-watch-filters-');
  const dirs = { src: join(root, 'src'), dest: join(root, 'dest'), data: join(root, 'data') };
  mkdirSync(dirs.src);
  mkdirSync(dirs.dest);
  const imported = await importBundle(dirs.data, {
    tools: [{ name: 'SEM' }],
    station: { tool: 'SEM' },
    storage_locations: [{ name: 'archive', type: 'local', base_path: dirs.dest }],
    instruments: [
      {
        name: 'sem-1',
        tool: 'SEM',
        watch: [{ path: dirs.src, ...filter }],
        stability_seconds: 0.3,
        storage_location: 'archive',
        destination_template: '{instrument}/{relative_path}',
      },
    ],
  });
  if (imported.code !== 0) throw new Error(`import failed: ${imported.stderr}${imported.stdout}`);
  return dirs;
}

/** What an instrument PC leaves in its data folder besides its data. */
const NAMES = [
  'scan.dat',
  'run.log',
  'notes.txt',
  '.hidden.dat',
  '.cache/frame.dat',
  '~$report.docx',
  'export.tmp',
  'upload.partial',
  'Thumbs.db',
  '.DS_Store',
  'deep/er/image.dat',
];

function write(src: string): void {
  for (const name of NAMES) {
    mkdirSync(dirname(join(src, name)), { recursive: true });
    writeFileSync(join(src, name), name);
  }
}

async function harvestedNames(data: string): Promise<string[]> {
  const run = await harvestOnce(data);
  expect(run.code, run.stdout + run.stderr).toBe(0);
  return (await filesOf(data)).map((f) => f.relative_path).sort();
}

describe('a watched folder’s filter', () => {
  it('leaves out hidden and temporary files by default', async () => {
    const dirs = await watching({});
    write(dirs.src);
    expect(await harvestedNames(dirs.data)).toEqual([
      'deep/er/image.dat',
      'notes.txt',
      'run.log',
      'scan.dat',
    ]);
  });

  it('takes an exclude given in place of the defaults, and only what an include names', async () => {
    const dirs = await watching({ include: ['*.dat', '*.tmp', '*.log'], exclude: ['*.log'] });
    write(dirs.src);
    expect(await harvestedNames(dirs.data)).toEqual([
      '.cache/frame.dat',
      '.hidden.dat',
      'deep/er/image.dat',
      'export.tmp',
      'scan.dat',
    ]);
  });
});
