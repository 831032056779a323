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
