/**
 * Rules of the NEMO-compatible filters that the broader nemoApi test leaves open, on the same
 * facility (nemo/fixture.ts: New York time, seven usage events, one of them active).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedIso } from '../../electron/core/server/nemo/datetime.js';
import { fixture, get, insertUsage, page, seedEvents, type Fixture } from './nemo/fixture.js';

let f: Fixture;

async function ids(url: string): Promise<number[]> {
  const body = await page(f, url);
  return body.results.map((r) => r.id as number);
}

const enc = encodeURIComponent;

beforeAll(async () => {
  f = await fixture(seedEvents);
});

afterAll(async () => {
  await f.app.close();
  f.db.close();
});

describe('end__lte', () => {
  it('takes what ended by then, not what started before and ended after or is active', async () => {
    // Event 1 runs 14:00-15:00Z, event 2 15:00-16:00Z: at 15:30Z only event 1 has ended.
    expect(await ids(`/api/usage_events/?end__lte=${enc('2024-01-05T15:30:00Z')}`)).toEqual([1]);
    // Event 7 (started 4 November 2024) has no end: it has not ended by 2025.
    expect(await ids('/api/usage_events/?end__lte=2025-01-01')).toEqual([6, 5, 4, 3, 2, 1]);
    // Reservation 1 runs 13:30-15:30Z, reservation 2 16:00-18:00Z.
    expect(await ids(`/api/reservations/?end__lte=${enc('2024-01-05T17:00:00Z')}`)).toEqual([1]);
  });
});

// Mutation: without NEMO's strict bounds and these __in lists, as it was: each was an unknown
// parameter, ignored, and every row came back.
describe("NEMO's strict bounds and lists", () => {
  it('takes __gt and __lt as strictly after and before, to the millisecond', async () => {
    // Event 1 runs 14:00-15:00Z, event 2 15:00-16:00Z: a day cut at 15:00Z, half open.
    const at = enc('2024-01-05T15:00:00Z');
    expect(await ids(`/api/usage_events/?start__lt=${at}`)).toEqual([1]);
    expect(await ids(`/api/usage_events/?start__lte=${at}`)).toEqual([2, 1]);
    expect(await ids(`/api/usage_events/?start__gt=${at}&start__lt=2024-01-06`)).toEqual([3]);
    expect(await ids(`/api/usage_events/?end__lt=${enc('2024-01-05T16:00:00Z')}`)).toEqual([1]);
    expect(await ids(`/api/usage_events/?end__gt=${enc('2024-11-01T00:00:00Z')}`)).toEqual([6]);
    // Event 7 started at 15:00:00.250Z: stored to the millisecond, compared as such.
    for (const [value, expected] of [
      ['2024-11-04T15:00:00.2504Z', []],
      ['2024-11-04T15:00:00.2496Z', [7]],
    ] as const) {
      expect(await ids(`/api/usage_events/?start__gt=${enc(value)}`), value).toEqual(expected);
    }
    for (const [value, expected] of [
      ['2024-11-04T15:00:00.2504Z', [7]],
      ['2024-11-04T15:00:00.250Z', []],
    ] as const) {
      expect(
        await ids(`/api/usage_events/?start__gte=2024-11-04&start__lt=${enc(value)}`),
        value,
      ).toEqual(expected);
    }
    // Reservation 1 runs 13:30-15:30Z, reservation 2 16:00-18:00Z.
    expect(await ids(`/api/reservations/?start__lt=${enc('2024-01-05T16:00:00Z')}`)).toEqual([1]);
    expect(
      await ids(`/api/reservations/?end__gt=${enc('2024-01-05T15:30:00Z')}&end__lt=2024-01-06`),
    ).toEqual([2]);
  });

  it('takes project_id__in and operator_id__in', async () => {
    expect(await ids('/api/usage_events/?project_id__in=2,99')).toEqual([3]);
    expect(await ids('/api/usage_events/?operator_id__in=1')).toEqual([3]);
    expect(await ids('/api/usage_events/?project_id__in=99')).toEqual([]);
    expect(await ids('/api/reservations/?project_id__in=1&end__lt=2024-01-06')).toEqual([2, 1]);
    const bad = await get(f, '/api/usage_events/?operator_id__in=a');
    expect(bad.status).toBe(400);
    expect(bad.body).toHaveProperty('operator_id__in');
  });
});

describe('date-times with an offset', () => {
  it('reads the minutes of an offset, east and west, with or without the colon', async () => {
    // Event 2 starts at 15:00Z, event 3 at 16:30Z: 20:30+05:30 and 11:30-03:30 are 15:00Z.
    const fromTwo = [7, 6, 5, 4, 3, 2];
    for (const value of ['2024-01-05T20:30:00+05:30', '2024-01-05T20:30+0530']) {
      expect(await ids(`/api/usage_events/?start__gte=${enc(value)}`), value).toEqual(fromTwo);
    }
    expect(await ids(`/api/usage_events/?start__gte=${enc('2024-01-05T11:30:00-03:30')}`)).toEqual(
      fromTwo,
    );
    // One minute later, event 2 is out.
    expect(await ids(`/api/usage_events/?start__gte=${enc('2024-01-05T11:31:00-03:30')}`)).toEqual([
      7, 6, 5, 4, 3,
    ]);
  });
});

describe('the default page size', () => {
  let many: Fixture;

  beforeAll(async () => {
    many = await fixture((db) => {
      db.transaction(() => {
        for (let id = 1; id <= 250; id++) {
          const start = Date.UTC(2024, 0, 1) + id * 3_600_000;
          const [startIso, endIso] = [storedIso(start), storedIso(start + 1_800_000)];
          insertUsage(db, { id, user: 2, tool: 1, start: startIso, end: endIso });
        }
      })();
    });
  });

  afterAll(async () => {
    await many.app.close();
    many.db.close();
  });

  it('is 100, and a page past the last of such pages is 404 Invalid page.', async () => {
    const first = await page(many, '/api/usage_events/');
    expect(first.count).toBe(250);
    expect(first.results).toHaveLength(100);
    expect(first.next).toBe('http://nemo.test:8080/api/usage_events/?page=2');
    const third = await page(many, '/api/usage_events/?page=3');
    expect(third.results.map((r) => r.id)).toEqual(Array.from({ length: 50 }, (_, i) => 50 - i));
    expect(third.next).toBeNull();
    expect(await get(many, '/api/usage_events/?page=4')).toEqual({
      status: 404,
      body: { detail: 'Invalid page.' },
    });
  });
});
