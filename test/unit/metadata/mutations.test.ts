// Rules that a hand-mutation review found no test holding: each test here fails with the
// mutation named above it and passes without it.

import { describe, expect, it } from 'vitest';
import {
  addField,
  addGroup,
  fieldsInDisplayOrder,
  matchesQuery,
  parseMetadata,
  removeGroup,
  renameField,
} from '../../../shared/metadata/index.js';
import type { EditResult, MetadataDoc } from '../../../shared/metadata/index.js';

function docOf(input: unknown): MetadataDoc {
  const result = parseMetadata(input);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.doc;
}

function done(result: EditResult): MetadataDoc {
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.doc;
}

describe('email values', () => {
  // Mutation: an e-mail rule taking anything after the "@" as the domain.
  it.each(['someone@lab..example', 'someone@exa mple.org', 'someone@lab@example.org'])(
    'refuses %j: its domain is no host name',
    (value) => {
      const { problems } = docResult({ F: { type: 'email', value } });
      expect(problems.map((problem) => problem.code)).toEqual(['invalid_email']);
    },
  );

  it('accepts a host name without a dot, as the browser does', () => {
    expect(docResult({ F: { type: 'email', value: 'someone@labhost' } }).problems).toEqual([]);
  });
});

function docResult(fields: unknown): { problems: { code: string }[] } {
  const result = parseMetadata({ extra_fields: fields });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result;
}

describe('search', () => {
  const doc = docOf({
    extra_fields: {
      Status: { type: 'select', options: ['Planned', 'Done'], value: 'Done' },
      Batch: { type: 'text', value: '12' },
      Flag: { type: 'text', value: true },
    },
  });

  // Mutation: comparing the value looked for by equals without trimming it.
  it('equals ignores the spaces around the value looked for', () => {
    expect(matchesQuery(doc, { kind: 'equals', field: 'Status', value: '  done ' })).toBe(true);
    expect(matchesQuery(doc, { kind: 'equals', field: 'Status', value: ' planned ' })).toBe(false);
  });

  // Mutation: indexing the number of every field, not only of number fields.
  it('a number range finds number fields only, not numeric text of a text field', () => {
    expect(matchesQuery(doc, { kind: 'numberBetween', field: 'Batch', min: 10, max: 20 })).toBe(
      false,
    );
  });

  // Mutation: indexing every true or false value as checked or not, whatever the field type.
  it('a checkbox query finds checkbox fields only', () => {
    expect(matchesQuery(doc, { kind: 'checkbox', field: 'Flag', checked: true })).toBe(false);
  });
});

describe('group ids', () => {
  // Mutation: the new group's id as the number of groups + 1 instead of the highest id + 1.
  it('a group added after one was removed gets an id no other group has', () => {
    const doc = docOf({
      extra_fields: { Colour: { value: '', group_id: 2 } },
      notebook: {
        extra_fields_groups: [
          { id: 1, name: 'Look' },
          { id: 2, name: 'Run' },
        ],
      },
    });
    const added = addGroup(done(removeGroup(doc, 1)), 'Notes');
    if (!added.ok) throw new Error('refused');
    expect(added.id).toBe(3);
    expect(added.doc.notebook?.extra_fields_groups?.map((group) => group.id)).toEqual([2, 3]);
  });
});

describe('position', () => {
  // Mutation: the builder leaving out the position it is given.
  it('a field built with a position keeps it, and is shown in its place', () => {
    const doc = docOf({ extra_fields: { B: { value: '', position: 2 } } });
    const next = done(addField(doc, 'A', { position: 5 }));
    expect(next.fields.find((field) => field.name === 'A')?.position).toBe(5);
    const first = done(addField(doc, 'Z', { position: 1 }));
    expect(fieldsInDisplayOrder(first).map((field) => field.name)).toEqual(['Z', 'B']);
  });
});

describe('url values', () => {
  // Mutation: refusing spaces only, not other white space or control characters.
  it.each(['https://exa\tmple.org', 'https://example.org/a\nb', 'https://example.org/\u0007'])(
    'refuses %j',
    (value) => {
      const { problems } = docResult({ F: { type: 'url', value } });
      expect(problems.map((problem) => problem.code)).toEqual(['invalid_url']);
    },
  );
});

describe('date values', () => {
  // Mutation: every fourth year a leap year, centuries too (1900 was none, 2000 was one).
  it.each([
    ['2024-02-29', []],
    ['2000-02-29', []],
    ['1900-02-29', ['invalid_date']],
    ['2023-02-29', ['invalid_date']],
  ])('%s gives %j', (value, codes) => {
    const { problems } = docResult({ F: { type: 'date', value } });
    expect(problems.map((problem) => problem.code)).toEqual(codes);
  });
});

describe('number values written with spaces', () => {
  // Mutation: reading numeric text without trimming it, so " 12 " was not a number.
  it('reads " 12 " as the number 12, in checks and in a number range', () => {
    const doc = docOf({ extra_fields: { Mass: { type: 'number', value: ' 12 ' } } });
    expect(docResult({ Mass: { type: 'number', value: ' 12 ' } }).problems).toEqual([]);
    expect(matchesQuery(doc, { kind: 'numberBetween', field: 'Mass', min: 12, max: 12 })).toBe(
      true,
    );
  });
});

describe('renaming a field', () => {
  // Mutation: refusing an empty new name but not one of spaces alone.
  it('refuses a name of spaces alone', () => {
    const doc = docOf({ extra_fields: { Colour: { value: 'red' } } });
    const result = renameField(doc, 'Colour', '   ');
    expect(!result.ok && result.problems.map((problem) => problem.code)).toEqual(['empty_name']);
  });
});

describe('display order', () => {
  // Mutation: dropping "a field with a position before one without" (only the reverse kept).
  it('shows fields with a position before those without, whatever their names', () => {
    const doc = docOf({
      extra_fields: {
        A: { value: '' },
        Z: { value: '', position: 3 },
        B: { value: '' },
        Y: { value: '', position: 1 },
      },
    });
    expect(fieldsInDisplayOrder(doc).map((field) => field.name)).toEqual(['Y', 'Z', 'A', 'B']);
    const reversed = docOf({
      extra_fields: { Z: { value: '', position: 3 }, B: { value: '' }, A: { value: '' } },
    });
    expect(fieldsInDisplayOrder(reversed).map((field) => field.name)).toEqual(['Z', 'A', 'B']);
  });
});
