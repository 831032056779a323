/**
 * `labstation import` and what makes a person one: badge numbers and e-mails are unique (an
 * e-mail with A to Z in any case). A bundle may move them among the people it names, and may not
 * give one that a stored person keeps: named as a problem (field and rule), nothing imported,
 * not the database's bare "UNIQUE constraint failed".
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openServerData } from '../../electron/core/server/dataDir.js';
import { importBundle } from '../../electron/core/station/facility.js';
import { argon2Hash } from '../../electron/core/util/argon2.js';
import { CLI, runCli, tempDir, writeJson } from './helpers.js';

type Person = { username: string; badge_number: string | null; email: string; updated_at: string };

function people(data: string): Person[] {
  const db = new Database(join(data, 'labstation.db'), { readonly: true });
  try {
    return db
      .prepare('SELECT username, badge_number, email, updated_at FROM users ORDER BY username')
      .all() as Person[];
  } finally {
    db.close();
  }
}

const fields = (list: Person[]) =>
  list.map(({ username, badge_number, email }) => ({ username, badge_number, email }));

describe('labstation import: badges and e-mails moved among people', () => {
  // Mutation: facility.ts without freeing a badge or e-mail from its holder first: the swap
  // failed with "the database refused the change: UNIQUE constraint failed: users.badge_number".
  // Without storedEmailProblems: erin's bundle failed with users.email's constraint instead.
  it('takes a swap among the people a bundle names, and refuses one a stored person keeps', async () => {
    const dir = tempDir('labstation-import-people-');
    const data = join(dir, 'server');
    const import_ = (name: string, bundle: unknown) =>
      runCli(['import', '--data', data, writeJson(dir, name, bundle)]);
    const first = await import_('first.json', {
      users: [
        { username: 'alice', badge_number: '1', email: 'alice@example.org' },
        { username: 'bob', badge_number: '2', email: 'bob@example.org' },
      ],
    });
    expect(first.code, first.stderr).toBe(0);

    const swap = {
      users: [
        { username: 'alice', badge_number: '2', email: 'bob@example.org' },
        { username: 'bob', badge_number: '1', email: 'Alice@example.org' },
      ],
    };
    const swapped = await import_('swap.json', swap);
    expect(swapped.code, swapped.stderr).toBe(0);
    expect(fields(people(data))).toEqual([
      { username: 'alice', badge_number: '2', email: 'bob@example.org' },
      { username: 'bob', badge_number: '1', email: 'Alice@example.org' },
    ]);
    // The same bundle again changes no one.
    const before = people(data);
    expect((await import_('swap.json', swap)).code).toBe(0);
    expect(people(data)).toEqual(before);

    // bob keeps his e-mail (named without one, or not named): erin cannot have it.
    for (const bundle of [
      { users: [{ username: 'erin', email: 'ALICE@example.org' }] },
      { users: [{ username: 'bob' }, { username: 'erin', email: 'alice@example.org' }] },
    ]) {
      const refused = await import_('erin.json', bundle);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/users\[\d\] \(erin\)\.email: \S+ already belongs to bob/);
      expect(refused.stderr).not.toMatch(/UNIQUE constraint/);
      expect(people(data)).toEqual(before);
    }
    // bob given another one: erin may have his old one.
    const moved = await import_('moved.json', {
      users: [
        { username: 'erin', email: 'alice@example.org' },
        { username: 'bob', email: 'bob.b@example.org' },
      ],
    });
    expect(moved.code, moved.stderr).toBe(0);
    expect(fields(people(data)).map((p) => [p.username, p.email])).toEqual([
      ['alice', 'bob@example.org'],
      ['bob', 'bob.b@example.org'],
      ['erin', 'alice@example.org'],
    ]);
  });
});

describe('labstation import: what an e-mail may be', () => {
  // A bundle's e-mail was checked to be one line only: `a@b>, <c@d>` was stored, and its
  // person's notices went to c@d too; `carol at example.org` failed every mail to her.
  it('refuses one that is not a single address, naming the field and the rule', async () => {
    const dir = tempDir('labstation-import-email-');
    const data = join(dir, 'server');
    const made = await runCli([
      'import',
      '--data',
      data,
      writeJson(dir, 'first.json', { users: [{ username: 'alice', email: 'alice@example.org' }] }),
    ]);
    expect(made.code, made.stderr).toBe(0);
    const before = people(data);
    for (const email of [
      'eve@evil.org>, <mallory@example.org',
      'eve@evil.org>,<mallory',
      'carol at example.org',
      'Carol <carol@example.org>',
      'carol@example.org;dan@example.org',
      'carol',
    ]) {
      const refused = await runCli([
        'import',
        '--data',
        data,
        writeJson(dir, 'bad.json', { users: [{ username: 'carol', email }] }),
      ]);
      expect(refused.code, email).toBe(1);
      expect(refused.stderr).toContain('users[0].email: must be an e-mail address like a@b.org');
      expect(people(data)).toEqual(before);
    }
  });

  // As the database compares them (COLLATE NOCASE: A to Z only), as usernames: É and é are two
  // letters there, so a bundle refused ÉMILE@école.fr beside émile@école.fr that the admin
  // page and a second bundle took.
  it('tells apart e-mails that differ beyond A to Z in case, as the database and log-in do', async () => {
    const dir = tempDir('labstation-import-email-case-');
    const data = join(dir, 'server');
    const imported = await runCli([
      'import',
      '--data',
      data,
      writeJson(dir, 'first.json', {
        users: [
          { username: 'emile', email: 'émile@école.fr' },
          { username: 'emile2', email: 'ÉMILE@école.fr' },
        ],
      }),
    ]);
    expect(imported.code, imported.stderr).toBe(0);
    const again = await runCli([
      'import',
      '--data',
      data,
      writeJson(dir, 'again.json', { users: [{ username: 'emile3', email: 'émile@ÉCOLE.fr' }] }),
    ]);
    expect(again.code, again.stderr).toBe(0);
    // A to Z fold.
    const clash = await runCli([
      'import',
      '--data',
      data,
      writeJson(dir, 'clash.json', { users: [{ username: 'emile5', email: 'éMILE@école.FR' }] }),
    ]);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain(
      'users[0] (emile5).email: éMILE@école.FR already belongs to emile',
    );
  });
});

describe('labstation import beside a running server', () => {
  // Mutation: importBundle without checkBundle in its transaction: alice was imported without
  // her project, the import saying it went fine.
  it('checks the bundle again once its PINs are hashed: what changed meanwhile is named', async () => {
    const dir = tempDir('labstation-import-race-');
    const data = join(dir, 'server');
    const made = await runCli([
      'import',
      '--data',
      data,
      writeJson(dir, 'first.json', {
        projects: [{ name: 'Cathodes', application_identifier: 'PRJ-1', active: true }],
      }),
    ]);
    expect(made.code, made.stderr).toBe(0);
    const db = openServerData(data);
    try {
      const importing = importBundle(db, {
        users: [{ username: 'alice', pin: '2468', projects: ['Cathodes'] }],
      });
      // While the PIN is hashed, an admin deletes the project.
      db.prepare("DELETE FROM projects WHERE name = 'Cathodes'").run();
      await expect(importing).rejects.toThrow(
        'users[0] (alice).projects[0]: no project named "Cathodes"',
      );
      expect(db.prepare('SELECT count(*) FROM users').pluck().get()).toBe(0);
    } finally {
      db.close();
    }
  });
});

describe('labstation import stopped', () => {
  // Mutation: importCommand without its SIGINT and SIGTERM handlers: the process died with the
  // signal, leaving a migrated, empty labstation.db that made the data dir look set up.
  it('by Ctrl+C while it hashes PINs leaves a new data dir as it found it (exit 130)', async () => {
    const dir = tempDir('labstation-import-stopped-');
    const data = join(dir, 'new');
    const bundle = writeJson(dir, 'many.json', {
      users: Array.from({ length: 400 }, (_, i) => ({ username: `user${i}`, pin: `${1000 + i}` })),
    });
    const child = spawn(process.execPath, [CLI, 'import', '--data', data, bundle], {
      stdio: 'ignore',
      timeout: 180_000,
      killSignal: 'SIGKILL',
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    // The database is made before the PINs are hashed (400 of them: seconds).
    while (!existsSync(join(data, 'labstation.db'))) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(existsSync(data) ? readdirSync(data) : []).toEqual([]);
  });
});

describe('labstation import: a PIN given as its hash', () => {
  // Mutation: pin_hash checked by its prefix alone: "$argon2id$junk" was taken, and its person
  // could never log on.
  it('takes a whole argon2id PHC string, and names one that only starts like it', async () => {
    const dir = tempDir('labstation-import-hash-');
    const data = join(dir, 'station');
    const hash = await argon2Hash('2468', new Uint8Array(16).fill(3));
    const bad = await runCli([
      'import',
      '--data',
      data,
      writeJson(dir, 'bad.json', { users: [{ username: 'zoe', pin_hash: '$argon2id$junk' }] }),
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      'users[0].pin_hash: must be an argon2id PHC string, $argon2id$v=19$m=…,t=…,p=…$salt$hash ' +
        '(base64), with m from 8·p to 262144 (KiB), t from 1 to 16 and p from 1 to 16',
    );
    expect(existsSync(join(data, 'labstation.db'))).toBe(false);
    // Whole, but at a cost no log-on can pay (or none at all).
    for (const costly of [
      hash.replace('t=2', 't=400'),
      hash.replace('m=19456', 'm=4'),
      hash.replace('p=1', 'p=0'),
    ]) {
      const refused = await runCli([
        'import',
        '--data',
        data,
        writeJson(dir, 'costly.json', { users: [{ username: 'zoe', pin_hash: costly }] }),
      ]);
      expect(refused.code, costly).toBe(1);
      expect(refused.stderr, costly).toContain('users[0].pin_hash: must be an argon2id PHC');
    }
    const good = await runCli([
      'import',
      '--data',
      data,
      writeJson(dir, 'good.json', { users: [{ username: 'zoe', pin_hash: hash }] }),
    ]);
    expect(good.code, good.stderr).toBe(0);
  });
});
