/**
 * The NEMO-compatible read API on a real SQLite file and a real fastify instance (app.inject):
 * every filter, the 400/404 bodies, pagination edges, ordering, field sets, time zones
 * (naive values, dates alone, DST days) and the query plans of the list queries.
 */
import { request } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServerApp } from '../../electron/core/server/app.js';
import { createLogger } from '../../electron/core/util/log.js';
import { createApiToken } from '../../electron/core/server/auth.js';
import {
  formatDateTime,
  parseDateTime,
  storedIso,
} from '../../electron/core/server/nemo/datetime.js';
import { listSql } from '../../electron/core/server/nemo/queries.js';
import { usageEvents } from '../../electron/core/server/nemo/resources.js';
import { listQueryOf } from '../../electron/core/server/nemo/routes.js';
import {
  NY,
  QUESTION_DATA,
  RUN_DATA,
  fixture,
  get,
  insertUsage,
  page,
  seedEvents,
  type Fixture,
} from './nemo/fixture.js';

let f: Fixture;

async function ids(url: string, fx: Fixture = f): Promise<number[]> {
  const body = await page(fx, url);
  expect(body.count).toBe(body.results.length);
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

describe('usage events: filters', () => {
  it('lists everything by id descending', async () => {
    expect(await ids('/api/usage_events/')).toEqual([7, 6, 5, 4, 3, 2, 1]);
  });

  it('filters by id, id__in, tool, user, project and operator', async () => {
    expect(await ids('/api/usage_events/?id=3')).toEqual([3]);
    expect(await ids('/api/usage_events/?id__in=1,3,99')).toEqual([3, 1]);
    expect(await ids(`/api/usage_events/?id__in=${enc('1, 3,')}`)).toEqual([3, 1]);
    expect(await ids('/api/usage_events/?tool_id=1')).toEqual([5, 3, 1]);
    expect(await ids('/api/usage_events/?tool_id__in=1,2')).toEqual([7, 6, 5, 3, 2, 1]);
    expect(await ids(`/api/usage_events/?tool_id__in=${enc('1,2')}`)).toEqual([7, 6, 5, 3, 2, 1]);
    expect(await ids('/api/usage_events/?user_id=3')).toEqual([6, 3]);
    expect(await ids('/api/usage_events/?user_id__in=3,4')).toEqual([6, 3]);
    expect(await ids('/api/usage_events/?project_id=2')).toEqual([3]);
    expect(await ids('/api/usage_events/?operator_id=1')).toEqual([3]);
    expect(await ids('/api/usage_events/?tool_id=1&user_id=3')).toEqual([3]);
    // NEMO's other name for each: the relation's own.
    expect(await ids('/api/usage_events/?tool=1')).toEqual([5, 3, 1]);
    expect(await ids('/api/usage_events/?tool__in=2')).toEqual([7, 6, 2]);
    expect(await ids('/api/usage_events/?user__in=3,4')).toEqual([6, 3]);
    expect(await ids('/api/usage_events/?project=2')).toEqual([3]);
    expect(await ids('/api/usage_events/?operator=1')).toEqual([3]);
  });

  it('filters by validated and validated_by, as a billing script asks', async () => {
    expect(await ids('/api/usage_events/?validated=true')).toEqual([3]);
    expect(await ids('/api/usage_events/?validated=False')).toEqual([7, 6, 5, 4, 2, 1]);
    expect(await ids('/api/usage_events/?validated_by=1')).toEqual([3]);
    expect(await ids('/api/usage_events/?validated_by=2')).toEqual([]);
    expect(await ids('/api/usage_events/?validated_by__in=1,2')).toEqual([3]);
    expect(await ids('/api/usage_events/?validated_by__isnull=true')).toEqual([7, 6, 5, 4, 2, 1]);
    expect(await ids('/api/usage_events/?validated_by__isnull=0')).toEqual([3]);
  });

  it("refuses NEMO's filters it cannot apply, rather than answering every record", async () => {
    const unsupported = {
      status: 400,
      body: {
        start__month: [
          'This NEMO filter is not supported by this server (what it filters on is not kept ' +
            'here); leave it out.',
        ],
      },
    };
    expect(await get(f, '/api/usage_events/?start__month=1')).toEqual(unsupported);
    expect(await get(f, '/api/reservations/?start__month=1&end__day=')).toEqual(unsupported);
    for (const name of ['missed', 'validated', 'validated_by__isnull', 'question_data__isempty']) {
      const res = await get(f, `/api/reservations/?${name}=true`);
      expect(res.status, name).toBe(400);
      expect(Object.keys(res.body as object), name).toEqual([name]);
    }
  });

  it('reads start__gte with an offset, URL-encoded or with the + sent raw', async () => {
    const want = [7, 6, 5, 4, 3, 2];
    expect(await ids(`/api/usage_events/?start__gte=${enc('2024-01-05T10:00:00-05:00')}`)).toEqual(
      want,
    );
    expect(await ids(`/api/usage_events/?start__gte=${enc('2024-01-05T16:00:00+01:00')}`)).toEqual(
      want,
    );
    expect(await ids('/api/usage_events/?start__gte=2024-01-05T16:00:00+01:00')).toEqual(want);
    expect(await ids('/api/usage_events/?start__gte=2024-01-05T15:00:00Z')).toEqual(want);
    expect(await ids('/api/usage_events/?start__gte=2024-01-05T15:00:00.000001Z')).toEqual([
      7, 6, 5, 4, 3,
    ]);
  });

  it('reads naive values and dates alone in the server zone', async () => {
    const want = [7, 6, 5, 4, 3, 2];
    expect(await ids('/api/usage_events/?start__gte=2024-01-05T10:00')).toEqual(want);
    expect(await ids(`/api/usage_events/?start__gte=${enc('2024-01-05 10:00:00')}`)).toEqual(want);
    expect(await ids('/api/usage_events/?start__gte=2024-01-05T10:00:00.000')).toEqual(want);
    // Midnight of 6 January in New York is 05:00 UTC: event 4 starts exactly then.
    expect(await ids('/api/usage_events/?start__gte=2024-01-06')).toEqual([7, 6, 5, 4]);
    expect(await ids('/api/usage_events/?start__lte=2024-01-06')).toEqual([4, 3, 2, 1]);
    expect(await ids('/api/usage_events/?end__lte=2024-01-05T11:00:00')).toEqual([2, 1]);
  });

  it('reads fractional seconds to the millisecond and beyond', async () => {
    expect(await ids('/api/usage_events/?start__gte=2024-11-04T10:00:00.25')).toEqual([7]);
    expect(await ids('/api/usage_events/?start__gte=2024-11-04T10:00:00,250000')).toEqual([7]);
    expect(await ids('/api/usage_events/?start__gte=2024-11-04T10:00:00.2500001')).toEqual([]);
    expect(await ids('/api/usage_events/?start__lte=2024-11-04T10:00:00.2509')).toContain(7);
    expect(await ids('/api/usage_events/?start__lte=2024-11-04T10:00:00.249')).not.toContain(7);
  });

  it('reads DST-day values: skipped times move forward, repeated times take the first', async () => {
    // 02:30 does not exist on 10 March 2024 in New York: it reads as 03:30 EDT = 07:30Z.
    expect(
      await ids('/api/usage_events/?start__gte=2024-03-10T02:30&start__lte=2024-03-10T02:30'),
    ).toEqual([5]);
    expect(
      await ids('/api/usage_events/?start__gte=2024-03-10T03:30&start__lte=2024-03-10T03:30'),
    ).toEqual([5]);
    expect(await ids('/api/usage_events/?start__gte=2024-03-10T03:31')).toEqual([7, 6]);
    // 01:30 happens twice on 3 November 2024: the first (EDT, 05:30Z) is meant.
    expect(await ids('/api/usage_events/?start__gte=2024-11-03T01:30')).toEqual([7, 6]);
    expect(await ids('/api/usage_events/?start__gte=2024-11-03T01:31')).toEqual([7]);
    // Event 6 ends at 06:10Z = 01:10 EST, after the first 01:10 (05:10Z).
    expect(await ids('/api/usage_events/?end__lte=2024-11-03T01:10&end__gte=2024-11-02')).toEqual(
      [],
    );
    expect(
      await ids(`/api/usage_events/?end__lte=${enc('2024-11-03T01:10-05:00')}&end__gte=2024-11-02`),
    ).toEqual([6]);
    // A date alone on a DST day is still that day's midnight (no DST change at midnight there).
    expect(await ids('/api/usage_events/?start__gte=2024-03-10&start__lte=2024-03-11')).toEqual([
      5,
    ]);
  });

  it('filters on end, with end__isnull in any letter case', async () => {
    expect(await ids('/api/usage_events/?end__isnull=true')).toEqual([7]);
    expect(await ids('/api/usage_events/?end__isnull=True')).toEqual([7]);
    expect(await ids('/api/usage_events/?end__isnull=False')).toEqual([6, 5, 4, 3, 2, 1]);
    expect(await ids('/api/usage_events/?end__isnull=0')).toEqual([6, 5, 4, 3, 2, 1]);
    expect(await ids('/api/usage_events/?end__gte=2024-03-10T04:00')).toEqual([6, 5]);
  });

  it('combines tool, start and end the way NexusLIMS asks', async () => {
    const url =
      `/api/usage_events/?tool_id=1&start__gte=${enc('2024-01-05T08:00:00-05:00')}` +
      `&end__lte=${enc('2024-01-05T12:00:00-05:00')}`;
    expect(await ids(url)).toEqual([3, 1]);
  });

  it('ignores unknown parameters, filters of other resources and empty values', async () => {
    const all = [7, 6, 5, 4, 3, 2, 1];
    expect(await ids('/api/usage_events/?foo=bar&cancelled=maybe&username=x')).toEqual(all);
    expect(await ids('/api/usage_events/?tool_id=&start__gte=')).toEqual(all);
    // Of repeated values the last counts, as in Django.
    expect(await ids('/api/usage_events/?tool_id=2&tool_id=1')).toEqual([5, 3, 1]);
  });
});

describe('reservations: filters', () => {
  it('filters cancelled in any letter case, also 1/0', async () => {
    expect(await ids('/api/reservations/')).toEqual([4, 3, 2, 1]);
    expect(await ids('/api/reservations/?cancelled=False')).toEqual([4, 3, 1]);
    expect(await ids('/api/reservations/?cancelled=false')).toEqual([4, 3, 1]);
    expect(await ids('/api/reservations/?cancelled=0')).toEqual([4, 3, 1]);
    expect(await ids('/api/reservations/?cancelled=TRUE')).toEqual([2]);
    expect(await ids('/api/reservations/?cancelled=1')).toEqual([2]);
  });

  it('filters by id, tool, user, project and time', async () => {
    expect(await ids('/api/reservations/?id=2')).toEqual([2]);
    expect(await ids('/api/reservations/?id__in=2,4')).toEqual([4, 2]);
    expect(await ids('/api/reservations/?tool_id=1')).toEqual([2, 1]);
    expect(await ids('/api/reservations/?tool_id__in=1,2')).toEqual([4, 2, 1]);
    expect(await ids('/api/reservations/?user_id=3')).toEqual([4, 3]);
    expect(await ids('/api/reservations/?user_id__in=2')).toEqual([2, 1]);
    expect(await ids('/api/reservations/?project_id=1')).toEqual([2, 1]);
    // A booking of an area is found by its area, as one of a tool by its tool (NEMO's
    // ReservationFilter has area_id and area_id__in beside tool_id and tool_id__in).
    expect(await ids('/api/reservations/?area_id=1')).toEqual([3]);
    expect(await ids('/api/reservations/?area_id__in=1,2')).toEqual([3]);
    expect(await ids('/api/reservations/?area_id=2')).toEqual([]);
    expect(await ids('/api/reservations/?area_id=1&tool_id=1')).toEqual([]);
    expect(await ids(`/api/reservations/?start__gte=${enc('2024-01-05T10:00:00-05:00')}`)).toEqual([
      4, 3, 2,
    ]);
    expect(await ids('/api/reservations/?end__lte=2024-01-06')).toEqual([2, 1]);
    // Overlap with event 1 (14:00-15:00Z) on its tool, the way a consumer matches them.
    const overlap =
      `/api/reservations/?tool_id=1&cancelled=False` +
      `&start__lte=${enc('2024-01-05T15:00:00Z')}&end__gte=${enc('2024-01-05T14:00:00Z')}`;
    expect(await ids(overlap)).toEqual([1]);
    expect(await ids('/api/reservations/?end__isnull=true')).toEqual([]);
    expect(await ids('/api/reservations/?operator_id=1')).toEqual([4, 3, 2, 1]);
    // Of a tool or of an area; who booked them; and NEMO's other name for each.
    expect(await ids('/api/reservations/?tool_id__isnull=true')).toEqual([3]);
    expect(await ids('/api/reservations/?tool__isnull=False')).toEqual([4, 2, 1]);
    expect(await ids('/api/reservations/?area_id__isnull=true')).toEqual([4, 2, 1]);
    expect(await ids('/api/reservations/?area__isnull=false')).toEqual([3]);
    expect(await ids('/api/reservations/?creator_id=1')).toEqual([4, 1]);
    expect(await ids('/api/reservations/?creator__in=2,3')).toEqual([3, 2]);
    expect(await ids('/api/reservations/?tool=1')).toEqual([2, 1]);
    expect(await ids('/api/reservations/?area=1')).toEqual([3]);
    expect(await ids('/api/reservations/?user=3&project=2')).toEqual([4]);
  });
});

describe('users, tools and projects: filters', () => {
  it('filters users by id and username (exact is case-sensitive, iexact is not)', async () => {
    expect(await ids('/api/users/')).toEqual([4, 3, 2, 1]);
    expect(await ids('/api/users/?id=2')).toEqual([2]);
    expect(await ids('/api/users/?id__in=1,4')).toEqual([4, 1]);
    expect(await ids('/api/users/?username=alice')).toEqual([2]);
    expect(await ids('/api/users/?username=ALICE')).toEqual([]);
    expect(await ids('/api/users/?username__iexact=ALICE')).toEqual([2]);
    expect(await ids('/api/users/?username__iexact=bob')).toEqual([3]);
    expect(await ids('/api/users/?username__in=alice,Bob')).toEqual([3, 2]);
    expect(await ids('/api/users/?username__in=alice,bob')).toEqual([2]);
    expect(await ids('/api/users/?tool_id=1&start__gte=nonsense')).toEqual([4, 3, 2, 1]);
    // A CharFilter strips its value; blanks alone are no filter.
    expect(await ids('/api/users/?username=%20alice%20')).toEqual([2]);
    expect(await ids('/api/users/?username=%20')).toEqual([4, 3, 2, 1]);
    // iexact folds every letter, not ASCII alone.
    const t = '2024-01-01T00:00:00.000Z';
    const emile = Number(
      f.db
        .prepare(
          `INSERT INTO users (uuid, username, role, created_at, updated_at)
           VALUES ('01900000-0000-7000-8000-0000000e0001', 'Émile', 'user', ?, ?)`,
        )
        .run(t, t).lastInsertRowid,
    );
    try {
      expect(await ids('/api/users/?username__iexact=%C3%A9mile')).toEqual([emile]);
      expect(await ids('/api/users/?username__iexact=%C3%89MILE')).toEqual([emile]);
      expect(await ids('/api/users/?username=%C3%A9mile')).toEqual([]);
    } finally {
      f.db.prepare('DELETE FROM users WHERE id = ?').run(emile);
    }
  });

  it('filters tools and projects by id', async () => {
    expect(await ids('/api/tools/')).toEqual([3, 2, 1]);
    expect(await ids('/api/tools/?id=2')).toEqual([2]);
    expect(await ids('/api/tools/?id__in=1,3')).toEqual([3, 1]);
    expect(await ids('/api/projects/')).toEqual([2, 1]);
    expect(await ids('/api/projects/?id__in=1')).toEqual([1]);
    expect(await ids('/api/projects/?username=alice&cancelled=x')).toEqual([2, 1]);
  });
});

describe('400 bodies', () => {
  const bad = async (url: string, body: unknown): Promise<void> => {
    const res = await get(f, url);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(body);
  };
  const dt = ['Enter a valid date/time.'];
  const whole = ['Enter a whole number.'];

  it('rejects malformed and impossible date-times', async () => {
    for (const value of [
      'yesterday',
      '2024-02-30',
      '2023-02-29T10:00',
      '2024-13-01',
      '2024-01-05T24:00',
      '2024-01-05T10:60',
      '2024-01-05T10:00:61',
      '2024-01-05T10:00:00+25:00',
      '2024-01-05T10:00:00+05:99',
      '05/01/2024',
      '0000-01-01',
      '2024-01-05T',
    ]) {
      await bad(`/api/usage_events/?start__gte=${enc(value)}`, { start__gte: dt });
    }
    await bad('/api/reservations/?end__lte=2024-04-31', { end__lte: dt });
  });

  it('rejects malformed numbers and booleans with DRF wording', async () => {
    await bad('/api/usage_events/?tool_id=abc', { tool_id: whole });
    await bad('/api/usage_events/?tool_id=1.5', { tool_id: whole });
    await bad('/api/usage_events/?id__in=1,x', { id__in: whole });
    await bad('/api/users/?id=one', { id: whole });
    await bad('/api/tools/?id__in=1;2', { id__in: whole });
    await bad('/api/projects/?id=99999999999999999999', { id: whole });
    await bad('/api/reservations/?cancelled=maybe', {
      cancelled: ['Select a valid choice. maybe is not one of the available choices.'],
    });
    await bad('/api/usage_events/?end__isnull=yes', {
      end__isnull: ['Select a valid choice. yes is not one of the available choices.'],
    });
  });

  it('reports every bad parameter in one body, before any page check', async () => {
    await bad(
      '/api/usage_events/?id=abc&start__gte=nope&end__lte=2024-13-01&tool_id__in=1,x' +
        '&end__isnull=maybe&user_id=7&page=99',
      {
        id: whole,
        start__gte: dt,
        end__lte: dt,
        tool_id__in: whole,
        end__isnull: ['Select a valid choice. maybe is not one of the available choices.'],
      },
    );
  });
});

describe('pagination', () => {
  it('pages with next and previous as absolute URLs keeping the other parameters', async () => {
    const query = `tool_id__in=${enc('1,2')}&page_size=2&start__gte=${enc('2024-01-05T10:00:00-05:00')}`;
    const first = await page(f, `/api/usage_events/?${query}`);
    const base = 'http://nemo.test:8080/api/usage_events/';
    // `,` and `:` as they are (legal in a query), so a link is no longer than the request.
    const rest = `page_size=2&start__gte=2024-01-05T10:00:00-05:00&tool_id__in=1,2`;
    expect(first).toMatchObject({ count: 5, previous: null, next: `${base}?page=2&${rest}` });
    expect(first.results.map((r) => r.id)).toEqual([7, 6]);

    const second = await page(f, `/api/usage_events/?${query}&page=2`);
    expect(second.results.map((r) => r.id)).toEqual([5, 3]);
    expect(second.previous).toBe(`${base}?${rest}`);
    expect(second.next).toBe(`${base}?page=3&${rest}`);

    const last = await page(f, new URL(second.next!).pathname + new URL(second.next!).search);
    expect(last.results.map((r) => r.id)).toEqual([2]);
    expect(last.next).toBeNull();
    expect(last.previous).toBe(`${base}?page=2&${rest}`);
    expect(await page(f, `/api/usage_events/?${query}&page=last`)).toEqual(last);
  });

  it('answers page 1 of an empty result or an empty page, and 404 past the end, at 0 or for a non-number', async () => {
    expect(await page(f, '/api/usage_events/?tool_id=99')).toEqual({
      count: 0,
      next: null,
      previous: null,
      results: [],
    });
    const invalid = { detail: 'Invalid page.' };
    for (const url of [
      '/api/usage_events/?tool_id=99&page=2',
      '/api/usage_events/?page=2',
      '/api/usage_events/?page_size=3&page=4',
      '/api/usage_events/?page=0',
      '/api/usage_events/?page=-1',
      '/api/usage_events/?page=abc',
      '/api/usage_events/?page=1.5',
      '/api/reservations/?page=2',
      '/api/users/?page=9',
    ]) {
      expect(await get(f, url), url).toEqual({ status: 404, body: invalid });
    }
    expect(
      (await page(f, '/api/usage_events/?page_size=3&page=3')).results.map((r) => r.id),
    ).toEqual([1]);
    expect((await page(f, '/api/usage_events/?page=1')).count).toBe(7);
    // An empty page is page 1, as DRF reads it (a client that always sends `page=`).
    const first = await page(f, '/api/usage_events/?page=&page_size=3');
    expect(first.results.map((r) => r.id)).toEqual([7, 6, 5]);
    expect(first.previous).toBeNull();
  });

  it('uses the default page size for zero, negative or non-number page_size', async () => {
    for (const size of ['0', '-5', 'abc', '']) {
      const body = await page(f, `/api/usage_events/?page_size=${size}`);
      expect(body.results).toHaveLength(7);
      expect(body.next).toBeNull();
    }
  });
});

describe('long query strings on a listening server', () => {
  let server: FastifyInstance;
  let origin: string;

  /** A GET over a real socket (app.inject has no header limit), answered status and body. */
  function fetchRaw(path: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request(`${origin}${path}`, { headers: { authorization: `Token ${f.token}` } });
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  beforeAll(async () => {
    server = await createServerApp({
      db: f.db,
      log: createLogger('silent'),
      jwtSecret: 'nemo-long-query-secret-0123456789',
      timeZone: () => NY,
    });
    origin = await server.listen({ host: '127.0.0.1', port: 0 });
  });

  afterAll(async () => {
    await server.close();
  });

  it('gives next and previous links no longer than the request, which the same server takes', async () => {
    // About 14 KB of ids: within the 16 KiB a request line and headers may take; with every
    // `,` escaped as `%2C`, the link was about 20 KB and answered 431.
    const list = Array.from({ length: 3000 }, (_, i) => i + 1).join(',');
    const path = `/api/usage_events/?id__in=${list}&page_size=2&start__gte=2024-01-01T00:00:00Z`;
    const first = await fetchRaw(path);
    expect(first.status, first.body.slice(0, 200)).toBe(200);
    const next = (JSON.parse(first.body) as { next: string }).next;
    const nextPath = new URL(next).pathname + new URL(next).search;
    const second = await fetchRaw(nextPath);
    expect(second.status, second.body.slice(0, 200)).toBe(200);
    expect(nextPath.length).toBeLessThanOrEqual(path.length + '&page=2'.length);
    expect(next).toContain(`id__in=${list}&`);
    expect(next).toContain('start__gte=2024-01-01T00:00:00Z');
    expect((JSON.parse(second.body) as { previous: string }).previous).toContain(`id__in=${list}`);
  });

  it('answers a request line over the limit 431 with a {"detail": ...} body', async () => {
    const list = Array.from({ length: 5000 }, (_, i) => i + 1).join(',');
    const res = await fetchRaw(`/api/usage_events/?id__in=${list}`);
    expect(res.status).toBe(431);
    expect(JSON.parse(res.body)).toEqual({
      detail: 'Request header fields too large: the request line and headers exceed 16 KiB.',
    });
  });
});

describe('pagination over many rows', () => {
  let big: Fixture;

  beforeAll(async () => {
    big = await fixture((db) => {
      db.transaction(() => {
        for (let id = 1; id <= 1205; id++) {
          const start = new Date(Date.UTC(2024, 0, 1) + Math.floor(id / 2) * 3_600_000);
          insertUsage(db, {
            id,
            user: 2,
            tool: (id % 2) + 1,
            start: storedIso(start.getTime()),
            end: storedIso(start.getTime() + 1_800_000),
          });
        }
      })();
    });
  });

  afterAll(async () => {
    await big.app.close();
    big.db.close();
  });

  it('clamps page_size at 1000 and keeps it in next', async () => {
    const first = await page(big, '/api/usage_events/?page_size=5000');
    expect(first.count).toBe(1205);
    expect(first.results).toHaveLength(1000);
    expect(first.results[0].id).toBe(1205);
    expect(first.results[999].id).toBe(206);
    expect(first.next).toBe('http://nemo.test:8080/api/usage_events/?page=2&page_size=5000');
    const second = await page(big, '/api/usage_events/?page_size=5000&page=2');
    expect(second.results.map((r) => r.id)).toEqual(Array.from({ length: 205 }, (_, i) => 205 - i));
    expect(second.next).toBeNull();
    expect(second.previous).toBe('http://nemo.test:8080/api/usage_events/?page_size=5000');
    expect((await get(big, '/api/usage_events/?page_size=5000&page=3')).status).toBe(404);
    // Mutation: a size past 2^53 read as no number (the default 100), where DRF caps it too.
    for (const size of ['99999999999999999999', '+9007199254740993']) {
      const huge = await page(big, `/api/usage_events/?page_size=${size}`);
      expect(huge.results, size).toHaveLength(1000);
    }
  });

  it('gives the same deep pages with gaps in the ids as without', async () => {
    const deep = '/api/usage_events/?page_size=100&page=11';
    const before = (await page(big, deep)).results.map((r) => r.id);
    expect(before).toEqual(Array.from({ length: 100 }, (_, i) => 205 - i));
    expect(
      (await page(big, '/api/usage_events/?ordering=id&page=2&page_size=10')).results.map(
        (r) => r.id,
      ),
    ).toEqual(Array.from({ length: 10 }, (_, i) => 11 + i));
    big.db.prepare('DELETE FROM usage_events WHERE id IN (150, 1000)').run();
    const after = await page(big, deep);
    expect(after.count).toBe(1203);
    expect(after.results.map((r) => r.id)).toEqual(
      Array.from({ length: 101 }, (_, i) => 204 - i).filter((id) => id !== 150),
    );
  });

  it('breaks ties by id', async () => {
    // Ids 2k and 2k+1 share a start.
    const asc = await page(big, '/api/usage_events/?ordering=start&page_size=5');
    expect(asc.results.map((r) => r.id)).toEqual([1, 2, 3, 4, 5]);
    const desc = await page(big, '/api/usage_events/?ordering=-start&page_size=4');
    expect(desc.results.map((r) => r.id)).toEqual([1205, 1204, 1203, 1202]);
  });

  it('seeks indexes for the list queries and reads rows by id (query plan)', () => {
    const plan = (text: string, args: unknown[]): string[] =>
      (big.db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...args) as { detail: string }[]).map(
        (row) => row.detail,
      );
    const expectPlan = (params: Record<string, string>, index: RegExp): void => {
      const list = listQueryOf(usageEvents, new URLSearchParams(params), NY);
      if (!list.ok) throw new Error(JSON.stringify(list.errors));
      const sql = listSql('usage_events', list.clauses, list.orderBy, list.pageSize, 0);
      for (const step of [sql.count, sql.ids]) {
        const details = plan(step.sql, step.args);
        const context = `${step.sql}\n${details.join('\n')}`;
        expect(
          details.some((d) => index.test(d)),
          context,
        ).toBe(true);
        // A walk over the whole table, or over an index of all of it, must not happen.
        const walks = details.filter((d) => /^SCAN usage_events\b/.test(d) && !index.test(d));
        expect(walks, context).toEqual([]);
      }
    };
    // The NexusLIMS query: tool, start and end, all three from the covering index, the start
    // range closed by the end bound.
    expectPlan(
      { tool_id: '1', start__gte: '2024-01-05T10:00:00-05:00', end__lte: '2024-02-05T10:00' },
      /^SEARCH usage_events USING COVERING INDEX usage_events_tool_start \(tool_id=\? AND start>\? AND start<\?\)/,
    );
    expectPlan(
      { start__gte: '2024-01-05', end__lte: '2024-02-05' },
      /^SEARCH usage_events USING COVERING INDEX usage_events_start \(start>\? AND start<\?\)/,
    );
    expectPlan(
      { user_id: '2', ordering: '-start' },
      /^SEARCH usage_events USING .*INDEX usage_events_user_start/,
    );
    // A tool's events in the default id order: the index on tool_id alone keeps (tool_id, id)
    // order, so a deep page neither sorts the tool's events nor walks the table.
    const byTool = listQueryOf(usageEvents, new URLSearchParams({ tool_id: '1' }), NY);
    if (!byTool.ok) throw new Error(JSON.stringify(byTool.errors));
    const toolPage = listSql('usage_events', byTool.clauses, byTool.orderBy, 100, 500);
    const toolPlan = plan(toolPage.ids.sql, toolPage.ids.args);
    expect(toolPlan.join('\n')).toMatch(
      /^SEARCH usage_events USING COVERING INDEX usage_events_tool \(tool_id=\?\)$/m,
    );
    expect(toolPlan.filter((d) => /TEMP B-TREE/.test(d))).toEqual([]);
    // Active events: the partial index of one active event per tool, not a walk in id order.
    expectPlan(
      { end__isnull: 'true' },
      /^SCAN usage_events USING COVERING INDEX usage_events_active$/,
    );
    const rows = plan(
      `SELECT ${usageEvents.columns} FROM usage_events WHERE id IN (SELECT value FROM json_each(?))`,
      ['[1,2]'],
    );
    expect(
      rows.some((d) => /SEARCH usage_events USING INTEGER PRIMARY KEY/.test(d)),
      rows.join('\n'),
    ).toBe(true);
    expect(rows.filter((d) => /^SCAN usage_events\b/.test(d))).toEqual([]);
  });
});

describe('ordering', () => {
  it('orders by start, end (nulls last ascending) and id, ignoring unknown fields', async () => {
    expect(await ids('/api/usage_events/?ordering=start')).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await ids('/api/usage_events/?ordering=-start')).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(await ids('/api/usage_events/?ordering=end')).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await ids('/api/usage_events/?ordering=-end')).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(await ids('/api/usage_events/?ordering=id')).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await ids('/api/usage_events/?ordering=-id')).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(await ids('/api/usage_events/?ordering=bogus')).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(await ids('/api/usage_events/?ordering=bogus,-tool,start')).toEqual([
      1, 2, 3, 4, 5, 6, 7,
    ]);
    expect(await ids('/api/usage_events/?ordering=-name')).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(await ids('/api/reservations/?ordering=-end')).toEqual([4, 3, 2, 1]);
    expect(await ids('/api/reservations/?ordering=start')).toEqual([1, 2, 3, 4]);
  });

  it('orders users by username and tools and projects by name', async () => {
    expect(await ids('/api/users/?ordering=username')).toEqual([1, 2, 3, 4]);
    expect(await ids('/api/users/?ordering=-username')).toEqual([4, 3, 2, 1]);
    expect(await ids('/api/tools/?ordering=-name')).toEqual([3, 2, 1]);
    expect(await ids('/api/tools/?ordering=name')).toEqual([1, 2, 3]);
    expect(await ids('/api/projects/?ordering=name')).toEqual([2, 1]);
    expect(await ids('/api/projects/?ordering=-id')).toEqual([2, 1]);
  });
});

describe('details and fields', () => {
  it('returns one usage event with exactly its fields, in the server zone', async () => {
    const res = await get(f, '/api/usage_events/3/');
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({
      id: 3,
      user: 3,
      operator: 1,
      project: 2,
      tool: 1,
      start: '2024-01-05T11:30:00-05:00',
      end: '2024-01-05T12:00:00-05:00',
      validated: true,
      validated_by: 1,
      remote_work: true,
      pre_run_data: '{"data_consent": "Agree"}',
      run_data: RUN_DATA,
    });
    expect(await get(f, '/api/usage_events/7/')).toMatchObject({
      status: 200,
      body: {
        start: '2024-11-04T10:00:00.250000-05:00',
        end: null,
        validated: false,
        validated_by: null,
        remote_work: false,
        pre_run_data: '',
        run_data: '',
      },
    });
    expect((await get(f, '/api/usage_events/5/')).body).toMatchObject({
      start: '2024-03-10T03:30:00-04:00',
      end: '2024-03-10T04:00:00-04:00',
    });
    expect((await get(f, '/api/usage_events/6/')).body).toMatchObject({
      start: '2024-11-03T01:30:00-04:00',
      end: '2024-11-03T01:10:00-05:00',
    });
  });

  // Mutation: the detail without the list's filters (200 whatever they said), as DRF's
  // get_object does not answer: it filters its queryset first.
  it("holds the list's filters: 404 for a record they leave out, 400 for a bad value", async () => {
    expect((await get(f, '/api/usage_events/3/?tool_id=1&cancelled=False')).status).toBe(200);
    expect(await get(f, '/api/usage_events/3/?tool_id=2')).toMatchObject({
      status: 404,
      body: { detail: 'Not found.' },
    });
    expect(await get(f, '/api/usage_events/3/?start__gte=garbage')).toMatchObject({
      status: 400,
      body: { start__gte: ['Enter a valid date/time.'] },
    });
    expect((await get(f, '/api/usage_events/3/?tool_id__in=2,1&page=9&nonsense=1')).status).toBe(
      200,
    );
  });

  it('lists the same objects as the details', async () => {
    const list = await page(f, '/api/usage_events/');
    for (const item of list.results) {
      expect((await get(f, `/api/usage_events/${String(item.id)}/`)).body).toEqual(item);
    }
  });

  it('returns reservations with their fields, tool or area', async () => {
    expect((await get(f, '/api/reservations/1/')).body).toStrictEqual({
      id: 1,
      user: 2,
      creator: 1,
      tool: 1,
      area: null,
      project: 1,
      start: '2024-01-05T08:30:00-05:00',
      end: '2024-01-05T10:30:00-05:00',
      cancelled: false,
      question_data: QUESTION_DATA,
    });
    expect((await get(f, '/api/reservations/3/')).body).toMatchObject({
      tool: null,
      area: 1,
      project: null,
      cancelled: false,
    });
    expect((await get(f, '/api/reservations/2/')).body).toMatchObject({
      cancelled: true,
      question_data: '',
    });
    expect((await get(f, '/api/reservations/4/')).body).toMatchObject({
      start: '2024-07-01T09:00:00-04:00',
      end: '2024-07-01T10:00:00-04:00',
    });
  });

  it('returns users without any secret', async () => {
    const list = await page(f, '/api/users/');
    for (const user of list.results) {
      expect(Object.keys(user)).toEqual([
        'id',
        'username',
        'first_name',
        'last_name',
        'email',
        'badge_number',
        'is_active',
        'is_staff',
      ]);
    }
    const raw = JSON.stringify(list);
    expect(raw).not.toMatch(/argon2|secret|hash|role|uuid/);
    expect((await get(f, '/api/users/2/')).body).toStrictEqual({
      id: 2,
      username: 'alice',
      first_name: 'Alice',
      last_name: 'Liddell',
      email: 'alice@example.org',
      badge_number: '100200',
      is_active: true,
      is_staff: false,
    });
    expect((await get(f, '/api/users/4/')).body).toMatchObject({
      is_active: false,
      badge_number: null,
    });
    expect((await get(f, '/api/users/3/')).body).toMatchObject({ is_staff: true });
  });

  it('returns tools and projects with NEMO fields', async () => {
    expect((await get(f, '/api/tools/1/')).body).toStrictEqual({
      id: 1,
      name: 'SEM',
      category: 'Microscopy',
      operational: true,
      visible: true,
    });
    expect((await get(f, '/api/tools/2/')).body).toMatchObject({
      visible: false,
      operational: true,
    });
    // XRD is shut down by a problem report: not operational.
    expect((await get(f, '/api/tools/3/')).body).toMatchObject({ operational: false });
    expect((await get(f, '/api/projects/2/')).body).toStrictEqual({
      id: 2,
      name: 'Anodes',
      application_identifier: 'AN-2',
      active: false,
    });
    for (const item of (await page(f, '/api/projects/')).results) {
      expect(Object.keys(item)).toEqual(['id', 'name', 'application_identifier', 'active']);
    }
    for (const item of (await page(f, '/api/tools/')).results) {
      expect(Object.keys(item)).toEqual(['id', 'name', 'category', 'operational', 'visible']);
    }
    for (const item of (await page(f, '/api/reservations/')).results) {
      expect(Object.keys(item)).toEqual([
        'id',
        'user',
        'creator',
        'tool',
        'area',
        'project',
        'start',
        'end',
        'cancelled',
        'question_data',
      ]);
    }
  });

  it('answers 404 Not found. for a missing or non-numeric id', async () => {
    const notFound = { status: 404, body: { detail: 'Not found.' } };
    for (const url of [
      '/api/usage_events/999/',
      '/api/usage_events/abc/',
      '/api/usage_events/-1/',
      '/api/usage_events/1.0/',
      '/api/reservations/99/',
      '/api/users/0/',
      '/api/tools/x/',
      '/api/projects/12345678901234567890/',
    ]) {
      expect(await get(f, url), url).toEqual(notFound);
    }
  });

  it('follows the configured zone at request time, with Z for a zero offset', async () => {
    f.zone.name = 'Europe/Zurich';
    try {
      expect((await get(f, '/api/usage_events/1/')).body).toMatchObject({
        start: '2024-01-05T15:00:00+01:00',
      });
      expect(
        await ids('/api/usage_events/?start__gte=2024-01-05T16:00&end__lte=2024-01-05T17:00'),
      ).toEqual([2]);
      f.zone.name = 'UTC';
      expect((await get(f, '/api/usage_events/1/')).body).toMatchObject({
        start: '2024-01-05T14:00:00Z',
      });
      f.zone.name = 'Asia/Kolkata';
      expect((await get(f, '/api/reservations/1/')).body).toMatchObject({
        start: '2024-01-05T19:00:00+05:30',
      });
    } finally {
      f.zone.name = NY;
    }
  });
});

describe('guarded routes', () => {
  it('sends the authorizer answer before anything else', async () => {
    const res = await f.app.inject({ method: 'GET', url: '/api/usage_events/?page=abc' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail: 'Authentication credentials were not provided.' });
    const plain = createApiToken(f.db, 2).token;
    expect(await get(f, '/api/users/1/', `Token ${plain}`)).toEqual({
      status: 403,
      body: { detail: 'You do not have permission to perform this action.' },
    });
  });

  it('takes a header of another scheme as no credentials, as DRF does, and counts none', async () => {
    // More than the 20 bad credentials a minute an address may send before it is throttled.
    for (let i = 0; i < 25; i++) {
      expect(await get(f, '/api/users/', 'Basic dXNlcjpwYXNzd29yZA==')).toEqual({
        status: 401,
        body: { detail: 'Authentication credentials were not provided.' },
      });
    }
    // Ours without its credential, or with more than one, is a bad one.
    for (const header of ['Token', 'Token two words', 'Bearer']) {
      expect(await get(f, '/api/users/', header), header).toEqual({
        status: 401,
        body: { detail: 'Invalid token.' },
      });
    }
  });
});

describe('date-time parsing and formatting', () => {
  const iso = (text: string, zone = NY): string | null => {
    const parsed = parseDateTime(text, zone);
    return parsed && storedIso(parsed.ms);
  };

  it('reads offsets, naive values and dates alone', () => {
    expect(iso('2024-01-05T10:00:00-05:00')).toBe('2024-01-05T15:00:00.000Z');
    expect(iso('2024-01-05T10:00:00-0500')).toBe('2024-01-05T15:00:00.000Z');
    expect(iso('2024-01-05T10:00:00+05')).toBe('2024-01-05T05:00:00.000Z');
    expect(iso('2024-01-05t10:00:00z')).toBe('2024-01-05T10:00:00.000Z');
    expect(iso('2024-07-05T10:00')).toBe('2024-07-05T14:00:00.000Z');
    expect(iso('2024-1-5 9:05')).toBe('2024-01-05T14:05:00.000Z');
    expect(iso('2024-02-29')).toBe('2024-02-29T05:00:00.000Z');
    expect(iso('2000-02-29', 'UTC')).toBe('2000-02-29T00:00:00.000Z');
    expect(iso('1900-02-29', 'UTC')).toBeNull();
    // Midnight that does not exist (Santiago springs forward at 24:00): the day starts at 01:00.
    expect(iso('2024-09-08', 'America/Santiago')).toBe('2024-09-08T04:00:00.000Z');
    // Lord Howe Island moves its clocks by 30 minutes.
    expect(iso('2024-04-07T01:45', 'Australia/Lord_Howe')).toBe('2024-04-06T14:45:00.000Z');
  });

  it('formats with the zone offset like Django REST framework', () => {
    expect(formatDateTime('2026-11-20T09:00:00.000Z', 'Europe/Zurich')).toBe(
      '2026-11-20T10:00:00+01:00',
    );
    expect(formatDateTime('2026-07-20T09:00:00.000Z', 'Europe/Zurich')).toBe(
      '2026-07-20T11:00:00+02:00',
    );
    expect(formatDateTime('2026-07-20T09:00:00.007Z', 'UTC')).toBe('2026-07-20T09:00:00.007000Z');
    expect(formatDateTime('2026-07-20T09:00:00.000Z', 'Asia/Kathmandu')).toBe(
      '2026-07-20T14:45:00+05:45',
    );
    // A stored time whose local day falls outside the years 1 to 9999 (the last hours of 9999
    // east of UTC, the first of year 1 west of it) is written in UTC: "10000-01-01T00:30:00+01:00"
    // is no ISO 8601 date-time, and neither this API's filters nor Python's clients read it.
    expect(formatDateTime('9999-12-31T23:30:00.000Z', 'Europe/Zurich')).toBe(
      '9999-12-31T23:30:00Z',
    );
    expect(formatDateTime('0001-01-01T02:00:00.000Z', NY)).toBe('0001-01-01T02:00:00Z');
    expect(iso(formatDateTime('9999-12-31T23:30:00.000Z', 'Europe/Zurich'))).toBe(
      '9999-12-31T23:30:00.000Z',
    );
    expect(formatDateTime('9999-12-31T10:00:00.000Z', 'Europe/Zurich')).toBe(
      '9999-12-31T11:00:00+01:00',
    );
    // Across a whole DST day, hour by hour, formatting and parsing agree.
    for (let h = 0; h < 30; h++) {
      const stored = storedIso(Date.UTC(2024, 10, 3, h));
      const shown = formatDateTime(stored, NY);
      expect(iso(shown)).toBe(stored);
    }
  });
});
