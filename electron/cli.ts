/**
 * The `labstation` command. Exit codes: 0 done; 1 the input was refused (problems printed one
 * per line); 2 wrong usage of the command itself.
 */
import { NewerDatabaseError } from './core/db/open.js';
import { AppError } from './core/util/errors.js';
import { admin, mail } from './cli/admin.js';
import { UsageError } from './cli/args.js';
import { experiment, importCommand, metadata, questions } from './cli/facilityFiles.js';
import { serve, station } from './cli/run.js';
import { files, harvest, transfers, usage } from './cli/stationData.js';
// Each command imports the rest of what it needs when it runs: the station and server runners
// (fastify, the sync client, the web UI), the forms, the schemas. `harvest --once` loads the
// harvest and the database only; on an empty folder it took 0.33 s warm, 0.45 to 0.52 s with
// the caches dropped, against 0.41 s and 0.56 to 0.62 s when cli.ts imported every command's
// modules (BENCHMARKS.md).

export const HELP = `labstation — instrument station and facility server

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
