/**
 * The `labstation` command. Exit codes: 0 done; 1 the input was refused (problems printed one
 * per line); 2 wrong usage of the command itself.
 */
import { isUtf8 } from 'node:buffer';
import { existsSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { z } from 'zod';
import type { LocatedProblem } from '../shared/metadata/index.js';
import { NewerDatabaseError, type Db } from './core/db/open.js';
import { DataDirBusy } from './core/harvest/lock.js';
import type { Role } from './core/server/auth.js';
import { getSetting } from './core/station/settings.js';
import { openStationDatabase } from './core/station/database.js';
import { AppError } from './core/util/errors.js';
import { formatIssues } from './core/util/issues.js';
import { createLogger } from './core/util/log.js';
// Each command imports the rest of what it needs when it runs: the station and server runners
// (fastify, the sync client, the web UI), the forms, the schemas. `harvest --once` loads the
// harvest and the database only; on an empty folder it took 0.33 s warm, 0.45 to 0.52 s with
// the caches dropped, against 0.41 s and 0.56 to 0.62 s when cli.ts imported every command's
// modules (BENCHMARKS.md).

const HELP = `labstation — instrument station and facility server

Usage:
  labstation station --data DIR [--port N] [--demo] [--server URL --key KEY]
                                                      run a headless station; prints the UI URL
                                                      (--server and --key are kept in DIR)
  labstation serve --data DIR [--host H] [--port N] [--time-zone TZ]
                                                      run the server (default 127.0.0.1:8080)
  labstation admin user create --data DIR --email E --password P [--role admin|staff|user] [--username U]
  labstation admin token create --data DIR --user EMAIL    prints a new API token (last line)
  labstation admin station create --data DIR --name NAME --tool TOOL
                                                      registers a station; prints its key (last line)
  labstation mail list --data DIR [--status S] [--json]
                                                      print a server's mails, newest first (S:
                                                      queued, sent, failed, cancelled), with why
                                                      the last try failed
  labstation mail retry --data DIR ID... | --all-failed
                                                      send failed mails again (after fixing SMTP
                                                      or an address); exit 1 if one is not
                                                      queued again, naming why
  labstation import --data DIR FILE.json              load a facility bundle into a data dir
  labstation questions check FILE                     validate a question list
  labstation questions answer QUESTIONS ANSWERS       validate answers, print canonical answers
  labstation metadata check FILE                      validate notebook entry metadata (errors one
                                                      per line; notices go to stderr)
  labstation metadata convert FILE --to elabftw|notebook
                                                      print the metadata in the notebook service's
                                                      form (elabftw) or in Labstation's (notebook)
  labstation experiment --event FILE --reservations FILE [--areas IDS] [--now ISO]
                                                      print the experiment record of a usage
                                                      event (read API shapes); exit 1 when the
                                                      rules give none, with each source's reason
  labstation usage --data DIR [--json|--csv] [--tool NAME]
                                                      print the usage events
  labstation harvest --data DIR [--once]              harvest the station's instruments: with
                                                      --once, walk every watched folder, transfer
                                                      what is stable, exit (1 if any failed, a
                                                      folder could not be read or a file was
                                                      left for the next run); without, keep
                                                      watching until stopped
  labstation files --data DIR [--json] [--state S] [--search TEXT]
                                                      print the file records (S: waiting, failed,
                                                      done, gone; TEXT: a part of the path below
                                                      the watched folder, a whole source path or
                                                      a folder's, or an ARK)
  labstation transfers --data DIR [--json] [--file ID]
                                                      print the transfer records

Exit codes: 0 ok, 1 input refused (one problem per line), 2 wrong usage.
`;

class UsageError extends Error {}

const COMMANDS = [
  'station',
  'import',
  'serve',
  'admin',
  'questions',
  'metadata',
  'experiment',
  'usage',
  'harvest',
  'files',
  'transfers',
  'mail',
];

/**
 * The --port value, or `fallback` without one. Digits only: Number() would take 0x50, 1e3 and
 * an empty value as ports (80, 1000, 0).
 */
function portOf(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!/^\d{1,5}$/.test(value) || port > 65535) {
    throw new UsageError('--port must be a whole number from 0 to 65535');
  }
  return port;
}

/**
 * A JSON file's text. JSON is UTF-8 (RFC 8259): a file in another encoding (Latin-1 from an
 * old editor) is refused, naming the line, instead of read with its letters replaced by U+FFFD
 * and written back so. The byte order mark Windows editors (Notepad, PowerShell's UTF8
 * encoding) write first is dropped: JSON.parse would refuse it as an invisible character.
 */
function readText(file: string): string {
  const bytes = readFileSync(file);
  const text = bytes.toString('utf8');
  if (!isUtf8(bytes)) {
    const bad = text.indexOf('\uFFFD');
    const line = text.slice(0, Math.max(bad, 0)).split('\n').length;
    throw new Error(`is not UTF-8 text (line ${line}); save it as UTF-8`);
  }
  return text.replace(/^\uFEFF/, '');
}

function readJson(file: string, what: string): unknown {
  let text: string;
  try {
    text = readText(file);
  } catch (error) {
    throw new AppError('bad_request', `${what} ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new AppError(
      'bad_request',
      `${what} ${file} is not valid JSON: ${(error as Error).message}`,
    );
  }
}

/** The files a start makes in a data dir (the database, its journal, the locks, the token). */
const STARTED_FILES = [
  'labstation.db',
  'labstation.db-wal',
  'labstation.db-shm',
  'rpc-token',
  'running.lock',
  'harvest.lock',
];

/**
 * A data dir a command may be the first to fill. Should the command fail, `undo` leaves it as
 * it was found, not holding a database that would make it look set up: the files of
 * STARTED_FILES that were not there, then the folders this run made, if empty. Anything else
 * put there meanwhile stays, and so do the folders holding it. Never throws: the command's own
 * error is the one to report.
 */
function firstFill(dataDir: string): { undo(): void } {
  if (existsSync(join(dataDir, 'labstation.db'))) return { undo: () => undefined };
  const made = STARTED_FILES.filter((name) => !existsSync(join(dataDir, name)));
  // The folders the open would make, innermost first.
  const madeDirs: string[] = [];
  for (let dir = dataDir; !existsSync(dir) && dirname(dir) !== dir; dir = dirname(dir)) {
    madeDirs.push(dir);
  }
  return {
    undo() {
      try {
        for (const name of made) rmSync(join(dataDir, name), { force: true });
        for (const dir of madeDirs) rmdirSync(dir);
      } catch {
        // Something else is there, or cannot be removed: it stays.
      }
    },
  };
}

/** Undoes `fill` unless another process holds the data dir (then nothing here was made). */
function undoUnlessBusy(fill: { undo(): void }): (error: unknown) => never {
  return (error) => {
    if (!(error instanceof DataDirBusy)) fill.undo();
    throw error;
  };
}

/** "1 field", "12 fields". */
function n(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

function need(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required`);
  return value;
}

async function station(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' },
      port: { type: 'string' },
      demo: { type: 'boolean' },
      server: { type: 'string' },
      key: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) return (process.stdout.write(HELP), 0);
  const port = portOf(values.port, 0);
  const { runStation } = await import('./core/runStation.js');
  const dataDir = need(values.data, '--data');
  if (values.server !== undefined) {
    // A bad address is wrong usage, named by its flag, and refused before the data dir is made.
    const { serverAddress } = await import('./core/sync/link.js');
    try {
      serverAddress(values.server);
    } catch (error) {
      throw new UsageError(`--server ${(error as Error).message.replace(/^server: /, '')}`);
    }
  }
  const fill = firstFill(resolve(dataDir));
  const running = await runStation({
    dataDir,
    port,
    demo: values.demo ?? false,
    log: createLogger(),
    ...(values.server !== undefined || values.key !== undefined
      ? { server: need(values.server, '--server'), key: need(values.key, '--key') }
      : {}),
  }).catch(undoUnlessBusy(fill));
  process.stdout.write(`Labstation station ready at ${running.url}#token=${running.token}\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await running.close();
  return 0;
}

async function serve(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'time-zone': { type: 'string' },
    },
  });
  const port = portOf(values.port, 8080);
  const { runServer, checkTimeZone } = await import('./core/runServer.js');
  const dataDir = need(values.data, '--data');
  // A bad zone is named by where it came from: a flag's is wrong usage, as a bad --port.
  let timeZone: string | undefined;
  if (values['time-zone'] !== undefined) {
    try {
      timeZone = checkTimeZone(values['time-zone'], '--time-zone');
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  } else if (process.env.LABSTATION_TIME_ZONE !== undefined) {
    timeZone = checkTimeZone(process.env.LABSTATION_TIME_ZONE, 'LABSTATION_TIME_ZONE');
  }
  const fill = firstFill(resolve(dataDir));
  const running = await runServer({
    dataDir,
    host: values.host ?? '127.0.0.1',
    port,
    log: createLogger(),
    timeZone,
  }).catch(undoUnlessBusy(fill));
  process.stdout.write(`Labstation server ready at ${running.url}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await running.close();
  return 0;
}

async function admin(argv: string[]): Promise<number> {
  const [what, verb, ...rest] = argv;
  if (verb !== 'create' || !['user', 'token', 'station'].includes(what ?? '')) {
    throw new UsageError('admin takes: user create, token create, station create');
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      data: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      role: { type: 'string' },
      username: { type: 'string' },
      user: { type: 'string' },
      name: { type: 'string' },
      tool: { type: 'string' },
    },
  });
  const { openServerData } = await import('./core/runServer.js');
  const { createAccount, createStationAccount, findAccountByEmail, ROLES } =
    await import('./core/server/accounts.js');
  const { createApiToken } = await import('./core/server/auth.js');
  const db = openServerDataDir(need(values.data, '--data'), openServerData);
  try {
    if (what === 'user') {
      const role = values.role ?? 'user';
      if (!ROLES.includes(role as Role))
        throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
      const created = await createAccount(db, {
        email: need(values.email, '--email'),
        password: need(values.password, '--password'),
        role: role as Role,
        username: values.username,
      });
      process.stdout.write(`created ${role} ${created.username} <${values.email}>\n`);
    } else if (what === 'token') {
      const account = findAccountByEmail(db, need(values.user, '--user'));
      const { token } = createApiToken(
        db,
        account.id,
        'created with labstation admin token create',
      );
      process.stdout.write(
        `API token for ${account.email} (shown once; use as "Authorization: Token ..."):\n${token}\n`,
      );
    } else {
      const { key } = createStationAccount(db, {
        name: need(values.name, '--name'),
        tool: need(values.tool, '--tool'),
      });
      process.stdout.write(`station ${values.name} registered (the key is shown once):\n${key}\n`);
    }
    return 0;
  } finally {
    db.close();
  }
}

/**
 * mail: a server's mail outbox for its admin (the same as the admin page's E-mail section).
 * `retry` queues failed mails again, their recipients read again from the people's records; a
 * running server sends them at its next poll (seconds). Exit 1 when a mail asked for was not
 * queued again (none such, not failed, its person still without an address), one line each.
 */
async function mail(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'list' && sub !== 'retry') throw new UsageError('mail takes list or retry');
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      data: { type: 'string' },
      status: { type: 'string' },
      json: { type: 'boolean' },
      'all-failed': { type: 'boolean' },
    },
    allowPositionals: sub === 'retry',
  });
  const { MAIL_STATUSES } = await import('../shared/adminApi.js');
  const status = values.status as (typeof MAIL_STATUSES)[number] | undefined;
  if (sub === 'list') {
    if (status !== undefined && !MAIL_STATUSES.includes(status)) {
      throw new UsageError(`--status must be one of ${MAIL_STATUSES.join(', ')}`);
    }
  } else {
    if (values.status !== undefined || values.json) {
      throw new UsageError('mail retry takes --data DIR and mail ids, or --all-failed');
    }
    if ((positionals.length === 0) === !values['all-failed']) {
      throw new UsageError('mail retry takes mail ids (from mail list) or --all-failed, not both');
    }
  }
  const ids = positionals.map((text) => {
    if (!/^\d{1,15}$/.test(text) || Number(text) === 0) {
      throw new UsageError(`${JSON.stringify(text)} is not a mail id (a whole number)`);
    }
    return Number(text);
  });
  const { openServerData } = await import('./core/runServer.js');
  const { listMails, retryFailedMails, retryMail } = await import('./core/mail/admin.js');
  const { nowIso } = await import('./core/util/ids.js');
  const db = openServerDataDir(need(values.data, '--data'), openServerData);
  try {
    if (sub === 'list') {
      const mails = listMails(db, { status });
      if (values.json) process.stdout.write(`${JSON.stringify(mails, null, 2)}\n`);
      else {
        for (const m of mails) {
          process.stdout.write(
            `${m.id}\t${m.status}\t${m.kind}\t${m.user ?? '-'}\t${oneField(m.to || '-')}\t` +
              `${m.attempts}\t${m.created_at}${m.last_error ? `\t${oneField(m.last_error)}` : ''}\n`,
          );
        }
      }
      return 0;
    }
    const done = values['all-failed']
      ? retryFailedMails(db, nowIso())
      : ids.map((id) => retryMail(db, id, nowIso()));
    if (done.length === 0) process.stdout.write('no failed mail\n');
    let refused = 0;
    for (const r of done) {
      const ok = r.outcome === 'queued' || r.outcome === 'cancelled';
      if (!ok) refused += 1;
      (ok ? process.stdout : process.stderr).write(`${r.message}\n`);
    }
    return refused > 0 ? 1 : 0;
  } finally {
    db.close();
  }
}

/** An existing server data dir's database: a command that reads it never makes one. */
function openServerDataDir(dataDir: string, open: (dir: string) => Db): Db {
  if (!existsSync(join(dataDir, 'labstation.db'))) {
    throw new AppError(
      'not_found',
      `${dataDir} holds no Labstation data (no labstation.db); \`labstation serve --data ${dataDir}\` ` +
        'or `labstation import` makes a server data dir',
    );
  }
  return open(dataDir);
}

async function importCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { data: { type: 'string' } },
    allowPositionals: true,
  });
  if (positionals.length !== 1) throw new UsageError('import takes one FILE.json');
  const bundle = readJson(positionals[0], 'bundle');
  const { importBundle } = await import('./core/station/facility.js');
  const dataDir = resolve(need(values.data, '--data'));
  const fill = firstFill(dataDir);
  const db = openStationDatabase(dataDir);
  let imported = false;
  try {
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
        '\n',
    );
    return 0;
  } finally {
    db.close();
    // A refused bundle stores nothing, and leaves a new data dir as it was.
    if (!imported) fill.undo();
  }
}

/** One problem per line; a problem about the whole list or answer object has no path. */
function printProblem(path: string, message: string): void {
  process.stdout.write(path ? `${path}: ${message}\n` : `${message}\n`);
}

async function questions(argv: string[]): Promise<number> {
  const [sub, ...args] = argv;
  // Files are positionals, as every other command reads them: after `--` a name that starts
  // with a dash is a file (`questions check -- -q.json`), and before it an option is refused.
  const rest = parseArgs({ args, options: {}, allowPositionals: true }).positionals;
  const { parseQuestions, validateAnswers } = await import('../shared/questions/index.js');
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
async function metadata(argv: string[]): Promise<number> {
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
  const { parseMetadataText, serializeMetadata } = await import('../shared/metadata/index.js');
  const result = parseMetadataText(text);
  const syntax = result.problems.find((p) => p.code === 'invalid_json');
  if (syntax) throw new AppError('bad_request', `metadata file ${file}: ${syntax.message}`);
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
async function experiment(argv: string[]): Promise<number> {
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
  const { buildExperimentRecord, reservationListSchema, usageEventInputSchema } =
    await import('../shared/experiment/index.js');
  const given = readJson(need(values.event, '--event'), 'usage event');
  const event = usageEventInputSchema.safeParse(given);
  if (!event.success)
    throw new AppError('bad_request', schemaProblems('usage event', event.error.issues, given));
  const reservationsFile = need(values.reservations, '--reservations');
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
  let now: number | undefined;
  if (values.now !== undefined) {
    now = Date.parse(values.now);
    if (!Number.isFinite(now)) throw new UsageError('--now must be an ISO 8601 date-time');
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

async function usage(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' },
      json: { type: 'boolean' },
      csv: { type: 'boolean' },
      tool: { type: 'string' },
    },
  });
  if (values.json && values.csv) {
    throw new UsageError('--json and --csv cannot be used together; choose one');
  }
  const { findTool, queryUsage, toolInfo } = await import('./core/station/records.js');
  const { historyRows, toCsv } = await import('../shared/usage/history.js');
  const db = openStationData(need(values.data, '--data'));
  try {
    const tool = values.tool ?? stationTool(db);
    const toolRow = tool === null ? undefined : findTool(db, tool);
    const events = queryUsage(db, toolRow ? { toolId: toolRow.id } : {}).reverse();
    if (values.csv) {
      if (!toolRow) throw new UsageError('--csv needs --tool (or a station tool)');
      const table = historyRows(toolInfo(toolRow), events);
      process.stdout.write(toCsv(table.columns, table.rows));
    } else if (values.json) {
      process.stdout.write(`${JSON.stringify(events, null, 2)}\n`);
    } else {
      for (const e of events) {
        process.stdout.write(
          `${e.id}\t${e.tool_name}\t${e.user_name}\t${e.project_name}\t${e.start}\t${e.end ?? '(active)'}` +
            `${e.post_usage_pending ? '\tpost-usage pending' : ''}\n`,
        );
      }
    }
    return 0;
  } finally {
    db.close();
  }
}

/** An existing station data dir's database (a command that reads it never makes one). */
function openStationData(dataDir: string): Db {
  if (!existsSync(join(dataDir, 'labstation.db'))) {
    throw new AppError('not_found', `${dataDir} holds no Labstation data (no labstation.db)`);
  }
  return openStationDatabase(dataDir);
}

const stationTool = (db: Db): string | null => getSetting(db, 'station.tool');

/**
 * Text for one tab-separated field of a line: a file name may hold a tab or a newline (Linux
 * allows both), which would split the record for a script reading line by line. They are
 * written as `\t`, `\n` and `\r` (a Windows path keeps its backslashes as they are); --json
 * gives the text as it is.
 */
function oneField(text: string): string {
  return text.replace(/[\t\n\r]/g, (c) => (c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

async function harvest(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { data: { type: 'string' }, once: { type: 'boolean' } },
  });
  const { Harvester } = await import('./core/harvest/engine.js');
  const db = openStationData(need(values.data, '--data'));
  try {
    if (stationTool(db) === null) {
      throw new AppError(
        'bad_request',
        'this data dir has no station tool, so no instruments to harvest',
      );
    }
    const harvester = new Harvester({
      db,
      log: createLogger('warn'),
      tool: () => stationTool(db),
      watch: !values.once,
      schedules: !values.once,
      lockFile: join(need(values.data, '--data'), 'harvest.lock'),
    });
    // Instruments set up for another tool are harvested by that tool's station, not here.
    const tool = stationTool(db);
    const elsewhere = db
      .prepare(
        `SELECT i.name, t.name AS tool FROM instruments i JOIN tools t ON t.id = i.tool_id
         WHERE i.enabled = 1 AND t.name != ? ORDER BY i.name`,
      )
      .all(tool) as { name: string; tool: string }[];
    for (const i of elsewhere) {
      process.stdout.write(
        `not harvested here: instrument ${i.name} is on tool ${i.tool}, this station's is ${tool}\n`,
      );
    }
    if (values.once) {
      // Interrupted (Ctrl+C, a cron job's timeout): out at once, as a kill would, which the
      // next run recovers from; through exit, so running command hooks end with it
      // (commandHook.ts).
      process.once('SIGINT', () => process.exit(130));
      process.once('SIGTERM', () => process.exit(143));
      const run = await harvester.runOnce();
      for (const problem of run.unreachable) process.stdout.write(`not reachable: ${problem}\n`);
      for (const { path, openError } of run.unstable) {
        process.stdout.write(
          openError === null
            ? `still changing, left for the next run: ${path}\n`
            : `cannot be opened for reading (${openError}), left for the next run: ${path}\n`,
        );
      }
      process.stdout.write(
        `harvest: ${run.completed} completed, ${run.skipped} skipped, ${run.failed} failed\n`,
      );
      return run.failed > 0 || run.unreachable.length > 0 || run.unstable.length > 0 ? 1 : 0;
    }
    // Ctrl+C or SIGTERM stops the harvest and exits 0, from the start on: a signal during the
    // first walk too. A second signal while it stops exits at once, as --once does.
    let signalled = false;
    const stopAsked = new Promise<void>((resolve) => {
      const onSignal = (signal: NodeJS.Signals): void => {
        if (signalled) process.exit(signal === 'SIGINT' ? 130 : 143);
        signalled = true;
        resolve();
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
    });
    await Promise.race([
      harvester.start().then(() => {
        if (!signalled) process.stdout.write('harvesting; stop with Ctrl+C\n');
      }),
      stopAsked,
    ]);
    await stopAsked;
    await harvester.stop();
    return 0;
  } finally {
    db.close();
  }
}

async function files(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' },
      json: { type: 'boolean' },
      state: { type: 'string' },
      search: { type: 'string' },
    },
  });
  const { FILE_STATES } = await import('../shared/harvest/management.js');
  const state = values.state as (typeof FILE_STATES)[number] | undefined;
  if (state !== undefined && !FILE_STATES.includes(state)) {
    throw new UsageError(`--state must be one of ${FILE_STATES.join(', ')}`);
  }
  let search: string | undefined;
  if (values.search !== undefined) {
    // The Data tab's rules (harvest.files): the same text finds the same files.
    const { apiSchemas } = await import('../shared/api.js');
    const parsed = apiSchemas['harvest.files'].shape.search.safeParse(values.search);
    if (!parsed.success) {
      throw new UsageError(`--search ${parsed.error.issues[0]?.message ?? 'is not valid'}`);
    }
    search = parsed.data;
  }
  const { listFiles } = await import('./core/harvest/views.js');
  const db = openStationData(need(values.data, '--data'));
  try {
    const list = listFiles(db, { state, search }).reverse();
    if (list.length === 0 && search !== undefined) {
      // An ARK that found nothing and fails its check was likely mistyped: say so.
      const { arkCheckProblem } = await import('../shared/ark.js');
      const problem = arkCheckProblem(search);
      if (problem !== null) process.stderr.write(`no file matches ${search}: ${problem}\n`);
    }
    if (values.json) process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
    else {
      for (const f of list) {
        const t = f.last_transfer;
        process.stdout.write(
          `${f.id}\t${f.persistent_id}\t${f.state}\t${t ? t.status : '-'}\t${f.size}\t${oneField(f.source_path)}` +
            `${t?.destination_path ? `\t-> ${oneField(t.destination_path)}` : ''}${t?.error ? `\t${oneField(t.error)}` : ''}\n`,
        );
      }
    }
    return 0;
  } finally {
    db.close();
  }
}

async function transfers(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { data: { type: 'string' }, json: { type: 'boolean' }, file: { type: 'string' } },
  });
  // Digits only: Number() would take 0x10, 1e1 and blanks as numbers (16, 10, 0).
  const fileId = values.file === undefined ? undefined : Number(values.file);
  if (
    values.file !== undefined &&
    !(/^\d+$/.test(values.file) && Number.isSafeInteger(fileId) && (fileId ?? 0) > 0)
  ) {
    throw new UsageError(
      `--file must be a file id, a whole number from 1 (not ${JSON.stringify(values.file)})`,
    );
  }
  const { listTransfers } = await import('./core/harvest/views.js');
  const db = openStationData(need(values.data, '--data'));
  try {
    const list = listTransfers(db, { fileId }).reverse();
    if (values.json) process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
    else {
      for (const t of list) {
        process.stdout.write(
          `${t.id}\t${t.persistent_id}\t${t.status}\t${t.checksum_verified ? 'verified' : 'unverified'}` +
            `\t${t.bytes_transferred}\t${oneField(t.destination_path ?? '-')}${t.error ? `\t${oneField(t.error)}` : ''}\n`,
        );
      }
    }
    return 0;
  } finally {
    db.close();
  }
}

/**
 * A system call's refusal (a port in use, a host that does not resolve, a path that is a file)
 * in one line, with what to do where that is plain; null for any other error.
 */
function systemErrorLine(error: unknown): string | null {
  const e = error as NodeJS.ErrnoException & { hostname?: string; address?: string; port?: number };
  if (!(error instanceof Error) || typeof e.code !== 'string' || typeof e.syscall !== 'string') {
    return null;
  }
  if (e.code === 'EADDRINUSE') {
    return `port ${e.port ?? ''} is in use by another program; choose another with --port`;
  }
  if (e.code === 'EADDRNOTAVAIL' || (e.syscall === 'getaddrinfo' && e.hostname)) {
    return `cannot listen on ${e.hostname ?? e.address ?? 'that address'}: ${e.code}; check --host`;
  }
  return e.message;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // `<command> --help` (or -h) anywhere before a `--`: the usage, as `labstation --help`.
  const options = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
  if (COMMANDS.includes(command ?? '') && (options.includes('--help') || options.includes('-h'))) {
    process.stdout.write(HELP);
    return 0;
  }
  try {
    switch (command) {
      case 'station':
        return await station(rest);
      case 'import':
        return await importCommand(rest);
      case 'serve':
        return await serve(rest);
      case 'admin':
        return await admin(rest);
      case 'mail':
        return await mail(rest);
      case 'questions':
        return await questions(rest);
      case 'metadata':
        return await metadata(rest);
      case 'experiment':
        return await experiment(rest);
      case 'usage':
        return await usage(rest);
      case 'harvest':
        return await harvest(rest);
      case 'files':
        return await files(rest);
      case 'transfers':
        return await transfers(rest);
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        process.stdout.write(HELP);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (error) {
    if (
      error instanceof UsageError ||
      String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS')
    ) {
      process.stderr.write(`labstation: ${(error as Error).message}\n\n${HELP}`);
      return 2;
    }
    if (error instanceof AppError) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    if (error instanceof Error && error.name === 'SqliteError') {
      process.stderr.write(`labstation: the database refused the change: ${error.message}\n`);
      return 1;
    }
    if (error instanceof NewerDatabaseError) {
      process.stderr.write(`labstation: ${error.message}\n`);
      return 1;
    }
    const system = systemErrorLine(error);
    if (system !== null) {
      process.stderr.write(`labstation: ${system}\n`);
      return 1;
    }
    throw error;
  }
}
