import { describe, expect, it } from 'vitest';
import {
  dateQueryBounds,
  likeContainsPattern,
  matchesQuery,
  metadataIndexRows,
  metadataQuerySchema,
  parseMetadata,
  unitKey,
} from '../../../shared/metadata/index.js';
import type { MetadataDoc, MetadataQuery } from '../../../shared/metadata/index.js';
import { formatIssues } from '../../../electron/core/util/issues.js';

function docOf(input: unknown): MetadataDoc {
  const result = parseMetadata(input);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.doc;
}

const DOC = docOf({
  extra_fields: {
    Status: { type: 'select', options: ['Planned', 'Done'], value: 'Done' },
    Mass: { type: 'number', value: '12.5', units: ['mg', 'g'], unit: 'mg' },
    Count: { type: 'number', value: 3 },
    Empty: { type: 'number', value: '' },
    Day: { type: 'date', value: '2024-03-15' },
    Start: { type: 'datetime-local', value: '2024-03-15T09:30' },
    Late: { type: 'datetime-local', value: '2024-03-15T23:59:59.500' },
    Broken: { type: 'date', value: '2024-02-30' },
    Degassed: { type: 'checkbox', value: 'on' },
    Filtered: { type: 'checkbox', value: false },
    Solvents: {
      type: 'select',
      options: ['Water', 'DMSO'],
      allow_multi_values: true,
      value: ['Water', 'DMSO'],
    },
    None: { type: 'select', options: ['a'], allow_multi_values: true, value: [] },
    Notes: { value: '  Sample from Lab B  ' },
  },
});

describe('metadataIndexRows', () => {
  it('gives one row per field, one per value of a multi-select', () => {
    const rows = metadataIndexRows(DOC);
    const row = (name: string) => rows.filter((item) => item.name === name);
    expect(row('Status')).toEqual([
      {
        name: 'Status',
        type: 'select',
        text: 'done',
        num: null,
        unit: null,
        date: null,
        bool: null,
      },
    ]);
    expect(row('Mass')).toEqual([
      { name: 'Mass', type: 'number', text: '12.5', num: 12.5, unit: 'mg', date: null, bool: null },
    ]);
    expect(row('Count')[0]).toMatchObject({ text: '3', num: 3, unit: null });
    expect(row('Empty')[0]).toMatchObject({ text: '', num: null });
    expect(row('Day')[0]).toMatchObject({ date: '2024-03-15' });
    expect(row('Start')[0]).toMatchObject({
      date: '2024-03-15T09:30:00',
      text: '2024-03-15t09:30',
    });
    expect(row('Broken')[0]).toMatchObject({ date: null, text: '2024-02-30' });
    expect(row('Degassed')[0]).toMatchObject({ bool: true, text: 'on' });
    expect(row('Filtered')[0]).toMatchObject({ bool: false, text: '' });
    expect(row('Solvents').map((item) => item.text)).toEqual(['water', 'dmso']);
    expect(row('None')).toEqual([expect.objectContaining({ text: '' })]);
    expect(row('Notes')[0]?.text).toBe('sample from lab b');
  });
});

describe('queries', () => {
  const cases: [string, MetadataQuery, boolean][] = [
    ['equals, ignoring case', { kind: 'equals', field: 'Status', value: 'DONE' }, true],
    ['equals another value', { kind: 'equals', field: 'Status', value: 'Planned' }, false],
    ['equals on another field', { kind: 'equals', field: 'Notes', value: 'done' }, false],
    [
      'equals one value of a multi-select',
      { kind: 'equals', field: 'Solvents', value: 'dmso' },
      true,
    ],
    ['contains', { kind: 'contains', field: 'Notes', text: 'LAB b' }, true],
    ['contains nothing there', { kind: 'contains', field: 'Notes', text: 'lab c' }, false],
    ['number between', { kind: 'numberBetween', field: 'Mass', min: 10, max: 20 }, true],
    ['number between, outside', { kind: 'numberBetween', field: 'Mass', min: 13 }, false],
    [
      'number between, bounds included',
      { kind: 'numberBetween', field: 'Mass', min: 12.5, max: 12.5 },
      true,
    ],
    [
      'number between in the stored unit',
      { kind: 'numberBetween', field: 'Mass', max: 20, unit: 'mg' },
      true,
    ],
    [
      'number between in another unit',
      { kind: 'numberBetween', field: 'Mass', max: 20, unit: 'g' },
      false,
    ],
    [
      'number between, a number written as a number',
      { kind: 'numberBetween', field: 'Count', min: 3, max: 3 },
      true,
    ],
    [
      'number between, no unit stored',
      { kind: 'numberBetween', field: 'Count', min: 0, unit: 'g' },
      false,
    ],
    ['number between, empty value', { kind: 'numberBetween', field: 'Empty', min: -1e9 }, false],
    [
      'date between',
      { kind: 'dateBetween', field: 'Day', from: '2024-03-01', to: '2024-03-31' },
      true,
    ],
    [
      'date between, the day itself',
      { kind: 'dateBetween', field: 'Day', from: '2024-03-15', to: '2024-03-15' },
      true,
    ],
    ['date between, before', { kind: 'dateBetween', field: 'Day', to: '2024-03-14' }, false],
    [
      'date from midnight of its day (a date is the start of its day)',
      { kind: 'dateBetween', field: 'Day', from: '2024-03-15T00:00' },
      true,
    ],
    [
      'date from just after midnight of its day',
      { kind: 'dateBetween', field: 'Day', from: '2024-03-15T00:00:01' },
      false,
    ],
    [
      'datetime between dates covering its day',
      { kind: 'dateBetween', field: 'Start', from: '2024-03-15', to: '2024-03-15' },
      true,
    ],
    [
      'datetime between times',
      { kind: 'dateBetween', field: 'Start', from: '2024-03-15T09:00', to: '2024-03-15T09:30' },
      true,
    ],
    ['datetime after', { kind: 'dateBetween', field: 'Start', from: '2024-03-15T09:31' }, false],
    [
      'a datetime with a fraction of a second, within the day it ends',
      { kind: 'dateBetween', field: 'Late', to: '2024-03-15' },
      true,
    ],
    [
      'a datetime with a fraction of a second, within its second',
      {
        kind: 'dateBetween',
        field: 'Late',
        from: '2024-03-15T23:59:59',
        to: '2024-03-15T23:59:59',
      },
      true,
    ],
    [
      'a datetime with a fraction of a second, after the minute before',
      { kind: 'dateBetween', field: 'Late', to: '2024-03-15T23:58' },
      false,
    ],
    [
      'an invalid date never matches',
      { kind: 'dateBetween', field: 'Broken', from: '2000-01-01' },
      false,
    ],
    ['checkbox true', { kind: 'checkbox', field: 'Degassed', checked: true }, true],
    ['checkbox false', { kind: 'checkbox', field: 'Filtered', checked: false }, true],
    [
      'checkbox false on a checked one',
      { kind: 'checkbox', field: 'Degassed', checked: false },
      false,
    ],
    ['any field containing', { kind: 'anyFieldContains', text: 'DMS' }, true],
    ['any field containing nothing', { kind: 'anyFieldContains', text: 'toluene' }, false],
  ];
  it.each(cases)('%s', (_name, query, expected) => {
    expect(metadataQuerySchema.parse(query)).toEqual(query);
    expect(matchesQuery(DOC, query)).toBe(expected);
  });

  it('the schema refuses malformed queries', () => {
    const bad: unknown[] = [
      { kind: 'numberBetween', field: 'Mass' },
      { kind: 'numberBetween', field: 'Mass', min: 5, max: 1 },
      { kind: 'dateBetween', field: 'Day' },
      { kind: 'dateBetween', field: 'Day', from: '2023-02-29' },
      { kind: 'dateBetween', field: 'Day', from: '15/03/2024' },
      { kind: 'contains', field: 'Notes', text: '' },
      { kind: 'equals', field: 'Status', value: 'x', extra: 1 },
      { kind: 'regex', field: 'Status', value: '.*' },
      { kind: 'dateBetween', field: 'Day', from: '2024-03-02', to: '2024-03-01' },
      { kind: 'dateBetween', field: 'Day', from: '2024-03-01T10:00', to: '2024-03-01T09:59' },
      { kind: 'anyFieldContains', text: 'qqq\0' },
      { kind: 'contains', field: 'Notes', text: '\0zzzz' },
      { kind: 'equals', field: 'Status', value: 'done\0' },
    ];
    for (const query of bad) expect(metadataQuerySchema.safeParse(query).success).toBe(false);
    const messages = (query: unknown): string[] => {
      const parsed = metadataQuerySchema.safeParse(query);
      return parsed.success ? [] : parsed.error.issues.map((issue) => issue.message);
    };
    expect(messages({ kind: 'anyFieldContains', text: 'qqq\0' })).toEqual([
      'must not hold a NUL character',
    ]);
    expect(
      messages({ kind: 'dateBetween', field: 'Day', from: '2024-03-02', to: '2024-03-01' }),
    ).toEqual(['from must not be after to']);
    // The same day from its start to its end is a range.
    expect(
      metadataQuerySchema.safeParse({
        kind: 'dateBetween',
        field: 'Day',
        from: '2024-03-01T10:00',
        to: '2024-03-01',
      }).success,
    ).toBe(true);
  });

  it('a refused range names each bound and its rule once; its order only between two valid bounds', () => {
    // As the station and the server answer them (notebook.search's problems, formatIssues).
    const problems = (query: object): string[] => {
      const parsed = metadataQuerySchema.safeParse(query);
      return parsed.success ? [] : formatIssues(parsed.error.issues, '(query)', query);
    };
    const dates = (from: string, to: string): string[] =>
      problems({ kind: 'dateBetween', field: 'Day', from, to });
    const FORM = 'must be YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]';
    // Not of the form: that, once (not also "not a real date"), and no word on the order.
    expect(dates('01/03/2024', '2024-01-01')).toEqual([`from: ${FORM}`]);
    expect(dates('2024-03-01', '2023')).toEqual([`to: ${FORM}`]);
    // Not a real date or time: that, and no word on the order, though as text it sorts after.
    expect(dates('2024-02-30', '2024-01-01')).toEqual(['from: is not a real date']);
    expect(dates('2024-03-30', '2024-02-31')).toEqual(['to: is not a real date']);
    expect(dates('2024-03-01T25:00', '2024-02-01T10:00')).toEqual([
      'from: is not a real date and time',
    ]);
    // Both bounds: each named once with its own rule.
    expect(dates('2024-02-30', '2024-02-31')).toEqual([
      'from: is not a real date',
      'to: is not a real date',
    ]);
    expect(dates('zz', '2024-02-31')).toEqual([`from: ${FORM}`, 'to: is not a real date']);
    // Two real dates the wrong way round: the order, once.
    expect(dates('2024-03-02', '2024-03-01')).toEqual(['(query): from must not be after to']);

    const numbers = (query: object): string[] =>
      problems({ kind: 'numberBetween', field: 'Mass', ...query });
    const notNumber = (bound: string, given: string): string =>
      `${bound}: Invalid input: expected number, received ${given}`;
    expect(numbers({ min: 'ten', max: 1 })).toEqual([notNumber('min', 'string')]);
    expect(numbers({ min: 5, max: Number.NaN })).toEqual([notNumber('max', 'NaN')]);
    expect(numbers({ min: 'a', max: 'b' })).toEqual([
      notNumber('min', 'string'),
      notNumber('max', 'string'),
    ]);
    expect(numbers({ min: 5, max: 1 })).toEqual(['(query): min must not be above max']);
    // A unit too long beside two numbers the wrong way round: both, each once.
    expect(numbers({ min: 5, max: 1, unit: 'u'.repeat(101) })).toEqual([
      'unit: Too big: expected string to have <=100 characters',
      '(query): min must not be above max',
    ]);
  });

  it('dateQueryBounds widens date-only, minute and second bounds', () => {
    expect(dateQueryBounds({ from: '2024-03-01', to: '2024-03-31' })).toEqual({
      min: '2024-03-01',
      max: '2024-03-31T23:59:59.999',
    });
    expect(dateQueryBounds({ from: '2024-03-01T10:00', to: '2024-03-01T11:00' })).toEqual({
      min: '2024-03-01T10:00:00',
      max: '2024-03-01T11:00:59.999',
    });
    expect(dateQueryBounds({ to: '2024-03-01T11:00:05' })).toEqual({
      min: null,
      max: '2024-03-01T11:00:05.999',
    });
    // A date counts as the start of its day: a from-bound at midnight takes it.
    for (const from of ['2024-03-01T00:00', '2024-03-01T00:00:00']) {
      expect(dateQueryBounds({ from })).toEqual({ min: '2024-03-01', max: null });
    }
    expect(dateQueryBounds({ from: '2024-03-01T00:00:01' }).min).toBe('2024-03-01T00:00:01');
  });

  it('likeContainsPattern escapes LIKE wildcards', () => {
    expect(likeContainsPattern('50%_A\\b')).toBe('%50\\%\\_a\\\\b%');
  });
});

describe('field names in either Unicode form', () => {
  const nfd = (text: string): string => text.normalize('NFD');
  const nfc = (text: string): string => text.normalize('NFC');

  it('are indexed composed and found by a name typed composed or not, their case kept', () => {
    const doc = docOf({
      extra_fields: {
        [nfd('Matériau')]: { value: 'Cu' },
        [nfd('Épaisseur')]: { type: 'number', value: 3, units: ['nm'], unit: 'nm' },
        [nfd('Réalisé le')]: { type: 'date', value: '2024-03-15' },
        [nfd('Validé')]: { type: 'checkbox', value: 'on' },
      },
    });
    expect(metadataIndexRows(doc).map((row) => row.name)).toEqual(
      ['Matériau', 'Épaisseur', 'Réalisé le', 'Validé'].map(nfc),
    );
    for (const form of [nfc, nfd]) {
      const queries: MetadataQuery[] = [
        { kind: 'equals', field: form('Matériau'), value: 'cu' },
        { kind: 'contains', field: form('Matériau'), text: 'C' },
        { kind: 'numberBetween', field: form('Épaisseur'), min: 2, max: 4 },
        { kind: 'dateBetween', field: form('Réalisé le'), from: '2024-03-15' },
        { kind: 'checkbox', field: form('Validé'), checked: true },
      ];
      for (const query of queries) expect(matchesQuery(doc, query), query.kind).toBe(true);
    }
    expect(matchesQuery(doc, { kind: 'equals', field: nfc('matériau'), value: 'cu' })).toBe(false);
  });
});

describe('units in either Unicode form', () => {
  const nfd = (text: string): string => text.normalize('NFD');
  const nfc = (text: string): string => text.normalize('NFC');
  const MICRO = '\u00b5'; // MICRO SIGN, what most keyboards give
  const MU = '\u03bc'; // GREEK SMALL LETTER MU, what a Greek keyboard gives
  const lengthIn = (unit: string): MetadataDoc =>
    docOf({ extra_fields: { Length: { type: 'number', value: 3, units: [unit], unit } } });
  const inUnit = (unit: string): MetadataQuery => ({
    kind: 'numberBetween',
    field: 'Length',
    min: 1,
    unit,
  });

  it('are indexed composed, the micro sign as mu, and found by a unit typed either way', () => {
    expect(nfd('Å')).not.toBe(nfc('Å'));
    expect(metadataIndexRows(lengthIn(nfd('Å')))[0]?.unit).toBe(nfc('Å'));
    expect(metadataIndexRows(lengthIn(`${MICRO}m`))[0]?.unit).toBe(`${MU}m`);
    // The Angstrom sign (U+212B) is "Å" to NFC too.
    for (const stored of [nfc('Å'), nfd('Å'), '\u212b']) {
      for (const typed of [nfc('Å'), nfd('Å'), '\u212b']) {
        expect(matchesQuery(lengthIn(stored), inUnit(typed)), `${stored} by ${typed}`).toBe(true);
      }
    }
    for (const stored of [`${MICRO}m`, `${MU}m`]) {
      for (const typed of [`${MICRO}m`, `${MU}m`]) {
        expect(matchesQuery(lengthIn(stored), inUnit(typed)), `${stored} by ${typed}`).toBe(true);
      }
      expect(matchesQuery(lengthIn(stored), inUnit('m'))).toBe(false);
    }
  });

  it('keep their letter case and what only NFKC would fold', () => {
    expect(matchesQuery(lengthIn('mg'), inUnit('Mg'))).toBe(false);
    expect(unitKey('m\u00b2')).toBe('m\u00b2'); // m², not m2
    expect(matchesQuery(lengthIn('m\u00b2'), inUnit('m2'))).toBe(false);
    expect(unitKey(nfd('°C'))).toBe('°C');
  });

  it('are indexed and looked for without the spaces around them, as the search panel sends them', () => {
    expect(unitKey(' \tmg\u00a0\u3000')).toBe('mg');
    expect(unitKey(` ${MICRO}m\n`)).toBe(`${MU}m`);
    expect(unitKey('m g')).toBe('m g'); // spaces inside are the unit's
    expect(unitKey('\u200bmg')).toBe('\u200bmg'); // a zero width space is not white space
    expect(metadataIndexRows(lengthIn('mg '))[0]?.unit).toBe('mg');
    // A unit of spaces alone is none, as an empty one.
    expect(metadataIndexRows(lengthIn('  '))[0]?.unit).toBeNull();
    expect(metadataIndexRows(lengthIn(''))[0]?.unit).toBeNull();
    for (const [stored, typed] of [
      ['mg ', 'mg'],
      ['mg', ' mg'],
      ['\u00a0mg', 'mg\u3000'],
      [` ${MICRO}m`, `${MU}m `],
    ]) {
      expect(matchesQuery(lengthIn(stored), inUnit(typed)), `${stored} by ${typed}`).toBe(true);
    }
    expect(matchesQuery(lengthIn('mg '), inUnit('m g'))).toBe(false);
    // A blank unit looked for is none given, as the panel leaves it out: any unit will do.
    expect(matchesQuery(lengthIn('  '), inUnit(' '))).toBe(true);
    expect(matchesQuery(lengthIn('mg'), inUnit(' '))).toBe(true);
    const above = { kind: 'numberBetween', field: 'Length', min: 4, unit: '' } as const;
    expect(matchesQuery(lengthIn('mg'), above)).toBe(false);
  });
});
