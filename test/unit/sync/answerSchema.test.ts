/**
 * The schemas a station checks the server's other answers with (sync/answerSchema.ts): a
 * history page, the push answer, and the answers of booking at a station. Each passes as it
 * is when whole (an older server's without the optional fields too), drops keys a newer server
 * adds, and refuses a field missing or of the wrong type, the problem naming its path and rule.
 */
import { describe, expect, it } from 'vitest';
import {
  bookedReservationSchema,
  cancelledReservationSchema,
  historyPageSchema,
  pushResultSchema,
  reservationFormSchema,
} from '../../../electron/core/sync/answerSchema.js';
import { BadAnswerError, parseAnswer } from '../../../electron/core/sync/parseAnswer.js';
import type {
  PushResult,
  SyncHistoryPage,
  SyncReservation,
} from '../../../electron/core/sync/protocol.js';

const U = (n: number): string => `01890a5d-ac96-774b-bcce-${String(n).padStart(12, '0')}`;

/** A page with every field, each nullable one null somewhere, as the server sends it. */
function historyPage(): SyncHistoryPage {
  const file = (id: number): SyncHistoryPage['files'][number] => ({
    id,
    uuid: U(id),
    persistent_id: `ark:99999/fk4h${id}`,
    persistent_id_type: 'ark',
    watch_path: 'D:/Acquisition',
    source_path: `D:/Acquisition/run-12/grid-${id}.tif`,
    relative_path: `run-12/grid-${id}.tif`,
    filename: `grid-${id}.tif`,
    size: 52428800,
    mtime_ms: 1763997000000.5,
    xxhash: '5d1b0c9a3e7f64a2b8c1d0e9f7a6b5c4',
    hash_algorithm: 'xxh3-128',
    first_discovered_at: '2026-11-24T15:10:02.000Z',
    usage_event_uuid: U(900),
    usage_context: {
      usage_event: U(900),
      tool: 'SEM',
      start: '2026-11-24T14:30:00.000Z',
      user: { username: 'ada' },
      project: { name: 'Cathodes' },
    },
    metadata_: { file_info: { mime_type: 'image/tiff' } },
    state: 'done',
    updated_at: '2026-11-24T15:10:09.000Z',
    transfers: [
      {
        uuid: U(1000 + id),
        status: 'completed',
        storage_location_uuid: U(500),
        destination_path: `/archive/grid-${id}.tif`,
        bytes_transferred: 52428800,
        dest_checksum: '5d1b0c9a3e7f64a2b8c1d0e9f7a6b5c4',
        checksum_verified: true,
        started_at: '2026-11-24T15:10:07.000Z',
        completed_at: '2026-11-24T15:10:09.000Z',
        error: '',
        note: '',
      },
    ],
  });
  const second = file(42);
  Object.assign(second, {
    xxhash: null,
    usage_event_uuid: null,
    usage_context: null,
    metadata_: {},
    state: 'failed',
  });
  Object.assign(second.transfers[0], {
    status: 'failed',
    storage_location_uuid: null,
    destination_path: null,
    bytes_transferred: 0,
    dest_checksum: null,
    checksum_verified: false,
    completed_at: null,
    error: 'disk full',
  });
  return { files: [file(41), second], next: 42 };
}

const pushResult = (): PushResult => ({
  acked: [7, 8, 9],
  stale: [8],
  error: {
    id: 10,
    kind: 'usage_event',
    uuid: U(10),
    code: 'unknown_reference',
    detail: 'user_uuid: no record',
    missing: { table: 'users', uuid: U(11) },
  },
  acked_before: 6,
});

const reservation = (): SyncReservation => ({
  uuid: U(300),
  id: 311,
  tool_uuid: U(30),
  area_name: null,
  target_name: 'SEM',
  user_uuid: U(10),
  user_name: 'alice',
  creator_uuid: U(10),
  project_uuid: U(20),
  project_name: 'Cathodes',
  start: '2026-03-02T08:00:00.000Z',
  end: '2026-03-02T11:00:00.000Z',
  question_data: '{"data_consent":"Agree"}',
});

const form = (): {
  sets: { id: number; name: string }[];
  questions: Record<string, unknown>[];
} => ({
  sets: [{ id: 1, name: 'Experiment' }],
  questions: [
    {
      type: 'radio',
      name: 'data_consent',
      title: 'May the data be harvested?',
      choices: ['Agree', 'Disagree'],
      labels: ['Agree', 'Disagree'],
      required: true,
    },
    { type: 'textbox', name: 'experiment_title', title: 'Experiment', required: true },
  ],
});

/** The problems `schema` finds in `data`; [] when it passes. */
function problems(schema: Parameters<typeof parseAnswer>[0], data: unknown): string[] {
  try {
    parseAnswer(schema, data, 'answer', 'nothing done');
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(BadAnswerError);
    return (error as BadAnswerError).issues;
  }
}

/** `make()` with `spoil` done to it, as a broken server would send it. */
function spoiled<T>(make: () => T, spoil: (value: T) => void): unknown {
  const value = make();
  spoil(value);
  return value;
}

/** Writes what the types forbid there: the wrong type a broken server sends. */
function put<T extends object>(target: T, key: keyof T, value: unknown): void {
  (target as Record<keyof T, unknown>)[key] = value;
}

/** Leaves out what the types require. */
function drop<T extends object>(target: T, key: keyof T): void {
  delete (target as Partial<T>)[key];
}

/** Adds what the types do not know: a newer server's field. */
function add(target: object, key: string, value: unknown): void {
  Object.assign(target, { [key]: value });
}

describe('the history page', () => {
  it('passes as the server sends it, every field known', () => {
    const page = historyPage();
    expect(parseAnswer(historyPageSchema, structuredClone(page), 'a', 'b')).toEqual(page);
  });

  it("passes an older server's page without usage_context, and uuids in any form", () => {
    const page = historyPage();
    delete page.files[0].usage_context;
    page.files[1].uuid = '9f3e2d1c4b5a4c6d8e7f0a1b2c3d4e5f';
    page.next = null;
    expect(parseAnswer(historyPageSchema, structuredClone(page), 'a', 'b')).toEqual(page);
  });

  it('drops the keys a newer server adds', () => {
    const sent = spoiled(historyPage, (p) => {
      add(p, 'total', 2);
      add(p.files[0], 'station_name', 'old-pc');
      add(p.files[0].transfers[0], 'attempts', 3);
    });
    expect(parseAnswer(historyPageSchema, sent, 'a', 'b')).toEqual(historyPage());
  });

  it('keeps a metadata key named __proto__ as the own key JSON.parse made it', () => {
    const sent = JSON.parse(
      JSON.stringify(historyPage()).replace('"file_info":', '"__proto__":{"x":1},"file_info":'),
    ) as unknown;
    const metadata = parseAnswer(historyPageSchema, sent, 'a', 'b').files[0].metadata_;
    expect(Object.hasOwn(metadata, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(metadata)).toBe(Object.prototype);
  });

  it.each<[string, (p: SyncHistoryPage) => void, string]>([
    [
      'next, missing',
      (p) => drop(p, 'next'),
      'next: Invalid input: expected number, received undefined',
    ],
    [
      'next, a string',
      (p) => put(p, 'next', '42'),
      'next: Invalid input: expected number, received string',
    ],
    ['files', (p) => put(p, 'files', {}), 'files: Invalid input: expected array, received object'],
    [
      'a size as text',
      (p) => put(p.files[1], 'size', '10'),
      'files[1].size: Invalid input: expected number, received string',
    ],
    [
      'a negative size',
      (p) => put(p.files[0], 'size', -1),
      'files[0].size: Too small: expected number to be >=0',
    ],
    [
      'a state the station does not know',
      (p) => put(p.files[0], 'state', 'copying'),
      'files[0].state: Invalid option: expected one of "waiting"|"failed"|"done"|"gone"',
    ],
    [
      'metadata as JSON text',
      (p) => put(p.files[0], 'metadata_', '{}'),
      'files[0].metadata_: expected an object',
    ],
    [
      'a uuid, empty',
      (p) => put(p.files[0], 'uuid', ''),
      'files[0].uuid: Too small: expected string to have >=1 characters',
    ],
    [
      'a transfer, its flag',
      (p) => put(p.files[1].transfers[0], 'checksum_verified', 0),
      'files[1].transfers[0].checksum_verified: Invalid input: expected boolean, received number',
    ],
    [
      'a transfer, missing',
      (p) => drop(p.files[0].transfers[0], 'completed_at'),
      'files[0].transfers[0].completed_at: Invalid input: expected string, received undefined',
    ],
  ])('refuses %s, naming the field', (_what, spoil, problem) => {
    expect(problems(historyPageSchema, spoiled(historyPage, spoil))).toEqual([problem]);
  });

  it('says what was not done, the first problem and how many more', () => {
    const sent = spoiled(historyPage, (p) => {
      put(p.files[0], 'size', '1');
      put(p.files[1], 'filename', null);
    });
    expect(() =>
      parseAnswer(historyPageSchema, sent, 'history page', 'nothing of it taken'),
    ).toThrow(
      "the server's history page does not parse, nothing of it taken: files[0].size: " +
        'Invalid input: expected number, received string (and 1 more)',
    );
  });

  it('is the schema the API docs describe the answer with', () => {
    expect(historyPageSchema.meta()?.id).toBe('SyncHistoryPage');
  });
});

describe('the push answer', () => {
  it("passes as the server sends it, and an older server's without acked_before", () => {
    const result = pushResult();
    expect(parseAnswer(pushResultSchema, structuredClone(result), 'a', 'b')).toEqual(result);
    const older: PushResult = { acked: [7], stale: [], error: null };
    expect(parseAnswer(pushResultSchema, structuredClone(older), 'a', 'b')).toEqual(older);
    const none = { ...older, acked_before: null };
    expect(parseAnswer(pushResultSchema, structuredClone(none), 'a', 'b')).toEqual(none);
  });

  it('drops the keys a newer server adds', () => {
    const sent = spoiled(pushResult, (r) => {
      add(r, 'took_ms', 3);
      add(r.error!, 'hint', 'add the person');
    });
    expect(parseAnswer(pushResultSchema, sent, 'a', 'b')).toEqual(pushResult());
  });

  // acked names the outbox rows the station deletes: only integer ids, strictly.
  it.each<[string, (r: PushResult) => void, string]>([
    [
      'acked, missing',
      (r) => drop(r, 'acked'),
      'acked: Invalid input: expected array, received undefined',
    ],
    [
      'acked, one id',
      (r) => put(r, 'acked', 7),
      'acked: Invalid input: expected array, received number',
    ],
    [
      'acked, ids as text',
      (r) => put(r, 'acked', [7, '8']),
      'acked[1]: Invalid input: expected number, received string',
    ],
    [
      'acked, a fraction',
      (r) => put(r, 'acked', [7, 8.5]),
      'acked[1]: Invalid input: expected int, received number',
    ],
    ['acked, zero', (r) => put(r, 'acked', [0]), 'acked[0]: Too small: expected number to be >=1'],
    [
      'acked, null in it',
      (r) => put(r, 'acked', [7, null]),
      'acked[1]: Invalid input: expected number, received null',
    ],
    [
      'stale, missing',
      (r) => drop(r, 'stale'),
      'stale: Invalid input: expected array, received undefined',
    ],
    [
      'acked_before, as text',
      (r) => put(r, 'acked_before', '6'),
      'acked_before: Invalid input: expected number, received string',
    ],
    [
      'error, missing',
      (r) => drop(r, 'error'),
      'error: Invalid input: expected object, received undefined',
    ],
    [
      'error, its id',
      (r) => put(r.error!, 'id', '10'),
      'error.id: Invalid input: expected number, received string',
    ],
    [
      'error, what is missing',
      (r) => drop(r.error!.missing!, 'uuid'),
      'error.missing.uuid: Invalid input: expected string, received undefined',
    ],
  ])('refuses %s, naming the field', (_what, spoil, problem) => {
    expect(problems(pushResultSchema, spoiled(pushResult, spoil))).toEqual([problem]);
  });

  it("refuses a proxy's page in its place", () => {
    expect(problems(pushResultSchema, '<html>log in</html>')).toEqual([
      '(the answer): Invalid input: expected object, received string',
    ]);
  });

  it('is the schema the API docs describe the answer with', () => {
    expect(pushResultSchema.meta()?.id).toBe('SyncPushResult');
  });
});

describe('the answers of booking at a station', () => {
  it('pass as the server sends them', () => {
    expect(parseAnswer(reservationFormSchema, form(), 'a', 'b')).toEqual(form());
    const booked = { reservation: reservation() };
    expect(parseAnswer(bookedReservationSchema, structuredClone(booked), 'a', 'b')).toEqual(booked);
    const area = {
      reservation: {
        ...reservation(),
        tool_uuid: null,
        area_name: 'Bay',
        project_uuid: null,
        project_name: null,
      },
    };
    expect(parseAnswer(bookedReservationSchema, structuredClone(area), 'a', 'b')).toEqual(area);
    const cancelled = { cancelled: true, id: 311, uuid: U(300) };
    expect(
      parseAnswer(cancelledReservationSchema, { ...cancelled, detail: 'x' }, 'a', 'b'),
    ).toEqual(cancelled);
  });

  it('takes a form the server read under older rules (a pattern valid only wrapped)', () => {
    // The server loads a set saved before such patterns were refused (stored: true): the
    // station refused the whole form, and no one could book the tool there.
    const older = form();
    older.questions.push({ type: 'textbox', name: 'code', pattern: 'a)|(b' });
    expect(parseAnswer(reservationFormSchema, structuredClone(older), 'a', 'b')).toEqual(older);
  });

  it.each<[string, unknown, string]>([
    [
      'a form question the station cannot render',
      spoiled(form, (f) => drop(f.questions[0], 'choices')),
      'questions: data_consent.choices: Question "data_consent": property "choices" is missing; ' +
        'a radio question needs at least one choice',
    ],
    [
      'a form question without a name',
      spoiled(form, (f) => drop(f.questions[1], 'name')),
      'questions: [1].name: Question 2: property "name" is missing',
    ],
    [
      'a form question that is no object',
      spoiled(form, (f) => put(f.questions, 1, 'experiment_title')),
      'questions[1]: expected an object',
    ],
    [
      'a form set',
      spoiled(form, (f) => put(f.sets[0], 'id', '1')),
      'sets[0].id: Invalid input: expected number, received string',
    ],
  ])('refuses %s, naming the field', (_what, sent, problem) => {
    expect(problems(reservationFormSchema, sent)).toEqual([problem]);
  });

  it('refuses a booking answer with a reservation field missing or wrong, naming it', () => {
    const withoutEnd = { reservation: reservation() };
    drop(withoutEnd.reservation, 'end');
    expect(problems(bookedReservationSchema, withoutEnd)).toEqual([
      'reservation.end: Invalid input: expected string, received undefined',
    ]);
    expect(problems(bookedReservationSchema, reservation())).toEqual([
      'reservation: Invalid input: expected object, received undefined',
    ]);
  });

  it('refuses a cancel answer that does not say it was cancelled, or an HTML page', () => {
    expect(
      problems(cancelledReservationSchema, { cancelled: 'yes', id: 311, uuid: U(300) }),
    ).toEqual(['cancelled: Invalid input: expected boolean, received string']);
    expect(problems(cancelledReservationSchema, '<html>log in</html>')).toEqual([
      '(the answer): Invalid input: expected object, received string',
    ]);
  });
});
