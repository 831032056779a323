/**
 * The `labstation` command. Exit codes: 0 done; 1 the input was refused (problems printed one
 * per line); 2 wrong usage of the command itself.
 */
import { join, resolve } from 'node:path';
import { NewerDatabaseError } from './core/db/open.js';
import { AppError } from './core/util/errors.js';
import { admin, mail } from './cli/admin.js';
import { UsageError } from './cli/args.js';
import { HELP } from './cli/help.js';
import { experiment, importCommand, metadata, questions } from './cli/facilityFiles.js';
import { serve, station } from './cli/run.js';
import { files, harvest, transfers, unlock, usage } from './cli/stationData.js';
// Each command imports the rest of what it needs when it runs: the station and server runners
// (fastify, the sync client, the web UI), the forms, the schemas. `harvest --once` loads the
// harvest and the database only; on an empty folder it took 0.33 s warm, 0.45 to 0.52 s with
// the caches dropped, against 0.41 s and 0.56 to 0.62 s when cli.ts imported every command's
// modules (BENCHMARKS.md).

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
  'unlock',
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

/** The database of the data dir the command line names (`--data DIR` or `--data=DIR`). */
function databaseNamed(argv: string[]): string {
  // The last one given, as the commands read their options.
  let dir: string | undefined;
  argv.forEach((arg, i) => {
    if (arg === '--data') dir = argv[i + 1];
    else if (arg.startsWith('--data=')) dir = arg.slice(7);
  });
  return dir ? join(resolve(dir), 'labstation.db') : "the data dir's labstation.db";
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
      case 'unlock':
        return await unlock(rest);
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
      const code = String((error as { code?: unknown }).code);
      // The file is not a database, is damaged, or cannot be opened at all.
      if (/^SQLITE_(NOTADB|CORRUPT|CANTOPEN)/.test(code)) {
        process.stderr.write(
          `labstation: ${databaseNamed(argv)} cannot be read as a Labstation database: ${error.message}\n`,
        );
        return 1;
      }
      // A rule of the database refused what was asked; anything else (busy, full, read-only,
      // an I/O error) is said as the database said it, with its file.
      process.stderr.write(
        /^SQLITE_CONSTRAINT/.test(code)
          ? `labstation: the database refused the change: ${error.message}\n`
          : `labstation: ${databaseNamed(argv)}: ${error.message} (${code})\n`,
      );
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
