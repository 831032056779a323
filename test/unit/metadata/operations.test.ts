import { describe, expect, it } from 'vitest';
import {
  addField,
  addGroup,
  createFromTemplate,
  duplicateMetadata,
  fieldsInDisplayOrder,
  groupedFields,
  parseMetadata,
  removeField,
  removeGroup,
  renameField,
  renameGroup,
  serializeMetadata,
  setFieldUnit,
  setFieldValue,
  updateField,
} from '../../../shared/metadata/index.js';
import type { EditResult, MetadataDoc, MetadataField } from '../../../shared/metadata/index.js';

function docOf(input: unknown): MetadataDoc {
  const result = parseMetadata(input);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.doc;
}

function done(result: EditResult): MetadataDoc {
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.doc;
}

function field(doc: MetadataDoc, name: string): MetadataField | undefined {
  return doc.fields.find((item) => item.name === name);
}

const TEMPLATE = {
  extra_fields: {
    Operator: { value: 'Ada', required: true, blank_value_on_duplicate: true, tag: 'kept' },
    Mass: {
      type: 'number',
      value: '5',
      units: ['g', 'kg'],
      unit: 'g',
      blank_value_on_duplicate: true,
    },
    Done: { type: 'checkbox', value: true, blank_value_on_duplicate: true },
    Colors: {
      type: 'select',
      options: ['red', 'blue'],
      allow_multi_values: true,
      value: ['red'],
      blank_value_on_duplicate: true,
      group_id: 1,
    },
    Batch: { value: 'B-12' },
  },
  notebook: { extra_fields_groups: [{ id: 1, name: 'Look', x: 1 }], flag: true },
  app: [1, 2],
};

describe('createFromTemplate and duplicateMetadata', () => {
  it('an entry from a template has its fields, values included, and its unknown keys', () => {
    const template = docOf(TEMPLATE);
    const entry = createFromTemplate(template);
    expect(entry).toEqual(template);
    expect(entry).not.toBe(template);
    expect(entry.fields[0]).not.toBe(template.fields[0]);
  });

  it('duplicating clears the values marked blank_value_on_duplicate, by type', () => {
    const copy = duplicateMetadata(docOf(TEMPLATE));
    expect(copy.fields.map((item) => [item.name, item.value])).toEqual([
      ['Operator', ''],
      ['Mass', ''],
      ['Done', false],
      ['Colors', []],
      ['Batch', 'B-12'],
    ]);
    expect(field(copy, 'Mass')?.unit).toBe('g');
    expect(field(copy, 'Operator')?.unknown).toEqual([['tag', 'kept']]);
    expect(copy.unknown).toEqual([['app', [1, 2]]]);
  });

  it('does not change the document it is given', () => {
    const doc = docOf(TEMPLATE);
    const before = serializeMetadata(doc);
    duplicateMetadata(doc);
    const entry = createFromTemplate(doc);
    for (const item of entry.fields) item.value = 'changed';
    entry.unknown.push(['added', 1]);
    expect(serializeMetadata(doc)).toBe(before);
  });
});

describe('setFieldValue', () => {
  const doc = docOf(TEMPLATE);

  it('sets a value and keeps everything else', () => {
    const next = done(setFieldValue(doc, 'Batch', 'B-13'));
    expect(field(next, 'Batch')?.value).toBe('B-13');
    expect(next.unknown).toEqual(doc.unknown);
    expect(field(doc, 'Batch')?.value).toBe('B-12');
  });

  it('normalizes as on import', () => {
    expect(field(done(setFieldValue(doc, 'Done', 'on')), 'Done')?.value).toBe(true);
    expect(field(done(setFieldValue(doc, 'Colors', 'blue')), 'Colors')?.value).toEqual(['blue']);
  });

  it('sets an invalid value and reports it without refusing', () => {
    const result = setFieldValue(doc, 'Mass', 'heavy');
    expect(result.ok).toBe(true);
    expect(result.problems).toEqual([
      expect.objectContaining({ code: 'not_a_number', blocksSaving: false }),
    ]);
  });

  it('an empty required field is only a notice', () => {
    const result = setFieldValue(doc, 'Operator', '');
    expect(result.ok).toBe(true);
    expect(result.problems.map((problem) => problem.severity)).toEqual(['warning']);
  });

  it('refuses an unknown field and a value JSON cannot hold as a value', () => {
    expect(setFieldValue(doc, 'Nope', 'x')).toMatchObject({
      ok: false,
      problems: [{ code: 'unknown_field' }],
    });
    expect(setFieldValue(doc, 'Batch', { a: 1 })).toMatchObject({
      ok: false,
      problems: [{ code: 'wrong_type' }],
    });
  });
});

describe('setFieldUnit (the units dropdown of an entry)', () => {
  const doc = docOf({
    extra_fields: {
      Mass: { type: 'number', value: '5', units: ['g', 'kg'], unit: 'g', note: 'kept' },
      // Properties of another type, as left by a type changed in code mode: kept and ignored.
      Volume: {
        type: 'number',
        value: '2',
        units: ['mL', 'L'],
        options: ['a', 'b'],
        open_in_current_tab: true,
      },
      '': { type: 'number', value: '1', units: ['g', 'kg'] },
    },
  });

  it('changes the unit alone; every other property stays', () => {
    const next = done(setFieldUnit(doc, 'Volume', 'L'));
    const written = JSON.parse(serializeMetadata(next)) as { extra_fields: object };
    expect(written.extra_fields).toMatchObject({
      Volume: {
        type: 'number',
        value: '2',
        units: ['mL', 'L'],
        unit: 'L',
        options: ['a', 'b'],
        open_in_current_tab: true,
      },
    });
    expect(field(done(setFieldUnit(doc, 'Mass', 'kg')), 'Mass')).toMatchObject({
      unit: 'kg',
      unknown: [['note', 'kept']],
    });
  });

  it('clears the unit with null or ""', () => {
    expect(field(done(setFieldUnit(doc, 'Mass', null)), 'Mass')?.unit).toBeUndefined();
    expect(field(done(setFieldUnit(doc, 'Mass', '')), 'Mass')?.unit).toBeUndefined();
  });

  it('works on a field of any name, as a value change does: builder rules do not apply', () => {
    expect(field(done(setFieldUnit(doc, '', 'kg')), '')?.unit).toBe('kg');
  });

  it('sets a unit not in units and reports it without refusing; refuses an unknown field', () => {
    const result = setFieldUnit(doc, 'Mass', 'mg');
    expect(result.ok).toBe(true);
    expect(result.problems).toEqual([
      expect.objectContaining({ code: 'unit_not_in_units', blocksSaving: false }),
    ]);
    expect(setFieldUnit(doc, 'Nope', 'g')).toMatchObject({
      ok: false,
      problems: [{ code: 'unknown_field' }],
    });
  });
});

describe('addField (builder)', () => {
  const doc = docOf(TEMPLATE);

  it('adds a field with the empty value of its type', () => {
    const next = done(
      addField(doc, 'Temperature', { type: 'number', units: ['°C', 'K'], unit: '°C' }),
    );
    expect(field(next, 'Temperature')).toEqual({
      name: 'Temperature',
      type: 'number',
      value: '',
      units: ['°C', 'K'],
      unit: '°C',
      unknown: [],
    });
    expect(field(done(addField(doc, 'Ok', { type: 'checkbox' })), 'Ok')?.value).toBe(false);
    expect(
      field(done(addField(doc, 'Tags', { type: 'select-multi', options: ['a', 'b'] })), 'Tags'),
    ).toMatchObject({
      type: 'select',
      allow_multi_values: true,
      value: [],
    });
  });

  it('keeps only the properties that apply to the type', () => {
    const next = done(
      addField(doc, 'Notes', {
        type: 'text',
        value: 'x',
        options: ['a', 'b'],
        allow_multi_values: true,
        units: ['g'],
        unit: 'g',
        open_in_current_tab: true,
        description: 'free text',
        required: true,
      }),
    );
    expect(field(next, 'Notes')).toEqual({
      name: 'Notes',
      type: 'text',
      value: 'x',
      required: true,
      description: 'free text',
      unknown: [],
    });
    expect(
      field(
        done(addField(doc, 'Link', { type: 'url', open_in_current_tab: true, options: ['a'] })),
        'Link',
      ),
    ).toEqual({
      name: 'Link',
      type: 'url',
      value: '',
      open_in_current_tab: true,
      unknown: [],
    });
  });

  it('applies the builder rules: 2 options for select and radio, a name, a free name', () => {
    expect(addField(doc, 'One', { type: 'radio', options: ['only'] })).toMatchObject({
      ok: false,
      problems: [{ code: 'too_few_options' }],
    });
    expect(addField(doc, 'None', { type: 'select' })).toMatchObject({
      ok: false,
      problems: [{ code: 'missing_options' }],
    });
    expect(addField(doc, '  ', {})).toMatchObject({
      ok: false,
      problems: [{ code: 'empty_name' }],
    });
    expect(addField(doc, 'Batch', {})).toMatchObject({
      ok: false,
      problems: [{ code: 'duplicate_field' }],
    });
    expect(addField(doc, 'G', { group_id: 5 })).toMatchObject({
      ok: false,
      problems: [{ code: 'unknown_group' }],
    });
  });

  it('accepts an invalid value with a value problem', () => {
    const result = addField(doc, 'Mail', { type: 'email', value: 'nope' });
    expect(result.ok).toBe(true);
    expect(result.problems[0]?.code).toBe('invalid_email');
  });

  it('keeps JSON key order, so a saved document reloads the same', () => {
    const next = done(addField(doc, '7', { value: 'x' }));
    expect(next.fields.map((item) => item.name)[0]).toBe('7');
    expect(docOf(serializeMetadata(next))).toEqual(next);
  });
});

describe('updateField', () => {
  const doc = docOf(TEMPLATE);

  it('changes properties, removes with null, keeps unknown properties', () => {
    const next = done(updateField(doc, 'Operator', { description: 'Who ran it', required: null }));
    expect(field(next, 'Operator')).toEqual({
      name: 'Operator',
      type: 'text',
      value: 'Ada',
      description: 'Who ran it',
      blank_value_on_duplicate: true,
      unknown: [['tag', 'kept']],
    });
  });

  it('changing the type drops properties of the old type and a value that does not fit', () => {
    const next = done(updateField(doc, 'Mass', { type: 'text' }));
    expect(field(next, 'Mass')).toEqual({
      name: 'Mass',
      type: 'text',
      value: '5',
      blank_value_on_duplicate: true,
      unknown: [],
    });
    expect(field(done(updateField(doc, 'Batch', { type: 'date' })), 'Batch')?.value).toBe('');
    expect(
      field(done(updateField(doc, 'Colors', { allow_multi_values: false })), 'Colors')?.value,
    ).toBe('red');
    expect(field(done(updateField(doc, 'Colors', { type: 'radio' })), 'Colors')).toEqual({
      name: 'Colors',
      type: 'radio',
      value: 'red',
      options: ['red', 'blue'],
      blank_value_on_duplicate: true,
      group_id: 1,
      unknown: [],
    });
  });

  // Mutation: the builder's two-option rule on every edit (a field code mode took with one
  // option could not even have its description changed).
  it('keeps a choice imported with one option through an edit, and asks for two when options change', () => {
    const one = docOf({
      extra_fields: { Mode: { type: 'select', options: ['only'], value: 'only' } },
    });
    expect(field(done(updateField(one, 'Mode', { description: 'hello' })), 'Mode')).toMatchObject({
      description: 'hello',
      options: ['only'],
    });
    for (const changes of [{ options: ['still one'] }, { type: 'radio' as const }]) {
      const refused = updateField(one, 'Mode', changes);
      expect(refused.ok, JSON.stringify(changes)).toBe(false);
      if (!refused.ok) {
        expect(refused.problems.map((p) => p.code)).toContain('too_few_options');
      }
    }
  });

  it('moves a field into a group or out of it', () => {
    expect(field(done(updateField(doc, 'Batch', { group_id: 1 })), 'Batch')?.group_id).toBe(1);
    expect(
      field(done(updateField(doc, 'Colors', { group_id: null })), 'Colors'),
    ).not.toHaveProperty('group_id');
  });

  it('refuses an unknown field', () => {
    expect(updateField(doc, 'Nope', {})).toMatchObject({
      ok: false,
      problems: [{ code: 'unknown_field' }],
    });
  });
});

describe('removeField and renameField', () => {
  const doc = docOf(TEMPLATE);

  it('removes a field', () => {
    const next = done(removeField(doc, 'Batch'));
    expect(next.fields.map((item) => item.name)).toEqual(['Operator', 'Mass', 'Done', 'Colors']);
    expect(removeField(doc, 'Nope').ok).toBe(false);
  });

  it('renames a field, keeping everything it holds', () => {
    const next = done(renameField(doc, 'Operator', 'Operator name'));
    expect(field(next, 'Operator name')).toEqual({
      ...field(doc, 'Operator'),
      name: 'Operator name',
    });
    expect(field(next, 'Operator')).toBeUndefined();
    expect(renameField(doc, 'Operator', 'Batch')).toMatchObject({
      ok: false,
      problems: [{ code: 'duplicate_field' }],
    });
    expect(renameField(doc, 'Operator', '')).toMatchObject({
      ok: false,
      problems: [{ code: 'empty_name' }],
    });
    expect(renameField(doc, 'Nope', 'x')).toMatchObject({
      ok: false,
      problems: [{ code: 'unknown_field' }],
    });
    expect(done(renameField(doc, 'Batch', 'Batch'))).toEqual(doc);
  });
});

describe('groups', () => {
  const doc = docOf(TEMPLATE);

  it('adds a group with the next id, after the others', () => {
    const result = addGroup(doc, 'Run');
    if (!result.ok) throw new Error('refused');
    expect(result.id).toBe(2);
    expect(
      result.doc.notebook?.extra_fields_groups?.map((group) => [group.id, group.name]),
    ).toEqual([
      [1, 'Look'],
      [2, 'Run'],
    ]);
    expect(result.doc.notebook?.unknown).toEqual([['flag', true]]);
    const first = addGroup(docOf({}), 'First');
    expect(first.ok && first.id).toBe(1);
    expect(addGroup(doc, ' ').ok).toBe(false);
  });

  it('renames a group, keeping its unknown keys', () => {
    const next = done(renameGroup(doc, 1, 'Appearance'));
    expect(next.notebook?.extra_fields_groups).toEqual([
      { id: 1, name: 'Appearance', unknown: [['x', 1]] },
    ]);
    expect(renameGroup(doc, 9, 'x')).toMatchObject({
      ok: false,
      problems: [{ code: 'unknown_group' }],
    });
  });

  it('removing a group clears the group_id of its fields', () => {
    const next = done(removeGroup(doc, 1));
    expect(next.notebook?.extra_fields_groups).toEqual([]);
    expect(field(next, 'Colors')).not.toHaveProperty('group_id');
    expect(parseMetadata(serializeMetadata(next)).ok).toBe(true);
    expect(removeGroup(doc, 9).ok).toBe(false);
  });
});

describe('display order', () => {
  const doc = docOf({
    extra_fields: {
      'Sample 10': { value: '' },
      b: { value: '', position: 2, group_id: 2 },
      a: { value: '', position: 2, group_id: 2 },
      first: { value: '', position: -1, group_id: 1 },
      'Sample 2': { value: '' },
      lost: { value: '', group_id: 1 },
    },
    notebook: {
      extra_fields_groups: [
        { id: 2, name: 'Second defined first' },
        { id: 1, name: 'One' },
        { id: 3, name: 'Empty' },
      ],
    },
  });

  it('orders by position, then by name; fields without a position last', () => {
    expect(fieldsInDisplayOrder(doc).map((item) => item.name)).toEqual([
      'first',
      'a',
      'b',
      'lost',
      'Sample 2',
      'Sample 10',
    ]);
  });

  it('groups in the order they are defined, fields without a group first', () => {
    expect(
      groupedFields(doc).map((section) => [
        section.group?.name ?? null,
        section.fields.map((item) => item.name),
      ]),
    ).toEqual([
      [null, ['Sample 2', 'Sample 10']],
      ['Second defined first', ['a', 'b']],
      ['One', ['first', 'lost']],
      ['Empty', []],
    ]);
  });
});
