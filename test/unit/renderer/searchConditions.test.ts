/**
 * The notebook search panel's condition rows: the query each one becomes, or why it is not one
 * yet and the control to mend it in (the panel ties the problem to that control and moves the
 * focus there when a Search is refused).
 */
import { describe, expect, it } from 'vitest';
import {
  controlLabel,
  newCondition,
  toQuery,
  type ConditionInput,
  type ConditionKind,
  type ConditionRow,
} from '../../../renderer/src/features/notebook/searchConditions.js';

const row = (kind: ConditionKind, values: Partial<ConditionRow> = {}): ConditionRow => ({
  ...newCondition(1, kind),
  ...values,
});

describe('toQuery: the query of a row', () => {
  it('trims the field name, takes the text as typed, a number typed, a unit trimmed', () => {
    expect(toQuery(row('equals', { field: ' Sample ', text: ' A1 ' }))).toEqual({
      query: { kind: 'equals', field: 'Sample', value: ' A1 ' },
    });
    // Equals may look for an empty value; contains may not (below).
    expect(toQuery(row('equals', { field: 'Sample' }))).toEqual({
      query: { kind: 'equals', field: 'Sample', value: '' },
    });
    expect(toQuery(row('numberBetween', { field: 'Mass', min: ' 1.5 ', unit: ' mg ' }))).toEqual({
      query: { kind: 'numberBetween', field: 'Mass', min: 1.5, unit: 'mg' },
    });
    expect(toQuery(row('dateBetween', { field: 'Made', to: '2024-03-01T10:30' }))).toEqual({
      query: { kind: 'dateBetween', field: 'Made', to: '2024-03-01T10:30' },
    });
    expect(toQuery(row('checkbox', { field: 'Done', checked: false }))).toEqual({
      query: { kind: 'checkbox', field: 'Done', checked: false },
    });
    // No field: any field's value.
    expect(toQuery(row('anyFieldContains', { field: 'ignored', text: 'gold' }))).toEqual({
      query: { kind: 'anyFieldContains', text: 'gold' },
    });
  });
});

describe('toQuery: a refused row, its problem and the control to mend it in', () => {
  it('a field not named, for every kind that names one: the field name', () => {
    const kinds: ConditionKind[] = [
      'equals',
      'contains',
      'numberBetween',
      'dateBetween',
      'checkbox',
    ];
    for (const kind of kinds) {
      for (const field of ['', '   ']) {
        expect(toQuery(row(kind, { field, text: 'x', min: '1' })), kind).toEqual({
          problem: 'Field name: give the name of a field',
          input: 'field',
        });
      }
    }
  });

  it('a field name too long: the field name', () => {
    expect(toQuery(row('contains', { field: 'f'.repeat(1001), text: 'x' }))).toMatchObject({
      input: 'field',
    });
  });

  it('text to look for that is empty, too long or holds a NUL: the text', () => {
    expect(toQuery(row('contains', { field: 'Notes' }))).toMatchObject({ input: 'text' });
    expect(toQuery(row('anyFieldContains'))).toMatchObject({ input: 'text' });
    expect(toQuery(row('anyFieldContains', { text: 'x'.repeat(1001) }))).toMatchObject({
      input: 'text',
    });
    expect(toQuery(row('equals', { field: 'Notes', text: 'a\0b' }))).toEqual({
      problem: 'Value: must not hold a NUL character',
      input: 'text',
    });
    expect(toQuery(row('contains', { field: 'Notes', text: 'a\0b' }))).toEqual({
      problem: 'Text: must not hold a NUL character',
      input: 'text',
    });
  });

  it('a bound that is not a number: that bound, the lower one first', () => {
    expect(toQuery(row('numberBetween', { field: 'Mass', min: 'ten' }))).toEqual({
      problem: 'From (minimum): "ten" is not a number',
      input: 'min',
    });
    expect(toQuery(row('numberBetween', { field: 'Mass', min: '1', max: '2 kg' }))).toEqual({
      problem: 'To (maximum): "2 kg" is not a number',
      input: 'max',
    });
    expect(toQuery(row('numberBetween', { field: 'Mass', min: 'a', max: 'b' }))).toEqual({
      problem: 'From (minimum): "a" is not a number',
      input: 'min',
    });
    // The field comes first.
    expect(toQuery(row('numberBetween', { min: 'a' }))).toEqual({
      problem: 'Field name: give the name of a field',
      input: 'field',
    });
  });

  it('a unit too long: the unit, named by its label', () => {
    expect(
      toQuery(row('numberBetween', { field: 'Mass', min: '1', unit: 'u'.repeat(101) })),
    ).toEqual({
      problem: 'Unit (optional): Too big: expected string to have <=100 characters',
      input: 'unit',
    });
    // Two numbers the wrong way round beside it: that too (the order of numbers is known).
    expect(
      toQuery(row('numberBetween', { field: 'Mass', min: '5', max: '1', unit: 'u'.repeat(101) })),
    ).toEqual({
      problem:
        'Unit (optional): Too big: expected string to have <=100 characters; From (minimum) must not be above To (maximum)',
      input: 'unit',
    });
  });

  it('a date bound that is not a date, or not a real one: that bound, named once with its rule', () => {
    expect(toQuery(row('dateBetween', { field: 'Made', from: '2024-02-30' }))).toEqual({
      problem: 'From: is not a real date',
      input: 'from',
    });
    expect(toQuery(row('dateBetween', { field: 'Made', to: '2024-03-01T25:00' }))).toEqual({
      problem: 'To: is not a real date and time',
      input: 'to',
    });
    // Not of the form: that alone, not also "not a real date".
    expect(toQuery(row('dateBetween', { field: 'Made', to: '01/03/2024' }))).toEqual({
      problem: 'To: must be YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]',
      input: 'to',
    });
  });

  it('a bound that is not a real date: no word on the order, which it cannot have', () => {
    // Each of these bounds, if read as text, would sort after the other one.
    expect(
      toQuery(row('dateBetween', { field: 'Made', from: '2024-03-30', to: '2024-02-31' })),
    ).toEqual({ problem: 'To: is not a real date', input: 'to' });
    expect(
      toQuery(row('dateBetween', { field: 'Made', from: '2024-02-30', to: '2024-01-01' })),
    ).toEqual({ problem: 'From: is not a real date', input: 'from' });
    expect(
      toQuery(row('dateBetween', { field: 'Made', from: '2024-03-30', to: '01/02/2024' })),
    ).toEqual({ problem: 'To: must be YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]', input: 'to' });
    expect(
      toQuery(
        row('dateBetween', {
          field: 'Made',
          withTime: true,
          from: '2024-03-30T10:00',
          to: '2024-02-30T09:00',
        }),
      ),
    ).toEqual({ problem: 'To: is not a real date and time', input: 'to' });
    // A number bound that is not a number: that bound alone.
    expect(toQuery(row('numberBetween', { field: 'Mass', min: 'ten', max: '1' }))).toEqual({
      problem: 'From (minimum): "ten" is not a number',
      input: 'min',
    });
  });

  it('a problem of the whole row (no bound, bounds the wrong way round): its kind, the bounds named by their labels', () => {
    expect(toQuery(row('numberBetween', { field: 'Mass' }))).toEqual({
      problem: 'give From (minimum), To (maximum) or both',
      input: 'kind',
    });
    expect(toQuery(row('numberBetween', { field: 'Mass', min: '5', max: '2' }))).toEqual({
      problem: 'From (minimum) must not be above To (maximum)',
      input: 'kind',
    });
    expect(toQuery(row('dateBetween', { field: 'Made' }))).toEqual({
      problem: 'give From, To or both',
      input: 'kind',
    });
    expect(
      toQuery(row('dateBetween', { field: 'Made', from: '2024-03-02', to: '2024-03-01' })),
    ).toEqual({ problem: 'From must not be after To', input: 'kind' });
  });

  it('several problems: each in words once, naming its control, at the control of the first', () => {
    expect(
      toQuery(row('dateBetween', { field: 'Made', from: '2024-02-30', to: '2024-02-31' })),
    ).toEqual({ problem: 'From: is not a real date; To: is not a real date', input: 'from' });
    expect(
      toQuery(row('dateBetween', { field: 'Made', from: '30.02.2024', to: '2024-02-31' })),
    ).toEqual({
      problem: 'From: must be YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]; To: is not a real date',
      input: 'from',
    });
  });
});

describe('a problem names each control by the label the panel shows it with', () => {
  // The controls of each kind, as ConditionEditor shows them (it takes its labels from here).
  const controls: Record<ConditionKind, ConditionInput[]> = {
    equals: ['kind', 'field', 'text'],
    contains: ['kind', 'field', 'text'],
    numberBetween: ['kind', 'field', 'min', 'max', 'unit'],
    dateBetween: ['kind', 'field', 'from', 'to'],
    checkbox: ['kind', 'field'],
    anyFieldContains: ['kind', 'text'],
  };

  it('labels: the number bounds say which end they are, the unit that it may be left out', () => {
    const labels = (kind: ConditionKind): string[] =>
      controls[kind].map((input) => controlLabel(kind, input));
    expect(labels('numberBetween')).toEqual([
      'Condition',
      'Field name',
      'From (minimum)',
      'To (maximum)',
      'Unit (optional)',
    ]);
    expect(labels('dateBetween')).toEqual(['Condition', 'Field name', 'From', 'To']);
    expect(labels('equals')).toEqual(['Condition', 'Field name', 'Value']);
    expect(labels('contains')).toEqual(['Condition', 'Field name', 'Text']);
    expect(labels('anyFieldContains')).toEqual(['Condition', 'Text']);
  });

  it('each problem of every kind starts with, or speaks of, labels of its own controls', () => {
    const refused: ConditionRow[] = [
      ...(['equals', 'contains', 'numberBetween', 'dateBetween', 'checkbox'] as const).map((kind) =>
        row(kind, { text: 'x', min: '1' }),
      ),
      row('equals', { field: 'Notes', text: 'a\0b' }),
      row('contains', { field: 'Notes' }),
      row('anyFieldContains'),
      row('numberBetween', { field: 'Mass' }),
      row('numberBetween', { field: 'Mass', min: 'ten' }),
      row('numberBetween', { field: 'Mass', max: 'ten' }),
      row('numberBetween', { field: 'Mass', min: '5', max: '1', unit: 'u'.repeat(101) }),
      row('dateBetween', { field: 'Made' }),
      row('dateBetween', { field: 'Made', from: '2024-02-30', to: '01/03/2024' }),
      row('dateBetween', { field: 'Made', from: '2024-03-02', to: '2024-03-01' }),
    ];
    for (const refusedRow of refused) {
      const result = toQuery(refusedRow);
      if (!('problem' in result)) throw new Error(`not refused: ${JSON.stringify(refusedRow)}`);
      const labels = controls[refusedRow.kind].map((input) => controlLabel(refusedRow.kind, input));
      for (const part of result.problem.split('; ')) {
        // "Label: what is wrong", or of the whole row, a sentence naming every bound by its label.
        const named = /^([^:"]+): /.exec(part)?.[1];
        if (named !== undefined) {
          expect(labels, part).toContain(named);
        } else {
          const bounds = controls[refusedRow.kind].filter((input) =>
            ['min', 'max', 'from', 'to'].includes(input),
          );
          expect(bounds, part).not.toEqual([]);
          for (const input of bounds) {
            expect(part, part).toContain(controlLabel(refusedRow.kind, input));
          }
        }
      }
    }
  });
});
