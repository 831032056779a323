/**
 * What usage forms make, in the NEMO-compatible read API (spec 000 rule 6): the consumable
 * withdraws that numeric questions naming a consumable charge (`/api/consumable_withdraws/`),
 * and the problem reports of `radio_report_problem` questions (`/api/tasks/`), with their
 * filters, order, pages and detail routes, for staff and admins only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../electron/core/db/open.js';
import { createApiToken } from '../../electron/core/server/auth.js';
import { fixture, get, insertUsage, page, type Fixture } from './nemo/fixture.js';

let f: Fixture;

function seed(db: Db): void {
  // Usage 1: alice (2) on the SEM, operated by Bob (3) for her; usage 2: alice on the TEM.
  insertUsage(db, {
    id: 1,
    user: 2,
    operator: 3,
    tool: 1,
    start: '2024-01-05T14:00:00.000Z',
    end: '2024-01-05T15:00:00.000Z',
  });
  insertUsage(db, {
    id: 2,
    user: 2,
    tool: 2,
    project: 2,
    start: '2024-02-05T15:00:00.000Z',
    end: '2024-02-05T16:00:00.000Z',
  });
  const withdraw = db.prepare(
    `INSERT INTO consumable_withdrawals (id, uuid, consumable, quantity, user_id, project_id,
       usage_event_id, tool_id, question, created_at) VALUES (?, ?, ?, ?, 2, ?, ?, ?, ?, ?)`,
  );
  withdraw.run(1, 'w-1', 'LN2 (litres)', 3, 1, 1, 1, 'ln2', '2024-01-05T15:00:00.000Z');
  withdraw.run(2, 'w-2', 'SEM stub', 2.5, 1, 1, 1, 'stubs', '2024-01-05T15:00:00.000Z');
  withdraw.run(3, 'w-3', 'LN2 (litres)', 1, 2, 2, 2, 'ln2', '2024-02-05T16:00:00.000Z');
  const report = db.prepare(
    `INSERT INTO problem_reports (id, uuid, tool_id, usage_event_id, user_id, question,
       description, force_shutdown, safety_hazard, created_at, resolved_at, resolved_by_id)
     VALUES (?, ?, ?, ?, 2, ?, ?, ?, ?, ?, ?, ?)`,
  );
  report.run(
    1,
    'r-1',
    1,
    1,
    'problem',
    'Vacuum fault',
    1,
    0,
    '2024-01-05T15:00:00.000Z',
    '2024-01-05T19:00:00.000Z',
    3,
  );
  report.run(
    2,
    'r-2',
    2,
    null,
    'broken',
    'Holder broken',
    1,
    1,
    '2024-02-05T14:00:00.000Z',
    null,
    null,
  );
  report.run(
    3,
    'r-3',
    1,
    1,
    'dirty',
    'Chamber dirty',
    0,
    0,
    '2024-01-05T15:00:00.000Z',
    null,
    null,
  );
}

beforeAll(async () => {
  f = await fixture(seed);
});

afterAll(async () => {
  await f.app.close();
  f.db.close();
});

const ids = async (url: string): Promise<number[]> =>
  (await page(f, url)).results.map((r) => r.id as number);

describe('/api/consumable_withdraws/', () => {
  it('lists what usage forms charged, who pays, who recorded it, and where it was asked', async () => {
    const body = await page(f, '/api/consumable_withdraws/?ordering=id');
    expect(body.count).toBe(3);
    expect(body.results[0]).toEqual({
      id: 1,
      customer: 2,
      merchant: 3,
      consumable: 'LN2 (litres)',
      quantity: 3,
      project: 1,
      date: '2024-01-05T10:00:00-05:00',
      usage_event: 1,
      tool_usage: true,
      tool: 1,
      question: 'ln2',
    });
    expect(body.results[1]).toMatchObject({ quantity: 2.5, merchant: 3 });
    expect(body.results[2]).toMatchObject({ merchant: 2, project: 2, tool: 2 });
    expect((await get(f, '/api/consumable_withdraws/2/')).body).toMatchObject({ id: 2 });
  });

  it('filters by usage, project, tool, customer, merchant, consumable and date', async () => {
    expect(await ids('/api/consumable_withdraws/?usage_event=1&ordering=id')).toEqual([1, 2]);
    expect(await ids('/api/consumable_withdraws/?project_id=2')).toEqual([3]);
    expect(await ids('/api/consumable_withdraws/?tool_id__in=1&ordering=-id')).toEqual([2, 1]);
    expect(await ids('/api/consumable_withdraws/?customer=3')).toEqual([]);
    expect(await ids('/api/consumable_withdraws/?merchant=3&ordering=id')).toEqual([1, 2]);
    expect(await ids('/api/consumable_withdraws/?consumable=LN2%20(litres)&ordering=date')).toEqual(
      [1, 3],
    );
    expect(await ids('/api/consumable_withdraws/?date__gte=2024-02-01T00:00:00-05:00')).toEqual([
      3,
    ]);
    const bad = await get(f, '/api/consumable_withdraws/?date__gte=yesterday');
    expect(bad).toEqual({ status: 400, body: { date__gte: ['Enter a valid date/time.'] } });
  });
});

describe('/api/tasks/', () => {
  it('lists the problem reports of usage forms, resolved or not', async () => {
    const body = await page(f, '/api/tasks/?ordering=id');
    expect(body.count).toBe(3);
    expect(body.results[0]).toEqual({
      id: 1,
      tool: 1,
      creator: 2,
      creation_time: '2024-01-05T10:00:00-05:00',
      problem_description: 'Vacuum fault',
      force_shutdown: true,
      safety_hazard: false,
      resolved: true,
      resolution_time: '2024-01-05T14:00:00-05:00',
      resolver: 3,
      usage_event: 1,
      question: 'problem',
    });
    expect(body.results[1]).toMatchObject({
      resolved: false,
      resolution_time: null,
      resolver: null,
      usage_event: null,
      safety_hazard: true,
    });
  });

  it('filters by tool, resolution, shutdown, hazard, usage and time', async () => {
    expect(await ids('/api/tasks/?resolved=false&ordering=id')).toEqual([2, 3]);
    expect(await ids('/api/tasks/?resolved=true')).toEqual([1]);
    expect(await ids('/api/tasks/?tool_id=1&force_shutdown=true')).toEqual([1]);
    expect(await ids('/api/tasks/?safety_hazard=true')).toEqual([2]);
    expect(await ids('/api/tasks/?usage_event__isnull=true')).toEqual([2]);
    expect(
      await ids('/api/tasks/?creation_time__lt=2024-02-01T00:00:00Z&ordering=-creation_time,id'),
    ).toEqual([1, 3]);
    // Unresolved last going up, as PostgreSQL sorts nulls.
    expect(await ids('/api/tasks/?ordering=resolution_time,id')).toEqual([1, 2, 3]);
  });

  it('is for staff and admins: a plain user is refused as NEMO refuses', async () => {
    const user = createApiToken(f.db, 2).token;
    for (const path of ['/api/tasks/', '/api/consumable_withdraws/', '/api/tasks/1/']) {
      expect(await get(f, path, `Token ${user}`), path).toEqual({
        status: 403,
        body: { detail: 'You do not have permission to perform this action.' },
      });
    }
    expect((await get(f, '/api/tasks/', '')).status).toBe(401);
  });
});
