/** The metadata-harvesting rules of spec 000 (conventions), one table per rule. */
import { describe, expect, it } from 'vitest';
import {
  buildExperimentRecord,
  matchReservation,
  readConsent,
  type AttemptReason,
  type ReservationInput,
  type UsageEventInput,
} from '../../../shared/experiment/index.js';

const good = (title: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    data_consent: 'Agree',
    experiment_title: title,
    experiment_purpose: 'imaging',
    project_id: 'P-1',
    sample_group: [
      {
        sample_name: 'steel A',
        sample_or_pid: 'Sample Name',
        sample_details: 'polished',
        sample_elements: ['Fe', 'C'],
      },
    ],
    ...extra,
  });

const usage = (over: Partial<UsageEventInput> = {}): UsageEventInput => ({
  id: 7,
  tool: 3,
  start: '2025-03-01T10:00:00Z',
  end: '2025-03-01T12:00:00Z',
  pre_run_data: '',
  run_data: '',
  ...over,
});

const reservation = (over: Partial<ReservationInput> = {}): ReservationInput => ({
  id: 1,
  tool: 3,
  start: '2025-03-01T09:00:00Z',
  end: '2025-03-01T13:00:00Z',
  cancelled: false,
  question_data: good('from the reservation'),
  ...over,
});

/** Each cause of rule 4, as the text of a source. */
const BROKEN: [AttemptReason, string][] = [
  ['empty', ''],
  ['empty', '   '],
  ['malformed_json', '{"data_consent": "Agree",'],
  ['not_an_object', '["Agree"]'],
  ['missing_field', good('x', { experiment_title: undefined })],
  ['missing_field', good('', {})],
  // A text of spaces alone is no answer either.
  ['missing_field', good('   ', {})],
  ['missing_field', good('x', { experiment_purpose: undefined })],
  ['missing_field', good('x', { project_id: null })],
  ['missing_field', good('x', { sample_group: [] })],
  ['missing_field', good('x', { sample_group: [{ sample_or_pid: 'PID' }] })],
  ['wrong_type', good('x', { experiment_purpose: ['a'] })],
  ['wrong_type', good('x', { sample_group: 'steel' })],
  ['wrong_type', good('x', { sample_group: ['steel A'] })],
  // Keyed by anything but "0", "1", ...: not NEMO's group of repetitions.
  [
    'wrong_type',
    good('x', { sample_group: { first: { sample_name: 's', sample_or_pid: 'PID' } } }),
  ],
  [
    'wrong_type',
    good('x', {
      sample_group: [{ sample_name: 's', sample_or_pid: 'PID', sample_elements: ['Fe', 26] }],
    }),
  ],
  ['wrong_type', good('x', { sample_group: [{ sample_name: 's', sample_or_pid: 'Batch' }] })],
  ['wrong_type', good('x', { data_consent: 1 })],
  ['consent_missing', good('x', { data_consent: undefined })],
  ['consent_missing', good('x', { data_consent: '' })],
  ['consent_declined', good('x', { data_consent: 'Disagree' })],
  ['consent_unrecognized', good('x', { data_consent: 'maybe' })],
  // Asked as a checkbox: nothing ticked is none given; two ticked are no one consent.
  ['consent_missing', good('x', { data_consent: [] })],
  ['wrong_type', good('x', { data_consent: ['Agree', 'Disagree'] })],
  ['consent_declined', good('x', { data_consent: ['Disagree'] })],
];

describe('rule 1 and 4: source priority and fallback', () => {
  it('uses run_data first when it is usable', () => {
    const result = buildExperimentRecord(
      usage({ run_data: good('run'), pre_run_data: good('pre') }),
      [reservation()],
    );
    expect(result.ok && result.record.source).toBe('run_data');
    expect(result.ok && result.record.experiment_title).toBe('run');
    // The reservation is named whichever source was used.
    expect(result.ok && result.record.reservation?.id).toBe(1);
  });

  for (const [reason, text] of BROKEN) {
    it(`run_data ${reason} (${JSON.stringify(text).slice(0, 50)}) falls back to pre_run_data`, () => {
      const result = buildExperimentRecord(
        usage({ run_data: text, pre_run_data: good('pre') }),
        [],
      );
      expect(result.ok).toBe(true);
      if (!result.ok) return;
      expect(result.record.source).toBe('pre_run_data');
      expect(result.record.experiment_title).toBe('pre');
      expect(result.attempts[0]).toMatchObject({ source: 'run_data', ok: false, reason });
    });

    it(`pre_run_data ${reason} falls back to the reservation's question_data`, () => {
      const result = buildExperimentRecord(usage({ run_data: '', pre_run_data: text }), [
        reservation(),
      ]);
      expect(result.ok && result.record.source).toBe('question_data');
      expect(result.ok && result.record.experiment_title).toBe('from the reservation');
      expect(result.attempts.map((a) => [a.source, a.reason])).toEqual([
        ['run_data', 'empty'],
        ['pre_run_data', reason],
        ['question_data', undefined],
      ]);
    });

    it(`question_data ${reason}: no record, with the reason of every source`, () => {
      const result = buildExperimentRecord(usage(), [reservation({ question_data: text })]);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.attempts.map((a) => a.reason)).toEqual(['empty', 'empty', reason]);
      expect(result.attempts[2]).toMatchObject({ source: 'question_data', reservation_id: 1 });
      expect(result.reason).toContain('question_data: ');
      expect(result.reservation?.id).toBe(1);
    });
  }

  it('names the field and the rule in the reason', () => {
    const result = buildExperimentRecord(
      usage({
        run_data: good('x', { sample_group: [{ sample_name: 's', sample_or_pid: 'Batch' }] }),
      }),
      [],
    );
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toContain(
      `sample_group[0].sample_or_pid: must be 'Sample Name' or 'PID', not "Batch"`,
    );
    expect(!result.ok && result.reason).toContain('question_data: no reservation');
  });

  it('gives no record when no source is left and no reservation overlaps', () => {
    const result = buildExperimentRecord(usage(), [
      reservation({ start: '2025-03-02T09:00:00Z', end: '2025-03-02T10:00:00Z' }),
    ]);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.attempts.map((a) => a.reason)).toEqual([
      'empty',
      'empty',
      'no_reservation',
    ]);
  });
});

describe('rule 3: consent', () => {
  const cases: [string | boolean, ReturnType<typeof readConsent>][] = [
    ['Agree', 'affirmative'],
    ['agree', 'affirmative'],
    ['AGREE', 'affirmative'],
    [' Yes ', 'affirmative'],
    ['yes', 'affirmative'],
    ['True', 'affirmative'],
    ['tRUE', 'affirmative'],
    ['Affirmative', 'affirmative'],
    ['AFFIRMATIVE', 'affirmative'],
    [true, 'affirmative'],
    ['Disagree', 'declined'],
    ['disagree', 'declined'],
    ['No', 'declined'],
    ['NO', 'declined'],
    ['false', 'declined'],
    ['False', 'declined'],
    ['Negative', 'declined'],
    ['negative', 'declined'],
    [false, 'declined'],
    ['Y', 'unrecognized'],
    ['agreed', 'unrecognized'],
    ['', 'unrecognized'],
  ];
  for (const [value, expected] of cases) {
    it(`${JSON.stringify(value)} is ${expected}`, () => {
      expect(readConsent(value)).toBe(expected);
      const result = buildExperimentRecord(
        usage({ run_data: good('x', { data_consent: value }) }),
        [],
      );
      expect(result.ok).toBe(expected === 'affirmative');
    });
  }

  it("reads a checkbox's one choice ticked as that word (data_consent asked as a checkbox)", () => {
    const result = buildExperimentRecord(
      usage({ run_data: good('x', { data_consent: ['Agree'] }) }),
      [],
    );
    expect(result.ok && result.record.data_consent).toBe('Agree');
  });

  it('keeps the consent answer as given', () => {
    const result = buildExperimentRecord(
      usage({ run_data: good('x', { data_consent: ' yes ' }) }),
      [],
    );
    expect(result.ok && result.record.data_consent).toBe('yes');
  });
});

describe('rule 2: the reservation with the largest overlap', () => {
  const ids = (list: ReservationInput[]) => matchReservation(usage(), list)?.match.id ?? null;

  it('takes the largest overlap and reports it in seconds', () => {
    const list = [
      reservation({ id: 1, start: '2025-03-01T08:00:00Z', end: '2025-03-01T10:30:00Z' }), // 30 min
      reservation({ id: 2, start: '2025-03-01T10:30:00Z', end: '2025-03-01T14:00:00Z' }), // 90 min
    ];
    expect(matchReservation(usage(), list)?.match).toMatchObject({ id: 2, overlap_seconds: 5400 });
  });

  it('ignores cancelled reservations, other tools and mere contact', () => {
    expect(ids([reservation({ cancelled: true })])).toBeNull();
    expect(ids([reservation({ tool: 4 })])).toBeNull();
    expect(
      ids([reservation({ start: '2025-03-01T12:00:00Z', end: '2025-03-01T13:00:00Z' })]),
    ).toBeNull();
  });

  it('takes area reservations of an area holding the tool when told which', () => {
    const area = reservation({ id: 9, tool: null, area: 5 });
    expect(matchReservation(usage(), [area])).toBeNull();
    expect(matchReservation(usage(), [area], { toolAreas: [5] })?.match.id).toBe(9);
    // A reservation of another tool is not this tool's, whatever area it also names.
    const otherTool = reservation({ id: 10, tool: 4, area: 5 });
    expect(matchReservation(usage(), [otherTool], { toolAreas: [5] })).toBeNull();
  });

  it('breaks an overlap tie by the start nearest the usage, then the lower id, in any order', () => {
    // Both cover the whole usage (2 h overlap each).
    const near = reservation({ id: 5, start: '2025-03-01T09:50:00Z', end: '2025-03-01T12:30:00Z' });
    const far = reservation({ id: 4, start: '2025-03-01T08:00:00Z', end: '2025-03-01T12:30:00Z' });
    expect(ids([near, far])).toBe(5);
    expect(ids([far, near])).toBe(5);
    const twinA = reservation({
      id: 8,
      start: '2025-03-01T09:00:00Z',
      end: '2025-03-01T13:00:00Z',
    });
    const twinB = reservation({
      id: 6,
      start: '2025-03-01T09:00:00Z',
      end: '2025-03-01T13:00:00Z',
    });
    expect(ids([twinA, twinB])).toBe(6);
    expect(ids([twinB, twinA])).toBe(6);
  });

  it('measures a usage in progress up to now', () => {
    const open = usage({ end: null });
    const list = [
      reservation({ id: 1, start: '2025-03-01T09:00:00Z', end: '2025-03-01T10:30:00Z' }),
      reservation({ id: 2, start: '2025-03-01T10:30:00Z', end: '2025-03-01T18:00:00Z' }),
    ];
    expect(
      matchReservation(open, list, { now: Date.parse('2025-03-01T10:45:00Z') })?.match.id,
    ).toBe(1);
    expect(
      matchReservation(open, list, { now: Date.parse('2025-03-01T16:00:00Z') })?.match.id,
    ).toBe(2);
  });

  it('reads times with offsets as the read API writes them', () => {
    const list = [
      reservation({ start: '2025-03-01T03:30:00-06:00', end: '2025-03-01T04:30:00-06:00' }),
    ];
    expect(matchReservation(usage(), list)?.match.overlap_seconds).toBe(1800);
  });
});

describe('samples and answer shapes', () => {
  it('reads a group with several samples, in order, with elements as a list or text', () => {
    const result = buildExperimentRecord(
      usage({
        run_data: good('x', {
          sample_group: [
            {
              sample_name: 'A',
              sample_or_pid: 'Sample Name',
              sample_details: '',
              sample_elements: ['Si'],
            },
            { sample_name: 'ark:99999/fk4x', sample_or_pid: 'pid', sample_elements: 'Au, Pd;Pt' },
            { sample_name: 'C', sample_or_pid: 'SAMPLE NAME' },
          ],
        }),
      }),
      [],
    );
    expect(result.ok && result.record.samples).toEqual([
      {
        sample_name: 'A',
        sample_or_pid: 'Sample Name',
        sample_details: '',
        sample_elements: ['Si'],
      },
      {
        sample_name: 'ark:99999/fk4x',
        sample_or_pid: 'PID',
        sample_details: '',
        sample_elements: ['Au', 'Pd', 'Pt'],
      },
      { sample_name: 'C', sample_or_pid: 'Sample Name', sample_details: '', sample_elements: [] },
    ]);
  });

  const nemo = (consent: unknown, group: Record<string, unknown>) =>
    JSON.stringify({
      data_consent: {
        type: 'radio',
        title: 'Consent',
        choices: ['Agree', 'Disagree'],
        ...(consent === undefined ? {} : { user_input: consent }),
      },
      experiment_title: { type: 'textbox', title: 'Title', user_input: 'NEMO run' },
      experiment_purpose: { type: 'textarea', title: 'Purpose', user_input: 'EDS maps' },
      project_id: { type: 'textbox', title: 'Project', user_input: 'NIST-42' },
      sample_group: { type: 'group', title: 'Samples', questions: [], user_input: group },
    });

  it('reads NEMO\'s stored shape, groups keyed "0", "1", ... with gaps, in numeric order', () => {
    const result = buildExperimentRecord(
      usage({
        run_data: nemo('agree', {
          '10': { sample_name: 'third', sample_or_pid: 'PID' },
          '0': {
            sample_name: 'first',
            sample_or_pid: 'Sample Name',
            sample_details: 'd',
            sample_elements: ['O'],
          },
          '2': { sample_name: 'second', sample_or_pid: 'Sample Name' },
        }),
      }),
      [],
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.record).toMatchObject({
      experiment_title: 'NEMO run',
      experiment_purpose: 'EDS maps',
      project_id: 'NIST-42',
      data_consent: 'agree',
    });
    expect(result.record.samples.map((s) => s.sample_name)).toEqual(['first', 'second', 'third']);
  });

  it('takes a NEMO question without user_input as unanswered', () => {
    const result = buildExperimentRecord(
      usage({
        run_data: nemo(undefined, { '0': { sample_name: 'a', sample_or_pid: 'PID' } }),
        pre_run_data: good('pre'),
      }),
      [],
    );
    expect(result.ok && result.record.source).toBe('pre_run_data');
    expect(result.attempts[0]).toMatchObject({ reason: 'consent_missing' });
  });

  it('keeps texts and element symbols without the spaces around them', () => {
    const result = buildExperimentRecord(
      usage({
        run_data: good(' Title ', {
          experiment_purpose: ' imaging\n',
          project_id: ' P-1 ',
          sample_group: [
            {
              sample_name: ' steel A ',
              sample_or_pid: ' Sample Name ',
              sample_details: ' polished ',
              sample_elements: [' Fe', 'C ', '  '],
            },
          ],
        }),
      }),
      [],
    );
    expect(result.ok && result.record).toMatchObject({
      experiment_title: 'Title',
      experiment_purpose: 'imaging',
      project_id: 'P-1',
      samples: [
        {
          sample_name: 'steel A',
          sample_or_pid: 'Sample Name',
          sample_details: 'polished',
          sample_elements: ['Fe', 'C'],
        },
      ],
    });
  });

  it('reads a project id given as a number as text', () => {
    const result = buildExperimentRecord(usage({ run_data: good('x', { project_id: 42 }) }), []);
    expect(result.ok && result.record.project_id).toBe('42');
  });
});
