/**
 * Commands that may be the first to fill a data dir (`station`, `serve`, `import`) take turns
 * at it (cli/firstFill.ts): a start that fails leaves a new data dir as it was found, and
 * must not take with it what an import beside it wrote meanwhile; commands on a data dir set up
 * already wait for such a start.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { facilityBundle } from '../fixtures/facility.js';
import { importBundle, runCli, tempDir, waitFor, type CliResult } from './helpers.js';

/**
 * A station's first start on `data` (with the demo facility) on a port another program holds:
 * it fails, once it has made the database; `during` runs once the database is there.
 */
async function failingFirstStart(
  data: string,
  during: () => Promise<void>,
): Promise<{ port: number; refused: CliResult }> {
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  const port = (busy.address() as AddressInfo).port;
  try {
    const start = runCli(['station', '--data', data, '--demo', '--port', String(port)]);
    await waitFor(
      'the start filling the data dir',
      () => (existsSync(join(data, 'labstation.db')) ? true : undefined),
      30_000,
    );
    await during();
    return { port, refused: await start };
  } finally {
    busy.close();
  }
}

describe('a first fill of a data dir', () => {
  // Mutation: no fill lock, as it was: the import said "imported" (exit 0), and the failing
  // start then deleted the database with it, and the data dir (3 runs in 3).
  it("keeps what an import wrote beside a station's first start that failed", async () => {
    const data = join(tempDir(), 'station');
    let imported: CliResult | undefined;
    const { port, refused } = await failingFirstStart(data, async () => {
      imported = await importBundle(data, facilityBundle());
    });
    expect(refused.stderr).toContain(`port ${port} is in use`);
    expect(refused.code).toBe(1);
    expect(imported?.stderr).toBe('');
    expect(imported?.code).toBe(0);
    // The import's facility, and nothing of the demo the failed start loaded.
    const db = new Database(join(data, 'labstation.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT username FROM users ORDER BY username').pluck().all()).toEqual([
        'alice',
        'bob',
        'sam',
      ]);
    } finally {
      db.close();
    }
    // A command after it finds the data dir set up, as the import left it.
    const listed = await runCli(['usage', '--data', data, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
  }, 60_000);

  // Mutation: the commands on a data dir set up already not waiting for a first fill, as they
  // were: this harvest ran on the half-made database that the failing start then deleted.
  it('makes a command on a data dir wait for a first start there, and tells when it failed', async () => {
    const data = join(tempDir(), 'station');
    let harvest: CliResult | undefined;
    const { refused } = await failingFirstStart(data, async () => {
      harvest = await runCli(['harvest', '--data', data, '--once']);
    });
    expect(refused.code).toBe(1);
    // Nothing recorded into a database that is gone: it waited, and found none.
    expect(harvest?.stderr).toContain(`${data} holds no Labstation data (no labstation.db)`);
    expect(harvest?.code).toBe(1);
    expect(existsSync(data)).toBe(false);
  }, 60_000);

  // Mutation: --server and --key checked after the data dir was made (it was left with its
  // fill lock); import reading its file before it looks for --data (exit 1, not 2).
  it('refuses a wrong command line before it makes anything', async () => {
    const root = tempDir();
    const half = await runCli(['station', '--data', join(root, 'a', 'deep'), '--key', 'abc']);
    expect(half.code).toBe(2);
    expect(half.stderr).toContain('--server is required');
    const other = await runCli([
      'station',
      '--data',
      join(root, 'b'),
      '--server',
      'http://127.0.0.1:1/',
    ]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('--key is required');
    expect(existsSync(join(root, 'a'))).toBe(false);
    expect(existsSync(join(root, 'b'))).toBe(false);
    const bad = join(root, 'bad.json');
    writeFileSync(bad, '{ not json');
    const noData = await runCli(['import', bad]);
    expect(noData.code).toBe(2);
    expect(noData.stderr).toContain('--data is required');
  });

  // Mutation: STARTED_FILES without upgrade.lock, which the import's new database takes while
  // it is built (lock.ts upgradeOnlyIfIdle): the data dir was left holding it.
  it('leaves no trace of an import refused on a new data dir', async () => {
    const root = tempDir();
    const bundle = join(root, 'bundle.json');
    writeFileSync(bundle, JSON.stringify({ users: [{ username: 'x', projects: ['nope'] }] }));
    const refused = await runCli(['import', '--data', join(root, 'new', 'data'), bundle]);
    expect(refused.stderr).toBe('users[0] (x).projects[0]: no project named "nope"\n');
    expect(refused.code).toBe(1);
    expect(existsSync(join(root, 'new'))).toBe(false);
  });

  // Mutation: every SqliteError said as "the database refused the change", a read too.
  it('says which file is not a database it can read, and prints what it stored', async () => {
    const data = join(tempDir(), 'garbled');
    mkdirSync(data);
    writeFileSync(join(data, 'labstation.db'), 'not a database at all, only some text here');
    const read = await runCli(['files', '--data', data]);
    expect(read.code).toBe(1);
    expect(read.stderr).toBe(
      `labstation: ${join(data, 'labstation.db')} cannot be read as a Labstation database: ` +
        'file is not a database\n',
    );
    const made = join(tempDir(), 'made');
    expect((await importBundle(made, {})).code).toBe(0);
    const created = await runCli([
      'admin',
      'user',
      'create',
      '--data',
      made,
      '--email',
      ' Lee3@Example.org ',
      '--password',
      'lee password 12',
    ]);
    expect(created.code).toBe(0);
    expect(created.stdout).toBe('created user Lee3 <Lee3@Example.org>\n');
  });
});
