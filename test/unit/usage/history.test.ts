import { describe, expect, it } from 'vitest';
import type { ToolInfo, UsageEventView } from '../../../shared/api.js';
import type { Question } from '../../../shared/questions/index.js';
import { historyRows, toCsv } from '../../../shared/usage/history.js';

const pre = [
  { type: 'textbox', name: 'experiment_title', title: 'Title' },
  {
    type: 'group',
    name: 'sample_group',
    title: 'Samples',
    max_number: 5,
    questions: [
      { type: 'textbox', name: 'sample_name', title: 'Name' },
      { type: 'number', name: 'count', title: 'Count' },
    ],
  },
] as Question[];
const post = [
  { type: 'checkbox', name: 'cleaned', title: 'Cleaned', choices: ['stage', 'holder'] },
] as Question[];

const tool: ToolInfo = {
  id: 1,
  uuid: 't-1',
  name: 'SEM',
  pre_usage_questions: pre,
  post_usage_questions: post,
};

function event(id: number, preData: unknown, runData: unknown): UsageEventView {
  return {
    id,
    uuid: `u-${id}`,
    user_id: 2,
    operator_id: 3,
    project_id: 4,
    tool_id: 1,
    start: '2024-05-01T09:00:00.000Z',
    end: '2024-05-01T10:00:00.000Z',
    validated: false,
    validated_by_id: null,
    remote_work: true,
    pre_run_data: typeof preData === 'string' ? preData : JSON.stringify(preData),
    run_data: typeof runData === 'string' ? runData : JSON.stringify(runData),
    post_usage_pending: false,
    reminder_due: false,
    force_ended_by_id: null,
    user_name: 'ada',
    operator_name: 'staff',
    project_name: 'P1',
    tool_name: 'SEM',
    validated_by_name: null,
  };
}

describe('historyRows', () => {
  it('gives one row per group repetition and repeats the scalar answers', () => {
    const table = historyRows(tool, [
      event(
        7,
        {
          experiment_title: 'Grains',
          sample_group: [
            { sample_name: 'A', count: 1 },
            { sample_name: 'B', count: 2 },
            { sample_name: 'C', count: 3 },
          ],
        },
        { cleaned: ['stage', 'holder'] },
      ),
    ]);
    expect(table.columns).toEqual([
      'event id',
      'user',
      'operator',
      'project',
      'start',
      'end',
      'remote work',
      'validated',
      'pre:experiment_title',
      'pre:sample_group.sample_name',
      'pre:sample_group.count',
      'post:cleaned',
    ]);
    expect(table.rows).toHaveLength(3);
    expect(table.rows.map((r) => r[9])).toEqual(['A', 'B', 'C']);
    expect(table.rows.map((r) => r[10])).toEqual(['1', '2', '3']);
    for (const row of table.rows) {
      expect(row.slice(0, 9)).toEqual([
        '7',
        'ada',
        'staff',
        'P1',
        '2024-05-01T09:00:00.000Z',
        '2024-05-01T10:00:00.000Z',
        'Yes',
        'No',
        'Grains',
      ]);
      expect(row[11]).toBe('stage; holder');
    }
  });

  it('gives one row to an event without group answers, and reads malformed data as empty', () => {
    const table = historyRows(tool, [event(1, '', 'not json'), event(2, { sample_group: [] }, {})]);
    expect(table.rows).toHaveLength(2);
    expect(table.rows[0]?.slice(8)).toEqual(['', '', '', '']);
  });

  it('shows an open event with an empty end', () => {
    const open = { ...event(3, {}, ''), end: null };
    expect(historyRows(tool, [open]).rows[0]?.[5]).toBe('');
  });

  it('accepts NEMO shapes: wrapped answers and groups keyed "0", "1"', () => {
    const table = historyRows(tool, [
      event(
        4,
        {
          experiment_title: { type: 'textbox', name: 'experiment_title', user_input: 'X' },
          sample_group: { '1': { sample_name: 'second' }, '0': { sample_name: 'first' } },
        },
        {},
      ),
    ]);
    expect(table.rows.map((r) => [r[8], r[9]])).toEqual([
      ['X', 'first'],
      ['X', 'second'],
    ]);
  });

  it('keeps answers to questions no longer in the definition as extra columns', () => {
    const table = historyRows(tool, [
      event(5, { old_question: 'kept', old_group: [{ a: '1' }, { a: '2' }] }, {}),
    ]);
    expect(table.columns).toContain('pre:old_question');
    expect(table.columns).toContain('pre:old_group.a');
    expect(table.rows).toHaveLength(2);
  });

  it('lays out a removed group the same whichever event comes first, one left empty too', () => {
    const withSamples = event(8, { old_group: [{ a: '1', b: 'x' }, { a: '2' }] }, {});
    const empty = event(9, { old_group: [] }, {});
    const emptyNemo = event(10, { old_group: {} }, {});
    for (const order of [
      [empty, withSamples, emptyNemo],
      [withSamples, emptyNemo, empty],
    ]) {
      const table = historyRows(tool, order);
      expect(table.columns.filter((c) => c.includes('old_group'))).toEqual([
        'pre:old_group.a',
        'pre:old_group.b',
      ]);
      const a = table.columns.indexOf('pre:old_group.a');
      const cells = table.rows.map((r) => [r[0], r[a], r[a + 1]]);
      expect(cells).toEqual(
        order.flatMap((e) =>
          e.id === 8
            ? [
                ['8', '1', 'x'],
                ['8', '2', ''],
              ]
            : [[String(e.id), '', '']],
        ),
      );
    }
    // A removed question answered with plain values by some events is one column.
    const mixed = historyRows(tool, [
      event(11, { old_question: [] }, {}),
      event(12, { old_question: 'text' }, {}),
      event(13, { old_question: [{ a: '1' }] }, {}),
    ]);
    expect(mixed.columns.filter((c) => c.includes('old_question'))).toEqual(['pre:old_question']);
    const at = mixed.columns.indexOf('pre:old_question');
    expect(mixed.rows.map((r) => r[at])).toEqual(['', 'text', '{"a":"1"}']);
  });

  it('keeps a plain answer given before its question was made a group, in a column of its own', () => {
    // sample_group is a group now; event 20 answered it when it was a text (it was dropped).
    const table = historyRows(tool, [
      event(20, { sample_group: 'old plain answer' }, {}),
      event(21, { sample_group: [{ sample_name: 'A1', count: 2 }] }, {}),
    ]);
    const plain = table.columns.indexOf('pre:sample_group');
    const name = table.columns.indexOf('pre:sample_group.sample_name');
    expect(plain).toBeGreaterThan(0);
    expect(table.rows.map((r) => [r[0], r[plain], r[name]])).toEqual([
      ['20', 'old plain answer', ''],
      ['21', '', 'A1'],
    ]);
    // Without such an answer, no such column.
    expect(
      historyRows(tool, [event(21, { sample_group: [{ sample_name: 'A1' }] }, {})]).columns,
    ).not.toContain('pre:sample_group');
  });
});

describe('toCsv', () => {
  it('quotes per RFC 4180 and ends records with CRLF', () => {
    expect(
      toCsv(
        ['a', 'b'],
        [
          ['x,y', 'say "hi"'],
          ['line\nbreak', 'plain'],
        ],
      ),
    ).toBe('a,b\r\n"x,y","say ""hi"""\r\n"line\nbreak",plain\r\n');
  });

  it('defuses cells a spreadsheet would run as a formula', () => {
    const csv = toCsv(
      ['c'],
      [['=1+1'], ['+A1'], ['-2+3'], ['-A1'], ['@SUM(A1)'], ['\tx'], ['\rx'], ['ok']],
    );
    expect(csv.split('\r\n').slice(1, -1)).toEqual([
      "'=1+1",
      "'+A1",
      "'-2+3",
      "'-A1",
      "'@SUM(A1)",
      "'\tx",
      `"'\rx"`,
      'ok',
    ]);
  });

  it('writes plain signed numbers as they are', () => {
    const numbers = ['-7', '-0.5', '+3', '-.5', '-1e-3', '+2.5E+4', '-12.'];
    const csv = toCsv(
      ['n'],
      numbers.map((n) => [n]),
    );
    expect(csv.split('\r\n').slice(1, -1)).toEqual(numbers);
    // Not plain numbers: still defused.
    expect(toCsv(['n'], [['-1e'], ['-'], ['+.'], ['-1 ']])).toBe(
      "n\r\n'-1e\r\n'-\r\n'+.\r\n'-1 \r\n",
    );
  });

  it('round-trips a history table through a simple CSV reader', () => {
    const table = historyRows(tool, [
      event(9, { experiment_title: 'a, "b"', sample_group: [{ sample_name: 'n' }] }, {}),
    ]);
    const csv = toCsv(table.columns, table.rows);
    expect(parseCsv(csv)).toEqual([table.columns, ...table.rows]);
  });
});

/** A minimal RFC 4180 reader, enough to check what toCsv writes. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      record.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else field += ch;
  }
  return records;
}
