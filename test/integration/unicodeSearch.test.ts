/**
 * Searches that take typed text compare Unicode's composed and decomposed forms as one (NFC on
 * both sides): "é" typed precomposed (U+00E9, as Windows and Linux keyboards give it) finds a
 * name written decomposed ("e" + U+0301, as macOS file systems store names), and the other way
 * round. The station's "Find a file" (harvest.files, `labstation files --search`), the server's
 * file list (Files page, GET /api/files) and the notebook search; records made before
 * migration 24 too, through their indexes still.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NotebookEntryView } from '../../shared/notebookApi.js';
import { migrations } from '../../electron/core/db/migrations.js';
import { openDatabase } from '../../electron/core/db/open.js';
import { indexPaths, listFiles } from '../../electron/core/harvest/views.js';
import {
  fileFilters,
  listFiles as listServerFiles,
} from '../../electron/core/server/harvest/files.js';
import { importBundle } from '../../electron/core/station/facility.js';
import { Station } from '../../electron/core/station/station.js';
import { createLogger } from '../../electron/core/util/log.js';
import { createAccount } from '../../electron/core/server/accounts.js';
import { createServerApp } from '../../electron/core/server/app.js';
import { facilityBundle } from '../fixtures/facility.js';
import { loginJwt, runCli, serverRequest, tempDir } from './helpers.js';

const nfd = (text: string): string => text.normalize('NFD');
const nfc = (text: string): string => text.normalize('NFC');
/** The migration that folds the indexes' text (the last before this test's was written: 23). */
const BEFORE_FOLDING = migrations.findIndex((m) => m.version === 24);

/**
 * Runs migration `version` once more over the database in `file`, as the upgrade from the
 * version before it ran it, and leaves the database at the version it was: the later
 * migrations, which need not be able to run twice, are not run again.
 */
function runMigrationAgain(file: string, version: number): void {
  const at = migrations.findIndex((m) => m.version === version);
  expect(at).toBeGreaterThan(0);
  const raw = new Database(file);
  const current = raw.pragma('user_version', { simple: true }) as number;
  raw.pragma(`user_version = ${migrations[at - 1].version}`);
  raw.close();
  openDatabase(file, migrations.slice(0, at + 1)).close();
  const back = new Database(file);
  back.pragma(`user_version = ${current}`);
  back.close();
}

describe('file search', () => {
  const now = '2026-01-05T10:00:00.000Z';
  let db: Database.Database;
  const record = (id: number, path: string, metadata = '{}'): void => {
    db.prepare(
      `INSERT INTO harvest_files (id, uuid, instrument_id, persistent_id, watch_path,
         relative_path, source_path, filename, size, mtime_ms, first_discovered_at, updated_at,
         metadata_)
       VALUES (?, ?, 1, ?, '/w', ?, '/w/' || ?, ?, 1, 1, ?, ?, ?)`,
    ).run(
      id,
      `f${id}`,
      `ark:99999/fk4${id}`,
      path,
      path,
      path.split('/').pop(),
      now,
      now,
      metadata,
    );
  };
  const found = (search: string): number[] => listFiles(db, { search }).map((f) => f.id);

  beforeAll(() => {
    expect(BEFORE_FOLDING).toBeGreaterThan(0);
    const file = join(tempDir(), 'files.db');
    // Records made before the migration, indexed by the path index as they were written.
    db = openDatabase(file, migrations.slice(0, BEFORE_FOLDING));
    db.exec(`INSERT INTO settings (key, value) VALUES ('mode', '"station"');
      INSERT INTO tools (uuid, name, created_at, updated_at) VALUES ('t', 't', '${now}', '${now}');
      INSERT INTO instruments (uuid, name, tool_id, destination_template, watch, created_at, updated_at)
        VALUES ('i', 'i', 1, '{relative_path}', '[{"path":"/w"}]', '${now}', '${now}')`);
    record(1, nfd('run-1/Café crème.tif'), JSON.stringify({ sample: nfd('Müller') }));
    record(2, nfc('run-2/Crème brûlée.tif'), JSON.stringify({ sample: nfc('Jürgen') }));
    indexPaths(db);
    db.close();
    db = openDatabase(file);
  });

  afterAll(() => db.close());

  it('finds a decomposed path by composed text and a composed one by decomposed text', () => {
    expect(found(nfc('Café'))).toEqual([1]);
    expect(found(nfd('Café'))).toEqual([1]);
    expect(found(nfd('brûlée'))).toEqual([2]);
    expect(found(nfc('brûlée'))).toEqual([2]);
    expect(found(nfc('è'))).toEqual([2, 1]); // shorter than a trigram: read as they are
    // Records made since the last indexing (read as they are), then indexed.
    record(3, nfd('run-3/Éclair.tif'));
    record(4, nfc('run-4/Éclair.tif'));
    expect(found(nfc('Éclair'))).toEqual([4, 3]);
    expect(found(nfd('Éclair'))).toEqual([4, 3]);
    indexPaths(db);
    expect(found(nfc('Éclair'))).toEqual([4, 3]);
    expect(found(nfd('Éclair'))).toEqual([4, 3]);
    // A whole source path, as a file's details show it.
    expect(found(nfc('/w/run-1/Café crème.tif'))).toEqual([1]);
    expect(found(nfd('/w/run-2/Crème brûlée.tif'))).toEqual([2]);
  });

  it('finds ASCII text as the composed path holds it: "cafe" not in a Mac\'s "café", indexed or not', () => {
    // Made since the last indexing: read as they are, where "cafe" and U+0301 holds "cafe".
    record(5, nfd('run-5/Café noir.tif'));
    const check = (): void => {
      expect(found('cafe')).toEqual([]);
      expect(found('CAFE')).toEqual([]);
      expect(found('caf')).toEqual([5, 1]);
      expect(found(nfc('café'))).toEqual([5, 1]);
      expect(found(nfd('café'))).toEqual([5, 1]);
      // Shorter than a trigram (every record read as it is): "e" is in crème and brûlée, not
      // in Café noir nor Éclair, whose "e" takes the accent.
      expect(found('e')).toEqual([2, 1]);
      expect(found('E')).toEqual([2, 1]);
      // A whole source path, as a file's details show it: that path only.
      expect(found('/w/run-5/Cafe')).toEqual([]);
    };
    check();
    indexPaths(db);
    check();
  });

  it("the server's file list: the name exactly and a metadata value, in either form", () => {
    const admin = { id: 1, role: 'admin' as const };
    const ids = (query: Record<string, string>): number[] =>
      listServerFiles(db, admin, query, 'UTC').items.map((f) => f.id);
    expect(ids({ filename: nfc('Café crème.tif') })).toEqual([1]);
    expect(ids({ filename: nfd('Crème brûlée.tif') })).toEqual([2]);
    expect(ids({ filename: nfd('Éclair.tif') })).toEqual([3, 4]);
    expect(ids({ metadata_key: 'sample', metadata_value: nfc('Müller') })).toEqual([1]);
    expect(ids({ metadata_key: 'sample', metadata_value: nfd('Jürgen') })).toEqual([2]);
    // The name is still looked up through its index.
    const clauses = fileFilters({ filename: nfd('Éclair.tif') }, 'UTC', []);
    const plan = (
      db
        .prepare(
          `EXPLAIN QUERY PLAN SELECT f.id FROM harvest_files f WHERE ${clauses.map((c) => c.sql).join(' AND ')}`,
        )
        .all(...clauses.flatMap((c) => c.args)) as { detail: string }[]
    )
      .map((r) => r.detail)
      .join('\n');
    expect(plan).toMatch(/USING (COVERING )?INDEX harvest_files_filename/);
  });
});

/**
 * ASCII text and a letter written with a combining mark ("cafe" and U+0301, as a Mac names a
 * file "café"), on every surface that finds files: the station's Data tab (harvest.files) and
 * `labstation files --search`, the server's Files page (files.list) and GET /api/files. Each
 * compares the text composed: "cafe" is not in "café", whatever its form or the record's age.
 */
describe('ASCII text and a letter with a combining mark, on every file search', () => {
  const now = '2026-01-05T10:00:00.000Z';
  /** Decomposed (indexed, then not yet), composed, and a name that is ASCII. */
  const names = [nfd('Café 1.tif'), nfd('Café 2.tif'), nfc('Café 3.tif'), 'cafe 4.tif'];
  const insertFiles = (db: Database.Database, indexAfter: number): void => {
    db.exec(`INSERT INTO instruments (uuid, name, tool_id, destination_template, watch,
        created_at, updated_at)
      VALUES ('i', 'i', (SELECT min(id) FROM tools), '{relative_path}', '[{"path":"/w"}]',
        '${now}', '${now}')`);
    const insert = db.prepare(
      `INSERT INTO harvest_files (id, uuid, instrument_id, persistent_id, watch_path,
         relative_path, source_path, filename, size, mtime_ms, first_discovered_at, updated_at,
         metadata_)
       VALUES (?, ?, (SELECT max(id) FROM instruments), ?, '/w', ?, ?, ?, 1, 1, ?, ?, ?)`,
    );
    names.forEach((name, i) => {
      const id = i + 1;
      const path = `run/${name}`;
      const metadata = JSON.stringify({ sample: name.replace(/ \d\.tif$/, '') });
      insert.run(id, `f${id}`, `ark:99999/fk4${id}`, path, `/w/${path}`, name, now, now, metadata);
      if (id === indexAfter) indexPaths(db);
    });
  };

  it('the Data tab and `labstation files --search`: "café" finds it in either form, "cafe" not', async () => {
    const dataDir = tempDir();
    const st = Station.open({ dataDir, log: createLogger('silent') });
    let closed = false;
    try {
      await importBundle(st.db, facilityBundle());
      insertFiles(st.db, 1);
      await st.call('session.logon', { login: 'alice', pin: '1234' });
      const dataTab = async (search: string): Promise<string[]> =>
        (
          (await st.call('harvest.files', { search })) as { files: { filename: string }[] }
        ).files.map((f) => f.filename);
      for (const search of [nfc('café'), nfd('café'), nfd('Café 2')]) {
        expect(await dataTab(search)).toEqual(
          search.includes('2') ? [names[1]] : [names[2], names[1], names[0]],
        );
      }
      expect(await dataTab('cafe')).toEqual([names[3]]);
      expect(await dataTab('caf')).toEqual([...names].reverse());
      st.close();
      closed = true;
      const cli = async (search: string): Promise<string[]> => {
        const out = await runCli(['files', '--data', dataDir, '--json', '--search', search]);
        expect(out.stderr).toBe('');
        expect(out.code).toBe(0);
        return (JSON.parse(out.stdout) as { filename: string }[]).map((f) => f.filename);
      };
      // Oldest first, as the command prints them.
      expect(await cli(nfc('café'))).toEqual(names.slice(0, 3));
      expect(await cli(nfd('café'))).toEqual(names.slice(0, 3));
      expect(await cli('cafe')).toEqual([names[3]]);
      expect(await cli('CAFE')).toEqual([names[3]]);
    } finally {
      if (!closed) st.close();
    }
  });

  it('the Files page (files.list) and GET /api/files: the name and a metadata value alike', async () => {
    const db = openDatabase(join(tempDir(), 'server.db'));
    db.prepare("INSERT INTO settings (key, value) VALUES ('mode', '\"server\"')").run();
    const admin = {
      email: 'ada@example.org',
      password: 'admin password 1',
      role: 'admin' as const,
    };
    await createAccount(db, admin);
    db.prepare(
      `INSERT INTO tools (uuid, name, category, operational, visible, shutdown, created_at,
         updated_at) VALUES ('t', 'TEM', 'Microscopy', 1, 1, 0, ?, ?)`,
    ).run(now, now);
    insertFiles(db, 1);
    const app = await createServerApp({
      db,
      log: createLogger('silent'),
      jwtSecret: 'unicode-search-test-secret-0123456789',
      timeZone: () => 'UTC',
    });
    try {
      const url = `${await app.listen({ host: '127.0.0.1', port: 0 })}/`;
      const jwt = await loginJwt(url, admin);
      const filesPage = async (query: Record<string, string>): Promise<number[]> => {
        const res = await serverRequest(url, jwt, 'POST', '/rpc/files.list', query);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return (res.body as { items: { id: number }[] }).items.map((f) => f.id);
      };
      const apiFiles = async (query: Record<string, string>): Promise<number[]> => {
        const path = `/api/files?${new URLSearchParams(query).toString()}`;
        const res = await serverRequest(url, jwt, 'GET', path);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return (res.body as { items: { id: number }[] }).items.map((f) => f.id);
      };
      for (const list of [filesPage, apiFiles]) {
        expect(await list({ filename: nfc('Café 1.tif') })).toEqual([1]);
        expect(await list({ filename: nfd('Café 3.tif') })).toEqual([3]);
        expect(await list({ filename: 'Cafe 1.tif' })).toEqual([]);
        expect(await list({ filename: 'cafe 4.tif' })).toEqual([4]);
        const sample = (value: string): Promise<number[]> =>
          list({ metadata_key: 'sample', metadata_value: value });
        expect((await sample(nfc('Café'))).sort()).toEqual([1, 2, 3]);
        expect((await sample(nfd('Café'))).sort()).toEqual([1, 2, 3]);
        expect(await sample('Cafe')).toEqual([]);
        expect(await sample('cafe')).toEqual([4]);
      }
    } finally {
      await app.close();
      db.close();
    }
  });
});

describe('notebook search', () => {
  let st: Station;
  let clockNow = Date.parse('2026-11-20T09:00:00Z');
  const ids = async (args: object): Promise<number[]> =>
    ((await st.call('notebook.search', args)) as { entries: { id: number }[] }).entries.map(
      (e) => e.id,
    );
  let decomposed: number;
  let composed: number;
  const dataDir = tempDir();

  beforeAll(async () => {
    st = Station.open({
      dataDir,
      log: createLogger('silent'),
      clock: () => (clockNow += 1000),
    });
    await importBundle(st.db, facilityBundle());
    await st.call('session.logon', { login: 'alice', pin: '1234' });
    const make = async (form: (text: string) => string): Promise<number> =>
      (
        (await st.call('notebook.create', {
          kind: 'experiment',
          title: form(`Séance ${form === nfd ? 'one' : 'two'}`),
          tags: [form('Château')],
          metadata: {
            extra_fields: {
              Sample: { type: 'text', value: form(`Pâte ${form === nfd ? 'A' : 'B'}`) },
            },
          },
        })) as { entry: NotebookEntryView }
      ).entry.id;
    decomposed = await make(nfd);
    composed = await make(nfc);
  });

  afterAll(() => st.close());

  it('finds entries written in either form by text typed in either form', async () => {
    for (const form of [nfc, nfd]) {
      expect(await ids({ title: form('séance') })).toEqual([composed, decomposed]);
      expect(await ids({ tags: [form('château')] })).toEqual([composed, decomposed]);
      expect(
        await ids({ metadata: [{ kind: 'equals', field: 'Sample', value: form('Pâte A') }] }),
      ).toEqual([decomposed]);
      expect(
        await ids({ metadata: [{ kind: 'contains', field: 'Sample', text: form('pâte') }] }),
      ).toEqual([composed, decomposed]);
      expect(await ids({ metadata: [{ kind: 'anyFieldContains', text: form('âte b') }] })).toEqual([
        composed,
      ]);
      expect(await ids({ metadata: [{ kind: 'anyFieldContains', text: form('â') }] })).toEqual([
        composed,
        decomposed,
      ]);
    }
  });

  it('finds what was indexed before migration 24 decomposed', async () => {
    // As the indexes held it before: the derived text as written, not folded.
    const db = st.db;
    db.transaction(() => {
      db.prepare('UPDATE notebook_entries SET title_search = ? WHERE id = ?').run(
        nfd('séance one'),
        decomposed,
      );
      db.prepare('UPDATE notebook_search_keys SET title_search = ? WHERE entry_id = ?').run(
        nfd('séance one'),
        decomposed,
      );
      db.prepare('UPDATE notebook_tags SET tag_key = ? WHERE entry_id = ?').run(
        nfd('château'),
        decomposed,
      );
      // Two more forms of one tag, neither composed (combining marks in either order): they
      // fold to one key, which the entry may hold once.
      const insertTag = db.prepare(
        'INSERT INTO notebook_tags (entry_id, tag, tag_key) VALUES (?, ?, ?)',
      );
      insertTag.run(decomposed, 'e\u0323\u0301', 'e\u0323\u0301');
      insertTag.run(decomposed, 'e\u0301\u0323', 'e\u0301\u0323');
      db.prepare('UPDATE notebook_metadata_index SET text = ? WHERE entry_id = ?').run(
        nfd('pâte a'),
        decomposed,
      );
      const old = db
        .prepare('SELECT text FROM notebook_metadata_lines WHERE entry_id = ?')
        .pluck()
        .get(decomposed) as string;
      db.prepare(
        `INSERT INTO notebook_metadata_text (notebook_metadata_text, rowid, text) VALUES ('delete', ?, ?)`,
      ).run(decomposed, old);
      db.prepare('UPDATE notebook_metadata_lines SET text = ? WHERE entry_id = ?').run(
        nfd(old),
        decomposed,
      );
      db.prepare('INSERT INTO notebook_metadata_text (rowid, text) VALUES (?, ?)').run(
        decomposed,
        nfd(old),
      );
    })();
    expect(await ids({ title: nfc('séance one') })).toEqual([]);
    // Migration 24 runs again over it (a later migration cannot: its columns are there).
    db.transaction(() => db.exec(migrations[BEFORE_FOLDING].sql))();
    expect(
      db
        .prepare('SELECT tag_key FROM notebook_tags WHERE entry_id = ? ORDER BY tag_key')
        .pluck()
        .all(decomposed),
    ).toEqual([nfc('château'), '\u1eb9\u0301']);
    st.close();
    st = Station.open({ dataDir, log: createLogger('silent'), clock: () => (clockNow += 1000) });
    await st.call('session.logon', { login: 'alice', pin: '1234' });
    for (const form of [nfc, nfd]) {
      expect(await ids({ title: form('séance one') })).toEqual([decomposed]);
      expect(await ids({ tags: [form('château')] })).toEqual([composed, decomposed]);
      expect(
        await ids({ metadata: [{ kind: 'equals', field: 'Sample', value: form('Pâte A') }] }),
      ).toEqual([decomposed]);
      expect(await ids({ metadata: [{ kind: 'anyFieldContains', text: form('âte a') }] })).toEqual([
        decomposed,
      ]);
    }
    st.db
      .prepare(
        "INSERT INTO notebook_metadata_text (notebook_metadata_text) VALUES ('integrity-check')",
      )
      .run();
  });

  it('finds a field named in either form by its name typed in either form, indexed before migration 27 too', async () => {
    const made = (
      (await st.call('notebook.create', {
        kind: 'item',
        title: 'Lame 7',
        metadata: {
          extra_fields: {
            [nfd('Matériau')]: { type: 'text', value: 'Cu' },
            [nfd('Épaisseur')]: { type: 'number', value: 3, units: ['nm'], unit: 'nm' },
            [nfd('Réalisé le')]: { type: 'date', value: '2026-11-19' },
            [nfd('Validé')]: { type: 'checkbox', value: 'on' },
          },
        },
      })) as { entry: NotebookEntryView }
    ).entry.id;
    const everyKind = async (form: (text: string) => string): Promise<number[][]> => [
      await ids({ metadata: [{ kind: 'equals', field: form('Matériau'), value: 'cu' }] }),
      await ids({ metadata: [{ kind: 'contains', field: form('Matériau'), text: 'C' }] }),
      await ids({ metadata: [{ kind: 'numberBetween', field: form('Épaisseur'), min: 2 }] }),
      await ids({
        metadata: [{ kind: 'dateBetween', field: form('Réalisé le'), to: '2026-12-01' }],
      }),
      await ids({ metadata: [{ kind: 'checkbox', field: form('Validé'), checked: true }] }),
    ];
    for (const form of [nfc, nfd]) expect(await everyKind(form)).toEqual(Array(5).fill([made]));
    // As the index held the names before: as written, here decomposed.
    const db = st.db;
    db.prepare('UPDATE notebook_metadata_index SET name = ? WHERE entry_id = ? AND name = ?').run(
      nfd('Matériau'),
      made,
      nfc('Matériau'),
    );
    expect(
      await ids({ metadata: [{ kind: 'equals', field: nfc('Matériau'), value: 'cu' }] }),
    ).toEqual([]);
    const folding = migrations.find((m) => m.version === 27);
    db.transaction(() => db.exec(folding?.sql ?? ''))();
    for (const form of [nfc, nfd]) expect(await everyKind(form)).toEqual(Array(5).fill([made]));
  });

  it('finds a number in a unit written in either form by the unit typed in either form, indexed before migration 29 too', async () => {
    const MICRO = '\u00b5'; // MICRO SIGN, as most keyboards type "µ"
    const MU = '\u03bc'; // GREEK SMALL LETTER MU, as a Greek keyboard does
    const make = async (title: string, unit: string): Promise<number> =>
      (
        (await st.call('notebook.create', {
          kind: 'item',
          title,
          metadata: {
            extra_fields: { Spacing: { type: 'number', value: 4, units: [unit], unit } },
          },
        })) as { entry: NotebookEntryView }
      ).entry.id;
    const angstromNfd = await make('Lattice D', nfd('Å'));
    const angstromNfc = await make('Lattice C', nfc('Å'));
    const micro = await make('Lattice micro', `${MICRO}m`);
    const mu = await make('Lattice mu', `${MU}m`);
    const inUnit = (unit: string): Promise<number[]> =>
      ids({ metadata: [{ kind: 'numberBetween', field: 'Spacing', min: 1, max: 9, unit }] });
    const everyUnit = async (): Promise<number[][]> => [
      await inUnit(nfc('Å')),
      await inUnit(nfd('Å')),
      await inUnit('\u212b'), // ANGSTROM SIGN: "Å" to NFC
      await inUnit(`${MICRO}m`),
      await inUnit(`${MU}m`),
    ];
    const expected = [
      [angstromNfc, angstromNfd],
      [angstromNfc, angstromNfd],
      [angstromNfc, angstromNfd],
      [mu, micro],
      [mu, micro],
    ];
    expect(await everyUnit()).toEqual(expected);
    expect(await inUnit('m')).toEqual([]);

    // As the index held the units before migration 29: as written. Migration 29 runs over them
    // again, as it did at the upgrade from version 28.
    st.close();
    const file = join(dataDir, 'labstation.db');
    const raw = new Database(file);
    raw
      .prepare(
        'UPDATE notebook_metadata_index SET unit = ? WHERE entry_id = ? AND unit IS NOT NULL',
      )
      .run(nfd('Å'), angstromNfd);
    raw
      .prepare(
        'UPDATE notebook_metadata_index SET unit = ? WHERE entry_id = ? AND unit IS NOT NULL',
      )
      .run(`${MICRO}m`, micro);
    raw.close();
    runMigrationAgain(file, 29);
    st = Station.open({ dataDir, log: createLogger('silent'), clock: () => (clockNow += 1000) });
    await st.call('session.logon', { login: 'alice', pin: '1234' });
    expect(
      st.db
        .prepare(
          'SELECT unit FROM notebook_metadata_index WHERE entry_id IN (?, ?) ORDER BY entry_id',
        )
        .pluck()
        .all(angstromNfd, micro),
    ).toEqual([nfc('Å'), `${MU}m`]);
    expect(await everyUnit()).toEqual(expected);
    // The entries keep their units as written.
    const stored = (await st.call('notebook.get', { id: micro })) as { entry: NotebookEntryView };
    expect(JSON.stringify(stored.entry.metadata)).toContain(`"${MICRO}m"`);
  });

  it('finds a number in a unit written with spaces around it by the unit without them, and the other way round, indexed before migration 30 too', async () => {
    // Every character String.prototype.trim takes, found here, not copied from the migration.
    const spaces = Array.from({ length: 0x10000 }, (_, code) => String.fromCharCode(code))
      .filter((char) => char.trim() === '')
      .join('');
    expect(spaces).toContain('\u3000');
    const make = async (title: string, unit: string): Promise<number> =>
      (
        (await st.call('notebook.create', {
          kind: 'item',
          title,
          metadata: {
            extra_fields: { Dose: { type: 'number', value: 4, units: ['mg', 'g'], unit } },
          },
        })) as { entry: NotebookEntryView }
      ).entry.id;
    const plain = await make('Dose plain', 'mg');
    const after = await make('Dose after', 'mg ');
    const around = await make('Dose around', `${spaces}mg${spaces}`);
    const blank = await make('Dose blank', ' \u00a0');
    const zeroWidth = await make('Dose zero width', '\u200bmg'); // U+200B is no white space
    const inUnit = (unit: string): Promise<number[]> =>
      ids({ metadata: [{ kind: 'numberBetween', field: 'Dose', min: 1, max: 9, unit }] });
    const everyUnit = async (): Promise<number[][]> => [
      await inUnit('mg'),
      await inUnit('mg '), // an API query as written, which the search panel would have trimmed
      await inUnit('\tmg\u3000'),
      await inUnit('\u200bmg'),
      await inUnit(' '),
      await inUnit('m g'),
    ];
    // A blank unit is none given, as the search panel leaves it out: every unit.
    const anyUnit = await ids({
      metadata: [{ kind: 'numberBetween', field: 'Dose', min: 1, max: 9 }],
    });
    expect(anyUnit).toEqual(expect.arrayContaining([zeroWidth, blank, around, after, plain]));
    const expected = [
      [around, after, plain],
      [around, after, plain],
      [around, after, plain],
      [zeroWidth],
      anyUnit,
      [],
    ];
    expect(await everyUnit()).toEqual(expected);
    const indexed = (): unknown[] =>
      st.db
        .prepare(
          `SELECT unit FROM notebook_metadata_index WHERE entry_id IN (?, ?, ?, ?, ?)
           ORDER BY entry_id`,
        )
        .pluck()
        .all(plain, after, around, blank, zeroWidth);
    expect(indexed()).toEqual(['mg', 'mg', 'mg', null, '\u200bmg']);

    // As the index held the units before migration 30: folded by migration 29, spaces kept.
    // Migration 30 runs over them again, as it did at the upgrade from version 29.
    st.close();
    const file = join(dataDir, 'labstation.db');
    const raw = new Database(file);
    const setUnit = raw.prepare('UPDATE notebook_metadata_index SET unit = ? WHERE entry_id = ?');
    setUnit.run('mg ', after);
    setUnit.run(`${spaces}mg${spaces}`, around);
    setUnit.run(' \u00a0', blank);
    raw.close();
    runMigrationAgain(file, 30);
    st = Station.open({ dataDir, log: createLogger('silent'), clock: () => (clockNow += 1000) });
    await st.call('session.logon', { login: 'alice', pin: '1234' });
    expect(indexed()).toEqual(['mg', 'mg', 'mg', null, '\u200bmg']);
    expect(await everyUnit()).toEqual(expected);
    // The entries keep their units as written.
    const stored = (await st.call('notebook.get', { id: after })) as { entry: NotebookEntryView };
    expect(JSON.stringify(stored.entry.metadata)).toContain('"unit":"mg "');
  });
});

describe('notebook search in Greek', () => {
  // Lowercasing makes a capital sigma final (U+03C2) at a word's end and sigma (U+03C3)
  // elsewhere: "ΜΑΣ" was looked for as "μας" in "μασα", and not found.
  it('finds text by any part of it, whatever its sigmas became, indexed before migration 54 too', async () => {
    const dataDir = tempDir();
    let clockNow = Date.parse('2026-11-20T09:00:00Z');
    const open = async (): Promise<Station> => {
      const station = Station.open({
        dataDir,
        log: createLogger('silent'),
        clock: () => (clockNow += 1000),
      });
      await station.call('session.logon', { login: 'alice', pin: '1234' });
      return station;
    };
    let st = Station.open({
      dataDir,
      log: createLogger('silent'),
      clock: () => (clockNow += 1000),
    });
    await importBundle(st.db, facilityBundle());
    st.close();
    st = await open();
    const { entry } = (await st.call('notebook.create', {
      kind: 'experiment',
      title: 'ΜΑΣΑ',
      tags: ['ΟΔΟΣ'],
      metadata: {
        extra_fields: {
          Code: { type: 'text', value: 'ΜΑΣΑ' },
          Site: { type: 'text', value: 'ΟΔΟΣ-12' },
        },
      },
    })) as { entry: NotebookEntryView };
    const ids = async (args: object): Promise<number[]> =>
      ((await st.call('notebook.search', args)) as { entries: { id: number }[] }).entries.map(
        (e) => e.id,
      );
    const everyWay = async (): Promise<number[][]> => [
      await ids({ title: 'ΜΑΣ' }),
      await ids({ title: 'μας' }),
      await ids({ metadata: [{ kind: 'contains', field: 'Code', text: 'ΜΑΣ' }] }),
      await ids({ metadata: [{ kind: 'anyFieldContains', text: 'ΜΑΣ' }] }),
      await ids({ metadata: [{ kind: 'equals', field: 'Site', value: 'οδοσ-12' }] }),
      await ids({ metadata: [{ kind: 'equals', field: 'Site', value: 'ΟΔΟΣ-12' }] }),
      await ids({ tags: ['οδοσ'] }),
      await ids({ tags: ['ΟΔΟΣ'] }),
    ];
    const all = Array.from({ length: 8 }, () => [entry.id]);
    expect(await everyWay()).toEqual(all);

    // As the indexes held it before: lowercased as JavaScript does, final sigmas kept.
    const db = st.db;
    const before = (text: string): string => text.toLowerCase().normalize('NFC');
    expect(before('ΟΔΟΣ-12')).toBe('οδος-12');
    db.transaction(() => {
      db.prepare('UPDATE notebook_tags SET tag_key = ? WHERE entry_id = ?').run(
        before('ΟΔΟΣ'),
        entry.id,
      );
      db.prepare('UPDATE notebook_metadata_index SET text = ? WHERE entry_id = ? AND name = ?').run(
        before('ΟΔΟΣ-12'),
        entry.id,
        'Site',
      );
      const lines = db
        .prepare('SELECT text FROM notebook_metadata_lines WHERE entry_id = ?')
        .pluck()
        .get(entry.id) as string;
      db.prepare(
        `INSERT INTO notebook_metadata_text (notebook_metadata_text, rowid, text) VALUES ('delete', ?, ?)`,
      ).run(entry.id, lines);
      const old = lines.replace('οδοσ-12', before('ΟΔΟΣ-12'));
      expect(old).not.toBe(lines);
      db.prepare('UPDATE notebook_metadata_lines SET text = ? WHERE entry_id = ?').run(
        old,
        entry.id,
      );
      db.prepare('INSERT INTO notebook_metadata_text (rowid, text) VALUES (?, ?)').run(
        entry.id,
        old,
      );
    })();
    expect(await ids({ tags: ['ΟΔΟΣ'] })).toEqual([]);
    st.close();
    runMigrationAgain(join(dataDir, 'labstation.db'), 54);
    st = await open();
    expect(await everyWay()).toEqual(all);
    // The entry keeps its text as written.
    const stored = (await st.call('notebook.get', { id: entry.id })) as {
      entry: NotebookEntryView;
    };
    expect(stored.entry.title).toBe('ΜΑΣΑ');
    expect(stored.entry.tags).toEqual(['ΟΔΟΣ']);
    st.close();
  });
});
