import { describe, expect, it } from 'vitest';
import {
  displayMainText,
  listedUnit,
  parseMetadata,
  serializeMetadata,
} from '../../../shared/metadata/index.js';
import type {
  MetadataDoc,
  MetadataField,
  MetadataProblem,
  ParseOptions,
} from '../../../shared/metadata/index.js';

type Raw = Record<string, unknown>;

function accepted(
  input: unknown,
  options?: ParseOptions,
): { doc: MetadataDoc; problems: MetadataProblem[] } {
  const result = parseMetadata(input, options);
  if (!result.ok)
    throw new Error(`expected an accepted document: ${JSON.stringify(result.problems)}`);
  return result;
}

function refused(input: unknown, options?: ParseOptions): MetadataProblem[] {
  const result = parseMetadata(input, options);
  if (result.ok) throw new Error('expected a refused document');
  expect(result.problems.some((problem) => problem.blocksSaving)).toBe(true);
  return result.problems;
}

/** The document with one field named "F". */
const one = (field: unknown, rest: Raw = {}): Raw => ({ extra_fields: { F: field }, ...rest });

function fieldOf(input: unknown): MetadataField {
  const field = accepted(input).doc.fields[0];
  if (!field) throw new Error('no field');
  return field;
}

function problemAt(problems: MetadataProblem[], path: (string | number)[]): MetadataProblem {
  const found = problems.find((problem) => JSON.stringify(problem.path) === JSON.stringify(path));
  if (!found) throw new Error(`no problem at ${JSON.stringify(path)}: ${JSON.stringify(problems)}`);
  return found;
}

const groups = { notebook: { extra_fields_groups: [{ id: 1, name: 'Sample' }] } };

describe('parseMetadata: defaults', () => {
  it('a field with only a value is a text field with every default', () => {
    const { doc, problems } = accepted(one({ value: 'x' }));
    expect(problems).toEqual([]);
    expect(doc).toEqual({
      fields: [{ name: 'F', type: 'text', value: 'x', unknown: [] }],
      unknown: [],
    });
    expect(displayMainText(doc)).toBe(true);
  });

  it('an empty object is a document without fields; a missing or null extra_fields too', () => {
    expect(accepted({}).doc).toEqual({ fields: [], unknown: [] });
    expect(accepted({ extra_fields: null }).doc.fields).toEqual([]);
    expect(accepted({ extra_fields: [] }).doc.fields).toEqual([]);
  });

  it('display_main_text defaults to true and false is kept', () => {
    expect(displayMainText(accepted({ notebook: {} }).doc)).toBe(true);
    const { doc } = accepted({ notebook: { display_main_text: false } });
    expect(displayMainText(doc)).toBe(false);
    expect(doc.notebook).toEqual({ display_main_text: false, unknown: [] });
  });
});

describe('parseMetadata: every property is read', () => {
  const cases: [string, Raw, Partial<MetadataField>][] = [
    ['type', { type: 'email', value: 'a@b.org' }, { type: 'email' }],
    ['options', { type: 'select', options: ['a', 'b'], value: 'a' }, { options: ['a', 'b'] }],
    [
      'allow_multi_values',
      { type: 'select', options: ['a', 'b'], allow_multi_values: true, value: ['a', 'b'] },
      { allow_multi_values: true, value: ['a', 'b'] },
    ],
    ['required', { value: 'x', required: true }, { required: true }],
    ['description', { value: 'x', description: 'Helper text' }, { description: 'Helper text' }],
    [
      'units and unit',
      { type: 'number', value: '12', units: ['g', 'kg'], unit: 'kg' },
      { units: ['g', 'kg'], unit: 'kg', value: '12' },
    ],
    ['position', { value: 'x', position: -2.5 }, { position: -2.5 }],
    [
      'blank_value_on_duplicate',
      { value: 'x', blank_value_on_duplicate: true },
      { blank_value_on_duplicate: true },
    ],
    ['group_id', { value: 'x', group_id: 1 }, { group_id: 1 }],
    [
      'open_in_current_tab',
      { type: 'url', value: 'https://example.org', open_in_current_tab: true },
      { open_in_current_tab: true },
    ],
  ];
  it.each(cases)('%s', (_name, field, expected) => {
    const { doc, problems } = accepted({ ...one(field), ...groups });
    expect(problems).toEqual([]);
    expect(doc.fields[0]).toMatchObject(expected);
  });

  it('accepts every field type', () => {
    const values: Record<string, unknown> = {
      checkbox: true,
      date: '2024-02-29',
      'datetime-local': '2024-02-29T13:45',
      email: 'someone@lab.example',
      number: 3.5,
      radio: 'b',
      select: 'a',
      text: 'hello',
      time: '13:45:10',
      url: 'https://example.org/run?id=3',
    };
    const extra_fields = Object.fromEntries(
      Object.entries(values).map(([type, value]) => [
        type,
        { type, value, options: type === 'select' || type === 'radio' ? ['a', 'b'] : undefined },
      ]),
    );
    const { doc, problems } = accepted(JSON.parse(JSON.stringify({ extra_fields })));
    expect(problems).toEqual([]);
    expect(doc.fields.map((field) => [field.name, field.type, field.value])).toEqual(
      Object.entries(values).map(([type, value]) => [type, type, value]),
    );
  });
});

describe('parseMetadata: structure problems refuse the document', () => {
  const cases: [string, unknown, (string | number)[], string][] = [
    ['value missing', { type: 'text' }, ['extra_fields', 'F', 'value'], 'missing_property'],
    ['value an object', { value: { a: 1 } }, ['extra_fields', 'F', 'value'], 'wrong_type'],
    [
      'value a list with true in it',
      { value: ['a', true] },
      ['extra_fields', 'F', 'value', 1],
      'wrong_type',
    ],
    ['type not text', { value: '', type: 3 }, ['extra_fields', 'F', 'type'], 'wrong_type'],
    [
      'type unknown',
      { value: '', type: 'textarea' },
      ['extra_fields', 'F', 'type'],
      'unknown_type',
    ],
    [
      'options missing (select)',
      { type: 'select', value: '' },
      ['extra_fields', 'F', 'options'],
      'missing_options',
    ],
    [
      'options missing (radio)',
      { type: 'radio', value: '' },
      ['extra_fields', 'F', 'options'],
      'missing_options',
    ],
    [
      'options not a list',
      { type: 'select', value: '', options: 'a,b' },
      ['extra_fields', 'F', 'options'],
      'wrong_type',
    ],
    [
      'an option not text',
      { type: 'select', value: '', options: ['a', 1] },
      ['extra_fields', 'F', 'options', 1],
      'wrong_type',
    ],
    [
      'allow_multi_values not boolean',
      { value: '', allow_multi_values: 'yes' },
      ['extra_fields', 'F', 'allow_multi_values'],
      'wrong_type',
    ],
    [
      'required not boolean',
      { value: '', required: 1 },
      ['extra_fields', 'F', 'required'],
      'wrong_type',
    ],
    [
      'description not text',
      { value: '', description: [] },
      ['extra_fields', 'F', 'description'],
      'wrong_type',
    ],
    [
      'units not a list',
      { type: 'number', value: '', units: 'g' },
      ['extra_fields', 'F', 'units'],
      'wrong_type',
    ],
    [
      'unit not text',
      { type: 'number', value: '', unit: 1 },
      ['extra_fields', 'F', 'unit'],
      'wrong_type',
    ],
    [
      'position not a number',
      { value: '', position: '1' },
      ['extra_fields', 'F', 'position'],
      'wrong_type',
    ],
    [
      'blank_value_on_duplicate not boolean',
      { value: '', blank_value_on_duplicate: 'on' },
      ['extra_fields', 'F', 'blank_value_on_duplicate'],
      'wrong_type',
    ],
    [
      'group_id not a number',
      { value: '', group_id: 'one' },
      ['extra_fields', 'F', 'group_id'],
      'wrong_type',
    ],
    [
      'group_id naming no group',
      { value: '', group_id: 7 },
      ['extra_fields', 'F', 'group_id'],
      'unknown_group',
    ],
    [
      'open_in_current_tab not boolean',
      { type: 'url', value: '', open_in_current_tab: 'true' },
      ['extra_fields', 'F', 'open_in_current_tab'],
      'wrong_type',
    ],
    ['field not an object', 'just text', ['extra_fields', 'F'], 'not_an_object'],
  ];
  it.each(cases)('%s', (_name, field, path, code) => {
    const problem = problemAt(refused({ ...one(field), ...groups }), path);
    expect(problem).toMatchObject({ code, severity: 'error', blocksSaving: true });
    expect(
      problem.message.startsWith(`extra_fields."F".`) ||
        problem.message.startsWith('extra_fields."F":'),
    ).toBe(true);
  });

  it('the document itself must be an object', () => {
    for (const input of [null, [], 5, true, [{ extra_fields: {} }]]) {
      const [problem] = refused(input);
      expect(problem).toMatchObject({ path: [], code: 'not_an_object' });
    }
    expect(refused('not json')[0]).toMatchObject({ code: 'invalid_json' });
  });

  it('extra_fields and notebook must be objects, groups a list of {id, name}', () => {
    expect(problemAt(refused({ extra_fields: 'x' }), ['extra_fields']).code).toBe('not_an_object');
    expect(problemAt(refused({ extra_fields: ['x'] }), ['extra_fields']).code).toBe(
      'not_an_object',
    );
    expect(problemAt(refused({ notebook: 'x' }), ['notebook']).code).toBe('not_an_object');
    expect(
      problemAt(refused({ notebook: { display_main_text: 'no' } }), [
        'notebook',
        'display_main_text',
      ]).code,
    ).toBe('wrong_type');
    expect(
      problemAt(refused({ notebook: { extra_fields_groups: {} } }), [
        'notebook',
        'extra_fields_groups',
      ]).code,
    ).toBe('wrong_type');
    const bad = refused({
      notebook: { extra_fields_groups: [{ id: 1 }, { name: 'x' }, { id: 'a', name: 2 }, 4] },
    });
    expect(problemAt(bad, ['notebook', 'extra_fields_groups', 0, 'name']).code).toBe(
      'missing_property',
    );
    expect(problemAt(bad, ['notebook', 'extra_fields_groups', 1, 'id']).code).toBe(
      'missing_property',
    );
    expect(problemAt(bad, ['notebook', 'extra_fields_groups', 2, 'id']).code).toBe('wrong_type');
    expect(problemAt(bad, ['notebook', 'extra_fields_groups', 2, 'name']).code).toBe('wrong_type');
    expect(problemAt(bad, ['notebook', 'extra_fields_groups', 3]).code).toBe('not_an_object');
  });

  it('group ids are unique', () => {
    const problems = refused({
      notebook: {
        extra_fields_groups: [
          { id: 1, name: 'a' },
          { id: 1, name: 'b' },
        ],
      },
    });
    expect(problemAt(problems, ['notebook', 'extra_fields_groups', 1, 'id']).code).toBe(
      'duplicate_group_id',
    );
  });

  it('collects every problem, not only the first', () => {
    const problems = refused({
      extra_fields: { A: { type: 'nope', value: '' }, B: {}, C: { value: '', required: 'x' } },
    });
    expect(problems.map((problem) => problem.path)).toEqual([
      ['extra_fields', 'A', 'type'],
      ['extra_fields', 'B', 'value'],
      ['extra_fields', 'C', 'required'],
    ]);
  });

  it('refuses nesting deeper than 200 levels', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 300; i++) deep = [deep];
    expect(refused({ other: deep })[0]).toMatchObject({ code: 'too_deep' });
  });

  it('a number too large for JSON is refused, in a value and in what is kept as it is', () => {
    expect(
      problemAt(refused('{"extra_fields": {"F": {"type": "number", "value": 1e400}}}'), [
        'extra_fields',
        'F',
        'value',
      ]).code,
    ).toBe('wrong_type');
    // Kept as null, it was lost without a word.
    for (const [text, path] of [
      ['{"big": 1e400}', ['big']],
      ['{"custom": {"list": [1, -1e999]}}', ['custom', 'list', 1]],
      ['{"extra_fields": {"F": {"value": "x", "extra": 1e400}}}', ['extra_fields', 'F', 'extra']],
      ['{"notebook": {"extra_fields_groups": [{"id": 1, "name": "G", "w": 1e400}]}}', null],
      ['{"notebook": {"zoom": 1e400}}', ['notebook', 'zoom']],
      // Mutation: said as "must be a number, not Infinity" where the number is a property's.
      [
        '{"extra_fields": {"F": {"value": "x", "position": 1e400}}}',
        ['extra_fields', 'F', 'position'],
      ],
      [
        '{"extra_fields": {"F": {"value": "x", "group_id": -1e400}}}',
        ['extra_fields', 'F', 'group_id'],
      ],
    ] as [string, (string | number)[] | null][]) {
      const problems = refused(text);
      expect(problems, text).toEqual([
        expect.objectContaining({
          code: 'wrong_type',
          message: expect.stringContaining('too large to hold') as string,
        }),
      ]);
      if (path) expect(problems[0]?.path, text).toEqual(path);
    }
    expect(refused({ other: { x: Infinity } })[0]?.path).toEqual(['other', 'x']);
    // NaN, from a document given as an object, is no number at all.
    expect(refused({ extra_fields: { F: { value: 'x', position: NaN } } })[0]?.message).toContain(
      'must be a number, not NaN',
    );
  });
});

describe('parseMetadata: values are checked by type, and never block saving', () => {
  const choices = { options: ['a', 'b'] };
  const cases: [string, Raw, unknown, string | null][] = [
    ['text', {}, 'anything', null],
    ['text', {}, true, 'invalid_value'],
    ['text', {}, ['a'], 'invalid_value'],
    ['email', {}, 'someone@lab.example', null],
    ['email', {}, 'someone at lab', 'invalid_email'],
    ['email', {}, '@lab.example', 'invalid_email'],
    ['url', {}, 'https://example.org/x?y=1#z', null],
    ['url', {}, 'doi:10.1000/182', null],
    ['url', {}, 'example.org', 'invalid_url'],
    ['url', {}, 'http://', 'invalid_url'],
    ['url', {}, 'https://exa mple.org', 'invalid_url'],
    ['url', {}, 'javascript:alert(1)', 'invalid_url'],
    ['date', {}, '2024-02-29', null],
    ['date', {}, '2023-02-29', 'invalid_date'],
    ['date', {}, '2023-04-31', 'invalid_date'],
    ['date', {}, '2023-13-01', 'invalid_date'],
    ['date', {}, '2023-1-01', 'invalid_date'],
    ['date', {}, '0000-01-01', 'invalid_date'],
    ['date', {}, '2023-01-01T10:00', 'invalid_date'],
    ['datetime-local', {}, '2024-01-31T10:30', null],
    ['datetime-local', {}, '2024-01-31T10:30:15', null],
    ['datetime-local', {}, '2024-01-31T24:00', 'invalid_datetime'],
    ['datetime-local', {}, '2023-02-29T10:00', 'invalid_datetime'],
    ['datetime-local', {}, '2024-01-31 10:30', 'invalid_datetime'],
    ['datetime-local', {}, '2024-01-31', 'invalid_datetime'],
    ['time', {}, '09:30', null],
    ['time', {}, '23:59:59', null],
    ['time', {}, '10:00:00.5', null],
    ['time', {}, '23:59:59.999', null],
    ['time', {}, '10:00:00.1234', 'invalid_time'],
    ['time', {}, '10:00.5', 'invalid_time'],
    ['datetime-local', {}, '2024-01-31T10:30:15.250', null],
    ['time', {}, '24:00', 'invalid_time'],
    ['time', {}, '9:30', 'invalid_time'],
    ['time', {}, '12:60', 'invalid_time'],
    ['number', {}, 5, null],
    ['number', {}, '5.5', null],
    ['number', {}, '-1e3', null],
    ['number', {}, 'abc', 'not_a_number'],
    ['number', {}, '1,5', 'not_a_number'],
    ['number', {}, true, 'invalid_value'],
    ['checkbox', {}, true, null],
    ['checkbox', {}, false, null],
    ['checkbox', {}, 'yes', 'invalid_checkbox'],
    ['checkbox', {}, 1, 'invalid_checkbox'],
    ['select', choices, 'a', null],
    ['select', choices, 'z', 'not_an_option'],
    ['select', choices, ['a'], 'multiple_values'],
    ['select', { ...choices, allow_multi_values: true }, ['a', 'b'], null],
    ['select', { ...choices, allow_multi_values: true }, ['a', 'z'], 'not_an_option'],
    ['radio', choices, 'b', null],
    ['radio', choices, 'c', 'not_an_option'],
    ['radio', choices, ['a'], 'multiple_values'],
    // The option in another Unicode form (e and a combining accent, as macOS writes it).
    ['select', { options: ['Caf\u00e9', 'Bar'] }, 'Cafe\u0301', null],
    ['radio', { options: ['Cafe\u0301', 'Bar'] }, 'Caf\u00e9', null],
  ];
  it.each(cases)('%s %j value %j -> %s', (type, extra, value, code) => {
    const { problems } = accepted(one({ type, value, ...extra }));
    if (code === null) {
      expect(problems).toEqual([]);
    } else {
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatchObject({ code, severity: 'error', blocksSaving: false });
      expect(problems[0]?.message).toMatch(/^extra_fields\."F"\.value/);
    }
  });

  it.each(['text', 'email', 'url', 'date', 'datetime-local', 'time', 'number', 'select', 'radio'])(
    'an empty %s value is always allowed',
    (type) => {
      for (const value of ['', '   ', null]) {
        expect(
          accepted(one({ type, value, options: ['a', 'b'] })).problems.filter(
            (p) => p.code !== 'not_applicable',
          ),
        ).toEqual([]);
      }
    },
  );

  it('names the field and the property: a unit that is not one of units', () => {
    const { problems } = accepted({
      extra_fields: {
        'Sample mass': { type: 'number', value: '12', units: ['g', 'kg'], unit: 'mg' },
      },
    });
    expect(problems).toEqual([
      {
        path: ['extra_fields', 'Sample mass', 'unit'],
        code: 'unit_not_in_units',
        severity: 'error',
        blocksSaving: false,
        message: 'extra_fields."Sample mass".unit: "mg" is not one of units (g, kg)',
      },
    ]);
  });

  it('a unit is one of units in either Unicode form, as the search finds it, and stays as written', () => {
    const MICRO = '\u00b5'; // MICRO SIGN, as most keyboards type "µ"
    const MU = '\u03bc'; // GREEK SMALL LETTER MU
    const nfc = (text: string): string => text.normalize('NFC');
    const nfd = (text: string): string => text.normalize('NFD');
    const pairs: [string, string][] = [
      [nfd('Å'), nfc('Å')],
      [nfc('Å'), nfd('Å')],
      ['\u212b', nfc('Å')], // ANGSTROM SIGN
      [`${MICRO}m`, `${MU}m`],
      [`${MU}m`, `${MICRO}m`],
    ];
    for (const [unit, listed] of pairs) {
      const { doc, problems } = accepted(
        one({ type: 'number', value: '1', units: ['nm', listed], unit }),
      );
      expect(problems, `${unit} in ${listed}`).toEqual([]);
      expect(doc.fields[0]?.unit).toBe(unit);
      expect(doc.fields[0]?.units).toEqual(['nm', listed]);
    }
    // Letter case and what only NFKC folds still make another unit.
    for (const [unit, listed] of [
      ['Mg', 'mg'],
      ['m2', 'm\u00b2'],
    ]) {
      expect(
        accepted(one({ type: 'number', value: '1', units: [listed], unit })).problems[0],
      ).toMatchObject({ code: 'unit_not_in_units' });
    }
  });

  it('a unit is one of units with spaces around either, which stay as written; spaces alone are no unit', () => {
    for (const [unit, units] of [
      ['mg ', ['g', 'mg']],
      ['mg', ['g', ' mg\u00a0']],
      ['\tmg', ['g', 'mg\n']],
    ] as const) {
      const { doc, problems } = accepted(one({ type: 'number', value: '1', units, unit }));
      expect(problems, JSON.stringify(unit)).toEqual([]);
      expect(doc.fields[0]?.unit).toBe(unit);
      expect(doc.fields[0]?.units).toEqual(units);
    }
    expect(
      accepted(one({ type: 'number', value: '1', units: ['g'], unit: 'm g' })).problems[0],
    ).toMatchObject({ code: 'unit_not_in_units' });
    // As the search indexes it: no unit, like "".
    expect(
      accepted(one({ type: 'number', value: '1', units: ['g'], unit: '  ' })).problems,
    ).toEqual([]);
    expect(accepted(one({ type: 'number', value: '1', unit: ' ' })).problems).toEqual([]);
  });

  it('units that are one unit as the search finds it are listed twice, as a repeated option is', () => {
    const MICRO = '\u00b5';
    const MU = '\u03bc';
    const listedTwice = (units: string[]): MetadataProblem[] =>
      accepted(one({ type: 'number', value: '1', units })).problems;
    expect(listedTwice(['nm', `${MICRO}m`, `${MU}m`])).toEqual([
      {
        path: ['extra_fields', 'F', 'units', 2],
        code: 'duplicate_unit',
        severity: 'warning',
        blocksSaving: false,
        message: `extra_fields."F".units[2]: "${MU}m" is listed twice (also as "${MICRO}m", the same unit)`,
      },
    ]);
    expect(listedTwice(['mg', 'g', 'mg ']).map((p) => p.message)).toEqual([
      'extra_fields."F".units[2]: "mg " is listed twice (also as "mg", the same unit)',
    ]);
    expect(listedTwice(['Å'.normalize('NFD'), '\u212b']).map((p) => p.path)).toEqual([
      ['extra_fields', 'F', 'units', 1],
    ]);
    // Written alike, said as a repeated option is.
    expect(listedTwice(['g', 'g']).map((p) => p.message)).toEqual([
      'extra_fields."F".units[1]: "g" is listed twice',
    ]);
    // Letter case and what only NFKC folds are other units.
    expect(listedTwice(['mg', 'Mg', 'm2', 'm\u00b2'])).toEqual([]);
  });

  it('listedUnit: the listed unit a unit is, as written when listed so, else the first in its form', () => {
    const MICRO = '\u00b5';
    const MU = '\u03bc';
    expect(listedUnit(['nm', `${MU}m`], `${MICRO}m`)).toBe(`${MU}m`);
    expect(listedUnit(['nm', `${MICRO}m`], `${MU}m`)).toBe(`${MICRO}m`);
    expect(listedUnit([`${MU}m`, `${MICRO}m`], `${MICRO}m`)).toBe(`${MICRO}m`);
    expect(listedUnit(['g', 'mg'], 'mg ')).toBe('mg');
    expect(listedUnit(['g', ' mg'], 'mg')).toBe(' mg');
    expect(listedUnit(['mg'], 'Mg')).toBeUndefined();
    expect(listedUnit([], 'mg')).toBeUndefined();
  });

  it('an empty unit is fine; a unit without units is a notice', () => {
    expect(accepted(one({ type: 'number', value: '', units: ['g'], unit: '' })).problems).toEqual(
      [],
    );
    expect(accepted(one({ type: 'number', value: '1', unit: 'g' })).problems[0]).toMatchObject({
      code: 'unit_without_units',
      severity: 'warning',
    });
  });

  it('a multi-select names the element that is not an option', () => {
    const { problems } = accepted(
      one({
        type: 'select',
        options: ['red', 'blue'],
        allow_multi_values: true,
        value: ['red', 'teal'],
      }),
    );
    expect(problems[0]).toMatchObject({
      path: ['extra_fields', 'F', 'value', 1],
      message: 'extra_fields."F".value[1]: "teal" is not one of options (red, blue)',
    });
  });

  it('says each problem on one line, whatever the options and units hold', () => {
    const { problems } = accepted({
      extra_fields: {
        Colour: {
          type: 'select',
          options: ['a\nb', 'c, d', 'e\u2028f', ' g', 'plain h'],
          value: 'z\u2029',
        },
        Mass: { type: 'number', value: '1', units: ['m\ng', '(kg)'], unit: 'kg' },
      },
    });
    expect(problems.map((p) => p.message)).toEqual([
      'extra_fields."Colour".value: "z\\u2029" is not one of options ("a\\nb", "c, d", "e\\u2028f", " g", plain h)',
      'extra_fields."Mass".unit: "kg" is not one of units ("m\\ng", "(kg)")',
    ]);
    for (const p of problems) expect(p.message).not.toMatch(/[\n\r\u2028\u2029]/);
  });
});

describe('parseMetadata: required is a reminder, never a block', () => {
  it('an empty required field gives a warning and the document is accepted', () => {
    const { problems } = accepted({ extra_fields: { Operator: { value: '', required: true } } });
    expect(problems).toEqual([
      expect.objectContaining({
        code: 'required_empty',
        severity: 'warning',
        blocksSaving: false,
        path: ['extra_fields', 'Operator', 'value'],
      }),
    ]);
  });

  it('a filled required field, or an unchecked required checkbox, gives nothing', () => {
    expect(accepted(one({ value: 'Ada', required: true })).problems).toEqual([]);
    expect(accepted(one({ type: 'checkbox', value: false, required: true })).problems).toEqual([]);
    expect(
      accepted(
        one({
          type: 'select',
          options: ['a'],
          allow_multi_values: true,
          value: [],
          required: true,
        }),
      ).problems[0]?.code,
    ).toBe('required_empty');
  });
});

describe('parseMetadata: properties that do not apply to the type', () => {
  it.each([
    ['options', { type: 'text', options: ['a'] }],
    ['allow_multi_values', { type: 'radio', options: ['a', 'b'], allow_multi_values: true }],
    ['units', { type: 'text', units: ['g'] }],
    ['unit', { type: 'text', unit: 'g' }],
    ['open_in_current_tab', { type: 'text', open_in_current_tab: true }],
  ])('%s is kept, with a notice', (property, field) => {
    const { doc, problems } = accepted(one({ ...field, value: '' }));
    expect(problemAt(problems, ['extra_fields', 'F', property])).toMatchObject({
      code: 'not_applicable',
      severity: 'warning',
    });
    expect(doc.fields[0]).toHaveProperty(property);
  });
});

describe('parseMetadata: builder rules', () => {
  it('a select or radio field needs at least 2 options in the builder only', () => {
    for (const type of ['select', 'radio']) {
      const raw = one({ type, options: ['only'], value: '' });
      expect(accepted(raw).problems).toEqual([]);
      // No options at all offers nothing to choose: kept, with a notice.
      expect(accepted(one({ type, options: [], value: '' })).problems).toEqual([
        expect.objectContaining({
          path: ['extra_fields', 'F', 'options'],
          code: 'too_few_options',
          severity: 'warning',
          blocksSaving: false,
          message: `extra_fields."F".options: a ${type} field with no options offers no choice`,
        }),
      ]);
      expect(
        problemAt(refused(raw, { builder: true }), ['extra_fields', 'F', 'options']),
      ).toMatchObject({
        code: 'too_few_options',
        blocksSaving: true,
      });
      expect(
        accepted(one({ type, options: ['a', 'b'], value: '' }), { builder: true }).problems,
      ).toEqual([]);
      // The same option twice is one choice.
      expect(
        problemAt(refused(one({ type, options: ['a', 'a'], value: '' }), { builder: true }), [
          'extra_fields',
          'F',
          'options',
        ]),
      ).toMatchObject({
        code: 'too_few_options',
        message: expect.stringContaining('needs at least 2 different options, not 1') as string,
      });
    }
  });
});

describe('parseMetadata: normalizations', () => {
  it('reads the notebook service spellings', () => {
    expect(fieldOf(one({ type: 'select-multi', options: ['a'], value: 'a' }))).toMatchObject({
      type: 'select',
      allow_multi_values: true,
      value: ['a'],
    });
    expect(fieldOf(one({ type: 'select-one', options: ['a'], value: 'a' }))).toMatchObject({
      type: 'select',
      value: 'a',
    });
    expect(fieldOf(one({ type: 'checkbox', value: 'on' })).value).toBe(true);
    expect(fieldOf(one({ type: 'checkbox', value: '' })).value).toBe(false);
    const { doc } = accepted({
      elabftw: { extra_fields_groups: [{ id: 1, name: 'G' }] },
      extra_fields: { F: { value: '', group_id: 1 } },
    });
    expect(doc.notebook?.extra_fields_groups).toEqual([{ id: 1, name: 'G', unknown: [] }]);
    expect(doc.unknown).toEqual([]);
  });

  it('null values become the empty value of the type; null optional properties are absent', () => {
    expect(fieldOf(one({ value: null })).value).toBe('');
    expect(fieldOf(one({ type: 'checkbox', value: null })).value).toBe(false);
    expect(
      fieldOf(one({ type: 'select', options: ['a'], allow_multi_values: true, value: null })).value,
    ).toEqual([]);
    expect(fieldOf(one({ value: 'x', group_id: null, description: null, type: null }))).toEqual({
      name: 'F',
      type: 'text',
      value: 'x',
      unknown: [],
    });
  });

  it('a number written where text is stored becomes text; number fields keep numbers', () => {
    expect(fieldOf(one({ value: 42 })).value).toBe('42');
    expect(fieldOf(one({ type: 'select', options: ['1', '2'], value: 1 })).value).toBe('1');
    expect(fieldOf(one({ type: 'number', value: 42 })).value).toBe(42);
    expect(fieldOf(one({ type: 'number', value: '42' })).value).toBe('42');
    expect(fieldOf(one({ type: 'number', value: -0 })).value).toBe(0);
    // In a multi-select's list too, as the notebook service stores numbers as either.
    expect(
      fieldOf(
        one({ type: 'select', options: ['1', '2'], allow_multi_values: true, value: [1, '2'] }),
      ).value,
    ).toEqual(['1', '2']);
    expect(
      fieldOf(one({ type: 'select', options: ['0'], allow_multi_values: true, value: [-0] })).value,
    ).toEqual(['0']);
  });

  it('a multi-select written as text becomes a list', () => {
    expect(
      fieldOf(one({ type: 'select', options: ['a'], allow_multi_values: true, value: 'a' })).value,
    ).toEqual(['a']);
    expect(
      fieldOf(one({ type: 'select', options: ['a'], allow_multi_values: true, value: '' })).value,
    ).toEqual([]);
  });

  it('a group_id written as a whole number in text is that number', () => {
    expect(fieldOf({ ...one({ value: '', group_id: '1' }), ...groups }).group_id).toBe(1);
    expect(
      accepted({ notebook: { extra_fields_groups: [{ id: '3', name: 'x' }] } }).doc.notebook
        ?.extra_fields_groups?.[0]?.id,
    ).toBe(3);
  });

  it('known properties come first in a fixed order', () => {
    const field = fieldOf(one({ zeta: 1, position: 2, value: 'v', description: 'd' }));
    expect(Object.keys(field)).toEqual([
      'name',
      'type',
      'value',
      'description',
      'position',
      'unknown',
    ]);
  });
});

describe('parseMetadata: unknown keys and unusual names', () => {
  it('keeps unknown keys at the top level, in fields, in the notebook object and in groups', () => {
    const { doc } = accepted({
      extra_fields: { F: { value: 'x', color: 'red', nested: { a: [1, { b: null }] } } },
      notebook: {
        display_main_text: true,
        theme: 'dark',
        extra_fields_groups: [{ id: 1, name: 'G', collapsed: true }],
      },
      custom: { anything: [1, 2] },
      zz: 'last',
    });
    expect(doc.unknown).toEqual([
      ['custom', { anything: [1, 2] }],
      ['zz', 'last'],
    ]);
    expect(doc.fields[0]?.unknown).toEqual([
      ['color', 'red'],
      ['nested', { a: [1, { b: null }] }],
    ]);
    expect(doc.notebook?.unknown).toEqual([['theme', 'dark']]);
    expect(doc.notebook?.extra_fields_groups?.[0]?.unknown).toEqual([['collapsed', true]]);
  });

  it('both "notebook" and "elabftw": notebook is read, elabftw kept as it is, with a notice', () => {
    const { doc, problems } = accepted({
      notebook: { extra_fields_groups: [{ id: 1, name: 'Ours' }] },
      elabftw: { extra_fields_groups: [{ id: 9, name: 'Theirs' }] },
    });
    expect(doc.notebook?.extra_fields_groups?.[0]?.name).toBe('Ours');
    expect(doc.unknown).toEqual([
      ['elabftw', { extra_fields_groups: [{ id: 9, name: 'Theirs' }] }],
    ]);
    expect(problems).toEqual([
      expect.objectContaining({ code: 'both_notebook_keys', severity: 'warning' }),
    ]);
  });

  it('a null "notebook" is none: the groups are read from "elabftw", and read the same again', () => {
    const raw = {
      extra_fields: { a: { value: '1', group_id: 1 } },
      notebook: null,
      elabftw: { extra_fields_groups: [{ id: 1, name: 'G' }] },
    };
    const { doc, problems } = accepted(raw);
    expect(problems).toEqual([]);
    expect(doc.notebook?.extra_fields_groups).toEqual([{ id: 1, name: 'G', unknown: [] }]);
    expect(doc.unknown).toEqual([]);
    expect(accepted(serializeMetadata(doc)).doc).toEqual(doc);
    expect(accepted(serializeMetadata(doc, 'elabftw')).doc).toEqual(doc);
    // Broken groups under "elabftw" are refused at once, not first when the entry is saved again.
    const broken = parseMetadata({
      ...raw,
      elabftw: {
        extra_fields_groups: [
          { id: 1, name: 'G' },
          { id: 1, name: 'H' },
        ],
      },
    });
    expect(broken.ok).toBe(false);
    expect(broken.problems.map((p) => p.message)).toContain(
      'elabftw.extra_fields_groups[1].id: 1 is also the id of an earlier group; group ids must be unique',
    );
  });

  it('field names and keys such as __proto__ and constructor are plain names', () => {
    const text =
      '{"extra_fields": {"__proto__": {"value": "p", "__proto__": {"polluted": 1}}, "constructor": {"value": "c"}, "": {"value": "empty"}, "µg/ml 日本": {"value": "u"}}, "__proto__": {"polluted": 2}}';
    const { doc } = accepted(text);
    expect(doc.fields.map((field) => [field.name, field.value])).toEqual([
      ['__proto__', 'p'],
      ['constructor', 'c'],
      ['', 'empty'],
      ['µg/ml 日本', 'u'],
    ]);
    expect(doc.fields[0]?.unknown).toEqual([['__proto__', { polluted: 1 }]]);
    expect(doc.unknown).toEqual([['__proto__', { polluted: 2 }]]);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.getPrototypeOf(doc.unknown[0]?.[1])).toBe(Object.prototype);
  });
});
