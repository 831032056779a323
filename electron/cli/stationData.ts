/**
 * The commands on an existing station data dir: its usage events (`usage`), its harvest
 * (`harvest`), the records of the files and transfers it made (`files`, `transfers`), and its
 * log-on locks (`unlock`).
 */
import { refuseEmptyDatabase, waitForFirstFill } from './firstFill.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Db } from '../core/db/open.js';
import { upgradeOnlyIfIdle } from '../core/harvest/lock.js';
import { getSetting } from '../core/station/settings.js';
import { openStationDatabase } from '../core/station/database.js';
import { AppError } from '../core/util/errors.js';
import { createLogger } from '../core/util/log.js';
import { need, oneField, UsageError } from './args.js';

export async function usage(argv: string[]): Promise<number> {
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
  const { findTool, queryUsage, toolInfo } = await import('../core/station/records.js');
  const { historyRows, toCsv } = await import('../../shared/usage/history.js');
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
  waitForFirstFill(dataDir);
  if (!existsSync(join(dataDir, 'labstation.db'))) {
    throw new AppError('not_found', `${dataDir} holds no Labstation data (no labstation.db)`);
  }
  refuseEmptyDatabase(dataDir);
  return openStationDatabase(dataDir, { beforeUpgrade: upgradeOnlyIfIdle(dataDir) });
}

const stationTool = (db: Db): string | null => getSetting(db, 'station.tool');

/**
 * unlock: lifts the lock that wrong PINs put on every log-on at the station, or with --login
 * on one login; a running station lets people in at once (it reads the locks at each log-on).
 * Exit 1 when there was no such lock.
 */
export async function unlock(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { data: { type: 'string' }, login: { type: 'string' } },
  });
  // As a log-on reads it (shared/api.ts session.logon).
  const login = values.login?.trim();
  if (login === '') throw new UsageError('--login must name a username or badge number');
  const { liftLock, stationLockedUntil } = await import('../core/station/logon.js');
  const db = openStationData(need(values.data, '--data'));
  try {
    const now = new Date();
    const what =
      login === undefined ? 'log-on at this station' : `the login ${JSON.stringify(login)}`;
    const until = liftLock(db, now, login);
    // A login unlocked still waits while the whole station is locked: say so.
    const station = login === undefined ? null : stationLockedUntil(db, now);
    const stationNote =
      station === null ? '' : `; log-on at this station stays locked until ${station}`;
    if (until === null) {
      process.stderr.write(`${what} is not locked${stationNote}\n`);
      return 1;
    }
    process.stdout.write(`${what} unlocked (it was locked until ${until})${stationNote}\n`);
    return 0;
  } finally {
    db.close();
  }
}

export async function harvest(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { data: { type: 'string' }, once: { type: 'boolean' } },
  });
  const { Harvester } = await import('../core/harvest/engine.js');
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
    // The harvest's timers do not hold the process (a station's server does): this command
    // lives until it is told to stop, with nothing to watch too, so that a bundle imported
    // meanwhile is taken within seconds (timers.ts).
    const alive = setInterval(() => undefined, 1 << 30);
    try {
      await Promise.race([
        harvester.start().then(() => {
          if (!signalled) process.stdout.write('harvesting; stop with Ctrl+C\n');
        }),
        stopAsked,
      ]);
      await stopAsked;
      await harvester.stop();
    } finally {
      clearInterval(alive);
    }
    return 0;
  } finally {
    db.close();
  }
}

export async function files(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' },
      json: { type: 'boolean' },
      state: { type: 'string' },
      search: { type: 'string' },
    },
  });
  const { FILE_STATES } = await import('../../shared/harvest/states.js');
  const state = values.state as (typeof FILE_STATES)[number] | undefined;
  if (state !== undefined && !FILE_STATES.includes(state)) {
    throw new UsageError(`--state must be one of ${FILE_STATES.join(', ')}`);
  }
  let search: string | undefined;
  if (values.search !== undefined) {
    // The Data tab's rules (harvest.files): the same text finds the same files.
    const { apiSchemas } = await import('../../shared/api.js');
    const parsed = apiSchemas['harvest.files'].shape.search.safeParse(values.search);
    if (!parsed.success) {
      throw new UsageError(`--search ${parsed.error.issues[0]?.message ?? 'is not valid'}`);
    }
    search = parsed.data;
  }
  const { listFiles } = await import('../core/harvest/views.js');
  const db = openStationData(need(values.data, '--data'));
  try {
    const list = listFiles(db, { state, search }).reverse();
    if (list.length === 0 && search !== undefined) {
      // An ARK that found nothing and fails its check was likely mistyped: say so.
      const { arkCheckProblem } = await import('../../shared/ark.js');
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

export async function transfers(argv: string[]): Promise<number> {
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
  const { listTransfers } = await import('../core/harvest/views.js');
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
