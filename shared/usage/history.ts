/**
 * The Usage Data History table (spec 000, rule 3 of "What the service does"): one row per
 * group repetition, so a sample group answered three times gives three rows, with the event's
 * scalar fields and answers repeated on each row. Pure: used by the UI and by exports.
 */
import type { ToolInfo, UsageEventView } from '../api.js';
import type { Question } from '../questions/index.js';

export interface HistoryTable {
  columns: string[];
  rows: string[][];
}

type Phase = 'pre' | 'post';
type AnswerObject = Record<string, unknown>;

/** One answer column: a top-level question, or one field of a group. */
interface AnswerColumn {
  phase: Phase;
  name: string;
  field?: string;
}

const EVENT_COLUMNS = [
  'event id',
  'user',
  'operator',
  'project',
  'start',
  'end',
  'remote work',
  'validated',
];

export function historyRows(tool: ToolInfo, events: UsageEventView[]): HistoryTable {
  const parsed = events.map((event) => ({
    event,
    pre: parseAnswers(event.pre_run_data),
    post: parseAnswers(event.run_data),
  }));
  const answerColumns = [
    ...columnsFor(
      'pre',
      tool.pre_usage_questions,
      parsed.map((p) => p.pre),
    ),
    ...columnsFor(
      'post',
      tool.post_usage_questions,
      parsed.map((p) => p.post),
    ),
  ];
  const columns = [...EVENT_COLUMNS, ...answerColumns.map(columnTitle)];
  // A name with both field columns and a plain one (a question made a group later): its plain
  // column shows the plain answers, its field columns the repetitions.
  const grouped = new Set(
    answerColumns.filter((c) => c.field !== undefined).map((c) => `${c.phase}:${c.name}`),
  );
  const rows: string[][] = [];
  for (const { event, pre, post } of parsed) {
    const byPhase: Record<Phase, AnswerObject> = { pre, post };
    const repetitions = Math.max(
      1,
      ...answerColumns
        .filter((c) => c.field !== undefined)
        .map((c) => groupItems(byPhase[c.phase][c.name]).length),
    );
    const eventCells = [
      String(event.id),
      event.user_name,
      event.operator_name,
      event.project_name,
      event.start,
      event.end ?? '',
      event.remote_work ? 'Yes' : 'No',
      event.validated ? 'Yes' : 'No',
    ];
    for (let i = 0; i < repetitions; i++) {
      const answerCells = answerColumns.map((c) => {
        const value = byPhase[c.phase][c.name];
        if (c.field === undefined) {
          return grouped.has(`${c.phase}:${c.name}`) && looksLikeGroup(value)
            ? ''
            : formatCell(value);
        }
        const item = groupItems(value)[i];
        return item === undefined ? '' : formatCell(item[c.field]);
      });
      rows.push([...eventCells, ...answerCells]);
    }
  }
  return { columns, rows };
}

/** Columns of the tool's questions in their order, then answer keys no longer in its definition. */
function columnsFor(phase: Phase, questions: Question[], answers: AnswerObject[]): AnswerColumn[] {
  const columns: AnswerColumn[] = [];
  const seen = new Set<string>();
  const add = (column: AnswerColumn): void => {
    const key = columnTitle(column);
    if (seen.has(key)) return;
    seen.add(key);
    columns.push(column);
  };
  const groupFields = new Map<string, Set<string>>();
  for (const q of questions) {
    if (q.type === 'group') {
      const fields = new Set<string>();
      groupFields.set(q.name, fields);
      for (const sub of q.questions ?? []) {
        fields.add(sub.name);
        add({ phase, name: q.name, field: sub.name });
      }
    } else {
      add({ phase, name: q.name });
    }
  }
  // Answers to questions no longer in the definition (a question an admin removed since): a
  // group when some event answered it with repetitions and none with a plain value (an event
  // that left the group empty stored []), decided over all the events before any column is
  // made, so the order of the events does not change the table.
  const removed = new Map<string, { group: boolean; plain: boolean; fields: string[] }>();
  for (const answer of answers) {
    for (const [name, value] of Object.entries(answer)) {
      if (groupFields.has(name)) {
        for (const item of groupItems(value)) {
          for (const field of Object.keys(item)) add({ phase, name, field });
        }
        // Answered before the question was made a group: a plain answer, in a column of its own.
        if (!looksLikeGroup(value) && !isEmptyAnswer(value)) add({ phase, name });
        continue;
      }
      if (seen.has(columnTitle({ phase, name }))) continue;
      let seenAs = removed.get(name);
      if (!seenAs) {
        seenAs = { group: false, plain: false, fields: [] };
        removed.set(name, seenAs);
      }
      if (looksLikeGroup(value)) {
        seenAs.group = true;
        for (const item of groupItems(value)) {
          for (const field of Object.keys(item)) {
            if (!seenAs.fields.includes(field)) seenAs.fields.push(field);
          }
        }
      } else if (!isEmptyAnswer(value)) {
        seenAs.plain = true;
      }
    }
  }
  for (const [name, seenAs] of removed) {
    if (seenAs.group && !seenAs.plain) {
      for (const field of seenAs.fields) add({ phase, name, field });
    } else {
      add({ phase, name });
    }
  }
  return columns;
}

/** No answer: nothing, an empty text, or an empty group ([] or {}). */
function isEmptyAnswer(raw: unknown): boolean {
  const value = unwrap(raw);
  if (value === null || value === undefined || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return isObject(value) && Object.keys(value).length === 0;
}

function columnTitle(column: AnswerColumn): string {
  return column.field === undefined
    ? `${column.phase}:${column.name}`
    : `${column.phase}:${column.name}.${column.field}`;
}

/** pre_run_data and run_data are JSON text; an empty or malformed one reads as no answers. */
function parseAnswers(text: string | null | undefined): AnswerObject {
  if (typeof text !== 'string' || text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : {};
  } catch {
    return {};
  }
}

function isObject(value: unknown): value is AnswerObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** NEMO may wrap an answer as `{...definition, user_input}`; read the value inside. */
function unwrap(value: unknown): unknown {
  if (isObject(value) && 'user_input' in value) return value.user_input;
  return value;
}

function looksLikeGroup(raw: unknown): boolean {
  const value = unwrap(raw);
  if (Array.isArray(value)) return value.length > 0 && value.every(isObject);
  return isObject(value) && Object.keys(value).length > 0 && Object.keys(value).every(isIndex);
}

function isIndex(key: string): boolean {
  return /^\d+$/.test(key);
}

/** A group's repetitions: an array of objects, or NEMO's object keyed "0", "1", ... */
function groupItems(raw: unknown): AnswerObject[] {
  const value = unwrap(raw);
  if (Array.isArray(value)) return value.filter(isObject);
  if (isObject(value) && Object.keys(value).every(isIndex)) {
    return Object.keys(value)
      .sort((a, b) => Number(a) - Number(b))
      .map((k) => value[k])
      .filter(isObject);
  }
  return [];
}

function formatCell(raw: unknown): string {
  const value = unwrap(raw);
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (Array.isArray(value)) return value.map(formatCell).join('; ');
  return JSON.stringify(value);
}

/** Cells a spreadsheet would run as a formula start with one of these. */
const FORMULA_START = /^[=+\-@\t\r]/;
// A plain signed number ("-7", "+3", "-0.5", "-1e-3") is a value, not a formula: spreadsheets
// read it as that number and run nothing, so it is written as it is.
const PLAIN_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * RFC 4180 CSV: fields holding a comma, quote or line break are quoted, quotes doubled, records
 * end with CRLF. A cell that a spreadsheet would read as a formula gets a leading apostrophe;
 * a plain number such as -7 does not.
 */
export function toCsv(columns: string[], rows: string[][]): string {
  return [columns, ...rows].map((record) => record.map(csvField).join(',') + '\r\n').join('');
}

function csvField(cell: string): string {
  const safe = FORMULA_START.test(cell) && !PLAIN_NUMBER.test(cell) ? `'${cell}` : cell;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
