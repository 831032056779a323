/**
 * The station's "current reservation" (the one whose answers fill the Enable form), on a real
 * station database and its synced copy, with the clock given: only the person's own, on now
 * or starting within EARLY_START_MINUTES, not ended, the earliest of two.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EARLY_START_MINUTES } from '../../shared/stationReservationApi.js';
import { parseQuestions, type Question } from '../../shared/questions/index.js';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import type { UserRow } from '../../electron/core/station/records.js';
import {
  currentReservation,
  replaceStationReservations,
} from '../../electron/core/station/reservations.js';
import type { SyncReservation } from '../../electron/core/sync/protocol.js';
import { tempDir } from './helpers.js';

const NOW = new Date('2030-01-01T10:00:00.000Z');
const at = (minutes: number): string => new Date(NOW.getTime() + minutes * 60_000).toISOString();

let db: Db;
let alice: UserRow;
let bob: UserRow;
let questions: Question[];

function reservation(
  id: number,
  person: UserRow,
  start: number,
  end: number,
  purpose: string,
): SyncReservation {
  return {
    uuid: `01900000-0000-7000-8000-0000000c${String(id).padStart(4, '0')}`,
    id,
    tool_uuid: '01900000-0000-7000-8000-00000000c0de',
    area_name: null,
    target_name: 'SEM',
    user_uuid: person.uuid,
    user_name: person.username,
    creator_uuid: person.uuid,
    project_uuid: null,
    project_name: null,
    start: at(start),
    end: at(end),
    question_data: JSON.stringify({ purpose }),
  };
}

/** Alice's current reservation when the copy holds `list`: its server id and answers. */
function currentOf(list: SyncReservation[]): { id: number | null; answers: unknown } {
  replaceStationReservations(db, list, NOW.toISOString());
  const current = currentReservation(db, alice, questions, NOW);
  return { id: current.reservation?.id ?? null, answers: current.answers };
}

beforeAll(() => {
  db = openDatabase(join(tempDir('labstation-current-reservation-'), 'station.db'));
  const insert = db.prepare(
    `INSERT INTO users (uuid, username, created_at, updated_at) VALUES (?, ?, ?, ?)`,
  );
  const person = (uuid: string, username: string): UserRow => {
    insert.run(uuid, username, NOW.toISOString(), NOW.toISOString());
    return db.prepare('SELECT * FROM users WHERE uuid = ?').get(uuid) as UserRow;
  };
  alice = person('01900000-0000-7000-8000-0000000a11ce', 'alice');
  bob = person('01900000-0000-7000-8000-000000000b0b', 'bob');
  const parsed = parseQuestions([{ type: 'textbox', name: 'purpose', title: 'Purpose' }]);
  if (!parsed.ok) throw new Error('the questions do not parse');
  questions = parsed.questions;
});

afterAll(() => db.close());

describe('the current reservation at a station', () => {
  it("is never someone else's, though on now", () => {
    expect(currentOf([reservation(1, bob, -60, 60, 'bob')])).toEqual({ id: null, answers: {} });
    expect(
      currentOf([reservation(1, bob, -60, 60, 'bob'), reservation(2, alice, 5, 60, 'alice')]),
    ).toEqual({ id: 2, answers: { purpose: 'alice' } });
  });

  it(`is on now or starts within ${EARLY_START_MINUTES} minutes, and has not ended`, () => {
    const early = EARLY_START_MINUTES;
    expect(currentOf([reservation(1, alice, early, early + 60, 'soon')]).id).toBe(1);
    expect(currentOf([reservation(1, alice, early + 1, early + 60, 'later')]).id).toBeNull();
    expect(currentOf([reservation(1, alice, -60, 1, 'ending')]).id).toBe(1);
    expect(currentOf([reservation(1, alice, -60, 0, 'ended')]).id).toBeNull();
  });

  it('is the earliest when two are', () => {
    expect(
      currentOf([reservation(1, alice, 10, 60, 'second'), reservation(2, alice, -30, 5, 'first')]),
    ).toEqual({ id: 2, answers: { purpose: 'first' } });
  });
});
