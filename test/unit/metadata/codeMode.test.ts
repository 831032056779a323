// Code mode: problems of JSON text carry the line and column of their place.

import { describe, expect, it } from 'vitest';
import { parseMetadataText } from '../../../shared/metadata/index.js';
import type { LocatedProblem } from '../../../shared/metadata/index.js';
import { lineColumns, scanJson } from '../../../shared/metadata/jsonText.js';

function problemsOf(text: string): LocatedProblem[] {
  return parseMetadataText(text).problems;
}

const TEXT = `{
  "extra_fields": {
    "Sample mass": {
      "type": "number",
      "value": "12",
      "units": ["g", "kg"],
      "unit": "mg"
    },
    "Contact": { "type": "email", "value": "nobody" },
    "Kind": { "type": "select", "value": "x" }
  },
  "notebook": {
    "extra_fields_groups": [
      { "id": 1, "name": "A" },
      { "id": "one", "name": "B" }
    ]
  }
}`;

describe('parseMetadataText: problems at their line', () => {
  it('points at the key of the property a problem is about', () => {
    const problems = problemsOf(TEXT);
    const place = (path: (string | number)[]) =>
      problems.find((problem) => JSON.stringify(problem.path) === JSON.stringify(path));
    expect(place(['extra_fields', 'Kind', 'options'])).toMatchObject({
      line: 10,
      column: 5,
      code: 'missing_options',
    });
    expect(place(['notebook', 'extra_fields_groups', 1, 'id'])).toMatchObject({
      line: 15,
      column: 9,
      code: 'wrong_type',
    });
  });

  it('reads text that starts with a byte order mark, its problems where they were', () => {
    const withMark = parseMetadataText(`\uFEFF${TEXT}`);
    expect(withMark.problems).toEqual(problemsOf(TEXT));
    expect(parseMetadataText('\uFEFF{"extra_fields": {"a": {"value": "1"}}}').ok).toBe(true);
    expect(parseMetadataText('\uFEFF{"extra_fields": }').problems[0]).toMatchObject({
      line: 1,
      column: 19,
    });
  });

  it('sorts problems by place', () => {
    const problems = problemsOf(TEXT);
    const lines = problems.map((problem) => problem.line);
    expect(lines).toEqual([...lines].sort((a, b) => a - b));
  });

  it('locates value problems of an accepted document', () => {
    const fixed = TEXT.replace('"value": "x" }', '"value": "x", "options": ["x", "y"] }').replace(
      '"one"',
      '2',
    );
    const result = parseMetadataText(fixed);
    expect(result.ok).toBe(true);
    expect(result.problems.map(({ line, column, code }) => [line, column, code])).toEqual([
      [7, 7, 'unit_not_in_units'],
      [9, 35, 'invalid_email'],
    ]);
    expect(result.problems[0]?.message).toBe(
      'extra_fields."Sample mass".unit: "mg" is not one of units (g, kg)',
    );
  });

  it('a missing property points at its field', () => {
    expect(problemsOf('{"extra_fields": {\n  "A": {"type": "text"}\n}}')[0]).toMatchObject({
      line: 2,
      column: 3,
      code: 'missing_property',
    });
  });

  it('a list element is located at the element', () => {
    const text =
      '{"extra_fields": {"C": {"type": "select", "options": ["a", "b"],\n "allow_multi_values": true,\n "value": ["a",\n    "z"]}}}';
    expect(problemsOf(text)[0]).toMatchObject({ line: 4, column: 5, code: 'not_an_option' });
  });

  it('field names that need escapes are found', () => {
    const text = '{"extra_fields": {\n"a\\"b\\u00e9": {"type": "date", "value": "2023-02-29"}}}';
    expect(problemsOf(text)[0]).toMatchObject({ line: 2, path: ['extra_fields', 'a"bé', 'value'] });
  });

  it('a key written twice is a notice at the second one; the last one is used', () => {
    const result = parseMetadataText(
      '{"extra_fields": {\n"A": {"value": "1"},\n"A": {"value": "2"}}}',
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.doc.fields).toEqual([{ name: 'A', type: 'text', value: '2', unknown: [] }]);
    expect(result.problems).toEqual([
      expect.objectContaining({
        code: 'duplicate_key',
        line: 3,
        column: 1,
        severity: 'warning',
        path: ['extra_fields', 'A'],
      }),
    ]);
  });

  it('a whole number with more digits than a number holds is a notice naming what it reads as', () => {
    const result = parseMetadataText(
      '{"extra_fields": {\n"Barcode": {"value": 12345678901234567890},\n' +
        '"Count": {"type": "number", "value": 9007199254740992},\n' +
        '"Mass": {"type": "number", "value": 0.1000000000000000055511}}}',
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.problems).toEqual([
      expect.objectContaining({
        code: 'inexact_number',
        line: 2,
        column: 22,
        severity: 'warning',
        path: ['extra_fields', 'Barcode', 'value'],
        message: expect.stringContaining(
          '12345678901234567890 has more digits than a number holds: it reads as ' +
            '12345678901234567000; write it as text ("12345678901234567890") to keep every digit',
        ) as string,
      }),
    ]);
  });

  it('a whole number written as it reads is exact, as metadata convert writes one', () => {
    const result = parseMetadataText(
      '{"extra_fields": {"Barcode": {"value": 12345678901234567000}}}',
    );
    expect(result.ok && result.problems).toEqual([]);
    const big = parseMetadataText(
      '{"extra_fields": {"N": {"type": "number", "value": 1000000000000000000000}}}',
    );
    expect(big.ok && big.problems).toEqual([]);
  });

  it('\\r\\n and \\r end lines too', () => {
    expect(problemsOf('{\r\n"extra_fields":\r{"A": {}}}')[0]).toMatchObject({ line: 3, column: 2 });
  });
});

describe('parseMetadataText: JSON syntax errors', () => {
  const cases: [string, string, number, number, RegExp][] = [
    [
      'a missing comma',
      '{\n  "extra_fields": {\n    "A": {"value": "1"}\n    "B": {"value": "2"}\n  }\n}',
      4,
      5,
      /"," or "}" was expected/,
    ],
    ['a trailing comma', '{"extra_fields": {},\n}', 2, 1, /property name/],
    ['a line break in a string', '{\n "extra_fields": {"A\n', 2, 21, /line break/],
    ['an unclosed string', '{"extra_fields": {"A', 1, 19, /not closed/],
    ['text after the value', '{}\n{}', 2, 1, /after the end/],
    ['an empty text', '', 1, 1, /ends where a value was expected/],
    ['a bad literal', '{"a": tru}', 1, 7, /a value was expected/],
    ['single quotes', "{'a': 1}", 1, 2, /double quotes/],
    ['a bad escape', '{"a": "\\x"}', 1, 8, /escape/],
    ['a leading zero', '{"a": 01}', 1, 8, /"," or "}"/],
    ['an unclosed list', '[1, 2', 1, 6, /ends before the closing \]/],
  ];
  it.each(cases)('%s', (_name, text, line, column, message) => {
    const result = parseMetadataText(text);
    expect(result.ok).toBe(false);
    expect(result.problems).toHaveLength(1);
    const [problem] = result.problems;
    expect(problem).toMatchObject({ code: 'invalid_json', line, column, blocksSaving: true });
    expect(problem?.message).toMatch(message);
    expect(problem?.message).toContain(`line ${line}, column ${column}`);
  });
});

describe('scanJson', () => {
  it('records where keys and values start', () => {
    const scan = scanJson('{"a": [1, {"b": true}]}');
    expect(scan.ok).toBe(true);
    if (!scan.ok) return;
    const a = scan.root.members?.get('a');
    expect(a?.keyStart).toBe(1);
    expect(a?.start).toBe(6);
    expect(a?.items?.[1]?.members?.get('b')).toMatchObject({ keyStart: 11, start: 16 });
  });

  it('handles deep nesting without recursion', () => {
    const depth = 100_000;
    expect(scanJson('['.repeat(depth) + ']'.repeat(depth)).ok).toBe(true);
    expect(scanJson('['.repeat(depth)).ok).toBe(false);
  });

  it('lineColumns maps offsets to 1-based lines and columns', () => {
    const at = lineColumns('ab\ncd\r\nef\rg');
    expect([0, 2, 3, 5, 7, 10, 11, 99].map((offset) => at(offset))).toEqual([
      { line: 1, column: 1 },
      { line: 1, column: 3 },
      { line: 2, column: 1 },
      { line: 2, column: 3 },
      { line: 3, column: 1 },
      { line: 4, column: 1 },
      { line: 4, column: 2 },
      { line: 4, column: 2 },
    ]);
  });
});
