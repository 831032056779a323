/**
 * The commands on a facility's files: a bundle loaded into a data dir (`import`), and question
 * lists, answers, metadata and usage events checked offline (`questions`, `metadata`,
 * `experiment`).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { z } from 'zod';
import type { LocatedProblem } from '../../shared/metadata/index.js';
import { upgradeOnlyIfIdle } from '../core/harvest/lock.js';
import { openStationDatabase } from '../core/station/database.js';
import { AppError } from '../core/util/errors.js';
import { formatIssues } from '../core/util/issues.js';
import { n, need, readJson, readText, UsageError } from './args.js';
import { firstFill } from './firstFill.js';

export async function importCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { data: { type: 'string' } },
    allowPositionals: true,
  });
  if (positionals.length !== 1) throw new UsageError('import takes one FILE.json');
  // The command line first (exit 2), then the file (exit 1).
  const dataDir = resolve(need(values.data, '--data'));
  const bundle = readJson(positionals[0], 'bundle');
  const { importBundle } = await import('../core/station/facility.js');
  const fill = firstFill(dataDir);
  let db: ReturnType<typeof openStationDatabase> | undefined;
  let imported = false;
  // Ctrl+C or SIGTERM while the database is made or the PINs are hashed (the bundle is written
  // in one transaction after): a new data dir goes as it was found, not left holding an empty
  // database that would make it look set up.
  const finish = (): void => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    db?.close();
    // A refused bundle stores nothing, and leaves a new data dir as it was.
    if (imported) fill.done();
    else fill.undo();
  };
  const stop = (signal: NodeJS.Signals): void => {
    finish();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    db = openStationDatabase(dataDir, { beforeUpgrade: upgradeOnlyIfIdle(dataDir) });
    const summary = await importBundle(db, bundle);
    imported = true;
    process.stdout.write(
      `imported ${n(summary.users, 'user')}, ${n(summary.projects, 'project')}, ${n(summary.tools, 'tool')}` +
        // The harvest's parts where the bundle has them.
        (
          [
            [summary.instruments, 'instrument'],
            [summary.storage_locations, 'storage location'],
            [summary.hooks, 'hook'],
            [summary.schedules, 'schedule'],
          ] as const
        )
          .filter(([count]) => count > 0)
          .map(([count, what]) => `, ${n(count, what)}`)
          .join('') +
        (summary.station ? `; this station runs ${summary.station}` : '') +
        (summary.usages_ended > 0
          ? `; ${n(summary.usages_ended, 'usage')} in progress on the tool it ran before ended, ` +
            'its post-usage answers pending'
          : '') +
        '\n',
    );
    return 0;
  } finally {
    finish();
  }
}

/** One problem per line; a problem about the whole list or answer object has no path. */
function printProblem(path: string, message: string): void {
  process.stdout.write(path ? `${path}: ${message}\n` : `${message}\n`);
}

export async function questions(argv: string[]): Promise<number> {
  const [sub, ...args] = argv;
  // Files are positionals, as every other command reads them: after `--` a name that starts
  // with a dash is a file (`questions check -- -q.json`), and before it an option is refused.
  const rest = parseArgs({ args, options: {}, allowPositionals: true }).positionals;
  const { parseQuestions, validateAnswers } = await import('../../shared/questions/index.js');
  if (sub === 'check') {
    if (rest.length !== 1) throw new UsageError('questions check takes one FILE');
    const result = parseQuestions(readJson(rest[0], 'question list'));
    if (!result.ok) {
      for (const p of result.problems) printProblem(p.path, p.message);
      return 1;
    }
    process.stdout.write(`ok: ${n(result.questions.length, 'question')}\n`);
    return 0;
  }
  if (sub === 'answer') {
    if (rest.length !== 2) throw new UsageError('questions answer takes QUESTIONS ANSWERS');
    const parsed = parseQuestions(readJson(rest[0], 'question list'));
    if (!parsed.ok) {
      for (const p of parsed.problems) printProblem(p.path, p.message);
      return 1;
    }
    const result = validateAnswers(parsed.questions, readJson(rest[1], 'answers'));
    if (!result.ok) {
      for (const p of result.problems) printProblem(p.path.join('.'), p.message);
      return 1;
    }
    process.stdout.write(`${JSON.stringify(result.answers, null, 2)}\n`);
    return 0;
  }
  throw new UsageError('questions takes check or answer');
}

const METADATA_FORMS = ['elabftw', 'notebook'] as const;

/**
 * metadata check: every error (structure and values) one per line on stdout, exit 1; notices
 * (an empty required field...) on stderr. metadata convert: refused only for structural
 * problems, since value problems do not block saving either.
 */
export async function metadata(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'check' && sub !== 'convert') throw new UsageError('metadata takes check or convert');
  const { values, positionals } = parseArgs({
    args: rest,
    options: { to: { type: 'string' } },
    allowPositionals: true,
  });
  const file = positionals[0];
  if (positionals.length !== 1 || file === undefined) {
    throw new UsageError(`metadata ${sub} takes one FILE`);
  }
  const form = METADATA_FORMS.find((name) => name === values.to);
  if (sub === 'convert' && form === undefined) {
    throw new UsageError('metadata convert needs --to elabftw or --to notebook');
  }
  if (sub === 'check' && values.to !== undefined)
    throw new UsageError('--to is for metadata convert');
  let text: string;
  try {
    text = readText(file);
  } catch (error) {
    throw new AppError('bad_request', `metadata file ${file}: ${(error as Error).message}`);
  }
  const { parseMetadataText, serializeMetadata, toNotebook } =
    await import('../../shared/metadata/index.js');
  const { storedTooLong, textTooLong } = await import('../core/notebook/metadataSize.js');
  // The station's limits, as its saves apply them: what is ok here is a document it takes.
  const tooLongText = textTooLong(text);
  if (tooLongText !== null) {
    process.stdout.write(`${file}: ${tooLongText}\n`);
    return 1;
  }
  const result = parseMetadataText(text);
  const syntax = result.problems.find((p) => p.code === 'invalid_json');
  if (syntax) throw new AppError('bad_request', `metadata file ${file}: ${syntax.message}`);
  const tooLongStored = result.ok ? storedTooLong(JSON.stringify(toNotebook(result.doc))) : null;
  if (tooLongStored !== null) {
    process.stdout.write(`${file}: ${tooLongStored}\n`);
    return 1;
  }
  const note = (p: LocatedProblem): void => {
    process.stderr.write(`${p.severity === 'warning' ? 'notice' : 'error'}: ${p.message}\n`);
  };
  if (sub === 'check') {
    const errors = result.problems.filter((p) => p.severity === 'error');
    for (const p of result.problems) {
      if (p.severity === 'error') process.stdout.write(`${p.message}\n`);
      else note(p);
    }
    if (errors.length > 0 || !result.ok) return 1;
    process.stdout.write(`ok: ${n(result.doc.fields.length, 'field')}\n`);
    return 0;
  }
  if (!result.ok) {
    for (const p of result.problems) {
      if (p.blocksSaving) process.stdout.write(`${p.message}\n`);
      else note(p);
    }
    return 1;
  }
  result.problems.forEach(note);
  process.stdout.write(`${serializeMetadata(result.doc, form)}\n`);
  return 0;
}

/**
 * The problems of a schema check of `input`, one per line, each naming its field and the rule;
 * a field left out is said to be required.
 */
function schemaProblems(what: string, issues: z.core.$ZodIssue[], input: unknown): string {
  return formatIssues(issues, what, input, true).join('\n');
}

/**
 * Why a reservations file that is one page of the read API's answer, with other pages left out
 * (its `next` or `previous` link set), cannot be used: the reservation that overlaps the usage
 * most may be on a page not given, and the record would be built from another one, or from
 * none, without a word. Null for a whole answer or a plain list.
 */
function onePageOfMore(listed: unknown): string | null {
  if (typeof listed !== 'object' || listed === null || Array.isArray(listed)) return null;
  const page = listed as { count?: unknown; next?: unknown; previous?: unknown };
  const link = (value: unknown): boolean => typeof value === 'string' && value !== '';
  if (!link(page.next) && !link(page.previous)) return null;
  const count = typeof page.count === 'number' ? `the ${page.count}` : 'the';
  return (
    `holds one page of ${count} reservations asked for (its next or previous link is set); the ` +
    'rules need every reservation that can overlap the usage: ask for those starting before ' +
    "its end and ending after its start (start__lte=<the usage's end>&end__gte=<its start>, " +
    'page_size up to 1000), or join all pages into one list'
  );
}

/**
 * experiment: the record the metadata-harvesting rules (spec 000 conventions) build from a usage
 * event and its tool's reservations, as given by the read API; for checking a facility's data
 * offline.
 */
export async function experiment(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      event: { type: 'string' },
      reservations: { type: 'string' },
      now: { type: 'string' },
      areas: { type: 'string' },
    },
    allowPositionals: true,
  });
  if (positionals.length) throw new UsageError('experiment takes --event FILE --reservations FILE');
  // The areas that hold the event's tool: their bookings are its reservations too.
  const toolAreas = (values.areas ?? '')
    .split(',')
    .filter((part) => part.trim() !== '')
    .map((part) => {
      if (!/^\s*\d{1,15}\s*$/.test(part)) {
        throw new UsageError('--areas takes area ids separated by commas, such as 2,5');
      }
      return Number(part);
    });
  const { buildExperimentRecord, isIsoDateTime, reservationListSchema, usageEventInputSchema } =
    await import('../../shared/experiment/index.js');
  // The command line first (exit 2), then the files (exit 1), whatever they hold.
  const eventFile = need(values.event, '--event');
  const reservationsFile = need(values.reservations, '--reservations');
  let now: number | undefined;
  if (values.now !== undefined) {
    if (!isIsoDateTime(values.now)) {
      throw new UsageError(
        '--now must be an ISO 8601 date-time with its offset, e.g. 2026-05-05T11:00:00Z',
      );
    }
    now = Date.parse(values.now);
  }
  const given = readJson(eventFile, 'usage event');
  const event = usageEventInputSchema.safeParse(given);
  if (!event.success)
    throw new AppError('bad_request', schemaProblems('usage event', event.error.issues, given));
  const from = Date.parse(event.data.start);
  if (event.data.end !== null && Date.parse(event.data.end) < from) {
    throw new AppError(
      'bad_request',
      `usage event.end: ${event.data.end} is before its start, ${event.data.start}`,
    );
  }
  if (event.data.end === null && now !== undefined && now < from) {
    throw new AppError(
      'bad_request',
      `--now: ${values.now} is before the usage event's start, ${event.data.start} (a usage ` +
        'in progress is taken to run from its start to --now)',
    );
  }
  const listed = readJson(reservationsFile, 'reservations');
  const partial = onePageOfMore(listed);
  if (partial !== null)
    throw new AppError('bad_request', `reservations ${reservationsFile}: ${partial}`);
  if (typeof listed !== 'object' || listed === null) {
    throw new AppError(
      'bad_request',
      `reservations ${reservationsFile}: must be a list of reservations or the read API's ` +
        'answer ({"count", "next", "previous", "results"})',
    );
  }
  const list = reservationListSchema(listed).safeParse(listed);
  if (!list.success)
    throw new AppError('bad_request', schemaProblems('reservations', list.error.issues, listed));
  if (toolAreas.length === 0) {
    // Bookings of areas count only with --areas (which areas hold the tool is not in the files):
    // said, so that a record built without them is not taken for all there was.
    const to = event.data.end === null ? (now ?? Date.now()) : Date.parse(event.data.end);
    const areaBookings = list.data.filter(
      (r) =>
        r.area !== null &&
        r.area !== undefined &&
        r.cancelled !== true &&
        Date.parse(r.start) < to &&
        Date.parse(r.end) > from,
    ).length;
    if (areaBookings > 0) {
      process.stderr.write(
        areaBookings === 1
          ? 'labstation: 1 reservation of an area overlaps this usage and was not counted; ' +
              'name the areas that hold its tool with --areas to count it\n'
          : `labstation: ${areaBookings} reservations of areas overlap this usage and were not ` +
              'counted; name the areas that hold its tool with --areas to count them\n',
      );
    }
  }
  const result = buildExperimentRecord(event.data, list.data, {
    toolAreas,
    ...(now === undefined ? {} : { now }),
  });
  process.stdout.write(
    `${JSON.stringify(
      result.ok
        ? { record: result.record, attempts: result.attempts }
        : {
            record: null,
            reason: result.reason,
            reservation: result.reservation,
            attempts: result.attempts,
          },
      null,
      2,
    )}\n`,
  );
  return result.ok ? 0 : 1;
}
