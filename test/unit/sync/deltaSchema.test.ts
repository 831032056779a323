/**
 * The schema a station checks the server's facility delta with (sync/deltaSchema.ts): a delta
 * with every section and field passes as it is; one an older server sends (optional sections
 * left out) passes; keys a newer server adds are dropped, not refused; a field missing or of
 * the wrong type in any section is refused, the problem naming its path and the rule.
 */
import { describe, expect, it } from 'vitest';
import {
  facilityDeltaSchema,
  parseFacilityDelta,
} from '../../../electron/core/sync/deltaSchema.js';
import { BadAnswerError } from '../../../electron/core/sync/parseAnswer.js';
import type { FacilityDelta } from '../../../electron/core/sync/protocol.js';

const U = (n: number): string => `01890a5d-ac96-774b-bcce-${String(n).padStart(12, '0')}`;

/** A delta with every section, every field, and each nullable field null somewhere. */
function fullDelta(): FacilityDelta {
  return {
    cursor: 42,
    cursor_mark: '5f0c2a9d3b7e4c61',
    full: true,
    acked_through: 7,
    station: { uuid: U(1), name: 'sem-pc', tool: 'SEM' },
    users: [
      {
        uuid: U(10),
        username: 'alice',
        email: 'alice@example.org',
        first_name: 'Alice',
        last_name: 'Liddell',
        badge_number: '100200',
        pin_hash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA',
        is_staff: false,
        is_active: true,
        projects: [U(20)],
        qualified_tools: [U(30)],
      },
      {
        uuid: U(11),
        username: 'bob',
        email: '',
        first_name: '',
        last_name: '',
        badge_number: null,
        pin_hash: null,
        is_staff: true,
        is_active: false,
        projects: [],
        qualified_tools: [],
      },
    ],
    projects: [{ uuid: U(20), name: 'Cathodes', application_identifier: 'PRJ-1', active: true }],
    tools: [
      {
        uuid: U(30),
        name: 'SEM',
        pre_usage_questions: '[{"type":"textbox","name":"sample"}]',
        post_usage_questions: '[]',
        category: 'Microscopy',
        operational: true,
        visible: true,
      },
    ],
    deleted: { users: [U(12)], projects: [U(21)], tools: [U(31)] },
    answers: [
      {
        usage_uuid: U(40),
        run_data: '{"problem":"No"}',
        answered_at: '2026-01-05T15:00:00.000Z',
        answered_by_uuid: U(10),
      },
      {
        usage_uuid: U(41),
        run_data: '{}',
        answered_at: '2026-01-05T16:00:00.000Z',
        answered_by_uuid: null,
      },
    ],
    validations: [
      { usage_uuid: U(42), validated_by_uuid: U(11), validated_at: '2026-01-05T17:00:00.000Z' },
      { usage_uuid: U(43), validated_by_uuid: null, validated_at: '2026-01-05T18:00:00.000Z' },
    ],
    harvest: {
      storage_locations: [
        { uuid: U(50), name: 'store', type: 'local', base_path: '/data', enabled: true },
      ],
      instruments: [
        {
          uuid: U(60),
          name: 'sem-camera',
          description: 'The SEM camera',
          tool_uuid: U(30),
          watch: [{ path: 'C:/SEM', include: ['*.tif'], exclude: ['~*'] }],
          stability_seconds: 2.5,
          storage_location_uuid: U(50),
          destination_template: '{year}/{filename}',
          enabled: true,
        },
        {
          uuid: U(61),
          name: 'sem-eds',
          description: '',
          tool_uuid: U(30),
          watch: [],
          stability_seconds: 5,
          storage_location_uuid: null,
          destination_template: '{filename}',
          enabled: false,
        },
      ],
      hooks: [
        {
          uuid: U(70),
          name: 'sidecar',
          trigger: 'post_transfer',
          kind: 'metadata',
          config: { fields: { beam: 'kV' }, nested: [1, 'two'] },
          priority: 100,
          instrument_uuid: U(60),
          enabled: true,
        },
        {
          uuid: U(71),
          name: 'every-instrument',
          trigger: 'pre_transfer',
          kind: 'redirect',
          config: {},
          priority: 5,
          instrument_uuid: null,
          enabled: false,
        },
      ],
      schedules: [
        {
          uuid: U(80),
          instrument_uuid: U(60),
          cron: '0 3 * * *',
          timezone: 'Europe/Paris',
          enabled: true,
          version: 3,
        },
        {
          uuid: U(81),
          instrument_uuid: U(61),
          cron: '0 4 * * *',
          timezone: null,
          enabled: false,
          version: 1,
        },
      ],
    },
    runs: [
      {
        uuid: U(90),
        instrument_uuid: U(60),
        schedule_uuid: U(80),
        requested_at: '2026-01-05T14:00:00.000Z',
      },
      {
        uuid: U(91),
        instrument_uuid: U(61),
        schedule_uuid: null,
        requested_at: '2026-01-05T14:01:00.000Z',
      },
    ],
    reservations: [
      {
        uuid: U(100),
        id: 5,
        tool_uuid: U(30),
        area_name: null,
        target_name: 'SEM',
        user_uuid: U(10),
        user_name: 'alice',
        creator_uuid: U(11),
        project_uuid: U(20),
        project_name: 'Cathodes',
        start: '2026-01-06T09:00:00.000Z',
        end: '2026-01-06T10:00:00.000Z',
        question_data: '{}',
      },
      {
        uuid: U(101),
        id: 6,
        tool_uuid: null,
        area_name: 'Bay',
        target_name: 'Bay',
        user_uuid: U(10),
        user_name: 'alice',
        creator_uuid: U(10),
        project_uuid: null,
        project_name: null,
        start: '2026-01-07T09:00:00.000Z',
        end: '2026-01-07T10:00:00.000Z',
        question_data: '',
      },
    ],
  };
}

/** Writes what the types forbid there: the wrong type a broken server sends. */
function put<T extends object>(target: T, key: keyof T, value: unknown): void {
  (target as Record<keyof T, unknown>)[key] = value;
}

/** Leaves out what the types require. */
function drop<T extends object>(target: T, key: keyof T): void {
  delete (target as Partial<T>)[key];
}

/** The problems parseFacilityDelta finds in a full delta after `spoil`; [] when it passes. */
function problems(spoil: (delta: FacilityDelta) => void): string[] {
  const delta = fullDelta();
  spoil(delta);
  try {
    parseFacilityDelta(delta);
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(BadAnswerError);
    return (error as BadAnswerError).issues;
  }
}

describe('parseFacilityDelta', () => {
  it('takes a delta with every section and field as it is: the schema knows each field', () => {
    const delta = fullDelta();
    expect(parseFacilityDelta(structuredClone(delta))).toEqual(delta);
  });

  it('takes the delta of an older server, without the optional sections', () => {
    const delta: FacilityDelta = {
      cursor: 0,
      full: true,
      station: { uuid: U(1), name: 'sem-pc', tool: null },
      users: [],
      projects: [],
      tools: [],
      deleted: { users: [], projects: [], tools: [] },
    };
    expect(parseFacilityDelta(structuredClone(delta))).toEqual(delta);
  });

  it('drops the keys a newer server adds, at any depth, rather than refusing the delta', () => {
    const sent = fullDelta();
    Object.assign(sent, { facility_name: 'Nanolab' });
    Object.assign(sent.users[0], { orcid: '0000-0002-1825-0097' });
    Object.assign(sent.harvest!.instruments[0].watch[0], { recursive: true });
    Object.assign(sent.deleted, { areas: [U(110)] });
    expect(parseFacilityDelta(sent)).toEqual(fullDelta());
  });

  it('takes uuids in any form the server holds them, as the keys they are', () => {
    const delta = fullDelta();
    delta.projects[0].uuid = '9f3e2d1c4b5a4c6d8e7f0a1b2c3d4e5f';
    delta.users[0].projects = ['9f3e2d1c4b5a4c6d8e7f0a1b2c3d4e5f'];
    delta.station.uuid = 'B1D0D4E2-F514-C43A-6A10-E0B8F2F6A11C';
    expect(parseFacilityDelta(structuredClone(delta))).toEqual(delta);
  });

  it('keeps a hook config key named __proto__ as the own key JSON.parse made it', () => {
    const sent = JSON.parse(
      JSON.stringify(fullDelta()).replace('"fields":', '"__proto__":{"x":1},"fields":'),
    ) as unknown;
    const config = parseFacilityDelta(sent).harvest!.hooks[0].config;
    expect(Object.hasOwn(config, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(config)).toBe(Object.prototype);
  });

  // One field missing or wrongly typed in each section: refused, naming the path and the rule.
  it.each<[string, (d: FacilityDelta) => void, string]>([
    [
      'the cursor',
      (d) => put(d, 'cursor', '42'),
      'cursor: Invalid input: expected number, received string',
    ],
    [
      'the cursor, negative',
      (d) => put(d, 'cursor', -1),
      'cursor: Too small: expected number to be >=0',
    ],
    ['full', (d) => drop(d, 'full'), 'full: Invalid input: expected boolean, received undefined'],
    [
      'the mark',
      (d) => put(d, 'cursor_mark', 17),
      'cursor_mark: Invalid input: expected string, received number',
    ],
    [
      'acked_through',
      (d) => put(d, 'acked_through', 2.5),
      'acked_through: Invalid input: expected int, received number',
    ],
    [
      'the station',
      (d) => drop(d.station, 'tool'),
      'station.tool: Invalid input: expected string, received undefined',
    ],
    [
      'a user',
      (d) => put(d.users[1], 'is_active', 'no'),
      'users[1].is_active: Invalid input: expected boolean, received string',
    ],
    [
      'a user, nullable',
      (d) => drop(d.users[1], 'pin_hash'),
      'users[1].pin_hash: Invalid input: expected string, received undefined',
    ],
    [
      'a user, a list',
      (d) => put(d.users[0], 'qualified_tools', [30]),
      'users[0].qualified_tools[0]: Invalid input: expected string, received number',
    ],
    [
      'a project',
      (d) => drop(d.projects[0], 'active'),
      'projects[0].active: Invalid input: expected boolean, received undefined',
    ],
    [
      'a tool',
      (d) => drop(d.tools[0], 'post_usage_questions'),
      'tools[0].post_usage_questions: Invalid input: expected string, received undefined',
    ],
    [
      'a tool, a parsed list',
      (d) => put(d.tools[0], 'pre_usage_questions', []),
      'tools[0].pre_usage_questions: Invalid input: expected string, received array',
    ],
    [
      'the users section',
      (d) => drop(d, 'users'),
      'users: Invalid input: expected array, received undefined',
    ],
    [
      'deletions',
      (d) => drop(d.deleted, 'tools'),
      'deleted.tools: Invalid input: expected array, received undefined',
    ],
    [
      'deletions, a uuid',
      (d) => put(d.deleted, 'users', [12]),
      'deleted.users[0]: Invalid input: expected string, received number',
    ],
    [
      'an answer',
      (d) => put(d.answers![0], 'run_data', { problem: 'No' }),
      'answers[0].run_data: Invalid input: expected string, received object',
    ],
    [
      'a validation',
      (d) => drop(d.validations![1], 'validated_by_uuid'),
      'validations[1].validated_by_uuid: Invalid input: expected string, received undefined',
    ],
    [
      'a validation, its time',
      (d) => put(d.validations![0], 'validated_at', null),
      'validations[0].validated_at: Invalid input: expected string, received null',
    ],
    [
      'a storage location',
      (d) => put(d.harvest!.storage_locations[0], 'type', 'cloud'),
      'harvest.storage_locations[0].type: Invalid option: expected one of "local"|"server"',
    ],
    [
      'an instrument',
      (d) => put(d.harvest!.instruments[0].watch[0], 'include', '*.tif'),
      'harvest.instruments[0].watch[0].include: Invalid input: expected array, received string',
    ],
    [
      'an instrument, its location',
      (d) => drop(d.harvest!.instruments[1], 'storage_location_uuid'),
      'harvest.instruments[1].storage_location_uuid: Invalid input: expected string, received undefined',
    ],
    [
      'a hook',
      (d) => put(d.harvest!.hooks[0], 'config', '{}'),
      'harvest.hooks[0].config: expected an object',
    ],
    [
      'a schedule',
      (d) => put(d.harvest!.schedules[1], 'version', '1'),
      'harvest.schedules[1].version: Invalid input: expected number, received string',
    ],
    [
      'the harvest section',
      (d) => drop(d.harvest!, 'schedules'),
      'harvest.schedules: Invalid input: expected array, received undefined',
    ],
    [
      'a run',
      (d) => drop(d.runs![1], 'schedule_uuid'),
      'runs[1].schedule_uuid: Invalid input: expected string, received undefined',
    ],
    [
      'a reservation',
      (d) => put(d.reservations![1], 'id', null),
      'reservations[1].id: Invalid input: expected number, received null',
    ],
    [
      'a reservation, a uuid',
      (d) => put(d.reservations![0], 'user_uuid', ''),
      'reservations[0].user_uuid: Too small: expected string to have >=1 characters',
    ],
  ])('refuses a bad field in %s, naming it', (_section, spoil, problem) => {
    expect(problems(spoil)).toEqual([problem]);
  });

  it('refuses an answer that is no delta at all', () => {
    expect(() => parseFacilityDelta('<html>proxy login</html>')).toThrow(
      "the server's facility delta does not parse, nothing applied: (the answer): " +
        'Invalid input: expected object, received string',
    );
  });

  it('lists every problem, and says the first with the count of the others', () => {
    const delta = fullDelta();
    drop(delta.tools[0], 'post_usage_questions');
    put(delta.users[0], 'is_staff', 1);
    put(delta.harvest!.hooks[1], 'trigger', 'later');
    let error: unknown;
    try {
      parseFacilityDelta(delta);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BadAnswerError);
    expect((error as BadAnswerError).issues).toHaveLength(3);
    expect((error as BadAnswerError).message).toMatch(/: users\[0\]\.is_staff: .* \(and 2 more\)$/);
  });

  it('is the schema the API docs describe the answer with', () => {
    expect(facilityDeltaSchema.meta()?.id).toBe('SyncFacilityDelta');
  });
});
