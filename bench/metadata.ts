/**
 * npm run bench:metadata — notebook search by metadata on a real station data dir holding
 * 100,000 entries (BENCH_ENTRIES) of 10-20 fields each, made through the core's own
 * createEntry (in transactions of 1,000). Each query kind runs through searchEntries (the
 * notebook.search handler: one page of 100 summaries plus the total) BENCH_RUNS times (30);
 * the median and p95 are printed as a markdown table, beside the same condition as a naive
 * scan of the metadata JSON (json_each, count only, BENCH_NAIVE_RUNS times: 5).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ApiParsedArgs } from '../shared/api.js';
import { likeContainsPattern, type MetadataQuery } from '../shared/metadata/index.js';
import type { EntryKind } from '../shared/notebookApi.js';
import { openDatabase } from '../electron/core/db/open.js';
import { createEntry } from '../electron/core/notebook/entries.js';
import { searchEntries } from '../electron/core/notebook/search.js';
import { newUuid } from '../electron/core/util/ids.js';
import { median, positiveInt } from './common.js';

const ENTRIES = positiveInt('BENCH_ENTRIES', 100_000);
const RUNS = positiveInt('BENCH_RUNS', 30);
const NAIVE_RUNS = positiveInt('BENCH_NAIVE_RUNS', 5);

/** A small seeded generator (mulberry32): the same data every run. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(42);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
const int = (lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));
const pad = (n: number): string => String(n).padStart(2, '0');

type FieldMaker = () => Record<string, unknown>;
const WORDS = ['cathode', 'anode', 'film', 'powder', 'wafer', 'grid', 'lamella', 'crystal'];
const ELEMENTS = ['Fe', 'Ni', 'Co', 'Mn', 'Li', 'O', 'C', 'Si'];
const FIELDS: [string, FieldMaker][] = [
  [
    'Status',
    () => ({
      type: 'select',
      value: pick(['Planned', 'Running', 'Done', 'Failed']),
      options: ['Planned', 'Running', 'Done', 'Failed'],
    }),
  ],
  [
    'Beam energy',
    () => ({
      type: 'number',
      value: int(1, 300),
      units: ['kV', 'V'],
      unit: pick(['kV', 'kV', 'V']),
    }),
  ],
  ['Magnification', () => ({ type: 'number', value: int(50, 500_000) })],
  [
    'Temperature',
    () => ({
      type: 'number',
      value: Math.round(random() * 4000) / 10,
      units: ['K', '°C'],
      unit: pick(['K', '°C']),
    }),
  ],
  [
    'Pressure',
    () => ({
      type: 'number',
      value: Math.round(random() * 1e6) / 1e3,
      units: ['Pa', 'mbar'],
      unit: pick(['Pa', 'mbar']),
    }),
  ],
  [
    'Thickness',
    () => ({ type: 'number', value: int(1, 2000), units: ['nm', 'µm'], unit: pick(['nm', 'µm']) }),
  ],
  [
    'Sample date',
    () => ({ type: 'date', value: `202${int(2, 6)}-${pad(int(1, 12))}-${pad(int(1, 28))}` }),
  ],
  [
    'Acquired at',
    () => ({
      type: 'datetime-local',
      value: `2025-${pad(int(1, 12))}-${pad(int(1, 28))}T${pad(int(0, 23))}:${pad(int(0, 59))}`,
    }),
  ],
  ['Start time', () => ({ type: 'time', value: `${pad(int(0, 23))}:${pad(int(0, 59))}` })],
  ['Polished', () => ({ type: 'checkbox', value: random() < 0.4 })],
  ['Coated', () => ({ type: 'checkbox', value: random() < 0.2 })],
  [
    'Operator email',
    () => ({ type: 'email', value: `${pick(['alice', 'bob', 'carol', 'dan'])}@lab.example.org` }),
  ],
  ['Sample ID', () => ({ value: `S-${int(1, 99_999)}`, blank_value_on_duplicate: true })],
  [
    'Notes',
    () => ({
      value: `${pick(WORDS)} ${pick(WORDS)} batch ${int(1, 500)} looked ${pick(['fine', 'cracked', 'clean', 'charged'])}`,
    }),
  ],
  [
    'Detector',
    () => ({
      type: 'select',
      value: pick(['SE', 'BSE', 'EDS', 'EBSD']),
      options: ['SE', 'BSE', 'EDS', 'EBSD'],
    }),
  ],
  [
    'Elements',
    () => ({
      type: 'select',
      allow_multi_values: true,
      value: [...new Set([pick(ELEMENTS), pick(ELEMENTS)])],
      options: ELEMENTS,
    }),
  ],
  [
    'Mode',
    () => ({
      type: 'radio',
      value: pick(['Low vacuum', 'High vacuum']),
      options: ['Low vacuum', 'High vacuum'],
    }),
  ],
  ['Protocol', () => ({ type: 'url', value: `https://protocols.example.org/p/${int(1, 300)}` })],
  [
    'Substrate',
    () => ({
      type: 'select',
      value: pick(['Si', 'Glass', 'Cu grid', 'Carbon tape']),
      options: ['Si', 'Glass', 'Cu grid', 'Carbon tape'],
    }),
  ],
  ['Batch', () => ({ value: `B${int(1, 2000)}` })],
  ['Project code', () => ({ value: `PRJ-${int(1, 60)}` })],
  ['Dose', () => ({ type: 'number', value: int(1, 1000), units: ['e/Å²'], unit: 'e/Å²' })],
];
const TAGS = Array.from({ length: 30 }, (_, i) => `tag${i}`);

function metadataOf(): Record<string, unknown> {
  const count = int(10, 20);
  const chosen = [...FIELDS].sort(() => random() - 0.5).slice(0, count);
  // Status, Beam energy, Sample date, Acquired at and Polished are on most entries.
  for (const name of ['Status', 'Beam energy', 'Sample date', 'Acquired at', 'Polished']) {
    if (!chosen.some(([n]) => n === name) && random() < 0.8) {
      chosen.push(FIELDS.find(([n]) => n === name)!);
    }
  }
  return {
    extra_fields: Object.fromEntries(
      chosen.map(([name, make], position) => [name, { ...make(), position }]),
    ),
  };
}

function kindOf(i: number): EntryKind {
  if (i % 20 === 0) return i % 40 === 0 ? 'experiment_template' : 'item_template';
  return i % 3 === 0 ? 'item' : 'experiment';
}

interface Case {
  name: string;
  args: ApiParsedArgs<'notebook.search'>;
}

const q = (query: MetadataQuery): ApiParsedArgs<'notebook.search'> => ({ metadata: [query] });
const CASES: Case[] = [
  { name: 'equals (Status = done)', args: q({ kind: 'equals', field: 'Status', value: 'done' }) },
  {
    name: 'equals, multi-value (Elements = Co)',
    args: q({ kind: 'equals', field: 'Elements', value: 'Co' }),
  },
  {
    name: 'contains (Notes ~ "cracked")',
    args: q({ kind: 'contains', field: 'Notes', text: 'cracked' }),
  },
  {
    name: 'numberBetween (Beam energy 10–20)',
    args: q({ kind: 'numberBetween', field: 'Beam energy', min: 10, max: 20 }),
  },
  {
    name: 'numberBetween with unit (10–20 kV)',
    args: q({ kind: 'numberBetween', field: 'Beam energy', min: 10, max: 20, unit: 'kV' }),
  },
  {
    name: 'dateBetween, date (one month)',
    args: q({ kind: 'dateBetween', field: 'Sample date', from: '2024-03-01', to: '2024-03-31' }),
  },
  {
    name: 'dateBetween, datetime-local (one day)',
    args: q({
      kind: 'dateBetween',
      field: 'Acquired at',
      from: '2025-06-10T00:00',
      to: '2025-06-10T23:59',
    }),
  },
  {
    name: 'checkbox (Coated = checked)',
    args: q({ kind: 'checkbox', field: 'Coated', checked: true }),
  },
  { name: 'anyFieldContains ("charged")', args: q({ kind: 'anyFieldContains', text: 'charged' }) },
  { name: 'anyFieldContains ("S-4242")', args: q({ kind: 'anyFieldContains', text: 'S-4242' }) },
  { name: 'anyFieldContains, 2 chars ("Mn")', args: q({ kind: 'anyFieldContains', text: 'Mn' }) },
  {
    name: 'combined: experiment, title, tag, kV range, checkbox',
    args: {
      kind: 'experiment',
      title: 'cathode',
      tags: ['tag3'],
      metadata: [
        { kind: 'numberBetween', field: 'Beam energy', min: 5, max: 200, unit: 'kV' },
        { kind: 'checkbox', field: 'Polished', checked: true },
      ],
    },
  },
  {
    name: 'combined: kind + date range + contains',
    args: {
      kind: 'item',
      metadata: [
        { kind: 'dateBetween', field: 'Sample date', from: '2023-01-01', to: '2023-12-31' },
        { kind: 'contains', field: 'Notes', text: 'film' },
      ],
    },
  },
];

/** The same condition as a scan of the JSON column (values read per row with json_each). */
function naiveCondition(query: MetadataQuery): { sql: string; params: unknown[] } {
  const each = `EXISTS (SELECT 1 FROM json_each(e.metadata, '$.extra_fields') f WHERE`;
  const value = `f.value ->> '$.value'`;
  const anyValue = `(CASE WHEN json_type(f.value, '$.value') = 'array'
      THEN EXISTS (SELECT 1 FROM json_each(f.value, '$.value') v WHERE lower(v.value) %OP%)
      ELSE lower(${value}) %OP% END)`;
  switch (query.kind) {
    case 'equals':
      return {
        sql: `${each} f.key = ? AND ${anyValue.replaceAll('%OP%', '= ?')})`,
        params: [query.field, query.value.toLowerCase(), query.value.toLowerCase()],
      };
    case 'contains':
      return {
        sql: `${each} f.key = ? AND lower(${value}) LIKE ? ESCAPE '\\')`,
        params: [query.field, likeContainsPattern(query.text)],
      };
    case 'numberBetween':
      return {
        sql: `${each} f.key = ? AND ${value} BETWEEN ? AND ?${query.unit === undefined ? '' : ` AND f.value ->> '$.unit' = ?`})`,
        params: [
          query.field,
          query.min ?? -1e308,
          query.max ?? 1e308,
          ...(query.unit === undefined ? [] : [query.unit]),
        ],
      };
    case 'dateBetween':
      return {
        sql: `${each} f.key = ? AND ${value} >= ? AND ${value} <= ?)`,
        params: [
          query.field,
          query.from ?? '',
          query.to === undefined ? '9999' : `${query.to.slice(0, 10)}T23:59:59`,
        ],
      };
    case 'checkbox':
      return {
        sql: `${each} f.key = ? AND ${value} = ?)`,
        params: [query.field, query.checked ? 1 : 0],
      };
    case 'anyFieldContains':
      return {
        sql: `${each} lower(${value}) LIKE ? ESCAPE '\\')`,
        params: [likeContainsPattern(query.text)],
      };
  }
}

function naiveSql(
  args: ApiParsedArgs<'notebook.search'>,
  owner: number,
): { sql: string; params: unknown[] } {
  const terms = [
    `e.deleted_at IS NULL AND (e.owner_id = ? OR e.kind IN ('experiment_template', 'item_template'))`,
  ];
  const params: unknown[] = [owner];
  if (args.kind) {
    terms.push('e.kind = ?');
    params.push(args.kind);
  }
  if (args.title) {
    terms.push(`lower(e.title) LIKE ? ESCAPE '\\'`);
    params.push(likeContainsPattern(args.title));
  }
  for (const tag of args.tags ?? []) {
    terms.push('EXISTS (SELECT 1 FROM json_each(e.tags) t WHERE t.value = ?)');
    params.push(tag);
  }
  for (const query of args.metadata ?? []) {
    const c = naiveCondition(query);
    terms.push(c.sql);
    params.push(...c.params);
  }
  return { sql: `SELECT count(*) FROM notebook_entries e WHERE ${terms.join(' AND ')}`, params };
}

function p95(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)] ?? NaN;
}
const ms = (v: number): string => (v < 10 ? v.toFixed(2) : v.toFixed(1));

/**
 * BENCH_METADATA_DB=FILE keeps the generated database in FILE, and a later run with the same
 * FILE reuses it instead of generating it again (about two minutes here).
 */
const KEEP = process.env.BENCH_METADATA_DB;

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'labstation-bench-metadata-'));
  try {
    const reuse = KEEP !== undefined && existsSync(KEEP);
    const db = openDatabase(KEEP ?? join(dir, 'labstation.db'));
    const now = new Date().toISOString();
    const user = db.prepare(
      'INSERT INTO users (uuid, username, is_staff, created_at, updated_at) VALUES (?, ?, 0, ?, ?)',
    );
    const userId = db.prepare('SELECT id FROM users WHERE username = ?').pluck();
    const me = {
      id: reuse
        ? (userId.get('bench') as number)
        : Number(user.run(newUuid(), 'bench', now, now).lastInsertRowid),
      is_staff: 0,
    };
    const other = {
      id: reuse
        ? (userId.get('other') as number)
        : Number(user.run(newUuid(), 'other', now, now).lastInsertRowid),
      is_staff: 0,
    };

    const started = performance.now();
    const BATCH = 1000;
    for (let from = 0; !reuse && from < ENTRIES; from += BATCH) {
      db.transaction(() => {
        for (let i = from; i < Math.min(ENTRIES, from + BATCH); i++) {
          const owner = i % 10 === 7 ? other : me;
          createEntry(
            db,
            owner,
            {
              kind: kindOf(i),
              title: `${pick(WORDS)} ${pick(['series', 'check', 'run', 'survey'])} ${i}`,
              body: 'Notes of the session.',
              tags: [...new Set([pick(TAGS), pick(TAGS), pick(TAGS)].slice(0, int(1, 3)))],
              metadata: metadataOf(),
            },
            new Date(Date.parse('2025-01-01T00:00:00Z') + i * 60_000).toISOString(),
          );
        }
      })();
    }
    const loadS = (performance.now() - started) / 1000;
    db.pragma('optimize');
    const rows = db.prepare('SELECT count(*) FROM notebook_metadata_index').pluck().get() as number;

    const lines: string[] = [];
    lines.push(
      `${ENTRIES.toLocaleString('en-US')} entries, ${rows.toLocaleString('en-US')} field-value rows; ` +
        `${reuse ? `reused from ${KEEP}` : `made with createEntry in ${loadS.toFixed(1)} s`}; ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), Node ${process.version}.`,
      `Indexed: notebook.search (searchEntries: page of 100 + total), ${RUNS} runs; naive: count(*) with json_each over the metadata column, ${NAIVE_RUNS} runs.`,
      '',
      '| query | matches | indexed median ms | indexed p95 ms | naive JSON scan median ms | naive p95 ms |',
      '|---|---:|---:|---:|---:|---:|',
    );
    for (const c of CASES) {
      searchEntries(db, me, c.args); // warm
      const times: number[] = [];
      let total = 0;
      for (let r = 0; r < RUNS; r++) {
        const t0 = performance.now();
        total = searchEntries(db, me, c.args).total;
        times.push(performance.now() - t0);
      }
      const naive = naiveSql(c.args, me.id);
      const statement = db.prepare(naive.sql).pluck();
      const naiveTimes: number[] = [];
      let naiveTotal = 0;
      for (let r = 0; r < NAIVE_RUNS; r++) {
        const t0 = performance.now();
        naiveTotal = statement.get(...naive.params) as number;
        naiveTimes.push(performance.now() - t0);
      }
      const note = naiveTotal === total ? '' : ` (naive found ${naiveTotal})`;
      lines.push(
        `| ${c.name} | ${total.toLocaleString('en-US')}${note} | ${ms(median(times))} | ${ms(p95(times))} | ${ms(median(naiveTimes))} | ${ms(p95(naiveTimes))} |`,
      );
    }
    db.close();
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
