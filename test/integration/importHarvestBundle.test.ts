/**
 * The harvest part of a station's facility bundle imported again: what did not change keeps its
 * updated_at (an admin's editor open on it is not made stale, stations pull nothing), and
 * instruments and hooks the server deployed on this station are the server's, refused by name.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir, writeJson } from './helpers.js';

describe('labstation import: the harvest part again', () => {
  // Mutation: bundle.ts's upserts without their "IS NOT" conditions: every updated_at moved.
  // bundleCheck.ts without the from_server check: the bundle overwrote the server's hook; with
  // it refusing every name the server deployed: the station's own bundle, run again, was refused.
  it('changes nothing that did not change, and leaves what the server deployed to the server', async () => {
    const dir = tempDir('labstation-import-harvest-');
    const data = join(dir, 'station');
    const watched = join(dir, 'acquisition');
    const archive = join(dir, 'archive');
    mkdirSync(watched);
    mkdirSync(archive);
    const bundle = {
      tools: [{ name: 'SEM', pre_usage_questions: [], post_usage_questions: [] }],
      station: { tool: 'SEM' },
      storage_locations: [{ name: 'archive', type: 'local', base_path: archive }],
      instruments: [
        {
          name: 'sem-1',
          tool: 'SEM',
          watch: [{ path: watched }],
          storage_location: 'archive',
          destination_template: '{instrument}/{filename}',
        },
      ],
      hooks: [{ name: 'info', trigger: 'post_transfer', kind: 'file_info' }],
    };
    const file = writeJson(dir, 'bundle.json', bundle);
    const first = await runCli(['import', '--data', data, file]);
    expect(first.code, first.stderr).toBe(0);
    const stamps = (): unknown => {
      const db = new Database(join(data, 'labstation.db'), { readonly: true });
      try {
        return [
          db.prepare('SELECT name, updated_at FROM storage_locations').all(),
          db.prepare('SELECT name, updated_at, from_server FROM instruments').all(),
          db.prepare('SELECT name, updated_at, priority, from_server FROM harvest_hooks').all(),
        ];
      } finally {
        db.close();
      }
    };
    const before = stamps();
    await new Promise((resolve) => setTimeout(resolve, 10));
    const again = await runCli(['import', '--data', data, file]);
    expect(again.code, again.stderr).toBe(0);
    expect(stamps()).toEqual(before);

    // A pull made them the server's (applyHarvest.ts).
    const db = new Database(join(data, 'labstation.db'));
    db.prepare('UPDATE instruments SET from_server = 1').run();
    db.prepare('UPDATE harvest_hooks SET from_server = 1').run();
    db.close();
    const deployed = stamps();
    // The station's own setup bundle run again, naming them as they are: taken, nothing changed.
    const same = await runCli(['import', '--data', data, file]);
    expect(same.code, same.stderr).toBe(0);
    expect(stamps()).toEqual(deployed);
    const changed = writeJson(dir, 'changed.json', {
      ...bundle,
      instruments: [{ ...bundle.instruments[0], stability_seconds: 30 }],
      hooks: [{ name: 'info', trigger: 'post_transfer', kind: 'file_info', priority: 5 }],
    });
    const refused = await runCli(['import', '--data', data, changed]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'instruments[0] (sem-1).name: instrument sem-1 was deployed here by the server; change ' +
        "it there (the next pull would put the server's back)",
    );
    expect(refused.stderr).toContain(
      'hooks[0] (info).name: hook info was deployed here by the server; change it there',
    );
    expect(stamps()).toEqual(deployed);
  });

  // Mutation: names checked for control characters only, as they were: a location named with
  // a line separator was stored, and broke the lines of every list and log that showed it.
  it('refuses a name that is not one line as the harvest API has it, naming the field', async () => {
    const root = tempDir('labstation-line-names-');
    const bundle = writeJson(root, 'bundle.json', {
      tools: [{ name: 'SEM' }],
      station: { tool: 'SEM' },
      storage_locations: [{ name: 'arch\u2028ive', type: 'local', base_path: root }],
    });
    const run = await runCli(['import', '--data', join(root, 'data'), bundle]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'storage_locations[0].name: must not hold line or paragraph separators (U+2028, U+2029)',
    );
  });
});

describe('labstation import: a later bundle that makes the data dir a station, or changes its tool', () => {
  // Mutation: checkBundle without toolChanges, as it was: both imports below were taken, and the
  // station's every harvest failed (its own copies harvested again, or no such folder).
  it("checks the stored instruments it harvests from then on as the station's", async () => {
    const dir = tempDir('labstation-import-becomes-station-');
    const watched = join(dir, 'acquisition');
    const harvest = (watch: string, base: string) => ({
      tools: [
        { name: 'SEM', pre_usage_questions: [], post_usage_questions: [] },
        { name: 'TEM', pre_usage_questions: [], post_usage_questions: [] },
      ],
      storage_locations: [{ name: 'store', type: 'local', base_path: base }],
      instruments: [
        { name: 'sem-1', tool: 'SEM', watch: [{ path: watch }], storage_location: 'store' },
      ],
    });
    const db = (data: string) => new Database(join(data, 'labstation.db'), { readonly: true });
    const dump = (data: string): unknown => {
      const d = db(data);
      try {
        return [
          d.prepare("SELECT key, value FROM settings WHERE key IN ('mode', 'station.tool')").all(),
          d.prepare('SELECT name, watch FROM instruments').all(),
          d.prepare('SELECT name, base_path FROM storage_locations').all(),
        ];
      } finally {
        d.close();
      }
    };
    const station = writeJson(dir, 'station.json', { station: { tool: 'SEM' } });

    // Its storage inside its watched folder, stored by a bundle with no station (none harvested).
    const inside = join(dir, 'inside');
    const first = await runCli([
      'import',
      '--data',
      inside,
      writeJson(dir, 'inside.json', harvest(watched, join(watched, 'out'))),
    ]);
    expect(first.code, first.stderr).toBe(0);
    const before = dump(inside);
    const refused = await runCli(['import', '--data', inside, station]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `station.tool: SEM has instrument sem-1 watch ${watched}, which holds storage location ` +
        `store (${join(watched, 'out')}): the harvest would take its own copies again`,
    );
    expect(dump(inside)).toEqual(before);

    // Windows paths, stored as a server's data dir takes them.
    const windows = join(dir, 'windows');
    expect(
      (
        await runCli([
          'import',
          '--data',
          windows,
          writeJson(dir, 'windows.json', harvest('D:\\Data', '\\\\server\\share')),
        ])
      ).code,
    ).toBe(0);
    const stored = dump(windows);
    const notHere = await runCli(['import', '--data', windows, station]);
    expect(notHere.code).toBe(1);
    expect(notHere.stderr).toContain(
      'station.tool: SEM has instrument sem-1 watch "D:\\\\Data": must be an absolute path on this station',
    );
    expect(notHere.stderr).toContain(
      'station.tool: SEM has instrument sem-1 store into store ("\\\\\\\\server\\\\share"): must be an absolute path on this station',
    );
    expect(dump(windows)).toEqual(stored);

    // A station of another tool takes it, and a bundle that fixes the paths is taken.
    const other = await runCli([
      'import',
      '--data',
      windows,
      writeJson(dir, 'tem.json', { station: { tool: 'TEM' } }),
    ]);
    expect(other.code, other.stderr).toBe(0);
    const fixed = await runCli([
      'import',
      '--data',
      windows,
      writeJson(dir, 'fixed.json', {
        ...harvest(watched, join(dir, 'archive')),
        station: { tool: 'SEM' },
      }),
    ]);
    expect(fixed.code, fixed.stderr).toBe(0);
  });
});
