/**
 * `labstation experiment --event FILE --reservations FILE`, run as a user runs it: the built
 * command in a child process, inputs in the read API's shapes. Needs `npm run build` first.
 */
import { describe, expect, it } from 'vitest';
import { runCli, tempDir, writeJson } from './helpers.js';

const answers = (consent: string, title: string) =>
  JSON.stringify({
    data_consent: consent,
    experiment_title: title,
    experiment_purpose: 'EDS maps',
    project_id: 'P-7',
    sample_group: [
      {
        sample_name: 'steel',
        sample_or_pid: 'Sample Name',
        sample_details: '',
        sample_elements: ['Fe'],
      },
      { sample_name: 'ark:99999/fk4b2', sample_or_pid: 'PID' },
    ],
  });

const EVENT = {
  id: 31,
  user: 2,
  operator: 2,
  project: 1,
  tool: 3,
  start: '2025-03-01T10:00:00-05:00',
  end: '2025-03-01T12:00:00-05:00',
  validated: false,
  validated_by: null,
  remote_work: false,
  pre_run_data: '',
  run_data: JSON.stringify({ data_consent: 'Agree', experiment_title: 'missing the rest' }),
};

const PAGE = {
  count: 2,
  next: null,
  previous: null,
  results: [
    {
      id: 4,
      user: 2,
      creator: 2,
      tool: 3,
      area: null,
      project: 1,
      start: '2025-03-01T09:00:00-05:00',
      end: '2025-03-01T10:30:00-05:00',
      cancelled: false,
      question_data: answers('Yes', 'short one'),
    },
    {
      id: 5,
      user: 2,
      creator: 2,
      tool: 3,
      area: null,
      project: 1,
      start: '2025-03-01T10:30:00-05:00',
      end: '2025-03-01T13:00:00-05:00',
      cancelled: false,
      question_data: answers('yes', 'Grain boundaries'),
    },
  ],
};

/** `labstation experiment` on a usage event and a reservations file, as a user runs it. */
function experiment(event: unknown, reservations: unknown): ReturnType<typeof runCli> {
  const dir = tempDir();
  return runCli([
    'experiment',
    '--event',
    writeJson(dir, 'event.json', event),
    '--reservations',
    writeJson(dir, 'reservations.json', reservations),
  ]);
}

describe('labstation experiment', () => {
  it("prints the record built from the best reservation's answers when run_data lacks fields", async () => {
    const out = await experiment(EVENT, PAGE);
    expect(out.code).toBe(0);
    const printed = JSON.parse(out.stdout) as {
      record: Record<string, unknown>;
      attempts: { source: string; reason?: string; detail?: string }[];
    };
    expect(printed.record).toMatchObject({
      usage_event_id: 31,
      source: 'question_data',
      experiment_title: 'Grain boundaries',
      project_id: 'P-7',
      reservation: { id: 5, overlap_seconds: 5400 },
    });
    expect(printed.record.samples).toHaveLength(2);
    expect(printed.attempts.map((a) => a.reason ?? 'ok')).toEqual(['missing_field', 'empty', 'ok']);
    expect(printed.attempts[0].detail).toBe('experiment_purpose: missing or blank');
  });

  it('exits 1 with every reason when no source is left (a plain list of reservations)', async () => {
    const declined = PAGE.results.map((r) => ({ ...r, question_data: answers('Negative', 'no') }));
    const out = await experiment(EVENT, declined);
    expect(out.code).toBe(1);
    const printed = JSON.parse(out.stdout) as { record: null; reason: string };
    expect(printed.record).toBeNull();
    expect(printed.reason).toContain('question_data: data_consent: declined (Negative)');
  });

  it('takes the booking of an area holding the tool, given the areas with --areas', async () => {
    const dir = tempDir();
    const bay = {
      ...PAGE.results[1],
      id: 9,
      tool: null,
      area: 7,
      start: '2025-03-01T10:00:00-05:00',
      end: '2025-03-01T12:00:00-05:00',
      question_data: answers('yes', 'Booked the bay'),
    };
    const args = [
      'experiment',
      '--event',
      writeJson(dir, 'event.json', EVENT),
      '--reservations',
      writeJson(dir, 'reservations.json', [...PAGE.results, bay]),
    ];
    const ran = await runCli(args);
    const without = JSON.parse(ran.stdout) as { record: { reservation: unknown } };
    expect(without.record.reservation).toMatchObject({ id: 5 });
    // Said, so that the record is not taken for all there was.
    expect(ran.stderr).toBe(
      'labstation: 1 reservation of an area overlaps this usage and was not counted; name the ' +
        'areas that hold its tool with --areas to count it\n',
    );
    const withAreas = await runCli([...args, '--areas', '2, 7']);
    expect(withAreas.code).toBe(0);
    expect(withAreas.stderr).toBe('');
    expect(JSON.parse(withAreas.stdout)).toMatchObject({
      record: { experiment_title: 'Booked the bay', reservation: { id: 9, overlap_seconds: 7200 } },
    });
    const bad = await runCli([...args, '--areas', 'bay']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--areas takes area ids separated by commas');
  });

  it('refuses one page of a longer answer, where the best reservation may be missing', async () => {
    // Page 1 of the read API's answer holds only the short booking; the one that overlaps the
    // usage most is on page 2, which was not fetched.
    const first = {
      count: 2,
      next: 'http://127.0.0.1:8080/api/reservations/?page=2&page_size=1',
      previous: null,
      results: [PAGE.results[0]],
    };
    const out = await experiment(EVENT, first);
    expect(out.code).toBe(1);
    expect(out.stdout).toBe('');
    expect(out.stderr).toContain('holds one page of the 2 reservations asked for');
    expect(out.stderr).toContain("start__lte=<the usage's end>&end__gte=<its start>");
    const second = { ...first, next: null, previous: first.next, results: [PAGE.results[1]] };
    const last = await experiment(EVENT, second);
    expect(last.code).toBe(1);
    expect(last.stderr).toContain('holds one page of the 2 reservations asked for');
  });

  it('names the field and the rule of a bad input', async () => {
    const dir = tempDir();
    const out = await experiment({ ...EVENT, start: 'yesterday' }, [
      { ...PAGE.results[0], tool: 'SEM' },
    ]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(
      'usage event.start: must be an ISO 8601 date-time with its offset',
    );
    // A field left out is named as required, in a plain list and in the read API's answer.
    const noEnd: Record<string, unknown> = { ...PAGE.results[1] };
    delete noEnd.end;
    const noTool: Record<string, unknown> = { ...EVENT };
    delete noTool.tool;
    const left = await experiment(noTool, [PAGE.results[0], noEnd]);
    expect(left.code).toBe(1);
    expect(left.stderr).toBe('usage event.tool: is required\n');
    const inList = await experiment(EVENT, [PAGE.results[0], noEnd]);
    expect(inList.stderr).toBe('reservations[1].end: is required\n');
    const inPage = await experiment(EVENT, { ...PAGE, results: [PAGE.results[0], noEnd] });
    expect(inPage.stderr).toBe('reservations.results[1].end: is required\n');
    const missing = await runCli(['experiment', '--event', writeJson(dir, 'e.json', EVENT)]);
    expect(missing.code).toBe(2);
    // The command line is checked before the files: a bad event with a flag left out is a
    // wrong command line (it was exit 1, naming the event's problems).
    const both = await runCli(['experiment', '--event', writeJson(dir, 'bad.json', {})]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--reservations');
  });

  // Mutation: a date-time taken when Date.parse takes it ("1" is 2001, "May 5" is 2001-05-05,
  // one without an offset is in the machine's zone): the answer changed, with no word.
  it('takes only ISO 8601 date-times with their offset, in the files and in --now', async () => {
    for (const start of ['1', 'May 5, 2025', '2025-03-01T10:00:00', '2025-03-01']) {
      const out = await experiment({ ...EVENT, start }, PAGE);
      expect(out.code, start).toBe(1);
      expect(out.stderr, start).toContain(
        'usage event.start: must be an ISO 8601 date-time with its offset (Z or ±hh:mm)',
      );
    }
    const late = await experiment({ ...EVENT, end: '2025-03-01T12:00:00.123456-05:00' }, PAGE);
    expect(late.code).toBe(0);
    const dir = tempDir();
    const args = [
      'experiment',
      '--event',
      writeJson(dir, 'event.json', EVENT),
      '--reservations',
      writeJson(dir, 'reservations.json', PAGE),
    ];
    for (const now of ['1', 'May 5']) {
      const out = await runCli([...args, '--now', now]);
      expect(out.code, now).toBe(2);
      expect(out.stderr, now).toContain('--now must be an ISO 8601 date-time with its offset');
    }
    expect((await runCli([...args, '--now', '2025-03-01T11:00:00Z'])).code).toBe(0);
  });

  // Mutation: the CLI without the check of the times against each other: "no reservation of
  // this tool overlaps", exit 1, or a record from run_data, for an event that cannot be.
  it('names an end before the start, and a --now before the start of a usage in progress', async () => {
    const backwards = await experiment({ ...EVENT, end: '2025-03-01T09:00:00-05:00' }, PAGE);
    expect(backwards.code).toBe(1);
    expect(backwards.stderr).toBe(
      'usage event.end: 2025-03-01T09:00:00-05:00 is before its start, 2025-03-01T10:00:00-05:00\n',
    );
    const dir = tempDir();
    const running = await runCli([
      'experiment',
      '--event',
      writeJson(dir, 'event.json', { ...EVENT, end: null }),
      '--reservations',
      writeJson(dir, 'reservations.json', PAGE),
      '--now',
      '2025-03-01T14:00:00Z',
    ]);
    expect(running.code).toBe(1);
    expect(running.stderr).toContain(
      "--now: 2025-03-01T14:00:00Z is before the usage event's start, 2025-03-01T10:00:00-05:00",
    );
  });
});
