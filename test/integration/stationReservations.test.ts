/**
 * Reservations between a `labstation serve` and a `labstation station` (real processes on
 * loopback), and the experiment record they lead to:
 * - a reservation booked at the station (online) is on the server, with its answers; one
 *   booked or cancelled on the server, or for an area holding the tool, reaches the station;
 * - the reservation on now fills the pre-usage form where question names match;
 * - issue 7's end to end: a reservation booked with answers, a usage whose run_data has no
 *   consent, files harvested during it; /api/experiments/ builds the record from the
 *   reservation's answers and lists the files;
 * - with the server gone, the station still lists the tool's reservations, and booking says
 *   the server cannot be reached (503, code `unavailable`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { facilityBundle, goodPreAnswers } from '../fixtures/facility.js';
import {
  runCli,
  startServer,
  startStation,
  tempDir,
  waitFor,
  writeJson,
  type ServerProcess,
  type StationProcess,
  loginJwt,
  serverRequest,
} from './helpers.js';

const ADMIN = { email: 'admin@example.org', password: 'admin password 1' };
const ALICE = { email: 'alice@example.org', password: 'alice password 1' };

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

let root: string;
let serverDir: string;
let server: ServerProcess;
let station: StationProcess;
let serverDb: Database.Database;
let adminJwt: string;
let aliceJwt: string;
let watchDir: string;
let scheduleId: number;

const jwtFor = (user: { email: string; password: string }): Promise<string> =>
  loginJwt(server.url, user);

const api = (method: string, path: string, body?: unknown, jwt = adminJwt): Promise<Reply> =>
  serverRequest(server.url, jwt, method, path, body);

async function rpc(name: string, args: unknown, jwt = adminJwt): Promise<Record<string, unknown>> {
  const res = await api('POST', `/rpc/${name}`, args, jwt);
  expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

async function at<T = Record<string, unknown>>(name: string, args: unknown): Promise<T> {
  const res = await station.rpc(name, args);
  expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body as T;
}

const idOf = (table: string, name: string): number =>
  serverDb.prepare(`SELECT id FROM ${table} WHERE name = ?`).pluck().get(name) as number;

interface Listed {
  uuid: string;
  id: number;
  area_name: string | null;
  user_name: string;
  mine: boolean;
  question_data: string;
  start: string;
  end: string;
}

async function upcoming(): Promise<{ reservations: Listed[]; online: boolean; linked: boolean }> {
  return await at('reservations.upcoming', {});
}

const minutesFromNow = (minutes: number): string =>
  new Date(Date.now() + minutes * 60_000).toISOString();

/** The reservation questions: the metadata-harvesting names of spec 000's conventions. */
const RESERVATION_QUESTIONS = [
  { type: 'radio', name: 'data_consent', choices: ['Agree', 'Disagree'], required: true },
  { type: 'textbox', name: 'experiment_title', required: true },
  { type: 'textarea', name: 'experiment_purpose', required: true },
  { type: 'textbox', name: 'project_id', pattern: 'PRJ-\\d+', required: true },
  {
    type: 'group',
    name: 'sample_group',
    title: 'Samples',
    max_number: 5,
    questions: [
      { type: 'textbox', name: 'sample_name', required: true },
      { type: 'radio', name: 'sample_or_pid', choices: ['Sample Name', 'PID'], required: true },
      { type: 'textbox', name: 'sample_details' },
    ],
  },
];

const RESERVATION_ANSWERS = {
  data_consent: 'Agree',
  experiment_title: 'Grain boundaries in cathode C7',
  experiment_purpose: 'EDS maps of the boundaries',
  project_id: 'PRJ-1',
  sample_group: [
    { sample_name: 'C7-a', sample_or_pid: 'Sample Name', sample_details: 'polished' },
    { sample_name: 'ark:99999/fk4c7b', sample_or_pid: 'PID' },
  ],
};

beforeAll(async () => {
  root = tempDir('labstation-station-reservations-');
  watchDir = join(root, 'acquisition');
  const archiveDir = join(root, 'archive');
  mkdirSync(watchDir);
  mkdirSync(archiveDir);
  serverDir = join(root, 'server');
  const bundle = facilityBundle();
  delete bundle.station;
  const users = bundle.users as Record<string, unknown>[];
  users[0] = { ...users[0], ...ALICE };
  const imported = await runCli(['import', '--data', serverDir, writeJson(root, 'b.json', bundle)]);
  expect(imported.stderr).toBe('');
  server = await startServer(serverDir, {
    LABSTATION_ADMIN_EMAIL: ADMIN.email,
    LABSTATION_ADMIN_PASSWORD: ADMIN.password,
  });
  serverDb = new Database(join(serverDir, 'labstation.db'), { readonly: true });
  adminJwt = await jwtFor(ADMIN);
  aliceJwt = await jwtFor(ALICE);

  await rpc('admin.reservationQuestionSets.save', {
    enabled: true,
    name: 'Experiment',
    questions: RESERVATION_QUESTIONS,
    tool_reservations: true,
    only_for_tools: [],
    area_reservations: true,
    only_for_areas: [],
    only_for_projects: [],
  });

  // The station is the SEM's harvest station: a service account's key is a station key.
  const account = (await api('POST', '/api/service-accounts', { name: 'sem-pc' })).body;
  const location = (
    await api('POST', '/api/storage-locations', {
      name: 'archive',
      type: 'local',
      base_path: archiveDir,
    })
  ).body;
  const instrument = (
    await api('POST', '/api/instruments', {
      name: 'SEM camera',
      tool_id: idOf('tools', 'SEM'),
      service_account_id: account.id,
      watch: [{ path: watchDir, include: ['*.tif'] }],
      stability_seconds: 1,
      storage_location_id: location.id,
      destination_template: '{instrument}/{relative_path}',
    })
  ).body;
  const schedule = (
    await api('POST', '/api/schedules', {
      instrument_id: instrument.id,
      cron: '0 0 1 1 *',
      timezone: 'UTC',
    })
  ).body;
  scheduleId = schedule.id as number;
  station = await startStation(join(root, 'station'), { LABSTATION_SYNC_BACKOFF_CAP_MS: '1000' }, [
    '--server',
    server.url,
    '--key',
    String(account.key),
  ]);
  await at('session.logon', { login: 'alice', pin: '1234' });
}, 90_000);

afterAll(async () => {
  await station?.stop();
  serverDb?.close();
  await server?.stop();
});

/** The reservation booked at the station in the first test, on now. */
let booked: Listed;
/** sam's booking of an area holding the SEM, made on the server. */
let samsAreaBooking: string;

describe('reservations at a station', () => {
  it('books at the station with the reservation questions, and the server holds it', async () => {
    const cathodes = idOf('projects', 'Cathodes');
    const form = await at<{ sets: { name: string }[]; questions: { name: string }[] }>(
      'reservations.form',
      { project: cathodes },
    );
    expect(form.sets.map((s) => s.name)).toEqual(['Experiment']);
    expect(form.questions.map((q) => q.name)).toEqual(RESERVATION_QUESTIONS.map((q) => q.name));

    // A required answer missing: refused by the server, naming the question.
    const incomplete = await station.rpc('reservations.book', {
      project: cathodes,
      start: minutesFromNow(-1),
      end: minutesFromNow(120),
      answers: { ...RESERVATION_ANSWERS, experiment_title: '' },
    });
    expect(incomplete.status).toBe(422);
    expect(incomplete.body).toMatchObject({ code: 'validation_failed' });
    expect(JSON.stringify(incomplete.body)).toContain('experiment_title');

    const { reservation } = await at<{ reservation: Listed }>('reservations.book', {
      project: cathodes,
      start: minutesFromNow(-1),
      end: minutesFromNow(120),
      answers: RESERVATION_ANSWERS,
    });
    booked = reservation;
    expect(reservation).toMatchObject({ user_name: 'alice', mine: true, area_name: null });
    const stored = serverDb
      .prepare(
        'SELECT user_id, creator_id, tool_id, cancelled, question_data FROM reservations WHERE uuid = ?',
      )
      .get(reservation.uuid) as Record<string, unknown>;
    const alice = serverDb.prepare("SELECT id FROM users WHERE username = 'alice'").pluck().get();
    expect(stored).toMatchObject({
      user_id: alice,
      creator_id: alice,
      tool_id: idOf('tools', 'SEM'),
      cancelled: 0,
    });
    expect(JSON.parse(stored.question_data as string)).toMatchObject({
      experiment_title: RESERVATION_ANSWERS.experiment_title,
    });
    expect((await upcoming()).reservations.map((r) => r.uuid)).toContain(reservation.uuid);
  }, 30_000);

  it('refuses an overlapping booking at the station with the conflict', async () => {
    const res = await station.rpc('reservations.book', {
      project: idOf('projects', 'Cathodes'),
      start: minutesFromNow(60),
      end: minutesFromNow(180),
      answers: RESERVATION_ANSWERS,
    });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'conflict' });
    expect((res.body as { message: string }).message).toContain(`reservation ${booked.id}`);
  });

  it('gets what is booked and cancelled on the server, for the tool or an area holding it', async () => {
    const sem = idOf('tools', 'SEM');
    const later = (
      await rpc(
        'reservations.book',
        {
          tool: sem,
          project: idOf('projects', 'Cathodes'),
          start: minutesFromNow(24 * 60),
          end: minutesFromNow(25 * 60),
          answers: RESERVATION_ANSWERS,
        },
        aliceJwt,
      )
    ).reservation as { id: number; uuid: string };
    await waitFor('the server booking on the station', async () =>
      (await upcoming()).reservations.some((r) => r.uuid === later.uuid) ? true : undefined,
    );

    const area = (await rpc('admin.areas.save', { name: 'Microscopy bay', tools: [sem] })).area as {
      id: number;
    };
    const areaBooking = (
      await rpc('reservations.book', {
        area: area.id,
        project: idOf('projects', 'Other'),
        start: minutesFromNow(48 * 60),
        end: minutesFromNow(49 * 60),
        answers: RESERVATION_ANSWERS,
        user: serverDb.prepare("SELECT id FROM users WHERE username = 'sam'").pluck().get(),
      })
    ).reservation as { uuid: string };
    samsAreaBooking = areaBooking.uuid;
    const listed = await waitFor('the area booking on the station', async () =>
      (await upcoming()).reservations.find((r) => r.uuid === areaBooking.uuid),
    );
    // Someone else's: listed with its area, without its answers.
    expect(listed).toMatchObject({ area_name: 'Microscopy bay', user_name: 'sam', mine: false });
    expect(listed.question_data).toBe('');

    await rpc('reservations.cancel', { id: later.id }, aliceJwt);
    await waitFor('the cancelled booking gone from the station', async () =>
      (await upcoming()).reservations.some((r) => r.uuid === later.uuid) ? undefined : true,
    );
  }, 30_000);

  it('cancels at the station; the server keeps the record, cancelled', async () => {
    const { reservation } = await at<{ reservation: Listed }>('reservations.book', {
      project: idOf('projects', 'Cathodes'),
      start: minutesFromNow(72 * 60),
      end: minutesFromNow(73 * 60),
      answers: RESERVATION_ANSWERS,
    });
    await at('reservations.cancel', { uuid: reservation.uuid });
    expect(
      serverDb
        .prepare('SELECT cancelled FROM reservations WHERE uuid = ?')
        .pluck()
        .get(reservation.uuid),
    ).toBe(1);
    expect((await upcoming()).reservations.some((r) => r.uuid === reservation.uuid)).toBe(false);
    const listed = await api('GET', `/api/reservations/?cancelled=true&id=${reservation.id}`);
    expect(listed.status).toBe(200);
  });

  it("cancels at a station only the person's own, and only of the station's tool", async () => {
    const others = await station.rpc('reservations.cancel', { uuid: samsAreaBooking });
    expect(others.status).toBe(403);
    expect((others.body as { message: string }).message).toContain('only the person');

    const afm = (
      await rpc('reservations.book', {
        tool: idOf('tools', 'AFM'),
        project: idOf('projects', 'Cathodes'),
        start: minutesFromNow(24 * 60),
        end: minutesFromNow(25 * 60),
        answers: RESERVATION_ANSWERS,
        user: serverDb.prepare("SELECT id FROM users WHERE username = 'alice'").pluck().get(),
      })
    ).reservation as { uuid: string };
    const elsewhere = await station.rpc('reservations.cancel', { uuid: afm.uuid });
    expect(elsewhere.status).toBe(403);
    expect((elsewhere.body as { message: string }).message).toContain("this station's tool");

    const cancelled = serverDb.prepare('SELECT cancelled FROM reservations WHERE uuid = ?').pluck();
    expect([cancelled.get(samsAreaBooking), cancelled.get(afm.uuid)]).toEqual([0, 0]);
  });

  it("offers the reservation's answers for the pre-usage questions of the same name", async () => {
    const current = await at<{
      reservation: Listed | null;
      answers: Record<string, unknown>;
      matched: string[];
      project: { name: string } | null;
    }>('reservations.current', {});
    expect(current.reservation?.uuid).toBe(booked.uuid);
    expect(current.project?.name).toBe('Cathodes');
    // SEM asks data_consent, project_id and sample_group (sample_name, stubs): only these.
    expect(current.matched.sort()).toEqual(['data_consent', 'project_id', 'sample_group']);
    expect(current.answers).toEqual({
      data_consent: 'Agree',
      project_id: 'PRJ-1',
      sample_group: [{ sample_name: 'C7-a' }, { sample_name: 'ark:99999/fk4c7b' }],
    });
  });
});

describe('the experiment record of a usage during a reservation (issue 7, end to end)', () => {
  it("uses the reservation's answers when run_data has no consent, and lists the files harvested", async () => {
    const { usage } = await at<{ usage: { uuid: string } }>('toolControl.enable', {
      tool: 'SEM',
      project: 'Cathodes',
      answers: goodPreAnswers,
    });
    writeFileSync(join(watchDir, 'map-1.tif'), 'first EDS map');
    writeFileSync(join(watchDir, 'map-2.tif'), 'second EDS map, longer');
    const trigger = await api('POST', `/api/schedules/${scheduleId}/trigger`);
    expect(trigger.status).toBe(202);
    await waitFor(
      'both files harvested',
      async () => {
        const { files } = await at<{ files: { state: string }[] }>('harvest.files', {});
        return files.length === 2 && files.every((f) => f.state === 'done') ? true : undefined;
      },
      30_000,
    );
    // The post-usage answers: a problem question and notes; no consent in them.
    await at('toolControl.disable', { tool: 'SEM', answers: { problem: 'No', notes: 'fine' } });
    const eventId = await waitFor('the ended usage on the server', () => {
      const row = serverDb
        .prepare('SELECT id, "end" FROM usage_events WHERE uuid = ?')
        .get(usage.uuid) as { id: number; end: string | null } | undefined;
      return row?.end ? row.id : undefined;
    });
    await waitFor('the file records on the server', () =>
      (serverDb.prepare('SELECT count(*) FROM harvest_files').pluck().get() as number) === 2
        ? true
        : undefined,
    );

    const res = await api('GET', `/api/experiments/${eventId}/`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const body = res.body as {
      record: Record<string, unknown> | null;
      attempts: { source: string; ok: boolean; reason?: string }[];
      files: { filename: string }[];
    };
    // run_data: no consent; pre_run_data: consent but no experiment_title.
    expect(body.attempts.map((a) => [a.source, a.ok, a.reason])).toEqual([
      ['run_data', false, 'consent_missing'],
      ['pre_run_data', false, 'missing_field'],
      ['question_data', true, undefined],
    ]);
    expect(body.record).toMatchObject({
      source: 'question_data',
      experiment_title: RESERVATION_ANSWERS.experiment_title,
      experiment_purpose: RESERVATION_ANSWERS.experiment_purpose,
      project_id: 'PRJ-1',
      samples: [
        expect.objectContaining({ sample_name: 'C7-a', sample_or_pid: 'Sample Name' }),
        expect.objectContaining({ sample_name: 'ark:99999/fk4c7b', sample_or_pid: 'PID' }),
      ],
    });
    expect((body.record?.reservation as { id: number } | null)?.id).toBe(booked.id);
    expect(body.files.map((f) => f.filename).sort()).toEqual(['map-1.tif', 'map-2.tif']);
  }, 90_000);
});

describe('the station offline', () => {
  it('lists the synced reservations and answers 503 unavailable to a booking', async () => {
    await server.stop();
    const offline = await waitFor('the station to notice', async () => {
      const list = await upcoming();
      return list.online ? undefined : list;
    });
    expect(offline.linked).toBe(true);
    expect(offline.reservations.some((r) => r.uuid === booked.uuid)).toBe(true);
    const res = await station.rpc('reservations.book', {
      project: 'Cathodes',
      start: minutesFromNow(96 * 60),
      end: minutesFromNow(97 * 60),
      answers: RESERVATION_ANSWERS,
    });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'unavailable' });
  }, 60_000);
});
