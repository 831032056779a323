/**
 * GET /api/experiments/ on a real SQLite file and a real fastify instance: the record the
 * metadata-harvesting rules build for each usage event (run_data, pre_run_data, then the
 * reservation with the largest overlap), why there is none, and the files found during the
 * usage; the same filters and pagination as usage_events; staff only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../electron/core/db/open.js';
import { createApiToken } from '../../electron/core/server/auth.js';
import type { ExperimentJson } from '../../electron/core/server/nemo/experiments.js';
import { fixture, get, insertUsage, page, type Fixture } from './nemo/fixture.js';

const T0 = '2024-01-01T00:00:00.000Z';

const answers = (consent: string, title: string) =>
  JSON.stringify({
    data_consent: consent,
    experiment_title: title,
    experiment_purpose: 'EDS maps',
    project_id: 'CAT-1',
    sample_group: {
      '0': { sample_name: 'S1', sample_or_pid: 'Sample Name', sample_elements: ['Fe'] },
      '3': { sample_name: 'ark:99999/fk4x2', sample_or_pid: 'PID' },
    },
  });

function reservation(
  db: Db,
  id: number,
  tool: number,
  start: string,
  end: string,
  data: string,
  cancelled = 0,
) {
  db.prepare(
    `INSERT INTO reservations (id, uuid, user_id, creator_id, project_id, tool_id, area_id, start,
       "end", cancelled, question_data, created_at, updated_at)
     VALUES (?, ?, 2, 1, 1, ?, NULL, ?, ?, ?, ?, ?, ?)`,
  ).run(id, `r-${id}`, tool, start, end, cancelled, data, T0, T0);
}

/** A file record; `usage`: the usage its station linked it to (none by default). */
function file(db: Db, id: number, instrument: number, at: string, usage: number | null = null) {
  db.prepare(
    `INSERT INTO harvest_files (id, uuid, instrument_id, persistent_id, watch_path, relative_path,
       source_path, filename, size, mtime_ms, xxhash, first_discovered_at, metadata_, state, updated_at,
       usage_event_id)
     VALUES (?, ?, ?, ?, '/data', ?, ?, ?, 10, 0, 'abc', ?, '{}', 'done', ?, ?)`,
  ).run(
    id,
    `f-${id}`,
    instrument,
    `ark:99999/fk4t${id}`,
    `f${id}.tif`,
    `/data/f${id}.tif`,
    `f${id}.tif`,
    at,
    T0,
    usage,
  );
}

function seed(db: Db): void {
  db.prepare(
    `INSERT INTO instruments (id, uuid, name, tool_id, destination_template, created_at, updated_at)
     VALUES (1, 'i-1', 'SEM camera', 1, '{relative_path}', ?, ?), (2, 'i-2', 'TEM camera', 2, '{relative_path}', ?, ?)`,
  ).run(T0, T0, T0, T0);
  // 1: run_data missing consent; the reservation overlapping most (r-2) answers.
  insertUsage(db, {
    id: 1,
    user: 2,
    tool: 1,
    start: '2024-01-05T14:00:00.000Z',
    end: '2024-01-05T16:00:00.000Z',
    run: JSON.stringify({ experiment_title: 'no consent here' }),
  });
  reservation(
    db,
    1,
    1,
    '2024-01-05T13:00:00.000Z',
    '2024-01-05T14:30:00.000Z',
    answers('Yes', 'short'),
  );
  reservation(
    db,
    2,
    1,
    '2024-01-05T14:30:00.000Z',
    '2024-01-05T17:00:00.000Z',
    answers('agree', 'Grain boundaries'),
  );
  reservation(
    db,
    3,
    1,
    '2024-01-05T14:00:00.000Z',
    '2024-01-05T16:00:00.000Z',
    answers('Yes', 'cancelled'),
    1,
  );
  // Files of tool 1 during usage 1 (two), before it, and of another tool during it.
  file(db, 1, 1, '2024-01-05T14:10:00.000Z');
  file(db, 2, 1, '2024-01-05T15:59:00.000Z');
  file(db, 3, 1, '2024-01-05T13:59:00.000Z');
  file(db, 4, 2, '2024-01-05T15:00:00.000Z');
  // Notebook experiments linked to usage 1 at the station (one deleted since).
  const entry = db.prepare(
    `INSERT INTO notebook_entries (uuid, kind, title, title_search, tags, metadata, owner_id,
       usage_event_id, created_at, updated_at, deleted_at)
     VALUES (?, 'experiment', ?, ?, '["steel"]', ?, 2, 1, ?, ?, ?)`,
  );
  entry.run(
    'n-1',
    'EDS of 316L',
    'eds of 316l',
    JSON.stringify({ extra_fields: { Beam: { value: '15' } } }),
    T0,
    T0,
    null,
  );
  entry.run('n-2', 'Gone', 'gone', null, T0, T0, T0);
  // 2: run_data used as it is.
  insertUsage(db, {
    id: 2,
    user: 2,
    tool: 2,
    start: '2024-01-06T14:00:00.000Z',
    end: '2024-01-06T15:00:00.000Z',
    run: answers('True', 'From run data'),
  });
  // 3: every source declined or missing: no record.
  insertUsage(db, {
    id: 3,
    user: 3,
    tool: 1,
    start: '2024-01-07T14:00:00.000Z',
    end: '2024-01-07T15:00:00.000Z',
    pre: answers('Disagree', 'declined'),
  });
  // Linked by their station to a usage their times (by a PC clock set back) do not fall in:
  // one to usage 3, seen during usage 1, and one to usage 1, seen before it.
  file(db, 5, 1, '2024-01-05T15:00:00.000Z', 3);
  file(db, 6, 1, '2024-01-05T13:00:00.000Z', 1);
}

let f: Fixture;
beforeAll(async () => {
  f = await fixture(seed);
});
afterAll(async () => {
  await f.app.close();
  f.db.close();
});

describe('GET /api/experiments/', () => {
  it("builds the record from the best reservation's answers and lists the usage's files", async () => {
    const res = await get(f, '/api/experiments/1/');
    expect(res.status).toBe(200);
    const body = res.body as ExperimentJson;
    expect(body.record).toMatchObject({
      usage_event_id: 1,
      source: 'question_data',
      experiment_title: 'Grain boundaries',
      data_consent: 'agree',
      reservation: { id: 2, overlap_seconds: 5400 },
    });
    expect(body.record?.samples.map((s) => s.sample_name)).toEqual(['S1', 'ark:99999/fk4x2']);
    expect(body.attempts.map((a) => a.reason ?? 'ok')).toEqual(['consent_missing', 'empty', 'ok']);
    // The files its station linked to it, and those linked to none first seen during it: not
    // one another usage's station linked to that (by a clock set back) was seen during it.
    expect(body.files.map((x) => x.persistent_id)).toEqual([
      'ark:99999/fk4t6',
      'ark:99999/fk4t1',
      'ark:99999/fk4t2',
    ]);
    expect(((await get(f, '/api/experiments/3/')).body as ExperimentJson).files).toEqual([
      expect.objectContaining({ persistent_id: 'ark:99999/fk4t5' }),
    ]);
    expect(body.usage_event).toMatchObject({ id: 1, tool: 1, start: '2024-01-05T09:00:00-05:00' });
    expect(body.notebook_entries).toEqual([
      {
        uuid: 'n-1',
        title: 'EDS of 316L',
        tags: ['steel'],
        metadata: { extra_fields: { Beam: { value: '15' } } },
        updated_at: T0,
      },
    ]);
  });

  it('pages and filters as usage_events, with a reason where no record can be built', async () => {
    const all = await page(f, '/api/experiments/');
    expect(all.count).toBe(3);
    expect(all.results.map((r) => r.id)).toEqual([3, 2, 1]);
    const none = all.results[0] as unknown as ExperimentJson;
    expect(none.record).toBeNull();
    expect(none.reservation).toBeNull();
    expect(none.reason).toContain('pre_run_data: data_consent: declined (Disagree)');
    expect(none.reason).toContain('question_data: no reservation');
    const fromRun = all.results[1] as unknown as ExperimentJson;
    expect(fromRun.record).toMatchObject({ source: 'run_data', experiment_title: 'From run data' });
    expect(fromRun.files).toEqual([]);
    const tool1 = await page(f, '/api/experiments/?tool_id=1&page_size=1');
    expect(tool1.count).toBe(2);
    expect(tool1.next).toContain('page=2');
    expect((await page(f, '/api/experiments/?user_id=3')).results.map((r) => r.id)).toEqual([3]);
  });

  it('shows staff only the files of instruments they are granted, as /api/files does', async () => {
    const staff = `Token ${createApiToken(f.db, 3).token}`;
    const filesOf = async (): Promise<string[]> => {
      const res = await get(f, '/api/experiments/1/', staff);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body as ExperimentJson).files.map((x) => x.persistent_id);
    };
    expect(await filesOf()).toEqual([]);
    f.db
      .prepare(
        `INSERT INTO user_instrument_access (instrument_id, user_id, granted_at, granted_by_id)
         VALUES (1, 3, ?, 1)`,
      )
      .run(T0);
    try {
      expect(await filesOf()).toEqual(['ark:99999/fk4t6', 'ark:99999/fk4t1', 'ark:99999/fk4t2']);
      const listed = await get(f, '/api/experiments/?tool_id=1', staff);
      const usage1 = (listed.body as { results: ExperimentJson[] }).results.find((r) => r.id === 1);
      expect(usage1?.files).toHaveLength(3);
    } finally {
      f.db.prepare('DELETE FROM user_instrument_access WHERE user_id = 3').run();
    }
  });

  it('answers 404 for a usage event that does not exist, 400 for a bad filter, 401/403 as the others', async () => {
    expect((await get(f, '/api/experiments/99/')).status).toBe(404);
    expect((await get(f, '/api/experiments/?start__gte=soon')).status).toBe(400);
    expect((await get(f, '/api/experiments/', '')).status).toBe(401);
  });

  it('takes the answers of a booking of an area that holds the tool', async () => {
    f.db
      .prepare(
        `INSERT INTO areas (id, uuid, name, created_at, updated_at)
       VALUES (51, 'a-51', 'Bay 1', ?, ?), (52, 'a-52', 'Bay 2', ?, ?)`,
      )
      .run(T0, T0, T0, T0);
    f.db.prepare('INSERT INTO area_tools (area_id, tool_id) VALUES (51, 2), (52, 1)').run();
    // Held since the areas were made (the database notes the time it was told: now).
    f.db.prepare('UPDATE area_tool_spans SET held_from = ?').run(T0);
    insertUsage(f.db, {
      id: 4,
      user: 2,
      tool: 2,
      start: '2024-01-08T12:00:00.000Z',
      end: '2024-01-08T13:00:00.000Z',
    });
    const area = f.db.prepare(
      `INSERT INTO reservations (id, uuid, user_id, creator_id, project_id, tool_id, area_id,
         start, "end", cancelled, question_data, created_at, updated_at)
       VALUES (?, ?, 2, 1, 1, NULL, ?, ?, ?, 0, ?, ?, ?)`,
    );
    // Bay 2 does not hold tool 2, though it overlaps the usage more.
    area.run(
      10,
      'r-10',
      52,
      '2024-01-08T12:00:00.000Z',
      '2024-01-08T13:00:00.000Z',
      answers('Yes', 'other bay'),
      T0,
      T0,
    );
    area.run(
      11,
      'r-11',
      51,
      '2024-01-08T11:00:00.000Z',
      '2024-01-08T12:30:00.000Z',
      answers('Yes', 'Booked the bay'),
      T0,
      T0,
    );
    const body = (await get(f, '/api/experiments/4/')).body as ExperimentJson;
    expect(body.record).toMatchObject({
      source: 'question_data',
      experiment_title: 'Booked the bay',
      reservation: { id: 11, overlap_seconds: 1800 },
    });

    // Mutation: experiments.ts reading the areas' tools as they are now (area_tools): the
    // record of the past usage was rebuilt from Bay 2's booking, which never held tool 2.
    // Later, tool 2 moves from Bay 1 to Bay 2: the record of the usage before stays as it was.
    f.db.prepare('DELETE FROM area_tools WHERE area_id = 51 AND tool_id = 2').run();
    f.db.prepare('INSERT INTO area_tools (area_id, tool_id) VALUES (52, 2)').run();
    const later = (await get(f, '/api/experiments/4/')).body as ExperimentJson;
    expect(later.record).toMatchObject({
      experiment_title: 'Booked the bay',
      reservation: { id: 11, overlap_seconds: 1800 },
    });
    expect(
      f.db
        .prepare(
          'SELECT area_id, held_from, held_until IS NULL AS open FROM area_tool_spans WHERE tool_id = 2 ORDER BY id',
        )
        .all(),
    ).toEqual([
      { area_id: 51, held_from: T0, open: 0 },
      {
        area_id: 52,
        held_from: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) as unknown,
        open: 1,
      },
    ]);
  });
});

describe('GET /api/experiments/{id}/ without a record', () => {
  it('names the reservation that overlaps the usage most, whose answers were passed over', async () => {
    const declined = await fixture((db) => {
      insertUsage(db, {
        id: 1,
        user: 2,
        tool: 1,
        start: '2024-01-05T14:00:00.000Z',
        end: '2024-01-05T15:00:00.000Z',
      });
      reservation(
        db,
        6,
        1,
        '2024-01-05T13:30:00.000Z',
        '2024-01-05T15:30:00.000Z',
        answers('Disagree', 'declined'),
      );
    });
    try {
      const body = (await get(declined, '/api/experiments/1/')).body as ExperimentJson;
      expect(body.record).toBeNull();
      expect(body.reservation).toMatchObject({ id: 6, overlap_seconds: 3600 });
      expect(body.attempts.at(-1)).toMatchObject({
        source: 'question_data',
        reservation_id: 6,
        reason: 'consent_declined',
      });
    } finally {
      await declined.app.close();
      declined.db.close();
    }
  });
});
