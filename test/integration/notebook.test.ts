/**
 * The notebook on a real station data dir (SQLite file in a temp dir): entries, templates,
 * optimistic versions, ownership, usage links, search by metadata against the reference
 * semantics (matchesQuery), the query plans, the usage_context harvest hook, and the push of
 * entries through the server's sync route with a station key.
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  matchesQuery,
  parseMetadata,
  type MetadataDoc,
  type MetadataQuery,
} from '../../shared/metadata/index.js';
import type { NotebookEntryView } from '../../shared/notebookApi.js';
import type { UsageEventView } from '../../shared/api.js';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { runPostTransferHooks } from '../../electron/core/harvest/hooks.js';
import type { FileRow } from '../../electron/core/harvest/records.js';
import { searchWhere } from '../../electron/core/notebook/search.js';
import { createStationAccount } from '../../electron/core/server/accounts.js';
import { createServerApp } from '../../electron/core/server/app.js';
import { importBundle } from '../../electron/core/station/facility.js';
import { Station } from '../../electron/core/station/station.js';
import type { PushResult } from '../../electron/core/sync/protocol.js';
import { AppError } from '../../electron/core/util/errors.js';
import { createLogger } from '../../electron/core/util/log.js';
import { facilityBundle, goodPreAnswers } from '../fixtures/facility.js';
import { tempDir } from './helpers.js';

let now = Date.parse('2026-11-20T09:00:00Z');
const clock = (): number => (now += 1000);

async function station(): Promise<Station> {
  const st = Station.open({ dataDir: tempDir(), log: createLogger('silent'), clock });
  await importBundle(st.db, facilityBundle());
  return st;
}

async function as(st: Station, login: string, pin: string): Promise<void> {
  await st.call('session.logoff', {});
  await st.call('session.logon', { login, pin });
}

async function entry(st: Station, name: string, args: object): Promise<NotebookEntryView> {
  return ((await st.call(name, args)) as { entry: NotebookEntryView }).entry;
}

async function failure(promise: Promise<unknown>, code: string): Promise<AppError> {
  const error = await promise.then(
    () => new Error(`expected ${code}, but the call succeeded`),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(code);
  return error as AppError;
}

const count = (db: Db, sql: string): number => db.prepare(sql).pluck().get() as number;

const metadata = {
  extra_fields: {
    Status: { type: 'select', value: 'Running', options: ['Planned', 'Running', 'Done'] },
    'Beam energy': { type: 'number', value: 5, units: ['kV', 'V'], unit: 'kV' },
    'Sample ID': { value: 'A-100', blank_value_on_duplicate: true },
    Polished: { type: 'checkbox', value: true },
    'Prepared on': { type: 'date', value: '2026-11-19' },
  },
};

describe('notebook entries', () => {
  let st: Station;
  beforeAll(async () => {
    st = await station();
  });
  afterAll(() => st.close());

  it('needs someone logged on', async () => {
    await st.call('session.logoff', {});
    await failure(st.call('notebook.list', {}), 'unauthenticated');
  });

  it('creates, reads and updates with an optimistic version; a stale edit is a conflict', async () => {
    await as(st, 'alice', '1234');
    const made = await entry(st, 'notebook.create', {
      kind: 'experiment',
      title: 'Cathode cross-sections',
      body: 'Polished at 5 kV.',
      tags: ['cathodes', 'SEM', 'cathodes', 'sem', 'Caf\u00e9', 'cafe\u0301'],
      metadata,
    });
    // Each once as search takes them (letter case, Unicode form aside), as first written.
    expect(made).toMatchObject({
      version: 1,
      tags: ['cathodes', 'SEM', 'Caf\u00e9'],
      problems: [],
    });
    expect(made.owner?.username).toBe('alice');
    expect((made.metadata as typeof metadata).extra_fields['Beam energy'].unit).toBe('kV');
    const changed = await entry(st, 'notebook.update', { id: made.id, version: 1, title: 'New' });
    expect(changed).toMatchObject({ version: 2, title: 'New', body: 'Polished at 5 kV.' });
    const stale = await failure(
      st.call('notebook.update', { id: made.id, version: 1, body: 'other window' }),
      'conflict',
    );
    expect(stale.message).toMatch(/changed elsewhere/);
    expect((await entry(st, 'notebook.get', { id: made.id })).body).toBe('Polished at 5 kV.');
    const pushed = st.db
      .prepare("SELECT payload FROM outbox WHERE kind = 'notebook_entry' ORDER BY id")
      .pluck()
      .all() as string[];
    expect(pushed.map((p) => (JSON.parse(p) as { version: number }).version)).toEqual([1, 2]);
  });

  it('refuses structurally broken metadata, naming field and property, and stores nothing', async () => {
    await as(st, 'alice', '1234');
    const before = count(st.db, 'SELECT count(*) FROM notebook_entries');
    const outbox = count(st.db, 'SELECT count(*) FROM outbox');
    const error = await failure(
      st.call('notebook.create', {
        kind: 'item',
        title: 'Broken',
        metadata: { extra_fields: { Colour: { type: 'select', value: 'red' } } },
      }),
      'validation_failed',
    );
    expect(error.message).toContain('extra_fields."Colour".options');
    expect((error.details as { problems: { code: string }[] }).problems[0]?.code).toBe(
      'missing_options',
    );
    expect(count(st.db, 'SELECT count(*) FROM notebook_entries')).toBe(before);
    expect(count(st.db, 'SELECT count(*) FROM outbox')).toBe(outbox);
  });

  it('keeps what it stores within what the server takes (title of a copy, metadata size)', async () => {
    await as(st, 'alice', '1234');
    const long = await entry(st, 'notebook.create', { kind: 'item', title: 'x'.repeat(500) });
    const copy = await entry(st, 'notebook.duplicate', { id: long.id });
    expect(copy.title).toHaveLength(500);
    expect(copy.title.endsWith(' (copy)')).toBe(true);
    const huge = { extra_fields: { Notes: { value: 'y'.repeat(1_000_001) } } };
    const error = await failure(
      st.call('notebook.create', { kind: 'item', title: 'Huge', metadata: huge }),
      'validation_failed',
    );
    expect(error.message).toMatch(/^metadata: at most 1,000,000 characters of JSON/);
    // Named as every refusal of metadata is, in details.problems.
    expect(error.details).toEqual({
      problems: [expect.objectContaining({ path: [], code: 'too_large', blocksSaving: true })],
    });

    // A title cut for its copy keeps whole characters (a cut surrogate pair was stored as
    // replacement characters, and the title came out longer than 500).
    const emoji = await entry(st, 'notebook.create', {
      kind: 'item',
      title: `${'a'.repeat(492)}🧪${'b'.repeat(6)}`,
    });
    const emojiCopy = await entry(st, 'notebook.duplicate', { id: emoji.id });
    expect(emojiCopy.title).toBe(`${'a'.repeat(492)} (copy)`);

    // Metadata under the limit as sent, over it as stored (each field's type written out):
    // refused, naming the stored size, so no copy or resend of it is refused later.
    const fields: Record<string, { value: string }> = {};
    for (let i = 0; i < 43_400; i++) fields[`f${String(i).padStart(6, '0')}`] = { value: '' };
    const many = { extra_fields: fields };
    expect(JSON.stringify(many).length).toBeLessThan(1_000_000);
    const before = count(st.db, 'SELECT count(*) FROM notebook_entries');
    const grown = await failure(
      st.call('notebook.create', { kind: 'experiment', title: 'Many', metadata: many }),
      'validation_failed',
    );
    expect(grown.message).toMatch(
      /^metadata: at most 1,000,000 characters of JSON as stored, with each field's type written out \(this comes to 1,[0-9,]+\)$/,
    );
    expect(grown.details).toEqual({
      problems: [
        expect.objectContaining({
          path: [],
          code: 'too_large',
          message: grown.message.replace(/^metadata: /, ''),
        }),
      ],
    });
    expect(count(st.db, 'SELECT count(*) FROM notebook_entries')).toBe(before);

    // JSON text is measured as it is written, and laid out it may be longer than the limit
    // while the document it holds is not (it was stringified again: quotes and line breaks
    // counted twice, and refused as 1,450,923 characters).
    const laidOut: Record<string, { value: string }> = {};
    for (let i = 0; i < 17_000; i++) laidOut[`field ${i}`] = { value: 'x' };
    const text = JSON.stringify({ extra_fields: laidOut }, null, 10);
    expect(text.length).toBeGreaterThan(1_000_000);
    const saved = await entry(st, 'notebook.create', {
      kind: 'experiment',
      title: 'Laid out',
      metadata: text,
    });
    expect(Object.keys(saved.metadata?.extra_fields ?? {})).toHaveLength(17_000);
    const tooLong = await failure(
      st.call('notebook.create', {
        kind: 'experiment',
        title: 'Too long',
        metadata: `${' '.repeat(4_000_000)}{}`,
      }),
      'validation_failed',
    );
    expect(tooLong.message).toBe(
      'metadata: at most 4,000,000 characters of JSON text (this has 4,000,002)',
    );

    // Within every character limit, but past what one push may carry as UTF-8 JSON (a control
    // character is six bytes there, a CJK one three): it was refused by the server (413) at
    // every try for good. Refused at the save now, nothing stored.
    const entriesBefore = count(st.db, 'SELECT count(*) FROM notebook_entries');
    const outboxBefore = count(st.db, 'SELECT count(*) FROM outbox');
    const wide = await failure(
      st.call('notebook.create', {
        kind: 'item',
        title: 'Wide',
        body: '\u0001'.repeat(1_000_000),
        metadata: { extra_fields: { f: { value: '漢'.repeat(500_000) } } },
      }),
      'validation_failed',
    );
    expect(wide.message).toMatch(
      /^the entry comes to 7\.[0-9] MiB as sent to the server, which takes at most 7\.0 MiB: shorten its text or metadata$/,
    );
    expect(count(st.db, 'SELECT count(*) FROM notebook_entries')).toBe(entriesBefore);
    expect(count(st.db, 'SELECT count(*) FROM outbox')).toBe(outboxBefore);
    // One saved that large before the limit can still be deleted (its deletion carries it).
    const old = await entry(st, 'notebook.create', { kind: 'item', title: 'Old and wide' });
    st.db
      .prepare('UPDATE notebook_entries SET body = ? WHERE id = ?')
      .run('\u0001'.repeat(1_000_000) + '漢'.repeat(500_000), old.id);
    await st.call('notebook.delete', { id: old.id, version: 1 });
  });

  it('refuses metadata nested too deep for JSON.stringify with the depth rule, not a crash', async () => {
    await as(st, 'alice', '1234');
    // 100,000 levels: JSON.parse takes it (it arrives as a 600 KB RPC body), JSON.stringify
    // runs out of stack on it.
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    const before = count(st.db, 'SELECT count(*) FROM notebook_entries');
    const made = await failure(
      st.call('notebook.create', {
        kind: 'item',
        title: 'Deep',
        metadata: { extra_fields: {}, custom: deep },
      }),
      'validation_failed',
    );
    expect(made.message).toMatch(/^metadata: custom(\.a)+: is nested more than 200 levels deep$/);
    expect(count(st.db, 'SELECT count(*) FROM notebook_entries')).toBe(before);
    const item = await entry(st, 'notebook.create', { kind: 'item', title: 'Shallow' });
    const updated = await failure(
      st.call('notebook.update', { id: item.id, version: 1, metadata: { custom: deep } }),
      'validation_failed',
    );
    expect(updated.message).toContain('is nested more than 200 levels deep');
    expect((await entry(st, 'notebook.get', { id: item.id })).version).toBe(1);
  });

  it('stores value problems and returns them', async () => {
    await as(st, 'alice', '1234');
    const made = await entry(st, 'notebook.create', {
      kind: 'item',
      title: 'Contact',
      metadata: { extra_fields: { Email: { type: 'email', value: 'not-an-address' } } },
    });
    expect(made.problems.map((p) => p.code)).toEqual(['invalid_email']);
    expect((await entry(st, 'notebook.get', { id: made.id })).problems[0]?.message).toContain(
      'extra_fields."Email".value',
    );
  });

  it('makes entries from templates, duplicates, and keeps others’ entries private', async () => {
    await as(st, 'bob', '2345');
    const template = await entry(st, 'notebook.create', {
      kind: 'experiment_template',
      title: 'SEM session',
      body: 'Steps: ...',
      tags: ['sem'],
      metadata,
    });
    await as(st, 'alice', '1234');
    const fromTemplate = await entry(st, 'notebook.create', {
      kind: 'experiment',
      title: 'Monday',
      template_id: template.id,
    });
    expect(fromTemplate).toMatchObject({
      title: 'Monday',
      body: 'Steps: ...',
      tags: ['sem'],
      template_id: template.id,
    });
    expect(fromTemplate.owner?.username).toBe('alice');
    expect(fromTemplate.metadata).toEqual(template.metadata);
    // Metadata given with the template fills in its fields and adds to them; none is lost.
    const filled = await entry(st, 'notebook.create', {
      kind: 'experiment',
      title: 'Tuesday',
      template_id: template.id,
      metadata: {
        extra_fields: {
          'Sample ID': { value: 'S-42' },
          Status: { value: 'Done' },
          'Beam energy': { value: 10, unit: 'V' },
          Extra: { value: 'x' },
        },
      },
    });
    const templateFields = Object.keys((template.metadata as typeof metadata).extra_fields);
    const filledFields = (filled.metadata as typeof metadata).extra_fields as Record<
      string,
      { value: unknown }
    >;
    expect(Object.keys(filledFields)).toEqual([...templateFields, 'Extra']);
    expect(filledFields['Sample ID']).toEqual({
      type: 'text',
      value: 'S-42',
      blank_value_on_duplicate: true,
    });
    // A value fills in the template's field: its type, options and units stay.
    expect(filledFields.Status).toEqual({
      type: 'select',
      value: 'Done',
      options: ['Planned', 'Running', 'Done'],
    });
    expect(filledFields['Beam energy']).toEqual({
      type: 'number',
      value: 10,
      units: ['kV', 'V'],
      unit: 'V',
    });
    expect(filledFields.Polished.value).toBe(true);
    // Checked as a whole, and refused by name.
    const refused = await failure(
      st.call('notebook.create', {
        kind: 'experiment',
        title: 'Thursday',
        template_id: template.id,
        metadata: { extra_fields: { 'Beam energy': { units: 'kV' } } },
      }),
      'validation_failed',
    );
    expect(refused.message).toContain('extra_fields."Beam energy".units: must be a list of text');
    const nothingGiven = await entry(st, 'notebook.create', {
      kind: 'experiment',
      title: 'Wednesday',
      template_id: template.id,
      metadata: null,
    });
    expect(nothingGiven.metadata).toEqual(template.metadata);
    await failure(
      st.call('notebook.create', { kind: 'item', title: 'x', template_id: template.id }),
      'validation_failed',
    );
    // Templates are everyone's to read and use, only their owner's to change.
    await failure(
      st.call('notebook.update', { id: template.id, version: 1, title: 'mine' }),
      'forbidden',
    );
    const copy = await entry(st, 'notebook.duplicate', { id: fromTemplate.id });
    expect(copy.title).toBe('Monday (copy)');
    const fields = (copy.metadata as typeof metadata).extra_fields;
    expect(fields['Sample ID'].value).toBe('');
    expect(fields.Status.value).toBe('Running');
    await as(st, 'bob', '2345');
    await failure(st.call('notebook.get', { id: fromTemplate.id }), 'not_found');
    const listed = (await st.call('notebook.list', {})) as { entries: { id: number }[] };
    expect(listed.entries.map((e) => e.id)).toEqual([template.id]);
    // Staff read and change everything.
    await as(st, 'sam', '9999');
    expect((await entry(st, 'notebook.get', { id: fromTemplate.id })).title).toBe('Monday');
  });

  it('lays given field groups over a template’s by id, keeping the groups its fields name', async () => {
    await as(st, 'alice', '1234');
    const template = await entry(st, 'notebook.create', {
      kind: 'experiment_template',
      title: 'Grouped',
      metadata: {
        notebook: {
          extra_fields_groups: [
            { id: 1, name: 'Beam' },
            // A key of the service's own (or anyone's), kept as every unknown key is.
            { id: 2, name: 'Sample', color: 'red' },
          ],
        },
        extra_fields: {
          'Beam energy': { type: 'number', value: 5, group_id: 1 },
          'Sample ID': { value: '', group_id: 2 },
        },
      },
    });
    const made = await entry(st, 'notebook.create', {
      kind: 'experiment',
      title: 'With a group of its own',
      template_id: template.id,
      metadata: {
        notebook: {
          extra_fields_groups: [
            { id: 2, name: 'Specimen' },
            { id: 3, name: 'Other' },
          ],
        },
        extra_fields: { New: { value: 'n', group_id: 3 } },
      },
    });
    const doc = made.metadata as {
      notebook: { extra_fields_groups: unknown[] };
      extra_fields: Record<string, { group_id?: number }>;
    };
    // Mutation: the given group replacing the template's (its color was lost).
    expect(doc.notebook.extra_fields_groups).toEqual([
      { id: 1, name: 'Beam' },
      { id: 2, name: 'Specimen', color: 'red' },
      { id: 3, name: 'Other' },
    ]);
    expect(Object.entries(doc.extra_fields).map(([name, f]) => [name, f.group_id])).toEqual([
      ['Beam energy', 1],
      ['Sample ID', 2],
      ['New', 3],
    ]);
    // Ids written as text are the same ids ("2" is group 2, as the reader takes it).
    const asText = await entry(st, 'notebook.create', {
      kind: 'experiment',
      title: 'Ids as text',
      template_id: template.id,
      metadata: { notebook: { extra_fields_groups: [{ id: '2', name: 'Specimen' }] } },
    });
    expect(
      (asText.metadata as { notebook: { extra_fields_groups: unknown[] } }).notebook
        .extra_fields_groups,
    ).toEqual([
      { id: 1, name: 'Beam' },
      { id: 2, name: 'Specimen', color: 'red' },
    ]);
    // None given, written as the reader reads it (null; [], PHP's empty object, as the notebook
    // service's export writes it): the template's fields and groups stay whole.
    for (const given of [
      { extra_fields: null },
      { extra_fields: [] },
      { notebook: [] },
      { notebook: { extra_fields_groups: null } },
      { notebook: [], extra_fields: [] },
      // And under the notebook service's own key: no settings either, not a key of its own.
      { elabftw: [] },
      { elabftw: null },
      { elabftw: [], extra_fields: null },
    ]) {
      const made = await entry(st, 'notebook.create', {
        kind: 'experiment',
        title: 'Nothing given',
        template_id: template.id,
        metadata: given,
      });
      expect(made.metadata, JSON.stringify(given)).toEqual(template.metadata);
    }
    // A given id listed twice is refused, not silently dropped: a new id, and one of the
    // template's (where the second used to be lost behind the first).
    for (const id of [3, 2]) {
      const twice = await failure(
        st.call('notebook.create', {
          kind: 'experiment',
          title: 'Twice',
          template_id: template.id,
          metadata: {
            notebook: {
              extra_fields_groups: [
                { id, name: 'A' },
                { id, name: 'B' },
              ],
            },
          },
        }),
        'validation_failed',
      );
      expect(JSON.stringify(twice.details)).toContain('duplicate_group_id');
    }
    // Settings given under "elabftw" (the notebook service's key, read when "notebook" is
    // absent or null) are laid over the template's as well.
    for (const notebook of [{}, { notebook: null }]) {
      const elabftw = await entry(st, 'notebook.create', {
        kind: 'experiment',
        title: 'Under elabftw',
        template_id: template.id,
        metadata: {
          ...notebook,
          elabftw: { extra_fields_groups: [{ id: 3, name: 'Other' }] },
          extra_fields: { New: { value: 'n', group_id: 3 } },
        },
      });
      const read = elabftw.metadata as Record<string, unknown> & {
        notebook: { extra_fields_groups: unknown[] };
      };
      expect(read.notebook.extra_fields_groups).toEqual([
        { id: 1, name: 'Beam' },
        { id: 2, name: 'Sample', color: 'red' },
        { id: 3, name: 'Other' },
      ]);
      expect(read.elabftw).toBeUndefined();
    }
  });

  it('keeps the fields of an entry with a null "notebook" beside "elabftw" through saves and copies', async () => {
    await as(st, 'alice', '1234');
    const made = await entry(st, 'notebook.create', {
      kind: 'item_template',
      title: 'Null notebook',
      metadata: {
        extra_fields: { Grid: { value: 'G-1', group_id: 1 } },
        notebook: null,
        elabftw: { extra_fields_groups: [{ id: 1, name: 'Sample' }] },
      },
    });
    const grid = { Grid: { type: 'text', value: 'G-1', group_id: 1 } };
    expect(made.metadata).toEqual({
      extra_fields: grid,
      notebook: { extra_fields_groups: [{ id: 1, name: 'Sample' }] },
    });
    const saved = await entry(st, 'notebook.update', {
      id: made.id,
      version: 1,
      metadata: made.metadata,
    });
    expect(saved.metadata).toEqual(made.metadata);
    expect((await entry(st, 'notebook.duplicate', { id: made.id })).metadata).toMatchObject({
      extra_fields: grid,
    });
    const item = await entry(st, 'notebook.create', {
      kind: 'item',
      title: 'From it',
      template_id: made.id,
    });
    expect(item.metadata).toMatchObject({ extra_fields: grid });
    // A stored document that no longer reads (saved by an older version) stops a copy instead
    // of losing its fields, and can still be given new metadata or deleted.
    st.db
      .prepare('UPDATE notebook_entries SET metadata = ? WHERE id = ?')
      .run('{"extra_fields": 5}', made.id);
    const entries = count(st.db, 'SELECT count(*) FROM notebook_entries');
    const refused = await failure(st.call('notebook.duplicate', { id: made.id }), 'internal');
    expect(refused.message).toContain(`entry ${made.id}: its stored metadata no longer reads`);
    await failure(
      st.call('notebook.create', { kind: 'item', title: 'From broken', template_id: made.id }),
      'internal',
    );
    expect(count(st.db, 'SELECT count(*) FROM notebook_entries')).toBe(entries);
    const renamed = await entry(st, 'notebook.update', {
      id: made.id,
      version: saved.version,
      title: 'Renamed',
    });
    const repaired = await entry(st, 'notebook.update', {
      id: made.id,
      version: renamed.version,
      metadata: { extra_fields: { Grid: { value: 'G-2' } } },
    });
    expect(repaired.metadata).toEqual({ extra_fields: { Grid: { type: 'text', value: 'G-2' } } });
    expect(await st.call('notebook.delete', { id: made.id, version: repaired.version })).toEqual({
      ok: true,
    });
  });

  it('deletes softly: kept, synced as deleted, no longer listed or found', async () => {
    await as(st, 'alice', '1234');
    const made = await entry(st, 'notebook.create', {
      kind: 'item',
      title: 'To delete',
      tags: ['gone'],
      metadata: { extra_fields: { Code: { value: 'zz-delete' } } },
    });
    await failure(st.call('notebook.delete', { id: made.id, version: 5 }), 'conflict');
    expect(await st.call('notebook.delete', { id: made.id, version: 1 })).toEqual({ ok: true });
    await failure(st.call('notebook.get', { id: made.id }), 'not_found');
    const found = (await st.call('notebook.search', {
      metadata: [{ kind: 'anyFieldContains', text: 'zz-delete' }],
    })) as { total: number };
    expect(found.total).toBe(0);
    const tags = (await st.call('notebook.tags', {})) as { tags: { tag: string }[] };
    expect(tags.tags.map((t) => t.tag)).not.toContain('gone');
    const last = JSON.parse(
      st.db
        .prepare('SELECT payload FROM outbox WHERE record_uuid = ? ORDER BY id DESC LIMIT 1')
        .pluck()
        .get(made.uuid) as string,
    ) as { deleted_at: string | null; version: number };
    expect(last.deleted_at).not.toBeNull();
    expect(last.version).toBe(2);
  });

  it('links an experiment to the usage in progress, and only an experiment', async () => {
    await as(st, 'alice', '1234');
    const experiment = await entry(st, 'notebook.create', {
      kind: 'experiment',
      title: 'During usage',
      metadata,
    });
    await failure(st.call('notebook.attachUsage', { id: experiment.id }), 'no_active_usage');
    const { usage } = (await st.call('toolControl.enable', {
      tool: 'SEM',
      project: 'Cathodes',
      answers: goodPreAnswers,
    })) as { usage: UsageEventView };
    const linked = await entry(st, 'notebook.attachUsage', { id: experiment.id });
    expect(linked.usage_event).toMatchObject({ uuid: usage.uuid, tool: 'SEM', end: null });
    // A copy describes no usage until it is linked itself.
    expect((await entry(st, 'notebook.duplicate', { id: experiment.id })).usage_event).toBeNull();
    expect(linked.version).toBe(2);
    const item = await entry(st, 'notebook.create', { kind: 'item', title: 'An item' });
    await failure(st.call('notebook.attachUsage', { id: item.id }), 'bad_request');
    await failure(
      st.call('notebook.attachUsage', { id: experiment.id, usage: 99999 }),
      'not_found',
    );

    // The usage_context hook lists the attached experiments with their metadata.
    const output = await runPostTransferHooks(
      [
        {
          id: 1,
          name: 'ctx',
          trigger: 'post_transfer',
          kind: 'usage_context',
          config: {},
          priority: 1,
          instrument_id: null,
          from_server: false,
        },
      ],
      {
        db: st.db,
        file: { usage_event_id: usage.id, metadata_: '{}' } as FileRow,
        sourcePath: '/nowhere',
        destinationPath: '/nowhere',
        instrument: 'camera',
      },
    );
    const context = output.usage_context as { experiments: unknown[] };
    expect(context.experiments).toEqual([
      { uuid: experiment.uuid, title: 'During usage', metadata: linked.metadata },
    ]);
    const unlinked = await entry(st, 'notebook.attachUsage', { id: experiment.id, usage: null });
    expect(unlinked.usage_event).toBeNull();

    // Staff may edit alice's experiment, but not link it to a usage she neither used nor
    // operated: the server, which cannot know who linked it, would refuse the link.
    await st.call('toolControl.disable', { tool: 'SEM', answers: { problem: 'No' } });
    await as(st, 'sam', '9999');
    const { usage: sams } = (await st.call('toolControl.enable', {
      tool: 'SEM',
      project: 'Other',
      answers: goodPreAnswers,
    })) as { usage: UsageEventView };
    const refused = await failure(
      st.call('notebook.attachUsage', { id: experiment.id }),
      'forbidden',
    );
    expect(refused.message).toBe(
      'an experiment can only be linked to a usage its owner used or operated',
    );
    // His own experiment he links to it; and hers to a usage he ran for her.
    const his = await entry(st, 'notebook.create', { kind: 'experiment', title: "Sam's" });
    expect((await entry(st, 'notebook.attachUsage', { id: his.id })).usage_event).toMatchObject({
      uuid: sams.uuid,
    });
    await st.call('toolControl.disable', { tool: 'SEM', answers: { problem: 'No' } });
    const { usage: forHer } = (await st.call('toolControl.enable', {
      tool: 'SEM',
      project: 'Cathodes',
      user: 'alice',
      answers: goodPreAnswers,
    })) as { usage: UsageEventView };
    const hers = await entry(st, 'notebook.attachUsage', { id: experiment.id });
    expect(hers.usage_event).toMatchObject({ uuid: forHer.uuid });
  });
  it('fills in a template field named in another Unicode form, not a look-alike beside it', async () => {
    await as(st, 'alice', '1234');
    // A name written in another Unicode form (e and a combining accent) is the same field.
    const cafe = await entry(st, 'notebook.create', {
      kind: 'experiment',
      title: 'Wednesday',
      template_id: (
        await entry(st, 'notebook.create', {
          kind: 'experiment_template',
          title: 'Café run',
          metadata: { extra_fields: { 'Caf\u00e9': { type: 'text', value: 'a', position: 1 } } },
        })
      ).id,
      metadata: { extra_fields: { 'Cafe\u0301': { value: 'b' } } },
    });
    expect((cafe.metadata as typeof metadata).extra_fields).toEqual({
      'Caf\u00e9': { type: 'text', value: 'b', position: 1 },
    });
  });
});

// ---- search ----

interface Made {
  id: number;
  doc: MetadataDoc;
  kind: string;
  title: string;
  tags: string[];
}

function fieldsFor(i: number): Record<string, unknown> {
  const units = ['kV', 'V', 'mV'];
  const fields: Record<string, unknown> = {
    Status: {
      type: 'select',
      value: ['Planned', 'Running', 'Done'][i % 3],
      options: ['Planned', 'Running', 'Done'],
    },
    Voltage: {
      type: 'number',
      value: i % 7 === 0 ? '' : (i * 1.5) % 20,
      units,
      unit: units[i % 3],
    },
    Polished: { type: 'checkbox', value: i % 2 === 0 },
    Prepared: { type: 'date', value: `2026-11-${String(1 + (i % 28)).padStart(2, '0')}` },
    Started: {
      type: 'datetime-local',
      value: `2026-11-${10 + (i % 3)}T${String(i % 24).padStart(2, '0')}:${String((i * 7) % 60).padStart(2, '0')}`,
    },
    Note: { value: i % 5 === 0 ? '100% Done_ok\\' : `Sample ${i} GÜNTHER` },
  };
  if (i % 4 === 0) {
    fields.Elements = {
      type: 'select',
      allow_multi_values: true,
      value: i % 8 === 0 ? ['Fe', 'Ni'] : [],
      options: ['Fe', 'Ni', 'Co'],
    };
  }
  return { extra_fields: fields };
}

const QUERIES: MetadataQuery[] = [
  { kind: 'equals', field: 'Status', value: 'running' },
  { kind: 'equals', field: 'Status', value: '  Running\t' },
  { kind: 'equals', field: 'Elements', value: 'ni' },
  { kind: 'equals', field: 'Polished', value: 'on' },
  { kind: 'contains', field: 'Note', text: 'günther' },
  { kind: 'contains', field: 'Note', text: '0% d' },
  { kind: 'contains', field: 'Note', text: '_' },
  { kind: 'contains', field: 'Note', text: 'done_ok\\' },
  { kind: 'numberBetween', field: 'Voltage', min: 3, max: 12 },
  { kind: 'numberBetween', field: 'Voltage', min: 3, max: 12, unit: 'kV' },
  { kind: 'numberBetween', field: 'Voltage', max: 4.5, unit: 'V' },
  // A blank unit is none given (any unit), as the search panel leaves it out; it found nothing.
  { kind: 'numberBetween', field: 'Voltage', min: 3, max: 12, unit: '' },
  { kind: 'numberBetween', field: 'Voltage', min: 3, max: 12, unit: ' \t' },
  { kind: 'dateBetween', field: 'Prepared', from: '2026-11-05', to: '2026-11-09' },
  { kind: 'dateBetween', field: 'Started', from: '2026-11-10T05:30', to: '2026-11-10T12:00' },
  { kind: 'dateBetween', field: 'Started', to: '2026-11-10' },
  // An upper bound to the second, equal to a value (Run 12 started at 2026-11-10T12:24).
  { kind: 'dateBetween', field: 'Started', from: '2026-11-10T00:00', to: '2026-11-10T12:24:00' },
  { kind: 'dateBetween', field: 'Prepared', from: '2026-11-20T00:00' },
  { kind: 'checkbox', field: 'Polished', checked: true },
  { kind: 'checkbox', field: 'Polished', checked: false },
  { kind: 'anyFieldContains', text: 'Running' },
  { kind: 'anyFieldContains', text: '100%' },
  { kind: 'anyFieldContains', text: 'Fe' },
  { kind: 'anyFieldContains', text: 'le 1' },
  { kind: 'anyFieldContains', text: 'GÜNTHER' },
  { kind: 'anyFieldContains', text: 'done_ok\\' },
  { kind: 'anyFieldContains', text: '\\' },
];

describe('notebook search', () => {
  let st: Station;
  const made: Made[] = [];

  beforeAll(async () => {
    st = await station();
    await as(st, 'bob', '2345');
    // Someone else's experiment: never in alice's results.
    await entry(st, 'notebook.create', {
      kind: 'experiment',
      title: 'Bob 0',
      metadata: fieldsFor(0),
    });
    await as(st, 'alice', '1234');
    for (let i = 0; i < 60; i++) {
      const kind = i % 10 === 9 ? 'experiment_template' : i % 3 === 2 ? 'item' : 'experiment';
      const tags = [i % 2 ? 'odd' : 'even', ...(i % 3 === 0 ? ['Third'] : [])];
      const title = `Run ${i}${i % 6 === 0 ? ' – Cathode' : ''}`;
      const view = await entry(st, 'notebook.create', {
        kind,
        title,
        tags,
        metadata: fieldsFor(i),
      });
      const parsed = parseMetadata(fieldsFor(i));
      if (!parsed.ok) throw new Error('fixture metadata does not parse');
      made.push({ id: view.id, doc: parsed.doc, kind, title, tags });
    }
  });
  afterAll(() => st.close());

  const search = async (args: object): Promise<number[]> => {
    const result = (await st.call('notebook.search', { limit: 500, ...args })) as {
      entries: { id: number }[];
      total: number;
    };
    expect(result.total).toBe(result.entries.length);
    return result.entries.map((e) => e.id).sort((a, b) => a - b);
  };

  it.each(QUERIES.map((q) => [JSON.stringify(q), q] as const))(
    'finds exactly what matchesQuery finds: %s',
    async (_name, query) => {
      const expected = made.filter((m) => matchesQuery(m.doc, query)).map((m) => m.id);
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.length).toBeLessThan(made.length);
      expect(await search({ metadata: [query] })).toEqual(expected);
    },
  );

  it('never matches across two values of an entry (the text index holds one per line)', async () => {
    const spanning = { kind: 'anyFieldContains', text: 'running\n2026-11-' } as const;
    expect(made.filter((m) => matchesQuery(m.doc, spanning))).toEqual([]);
    // ...while the joined text of some entries does hold it.
    const joined = st.db
      .prepare('SELECT count(*) FROM notebook_metadata_text WHERE instr(text, ?) > 0')
      .pluck()
      .get(spanning.text) as number;
    expect(joined).toBeGreaterThan(0);
    expect(await search({ metadata: [spanning] })).toEqual([]);
    // The same two values one at a time are found.
    expect(
      (await search({ metadata: [{ kind: 'anyFieldContains', text: 'running' }] })).length,
    ).toBeGreaterThan(0);
  });

  it('respects the unit of a number range', async () => {
    const inKv = await search({
      metadata: [{ kind: 'numberBetween', field: 'Voltage', min: 0, max: 100, unit: 'kV' }],
    });
    const units = made.filter((m) => inKv.includes(m.id)).map((m) => m.doc.fields[1]?.unit);
    expect(new Set(units)).toEqual(new Set(['kV']));
  });

  it('finds a tag in any letter case, beyond ASCII too', async () => {
    const tagged = await entry(st, 'notebook.create', {
      kind: 'item',
      title: 'Umlaut tag',
      tags: ['Überprobe'],
    });
    for (const tag of ['überprobe', 'ÜBERPROBE', 'Überprobe']) {
      expect(await search({ tags: [tag] })).toEqual([tagged.id]);
    }
    const tags = (await st.call('notebook.tags', {})) as { tags: { tag: string; count: number }[] };
    expect(tags.tags.filter((t) => t.tag.toLowerCase() === 'überprobe')).toEqual([
      { tag: 'Überprobe', count: 1 },
    ]);
  });

  it('combines metadata conditions with kind, title and tags (all of them)', async () => {
    const query: MetadataQuery[] = [
      { kind: 'checkbox', field: 'Polished', checked: true },
      { kind: 'numberBetween', field: 'Voltage', min: 1 },
    ];
    const expected = made
      .filter(
        (m) =>
          m.kind === 'experiment' &&
          m.title.toLowerCase().includes('cathode') &&
          m.tags.includes('even') &&
          m.tags.includes('Third') &&
          query.every((q) => matchesQuery(m.doc, q)),
      )
      .map((m) => m.id);
    expect(expected.length).toBeGreaterThan(0);
    expect(
      await search({
        kind: 'experiment',
        title: 'CATHODE',
        tags: ['even', 'third'],
        metadata: query,
      }),
    ).toEqual(expected);
    expect(await search({ kind: 'experiment_template' })).toEqual(
      made.filter((m) => m.kind === 'experiment_template').map((m) => m.id),
    );
    expect(await search({ title: '%' })).toEqual([]);
    // SQLite's LIKE would stop at a NUL and match every title: refused by name.
    for (const title of ['\0zzzz', 'T\0nothing-like-this']) {
      const refused = await failure(st.call('notebook.search', { title }), 'bad_request');
      expect(refused.message).toContain('title: must not hold a NUL character');
    }
  });

  it('refuses a range naming each bound that is not one once, its order only between two', async () => {
    const problems = async (query: object): Promise<unknown> =>
      (await failure(st.call('notebook.search', { metadata: [query] }), 'bad_request')).details;
    const dates = { kind: 'dateBetween', field: 'Prepared' };
    expect(await problems({ ...dates, from: '2026-02-30', to: '2026-01-01' })).toEqual({
      problems: ['metadata[0].from: is not a real date'],
    });
    expect(await problems({ ...dates, from: '30/01/2026', to: '2026-02-31' })).toEqual({
      problems: [
        'metadata[0].from: must be YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]',
        'metadata[0].to: is not a real date',
      ],
    });
    expect(await problems({ ...dates, from: '2026-02-02', to: '2026-02-01' })).toEqual({
      problems: ['metadata[0]: from must not be after to'],
    });
    expect(
      await problems({ kind: 'numberBetween', field: 'Voltage', min: 'high', max: 1 }),
    ).toEqual({ problems: ['metadata[0].min: Invalid input: expected number, received string'] });
  });

  it('pages through the matches: offset, newest change first, each once', async () => {
    const all = (await st.call('notebook.search', { limit: 500 })) as {
      entries: { id: number }[];
      total: number;
    };
    expect(all.total).toBeGreaterThan(25);
    const paged: number[] = [];
    for (let offset = 0; offset < all.total; offset += 10) {
      const page = (await st.call('notebook.search', { limit: 10, offset })) as {
        entries: { id: number }[];
        total: number;
      };
      expect(page.total).toBe(all.total);
      paged.push(...page.entries.map((e) => e.id));
    }
    expect(paged).toEqual(all.entries.map((e) => e.id));
    // Past the last page: nothing, with the count still right.
    expect(await st.call('notebook.search', { limit: 10, offset: all.total })).toMatchObject({
      entries: [],
      total: all.total,
    });
  });

  it('answers every query kind from an index (EXPLAIN QUERY PLAN)', () => {
    const expectIndex: Record<MetadataQuery['kind'], RegExp> = {
      equals: /notebook_metadata_index USING (COVERING )?INDEX notebook_metadata_index_text/,
      contains: /notebook_metadata_index USING (COVERING )?INDEX notebook_metadata_index_text/,
      numberBetween: /USING (COVERING )?INDEX notebook_metadata_index_num/,
      dateBetween: /USING (COVERING )?INDEX notebook_metadata_index_date/,
      checkbox: /USING (COVERING )?INDEX notebook_metadata_index_bool/,
      anyFieldContains: /notebook_metadata_text VIRTUAL TABLE INDEX/,
    };
    for (const query of QUERIES) {
      if (query.kind === 'anyFieldContains' && [...query.text].length < 3) continue;
      const where = searchWhere({ id: 1 }, { metadata: [query] });
      const plan = (
        st.db
          .prepare(
            `EXPLAIN QUERY PLAN SELECT k.entry_id FROM notebook_search_keys k WHERE ${where.sql}`,
          )
          .all(...where.params) as { detail: string }[]
      )
        .map((row) => row.detail)
        .join('\n');
      expect(plan, JSON.stringify(query)).toMatch(expectIndex[query.kind]);
      expect(plan, JSON.stringify(query)).not.toMatch(/SCAN notebook_metadata_index\b(?! USING)/);
    }
    const tagged = searchWhere({ id: 1 }, { tags: ['odd'] });
    const tagPlan = (
      st.db
        .prepare(
          `EXPLAIN QUERY PLAN SELECT k.entry_id FROM notebook_search_keys k WHERE ${tagged.sql}`,
        )
        .all(...tagged.params) as { detail: string }[]
    )
      .map((row) => row.detail)
      .join('\n');
    expect(tagPlan).toMatch(/notebook_tags USING (COVERING )?INDEX notebook_tags_tag/);
  });
});

describe('checkboxes the notebook service unticked', () => {
  let st: Station;
  beforeAll(async () => {
    st = await station();
    await as(st, 'alice', '1234');
  });
  afterAll(() => st.close());

  it('reads "off" (what its entry page writes for an unticked box) as unticked', async () => {
    // An entry of the notebook service where someone ticked one box and unticked another.
    const made = await entry(st, 'notebook.create', {
      kind: 'experiment',
      title: 'From eLabFTW',
      metadata: {
        elabftw: { extra_fields_groups: [{ id: 1, name: 'Prep' }] },
        extra_fields: {
          Polished: { type: 'checkbox', value: 'off', group_id: 1 },
          Coated: { type: 'checkbox', value: 'on', group_id: 1 },
        },
      },
    });
    expect(made.problems).toEqual([]);
    const fields = (made.metadata as { extra_fields: Record<string, { value: unknown }> })
      .extra_fields;
    expect(fields['Polished']?.value).toBe(false);
    expect(fields['Coated']?.value).toBe(true);
    const found = (await st.call('notebook.search', {
      metadata: [{ kind: 'checkbox', field: 'Polished', checked: false }],
    })) as { entries: { id: number }[] };
    expect(found.entries.map((e) => e.id)).toEqual([made.id]);
    // Setting the value alone as the service sends it reads the same way.
    const updated = await entry(st, 'notebook.update', {
      id: made.id,
      version: made.version,
      metadata: { extra_fields: { Coated: { type: 'checkbox', value: 'off' } } },
    });
    expect(updated.problems).toEqual([]);
    expect(updated.metadata).toEqual({
      extra_fields: { Coated: { type: 'checkbox', value: false } },
    });
  });
});

// ---- sync ----

describe('notebook sync', () => {
  let st: Station;
  let server: Db;
  let app: FastifyInstance;
  let key: string;

  beforeAll(async () => {
    st = await station();
    server = openDatabase(join(tempDir(), 'server.db'));
    server.prepare("INSERT INTO settings (key, value) VALUES ('mode', '\"server\"')").run();
    // The facility as the server has it: the same records under the same uuids.
    for (const table of ['users', 'projects', 'tools']) {
      const rows = st.db.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[];
      for (const row of rows) {
        const cols = Object.keys(row);
        server
          .prepare(
            `INSERT INTO ${table} (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
          )
          .run(...cols.map((c) => row[c]));
      }
    }
    key = createStationAccount(server, { name: 'sem-pc', tool: 'SEM' }).key;
    app = await createServerApp({
      db: server,
      log: createLogger('silent'),
      jwtSecret: 'notebook-test-secret-0123456789abcdef',
      timeZone: () => 'UTC',
    });
    await app.ready();
  });

  afterAll(async () => {
    await app.close();
    server.close();
    st.close();
  });

  const outbox = (): {
    id: number;
    kind: string;
    uuid: string;
    payload: Record<string, unknown>;
  }[] =>
    (
      st.db.prepare('SELECT id, kind, record_uuid, payload FROM outbox ORDER BY id').all() as {
        id: number;
        kind: string;
        record_uuid: string;
        payload: string;
      }[]
    ).map((r) => ({
      id: r.id,
      kind: r.kind,
      uuid: r.record_uuid,
      payload: JSON.parse(r.payload) as Record<string, unknown>,
    }));

  const push = async (records: ReturnType<typeof outbox>): Promise<PushResult> => {
    const res = await app.inject({
      method: 'POST',
      url: '/sync/push',
      headers: { authorization: `Station ${key}` },
      payload: { records },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  it('pushes entries, keeps the highest version, and keeps the search rows on the server', async () => {
    await as(st, 'alice', '1234');
    await st.call('toolControl.enable', {
      tool: 'SEM',
      project: 'Cathodes',
      answers: goodPreAnswers,
    });
    const template = await entry(st, 'notebook.create', {
      kind: 'experiment_template',
      title: 'Template',
      metadata,
    });
    const experiment = await entry(st, 'notebook.create', {
      kind: 'experiment',
      title: 'Pushed',
      tags: ['sync'],
      template_id: template.id,
    });
    await entry(st, 'notebook.attachUsage', { id: experiment.id });
    const rows = outbox();
    const result = await push(rows);
    expect(result.error).toBeNull();
    expect(result.acked).toEqual(rows.map((r) => r.id));
    const stored = server
      .prepare(
        `SELECT e.version, e.usage_event_id IS NOT NULL AS linked, t.uuid AS template, e.station_id
         FROM notebook_entries e LEFT JOIN notebook_entries t ON t.id = e.template_id
         WHERE e.uuid = ?`,
      )
      .get(experiment.uuid);
    expect(stored).toMatchObject({ version: 2, linked: 1, template: template.uuid });
    expect(
      server
        .prepare(
          `SELECT count(*) FROM notebook_metadata_index r JOIN notebook_entries e
           ON e.id = r.entry_id WHERE e.uuid = ? AND r.name = 'Beam energy' AND r.num = 5`,
        )
        .pluck()
        .get(experiment.uuid),
    ).toBe(1);
    // A resend changes nothing: the version the server holds is acknowledged again, the
    // older one is stale (acknowledged, kept out).
    const [older, newer] = rows.filter((r) => r.uuid === experiment.uuid);
    const again = await push(rows);
    expect(again).toMatchObject({ error: null, stale: [older.id] });
    expect(await push([{ ...newer, id: 900 }])).toMatchObject({ acked: [900], stale: [] });
    expect(
      server
        .prepare('SELECT version FROM notebook_entries WHERE uuid = ?')
        .pluck()
        .get(experiment.uuid),
    ).toBe(2);
  });

  it('refuses a version it holds sent again with other content (a data dir restored from a backup)', async () => {
    const made = await entry(st, 'notebook.create', {
      kind: 'item',
      title: 'Held',
      body: 'as first written',
    });
    const sent = outbox().filter((r) => r.uuid === made.uuid);
    expect((await push(sent)).error).toBeNull();
    const held = (): unknown =>
      server
        .prepare('SELECT title, body, version FROM notebook_entries WHERE uuid = ?')
        .get(made.uuid);
    const before = held();
    const last = sent[sent.length - 1];
    const other = {
      ...last,
      id: 901,
      payload: {
        ...last.payload,
        body: 'written again after a restore',
        updated_at: '2030-01-01T00:00:00.000Z',
      },
    };
    const res = await push([other]);
    expect(res.acked).toEqual([]);
    expect(res.error).toMatchObject({ code: 'conflict', kind: 'notebook_entry', uuid: made.uuid });
    expect(res.error?.detail).toMatch(
      /version 1 of it with other body, updated_at; was this station restored from a backup\?/,
    );
    expect(held()).toEqual(before);
  });

  // Mutation: upsertNotebookEntry without its check of previous_updated_at: version 5 below
  // replaced the server's version 4, whose body was lost.
  it('refuses a later version made from another line of versions (a restored data dir changed since)', async () => {
    await as(st, 'alice', '1234');
    const made = await entry(st, 'notebook.create', { kind: 'item', title: 'Lines' });
    for (let v = 1; v <= 3; v++) {
      await entry(st, 'notebook.update', { id: made.id, version: v, body: `kept ${v + 1}` });
    }
    const sent = outbox().filter((r) => r.uuid === made.uuid);
    expect(sent.map((r) => r.payload.previous_updated_at)).toEqual([
      null,
      ...sent.slice(0, 3).map((r) => r.payload.updated_at),
    ]);
    expect((await push(sent)).error).toBeNull();
    const held = (): unknown =>
      server.prepare('SELECT body, version FROM notebook_entries WHERE uuid = ?').get(made.uuid);
    expect(held()).toEqual({ body: 'kept 4', version: 4 });
    // The data dir restored at version 1 and changed four times: its version 5 follows its own
    // version 4, not the server's.
    const [first] = sent;
    const line = (version: number, previous: string) => ({
      ...first,
      id: 950 + version,
      payload: {
        ...first.payload,
        body: '',
        title: `restored edit ${version}`,
        version,
        updated_at: `2030-01-0${version}T00:00:00.000Z`,
        previous_updated_at: previous,
      },
    });
    for (const [version, previous] of [
      [5, '2030-01-04T00:00:00.000Z'],
      [6, '2030-01-05T00:00:00.000Z'],
    ] as const) {
      const res = await push([line(version, previous)]);
      expect(res.acked, `version ${version}`).toEqual([]);
      expect(res.error).toMatchObject({ code: 'conflict', uuid: made.uuid });
      expect(res.error?.detail).toMatch(
        new RegExp(
          `holds version 4 of it .*, and this version ${version} was made from one changed`,
        ),
      );
    }
    expect(held()).toEqual({ body: 'kept 4', version: 4 });
    // The next version of the server's own: taken, as any station's change.
    await entry(st, 'notebook.update', { id: made.id, version: 4, body: 'kept 5' });
    const next = outbox().filter((r) => r.uuid === made.uuid && r.payload.version === 5);
    expect(await push(next)).toMatchObject({ error: null });
    expect(held()).toEqual({ body: 'kept 5', version: 5 });
  });

  // Mutation: the same-version check comparing the stored tags as they are: a resend was
  // refused as "other tags; was this station restored from a backup?".
  it('takes again, as the same version, an entry stored with one tag in two Unicode forms', async () => {
    await as(st, 'alice', '1234');
    const made = await entry(st, 'notebook.create', { kind: 'item', title: 'Two forms' });
    const [sent] = outbox().filter((r) => r.uuid === made.uuid);
    expect((await push([sent])).error).toBeNull();
    // As an older station sent it and an older server stored it.
    const both = ['Caf\u00e9', 'Cafe\u0301'];
    server
      .prepare('UPDATE notebook_entries SET tags = ? WHERE uuid = ?')
      .run(JSON.stringify(both), made.uuid);
    const again = { ...sent, id: 990, payload: { ...sent.payload, tags: both } };
    expect(await push([again])).toMatchObject({ acked: [990], error: null });
  });

  it('refuses an older version changed after the one it holds (a restored data dir), and keeps an older one stale', async () => {
    await as(st, 'alice', '1234');
    const made = await entry(st, 'notebook.create', { kind: 'item', title: 'Forked' });
    await entry(st, 'notebook.update', { id: made.id, version: 1, body: 'second' });
    await entry(st, 'notebook.update', { id: made.id, version: 2, body: 'third' });
    const sent = outbox().filter((r) => r.uuid === made.uuid);
    expect(sent.map((r) => r.payload.version)).toEqual([1, 2, 3]);
    expect((await push(sent)).error).toBeNull();
    // The data dir restored from a backup made at version 1, then changed: its version 2 was
    // changed after the server's version 3 was.
    const second = sent[1];
    const forked = {
      ...second,
      id: 902,
      payload: {
        ...second.payload,
        body: 'after the restore',
        updated_at: '2030-01-01T00:00:00.000Z',
      },
    };
    const res = await push([forked]);
    expect(res.acked).toEqual([]);
    expect(res.error).toMatchObject({ code: 'conflict', uuid: made.uuid });
    expect(res.error?.detail).toMatch(
      /holds version 3 of it, changed before this version 2 was; was this station restored/,
    );
    // Version 2 as it was sent: a resend, stale, acknowledged.
    expect(await push([{ ...second, id: 903 }])).toMatchObject({ acked: [903], stale: [903] });

    // The station's clock set back an hour before the next change: that change is not dated
    // before the one it follows, so version 3 sent again is still a resend, not a fork.
    now -= 3_600_000;
    await entry(st, 'notebook.update', { id: made.id, version: 3, body: 'fourth' });
    const [, , third, fourth] = outbox().filter((r) => r.uuid === made.uuid);
    expect(fourth.payload.version).toBe(4);
    expect(fourth.payload.updated_at).toBe(third.payload.updated_at);
    expect(await push([fourth])).toMatchObject({ acked: [fourth.id], error: null });
    expect(await push([{ ...third, id: 904 }])).toMatchObject({ acked: [904], stale: [904] });
  });

  it("refuses a link to a usage its owner did not make, or to another tool's usage", async () => {
    const linked = outbox().find(
      (r) => r.kind === 'notebook_entry' && typeof r.payload.usage_event_uuid === 'string',
    )!;
    const uuidOf = (username: string): string =>
      server.prepare('SELECT uuid FROM users WHERE username = ?').pluck().get(username) as string;
    // bob neither used nor operated alice's usage, and is not staff.
    const bobs = '01890a5d-ac96-774b-bcce-b302099a8061';
    const notHis = await push([
      {
        ...linked,
        id: 903,
        uuid: bobs,
        payload: { ...linked.payload, uuid: bobs, owner_uuid: uuidOf('bob'), template_uuid: null },
      },
    ]);
    expect(notHis.error).toMatchObject({ code: 'forbidden' });
    expect(notHis.error?.detail).toMatch(/neither used nor operated/);
    // A usage of AFM, a tool this station does not run, made by alice at another station.
    const afm = server.prepare("SELECT id FROM tools WHERE name = 'AFM'").pluck().get() as number;
    const usage = server.prepare('SELECT * FROM usage_events LIMIT 1').get() as Record<
      string,
      unknown
    >;
    const elsewhere = '01890a5d-ac96-774b-bcce-b302099a8062';
    const cols = Object.keys(usage).filter((c) => c !== 'id');
    server
      .prepare(
        `INSERT INTO usage_events (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
      )
      .run(
        ...cols.map((c) =>
          c === 'uuid' ? elsewhere : c === 'tool_id' ? afm : c === 'station_id' ? null : usage[c],
        ),
      );
    const entryUuid = '01890a5d-ac96-774b-bcce-b302099a8063';
    const otherTool = await push([
      {
        ...linked,
        id: 904,
        uuid: entryUuid,
        payload: {
          ...linked.payload,
          uuid: entryUuid,
          usage_event_uuid: elsewhere,
          template_uuid: null,
        },
      },
    ]);
    expect(otherTool.error).toMatchObject({ code: 'forbidden' });
    expect(
      count(
        server,
        `SELECT count(*) FROM notebook_entries WHERE uuid IN ('${bobs}', '${entryUuid}')`,
      ),
    ).toBe(0);
  });

  it('refuses an entry whose owner or usage the server does not hold', async () => {
    const sample = outbox().find((r) => r.kind === 'notebook_entry')!;
    const stranger = '01890a5d-ac96-774b-bcce-b302099a8057';
    const noOwner = await push([
      {
        ...sample,
        id: 901,
        uuid: stranger,
        payload: { ...sample.payload, uuid: stranger, owner_uuid: stranger },
      },
    ]);
    expect(noOwner.error).toMatchObject({ code: 'unknown_reference' });
    expect(noOwner.error?.detail).toMatch(/owner_uuid/);
    const other = '01890a5d-ac96-774b-bcce-b302099a8058';
    const noUsage = await push([
      {
        ...sample,
        id: 902,
        uuid: other,
        payload: {
          ...sample.payload,
          uuid: other,
          kind: 'experiment',
          template_uuid: null,
          usage_event_uuid: stranger,
        },
      },
    ]);
    expect(noUsage.error).toMatchObject({ code: 'unknown_reference' });
    expect(
      count(
        server,
        `SELECT count(*) FROM notebook_entries WHERE uuid IN ('${stranger}', '${other}')`,
      ),
    ).toBe(0);
  });
});
