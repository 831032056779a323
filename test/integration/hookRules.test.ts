/**
 * Which pre-transfer hooks apply to a file, through the real `labstation harvest --once`: a
 * hook scoped to another instrument or disabled does not run, a glob is matched against the
 * path in the watched folder, size rules bound a skip, and hooks run in priority order (the
 * first skip decides, later redirects override earlier ones field by field), for big files
 * copied on their own as for small ones copied in batches.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { importBundle, tempDir } from './helpers.js';
import { filesOf, harvestOnce, setupTwoInstruments } from './harvestSetup.js';

/** Harvests once (exit 0 expected) and gives each file's last transfer by its name. */
async function harvested(
  data: string,
): Promise<Map<string, { status: string; note: string | null; destination_path: string | null }>> {
  const run = await harvestOnce(data);
  expect(run.code, run.stdout + run.stderr).toBe(0);
  const files = await filesOf(data);
  return new Map(
    files.map((f) => [
      f.filename,
      {
        status: f.last_transfer?.status ?? 'none',
        note: f.last_transfer?.note ?? null,
        destination_path: f.last_transfer?.destination_path ?? null,
      },
    ]),
  );
}

describe('pre-transfer hooks', () => {
  it("run only when enabled and for their own instrument's files", async () => {
    const skip = (name: string, glob: string, more: object): unknown => ({
      name,
      trigger: 'pre_transfer',
      kind: 'skip',
      config: { glob },
      ...more,
    });
    const dirs = await setupTwoInstruments({
      hooks: [
        skip('other-instrument', '*.a', { instrument: 'sem-2' }),
        skip('turned-off', '*.b', { enabled: false }),
        skip('own-instrument', '*.c', { instrument: 'sem-1' }),
        skip('every-instrument', '*.d', {}),
      ],
    });
    for (const name of ['x.a', 'x.b', 'x.c', 'x.d']) writeFileSync(join(dirs.src, name), name);
    const byName = await harvested(dirs.data);
    expect(byName.get('x.a')?.status).toBe('completed');
    expect(byName.get('x.b')?.status).toBe('completed');
    expect(byName.get('x.c')).toMatchObject({ status: 'skipped', destination_path: null });
    expect(byName.get('x.c')?.note).toMatch(/own-instrument/);
    expect(byName.get('x.d')?.status).toBe('skipped');
    expect(byName.get('x.d')?.note).toMatch(/every-instrument/);
  });

  it('never skip every file: a skip hook without a rule is refused, and one stored so skips nothing', async () => {
    const refused = await importBundle(tempDir('labstation-hook-rules-'), {
      tools: [{ name: 'SEM' }],
      hooks: [{ name: 'everything', trigger: 'pre_transfer', kind: 'skip', config: {} }],
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr + refused.stdout).toMatch(
      /everything[\s\S]*give glob, min_size or max_size/,
    );
    // Saved before the rule (or edited by hand): the transfer fails naming it, and is retried
    // once the hook is put right; nothing is marked skipped.
    const dirs = await setupTwoInstruments({
      hooks: [
        { name: 'everything', trigger: 'pre_transfer', kind: 'skip', config: { glob: '*.tmp' } },
      ],
    });
    const db = new Database(join(dirs.data, 'labstation.db'));
    db.prepare("UPDATE harvest_hooks SET config = '{}' WHERE name = 'everything'").run();
    db.close();
    writeFileSync(join(dirs.src, 'frame.dat'), 'frame');
    const run = await harvestOnce(dirs.data);
    expect(run.code).toBe(1);
    const [file] = await filesOf(dirs.data);
    expect(file?.last_transfer?.status).toBe('failed');
    expect(file?.last_transfer?.error).toMatch(
      /"everything": config: give glob, min_size or max_size/,
    );
  });

  it('never skip every file with an empty glob list, nor take a glob that cannot match', async () => {
    const hook = (name: string, glob: string | string[]): Record<string, unknown> => ({
      name,
      trigger: 'pre_transfer',
      kind: 'skip',
      config: { glob },
    });
    const refused = await importBundle(tempDir('labstation-hook-rules-'), {
      tools: [{ name: 'SEM' }],
      hooks: [
        hook('empty', []),
        hook('dotted', './raw/*.tif'),
        hook('folder', 'previews/'),
        {
          name: 'empty-redirect',
          trigger: 'pre_transfer',
          kind: 'redirect',
          config: { glob: [], destination_template: 'all/{filename}' },
        },
      ],
    });
    expect(refused.code).not.toBe(0);
    const said = refused.stderr + refused.stdout;
    expect(said).toMatch(/\(empty\)[^\n]*config: give glob, min_size or max_size/);
    expect(said).toMatch(
      /\(empty-redirect\)[^\n]*config\.glob: must name at least one glob, or be left out/,
    );
    expect(said).toMatch(/dotted[^\n]*config\.glob\[0\]: [^\n]*give raw\/\*\.tif/);
    expect(said).toMatch(/folder[^\n]*config\.glob\[0\]: [^\n]*give previews\/\*\*/);
    // Stored with an empty list before the rule: the transfer fails naming the hook, and is
    // retried once the hook is put right; nothing is marked skipped.
    const dirs = await setupTwoInstruments({ hooks: [hook('empty', '*.tmp')] });
    const db = new Database(join(dirs.data, 'labstation.db'));
    db.prepare(`UPDATE harvest_hooks SET config = '{"glob": []}' WHERE name = 'empty'`).run();
    db.close();
    writeFileSync(join(dirs.src, 'frame.dat'), 'frame');
    expect((await harvestOnce(dirs.data)).code).toBe(1);
    const [file] = await filesOf(dirs.data);
    expect(file?.last_transfer?.status).toBe('failed');
    expect(file?.last_transfer?.error).toMatch(
      /"empty": config: give glob, min_size or max_size: without one a skip hook skips every file/,
    );
    // A redirect stored with one goes on redirecting every file, as one without glob does.
    const again = new Database(join(dirs.data, 'labstation.db'));
    again
      .prepare(
        `UPDATE harvest_hooks SET kind = 'redirect',
           config = '{"glob": [], "storage_location": "other"}' WHERE name = 'empty'`,
      )
      .run();
    again.close();
    expect((await harvestOnce(dirs.data)).code).toBe(0);
    const [redirected] = await filesOf(dirs.data);
    expect(redirected?.last_transfer?.destination_path).toBe(
      join(dirs.other, 'sem-1', 'frame.dat'),
    );
  });

  it('match a glob with a folder against the path in the watched folder, not the name', async () => {
    const dirs = await setupTwoInstruments({
      hooks: [
        {
          name: 'no-previews',
          trigger: 'pre_transfer',
          kind: 'skip',
          config: { glob: 'previews/*.png' },
        },
      ],
    });
    for (const path of ['previews/x.png', 'x.png', 'other/previews/y.png']) {
      mkdirSync(dirname(join(dirs.src, path)), { recursive: true });
      writeFileSync(join(dirs.src, path), path);
    }
    const run = await harvestOnce(dirs.data);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const status = Object.fromEntries(
      (await filesOf(dirs.data)).map((f) => [f.relative_path, f.last_transfer?.status]),
    );
    expect(status).toEqual({
      'previews/x.png': 'skipped',
      'x.png': 'completed',
      'other/previews/y.png': 'completed',
    });
  });

  it('skip files by size: min_size and max_size are both inclusive bounds', async () => {
    const dirs = await setupTwoInstruments({
      hooks: [
        {
          name: 'mid-sized',
          trigger: 'pre_transfer',
          kind: 'skip',
          config: { min_size: 5, max_size: 10 },
        },
      ],
    });
    const sizes = { 'tiny.dat': 4, 'low.dat': 5, 'mid.dat': 7, 'high.dat': 10, 'big.dat': 11 };
    for (const [name, size] of Object.entries(sizes)) {
      writeFileSync(join(dirs.src, name), 'x'.repeat(size));
    }
    const byName = await harvested(dirs.data);
    const status = Object.fromEntries(
      Object.keys(sizes).map((name) => [name, byName.get(name)?.status]),
    );
    expect(status).toEqual({
      'tiny.dat': 'completed',
      'low.dat': 'skipped',
      'mid.dat': 'skipped',
      'high.dat': 'skipped',
      'big.dat': 'completed',
    });
  });

  it('run in priority order: the first matching skip is named, a later redirect overrides an earlier one field by field', async () => {
    const dirs = await setupTwoInstruments({
      hooks: [
        // Listed out of order: the priority, not the order given, decides.
        {
          name: 'b-later-skip',
          trigger: 'pre_transfer',
          kind: 'skip',
          priority: 2,
          config: { glob: '*.tmpl' },
        },
        {
          name: 'z-first-skip',
          trigger: 'pre_transfer',
          kind: 'skip',
          priority: 1,
          config: { glob: '*.tmpl' },
        },
        {
          name: 'a-later-redirect',
          trigger: 'pre_transfer',
          kind: 'redirect',
          priority: 4,
          config: { glob: '*.raw', destination_template: 'later/{filename}' },
        },
        {
          name: 'z-first-redirect',
          trigger: 'pre_transfer',
          kind: 'redirect',
          priority: 3,
          config: {
            glob: '*.raw',
            destination_template: 'first/{filename}',
            storage_location: 'other',
          },
        },
      ],
    });
    writeFileSync(join(dirs.src, 'run.tmpl'), 'template');
    writeFileSync(join(dirs.src, 'frame.raw'), 'raw bytes');
    writeFileSync(join(dirs.src, 'plain.txt'), 'kept');
    const byName = await harvested(dirs.data);
    expect(byName.get('run.tmpl')?.status).toBe('skipped');
    expect(byName.get('run.tmpl')?.note).toMatch(/z-first-skip/);
    expect(byName.get('run.tmpl')?.note).not.toMatch(/b-later-skip/);
    // The template of the later redirect, the storage location of the earlier one.
    expect(byName.get('frame.raw')).toMatchObject({
      status: 'completed',
      destination_path: join(dirs.other, 'later', 'frame.raw'),
    });
    // Both named, in the order they ran.
    expect(byName.get('frame.raw')?.note).toBe(
      'redirected by the pre-transfer hooks "z-first-redirect", "a-later-redirect"',
    );
    expect(byName.get('plain.txt')?.destination_path).toBe(join(dirs.dest, 'sem-1', 'plain.txt'));
  });

  it('redirect a big file, copied on its own, as they redirect small files copied in a batch', async () => {
    const dirs = await setupTwoInstruments({
      hooks: [
        {
          name: 'raw-aside',
          trigger: 'pre_transfer',
          kind: 'redirect',
          config: {
            glob: '*.raw',
            destination_template: 'raw/{filename}',
            storage_location: 'other',
          },
        },
      ],
    });
    // 4 MiB and more: no batch (batch.ts BATCH_DURABILITY_BELOW), transfer.ts places it.
    writeFileSync(join(dirs.src, 'big.raw'), Buffer.alloc(4 * 1024 * 1024 + 1, 7));
    writeFileSync(join(dirs.src, 'small.raw'), 'raw bytes');
    const byName = await harvested(dirs.data);
    expect(byName.get('big.raw')).toMatchObject({
      status: 'completed',
      destination_path: join(dirs.other, 'raw', 'big.raw'),
    });
    expect(byName.get('small.raw')).toMatchObject({
      status: 'completed',
      destination_path: join(dirs.other, 'raw', 'small.raw'),
    });
  });

  // Mutation: the location looked up and not found, as it was: "instrument sem-1 has no storage
  // location", which names neither the hook nor the location, while the instrument has one.
  it('name the hook and the location when a redirect sends a file to a location not there', async () => {
    const dirs = await setupTwoInstruments({
      hooks: [
        {
          name: 'raw-aside',
          trigger: 'pre_transfer',
          kind: 'redirect',
          config: { glob: '*.raw', storage_location: 'other' },
        },
      ],
    });
    // A hook can outlive its location here: a station bundle that renames a location, beside a
    // hook the server deployed that names the old one.
    const db = new Database(join(dirs.data, 'labstation.db'));
    db.prepare("UPDATE storage_locations SET name = 'other-2026' WHERE name = 'other'").run();
    db.close();
    writeFileSync(join(dirs.src, 'small.raw'), 'raw bytes');
    const run = await harvestOnce(dirs.data);
    expect(run.code).toBe(1);
    const [file] = await filesOf(dirs.data);
    expect(file.last_transfer).toMatchObject({
      status: 'failed',
      error:
        'the pre-transfer hook "raw-aside" sends this file to the storage location "other", ' +
        'which does not exist',
    });
  });
});
