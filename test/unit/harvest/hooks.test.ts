/**
 * The hook runner's rules, in this process (hooks.ts, metadataHooks.ts, usageContext.ts): a
 * real database in memory, real files in a temp dir, no station. What a real harvest does with
 * them end to end is in test/integration/harvest.test.ts and hookRules.test.ts.
 */
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../../electron/core/db/open.js';
import { openDatabase } from '../../../electron/core/db/open.js';
import { hooksFor, type Hook } from '../../../electron/core/harvest/config.js';
import {
  decidePreTransfer,
  preTransferHooks,
  runPostTransferHooks,
} from '../../../electron/core/harvest/hooks.js';
import type { PostTransferContext } from '../../../electron/core/harvest/metadataHooks.js';
import type { FileRow } from '../../../electron/core/harvest/records.js';
import { tempDir } from '../../integration/helpers.js';

const NOW = '2026-03-04T05:06:07.000Z';
let db: Db;

beforeEach(() => {
  db = openDatabase(':memory:');
});
afterEach(() => db.close());

function hook(
  name: string,
  kind: Hook['kind'],
  config: object = {},
  more: Partial<Hook> = {},
): Hook {
  return {
    id: 1,
    name,
    trigger: kind === 'skip' || kind === 'redirect' ? 'pre_transfer' : 'post_transfer',
    kind,
    config: config as Record<string, unknown>,
    priority: 100,
    instrument_id: null,
    from_server: false,
    ...more,
  };
}

/** A file `name` holding `content` in a fresh folder, copied there (source and copy are one). */
function copied(name: string, content: string | Buffer, row: Partial<FileRow> = {}) {
  const dir = tempDir('labstation-hooks-');
  const path = join(dir, name);
  writeFileSync(path, content);
  const when = new Date('2025-01-02T03:04:05.000Z');
  utimesSync(path, when, when);
  const file = {
    id: 1,
    persistent_id: 'ark:99999/fk4test1',
    relative_path: name,
    filename: name,
    size: Buffer.byteLength(content),
    mtime_ms: when.getTime(),
    first_discovered_at: NOW,
    usage_event_id: null,
    usage_elsewhere: null,
    metadata_: '{}',
    ...row,
  } as FileRow;
  const ctx: PostTransferContext = {
    db,
    file,
    sourcePath: path,
    destinationPath: path,
    instrument: 'sem-1',
  };
  return { dir, path, ctx };
}

describe('post-transfer hooks', () => {
  it('drop the hook errors of an earlier run and keep the rest of the metadata', async () => {
    const { ctx } = copied('scan.dat', 'data', {
      metadata_: JSON.stringify({
        sample: 'S-1',
        hook_errors: [{ hook: 'old', kind: 'command', error: 'failed last time' }],
      }),
    });
    const metadata = await runPostTransferHooks([hook('info', 'file_info')], ctx);
    expect(metadata.sample).toBe('S-1');
    expect(metadata).not.toHaveProperty('hook_errors');
  });

  it("merge each hook's output over the metadata so far, a later hook's value winning", async () => {
    const { dir, ctx } = copied('scan.dat', 'data', {
      metadata_: JSON.stringify({ sample: 'old', kept: true }),
    });
    writeFileSync(join(dir, 'scan.dat.json'), JSON.stringify({ sample: 'from .dat.json' }));
    writeFileSync(join(dir, 'scan.side'), JSON.stringify({ sample: 'from .side', extra: 1 }));
    const metadata = await runPostTransferHooks(
      [
        hook('first', 'sidecar_json', { suffixes: ['.dat.json'] }),
        hook('second', 'sidecar_json', { suffixes: ['.side'] }),
      ],
      ctx,
    );
    expect(metadata).toEqual({ sample: 'from .side', kept: true, extra: 1 });
  });

  it('leave out each key kept for the station: file_info, usage_context, hook_errors', async () => {
    const { dir, ctx } = copied('scan.dat', 'data');
    writeFileSync(
      join(dir, 'scan.dat.json'),
      JSON.stringify({
        file_info: { size: 1 },
        usage_context: { user: 'mallory' },
        hook_errors: [],
        sample: 'S-2',
      }),
    );
    const metadata = await runPostTransferHooks([hook('sidecar', 'sidecar_json')], ctx);
    expect(metadata.sample).toBe('S-2');
    expect(metadata).not.toHaveProperty('file_info');
    expect(metadata).not.toHaveProperty('usage_context');
    expect(metadata.hook_errors).toEqual([
      {
        hook: 'sidecar',
        kind: 'sidecar_json',
        error: "left out file_info, usage_context, hook_errors: kept for the station's own hooks",
      },
    ]);
  });

  it('do not run a command hook from the server while the station setting is off', async () => {
    const { ctx } = copied('scan.dat', 'data');
    const command = hook(
      'remote',
      'command',
      { command: process.execPath, args: ['-e', 'console.log("{\\"ran\\":true}")'] },
      { from_server: true },
    );
    const metadata = await runPostTransferHooks([command], ctx);
    expect(metadata).not.toHaveProperty('ran');
    expect(JSON.stringify(metadata.hook_errors)).toMatch(/harvest\.serverCommandHooks is off/);
  });

  it("file_info: the copy's size, the type from its content, the extension in lower case", async () => {
    // Named .PNG but holding text: the content decides.
    const { ctx } = copied('Scan.PNG', 'plain words');
    const { file_info: info } = await runPostTransferHooks([hook('info', 'file_info')], ctx);
    expect(info).toEqual({
      size: 11,
      mime_type: 'text/plain',
      extension: '.png',
      modified_at: '2025-01-02T03:04:05.000Z',
      created_at: expect.any(String) as unknown,
      first_discovered_at: NOW,
    });
  });

  it('file_info: no birth time from a source that is no longer the version copied', async () => {
    const { path, ctx } = copied('scan.dat', 'data');
    writeFileSync(path, 'a later version');
    const { file_info: info } = await runPostTransferHooks([hook('info', 'file_info')], ctx);
    expect(info).toMatchObject({ created_at: null });
  });

  it('sidecar_json: reads a sidecar written as UTF-16 with its byte-order mark', async () => {
    const { dir, ctx } = copied('scan.dat', 'data');
    const json = JSON.stringify({ operator: 'Zoë', mag: 5000 });
    writeFileSync(
      join(dir, 'scan.dat.json'),
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(json, 'utf16le')]),
    );
    expect(await runPostTransferHooks([hook('sidecar', 'sidecar_json')], ctx)).toEqual({
      operator: 'Zoë',
      mag: 5000,
    });
    const bigEndian = Buffer.from(json, 'utf16le').swap16();
    writeFileSync(
      join(dir, 'scan.dat.json'),
      Buffer.concat([Buffer.from([0xfe, 0xff]), bigEndian]),
    );
    expect(await runPostTransferHooks([hook('sidecar', 'sidecar_json')], ctx)).toEqual({
      operator: 'Zoë',
      mag: 5000,
    });
  });

  it('sidecar_json: a JSON file is not its own sidecar', async () => {
    const { ctx } = copied('spectrum.json', JSON.stringify({ counts: [1, 2, 3] }));
    const metadata = await runPostTransferHooks([hook('sidecar', 'sidecar_json')], ctx);
    expect(metadata).toEqual({});
  });

  it('usage_context: the usage with its user, project and answers, run_data before pre_run_data', async () => {
    const at = '2026-01-01T00:00:00.000Z';
    db.exec(`
      INSERT INTO users (id, uuid, username, email, first_name, last_name, created_at, updated_at)
        VALUES (1, 'u-1', 'ada', 'ada@lab', 'Ada', 'Lovelace', '${at}', '${at}');
      INSERT INTO projects (id, uuid, name, application_identifier, created_at, updated_at)
        VALUES (1, 'p-1', 'Cathodes', 'PRJ-7', '${at}', '${at}');
      INSERT INTO tools (id, uuid, name, created_at, updated_at)
        VALUES (1, 't-1', 'SEM', '${at}', '${at}');
      INSERT INTO usage_events (id, uuid, user_id, operator_id, project_id, tool_id, start,
          pre_run_data, run_data, updated_at)
        VALUES (1, 'e-1', 1, 1, 1, 1, '${at}',
          '{"experiment_title":"asked before","experiment_purpose":"only before"}',
          '{"experiment_title":"answered after"}', '${at}');
    `);
    const { ctx } = copied('scan.dat', 'data', { usage_event_id: 1 });
    const metadata = await runPostTransferHooks([hook('ctx', 'usage_context')], ctx);
    expect(metadata.usage_context).toMatchObject({
      usage_event: 'e-1',
      tool: 'SEM',
      start: at,
      end: null,
      user: { username: 'ada', name: 'Ada Lovelace', email: 'ada@lab' },
      project: { name: 'Cathodes', application_identifier: 'PRJ-7' },
      experiment_title: 'answered after',
      experiment_purpose: 'only before',
      run_data: { experiment_title: 'answered after' },
    });
  });
  it('usage_context: a usage made on another station as the server described it; none when not to trust', async () => {
    const elsewhere = {
      usage_event: 'e-remote',
      start: '2026-01-01T00:00:00.000Z',
      user: { username: 'grace' },
      project: { name: 'Anodes' },
    };
    const remote = copied('scan.dat', 'data', { usage_elsewhere: JSON.stringify(elsewhere) });
    const hooks = [hook('ctx', 'usage_context')];
    expect(await runPostTransferHooks(hooks, remote.ctx)).toEqual({ usage_context: elsewhere });
    const untrusted = copied('scan.dat', 'data', {
      usage_elsewhere: JSON.stringify({ ...elsewhere, project: 'Anodes' }),
    });
    expect(await runPostTransferHooks(hooks, untrusted.ctx)).toEqual({ usage_context: null });
  });
});

describe('pre-transfer hooks', () => {
  const file = { size: 10, relative_path: 'run/frame.raw' } as FileRow;

  it('a later redirect keeps the storage location an earlier one chose, when it names none', async () => {
    const at = '2026-01-01T00:00:00.000Z';
    const insert = db.prepare(
      `INSERT INTO harvest_hooks (uuid, name, "trigger", kind, config, priority, created_at, updated_at)
       VALUES (?, ?, 'pre_transfer', 'redirect', ?, ?, '${at}', '${at}')`,
    );
    insert.run(
      'h-1',
      'first',
      JSON.stringify({ storage_location: 'other', destination_template: 'a/{filename}' }),
      1,
    );
    insert.run(
      'h-2',
      'second',
      JSON.stringify({ glob: '*.raw', destination_template: 'b/{filename}' }),
      2,
    );
    const decision = decidePreTransfer(await preTransferHooks(db, 1), file);
    expect(decision).toEqual({
      skip: null,
      destinationTemplate: 'b/{filename}',
      storageLocation: 'other',
      storageLocationBy: 'first',
      redirectedBy: ['first', 'second'],
    });
  });

  it('run hooks of the same priority by name', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const insert = db.prepare(
      `INSERT INTO harvest_hooks (uuid, name, "trigger", kind, priority, created_at, updated_at)
       VALUES (?, ?, 'post_transfer', 'file_info', 5, '${at}', '${at}')`,
    );
    for (const name of ['c', 'a', 'b']) insert.run(`h-${name}`, name);
    expect(hooksFor(db, 1, 'post_transfer').map((h) => h.name)).toEqual(['a', 'b', 'c']);
  });
});
