/**
 * Instruments: what a station harvests (watched folders with their filters, the stability
 * window, where files go and under which name). `service_account_id` names the station that
 * runs it; a station runs one tool, so its instruments are all on that tool.
 */
import type { z } from 'zod';
import { compileFilter } from '../../../../shared/harvest/glob.js';
import {
  instrumentCreate,
  instrumentOut,
  instrumentPatch,
  type InstrumentInput,
  type InstrumentOut,
  type watchFolderIn,
} from '../../../../shared/harvest/management.js';
import { parseTemplate } from '../../../../shared/harvest/template.js';
import type { Db } from '../../db/open.js';
import { newUuid } from '../../util/ids.js';
import { DEFAULT_TEMPLATE, defaultExclude, type WatchFolder } from '../../harvest/config.js';
import { notifyStations } from './notify.js';
import { moveQueuedRuns } from './runs.js';
import { moveSchedules } from './schedules.js';
import { Conflict, ValidationProblems, problem, type Problem } from './problems.js';
import {
  checkReference,
  checkUniqueName,
  countWhere,
  requireRecord,
  type Context,
  type ManagedResource,
} from './resource.js';
import { STATION_ABSOLUTE } from './storageLocations.js';

const createSchema = instrumentCreate;
const patchSchema = instrumentPatch;
type Input = InstrumentInput;
type WatchIn = z.infer<typeof watchFolderIn>;

interface Row {
  id: number;
  name: string;
  description: string;
  tool_id: number;
  station_id: number | null;
  watch: string;
  stability_seconds: number;
  storage_location_id: number | null;
  destination_template: string;
  enabled: number;
  last_harvested_at: string | null;
}

function row(db: Db, id: number): Row {
  return db
    .prepare(
      `SELECT id, name, description, tool_id, station_id, watch, stability_seconds,
         storage_location_id, destination_template, enabled, last_harvested_at
       FROM instruments WHERE id = ?`,
    )
    .get(id) as Row;
}

function watchFolders(watch: WatchIn[]): WatchFolder[] {
  return watch.map((w) => ({
    path: w.path,
    include: w.include ?? [],
    exclude: w.exclude ?? defaultExclude(),
  }));
}

function watchProblems(watch: WatchFolder[]): Problem[] {
  const problems: Problem[] = [];
  watch.forEach((w, i) => {
    if (!STATION_ABSOLUTE.test(w.path) || w.path.includes('\0')) {
      problems.push(
        problem(
          ['body', 'watch', i, 'path'],
          'must be an absolute path on the station (/data, D:\\data or \\\\share\\data)',
        ),
      );
    }
    const filter = compileFilter({ include: w.include, exclude: w.exclude });
    if (!filter.ok) {
      for (const p of filter.problems) {
        problems.push(problem(['body', 'watch', i, p.field, p.index], p.message, 'glob'));
      }
    }
  });
  return problems;
}

/** The tool a station runs, and whether the instrument may be run there. */
/**
 * The station must run the instrument's tool; the problem is put on the field the request
 * gave (tool_id when only the tool changes, service_account_id otherwise).
 */
function stationProblems(
  db: Db,
  stationId: number | null,
  toolId: number,
  field: 'tool_id' | 'service_account_id',
): Problem[] {
  if (stationId === null) return [];
  const station = db.prepare('SELECT name, tool_id FROM stations WHERE id = ?').get(stationId) as
    { name: string; tool_id: number | null } | undefined;
  if (!station || station.tool_id === null || station.tool_id === toolId) return [];
  const tool = db.prepare('SELECT name FROM tools WHERE id = ?').pluck().get(station.tool_id);
  return [
    problem(
      ['body', field],
      `service account ${stationId} (${station.name}) runs tool ${station.tool_id} (${String(tool)}); ` +
        `its instruments must be on that tool, not on tool ${toolId}`,
      'tool_mismatch',
    ),
  ];
}

function check(db: Db, merged: Required<Input>, input: Input, id: number | null): void {
  const problems: Problem[] = [
    ...checkUniqueName(db, 'instruments', 'instrument', input.name, id),
    ...checkReference(db, 'tools', 'tool', 'tool_id', input.tool_id),
    ...checkReference(
      db,
      'stations',
      'service account',
      'service_account_id',
      input.service_account_id,
    ),
    ...checkReference(
      db,
      'storage_locations',
      'storage location',
      'storage_location_id',
      input.storage_location_id,
    ),
  ];
  if (input.watch !== undefined) problems.push(...watchProblems(watchFolders(input.watch)));
  if (input.destination_template !== undefined) {
    const parsed = parseTemplate(input.destination_template);
    if (!parsed.ok) {
      for (const p of parsed.problems) {
        problems.push(problem(['body', 'destination_template'], p, 'template'));
      }
    }
  }
  if (!problems.length) {
    const field =
      input.service_account_id === undefined && input.tool_id !== undefined
        ? 'tool_id'
        : 'service_account_id';
    problems.push(...stationProblems(db, merged.service_account_id, merged.tool_id, field));
  }
  if (!problems.length) problems.push(...runnableProblems(db, merged, input, id));
  if (problems.length) throw new ValidationProblems(problems);
}

/**
 * What a station needs to run an instrument: watched folders, and an enabled storage location,
 * without which every file it finds fails there for ever ("has no storage location", "is
 * disabled"). Checked on the state a save leaves when the save touches the service account,
 * the folders, the storage or `enabled` (a save of other fields leaves an instrument saved
 * before this rule as it was); a disabled instrument may wait for them. An instrument a
 * station registered from its own records (its local bundle) has no folders or storage here:
 * given to a station as it is, even disabled, the station would replace its own settings with
 * those empty ones and stop harvesting (`takeover`).
 */
function runnableProblems(
  db: Db,
  merged: Required<Input>,
  input: Input,
  id: number | null,
): Problem[] {
  if (merged.service_account_id === null) return [];
  const touched =
    input.service_account_id !== undefined ||
    input.watch !== undefined ||
    input.storage_location_id !== undefined ||
    input.enabled !== undefined;
  if (!touched) return [];
  const takeover = input.service_account_id != null && id !== null && registeredHere(db, id);
  if (!takeover && !merged.enabled) return [];
  const problems: Problem[] = [];
  if (merged.watch.length === 0) {
    problems.push(
      takeover
        ? problem(
            ['body', 'watch'],
            'this instrument was configured on its station; give its watched folders here ' +
              'before a service account runs it, or the station would stop watching them',
            'takeover',
          )
        : problem(
            ['body', 'watch'],
            'an enabled instrument with a service account needs at least one watched folder, ' +
              'or its station harvests nothing',
            'needed_by_station',
          ),
    );
  }
  const location = disabledLocation(db, merged.storage_location_id);
  if (location) {
    problems.push(
      problem(
        ['body', 'storage_location_id'],
        `storage location ${location.id} (${location.name}) is disabled; an enabled instrument ` +
          'with a service account needs an enabled one, or every file its station finds fails there',
        'needed_by_station',
      ),
    );
  }
  if (merged.storage_location_id === null) {
    problems.push(
      takeover
        ? problem(
            ['body', 'storage_location_id'],
            'this instrument was configured on its station; give its storage location here ' +
              'before a service account runs it',
            'takeover',
          )
        : problem(
            ['body', 'storage_location_id'],
            'an enabled instrument with a service account needs a storage location, or every ' +
              'file its station finds fails there',
            'needed_by_station',
          ),
    );
  }
  return problems;
}

/** The storage location `id` when it is disabled (stations fail every file bound there). */
function disabledLocation(db: Db, id: number | null): { id: number; name: string } | undefined {
  if (id === null) return undefined;
  return db
    .prepare('SELECT id, name FROM storage_locations WHERE id = ? AND enabled = 0')
    .get(id) as { id: number; name: string } | undefined;
}

/**
 * The description of an instrument the server registered from the records of a station that
 * configured it itself (sync/ingestHarvestFile.ts), until an admin writes another.
 */
export function registeredDescription(stationName: string): string {
  return `Configured on station ${stationName}; its records arrive from there.`;
}
const REGISTERED_DESCRIPTION = /^Configured on station .*; its records arrive from there\.$/s;

/** Whether the instrument was registered from a station's records, with no service account. */
function registeredHere(db: Db, id: number): boolean {
  const registered = db
    .prepare('SELECT station_id IS NULL FROM instruments WHERE id = ?')
    .pluck()
    .get(id) as number;
  return (
    registered === 1 && !!db.prepare('SELECT 1 FROM harvest_files WHERE instrument_id = ?').get(id)
  );
}

/** A station without a tool yet takes the tool of the first instrument it is given. */
function bindStationTool(db: Db, stationId: number | null, toolId: number): void {
  if (stationId === null) return;
  db.prepare('UPDATE stations SET tool_id = ? WHERE id = ? AND tool_id IS NULL').run(
    toolId,
    stationId,
  );
}

export const instruments: ManagedResource<InstrumentOut> = {
  path: 'instruments',
  label: 'instrument',
  table: 'instruments',
  createSchema,
  patchSchema,
  outSchema: instrumentOut,
  readOnly: ['id', 'last_harvested_at'],
  examples: {
    out: {
      id: 7,
      name: 'TEM camera',
      description: 'Gatan camera on the Talos',
      tool_id: 2,
      service_account_id: 3,
      watch: [{ path: 'D:\\Data', include: ['*.dm4', '*.emd'], exclude: ['~$*', '*.tmp'] }],
      stability_seconds: 5,
      storage_location_id: 1,
      destination_template: '{instrument}/{yyyy}/{mm}/{dd}/{relative_path}',
      enabled: true,
      last_harvested_at: '2026-11-20T09:15:41.003Z',
    },
    create: {
      name: 'TEM camera',
      tool_id: 2,
      service_account_id: 3,
      watch: [{ path: 'D:\\Data', include: ['*.dm4', '*.emd'] }],
      storage_location_id: 1,
      destination_template: '{instrument}/{yyyy}/{mm}/{dd}/{relative_path}',
    },
    patch: { stability_seconds: 10 },
  },

  serialize(db, id) {
    const r = row(db, id);
    return {
      id: r.id,
      name: r.name,
      description: r.description,
      tool_id: r.tool_id,
      service_account_id: r.station_id,
      watch: JSON.parse(r.watch) as WatchFolder[],
      stability_seconds: r.stability_seconds,
      storage_location_id: r.storage_location_id,
      destination_template: r.destination_template,
      enabled: r.enabled === 1,
      last_harvested_at: r.last_harvested_at,
    };
  },

  create({ db, now }: Context, input) {
    const i = input as Input & { name: string; tool_id: number };
    const merged: Required<Input> = {
      description: '',
      service_account_id: null,
      watch: [],
      stability_seconds: 5,
      storage_location_id: null,
      destination_template: DEFAULT_TEMPLATE,
      enabled: true,
      ...i,
    };
    check(db, merged, i, null);
    const id = Number(
      db
        .prepare(
          `INSERT INTO instruments (uuid, name, description, tool_id, station_id, watch,
             stability_seconds, storage_location_id, destination_template, enabled, created_at,
             updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          newUuid(),
          merged.name,
          merged.description,
          merged.tool_id,
          merged.service_account_id,
          JSON.stringify(watchFolders(merged.watch)),
          merged.stability_seconds,
          merged.storage_location_id,
          merged.destination_template,
          merged.enabled ? 1 : 0,
          now,
          now,
        ).lastInsertRowid,
    );
    bindStationTool(db, merged.service_account_id, merged.tool_id);
    notifyStations(db, [merged.service_account_id]);
    return { id };
  },

  update({ db, now }, id, input) {
    requireRecord(db, this, id);
    const i = input as Input;
    const before = row(db, id);
    const merged: Required<Input> = {
      name: before.name,
      description: before.description,
      tool_id: before.tool_id,
      service_account_id: before.station_id,
      watch: JSON.parse(before.watch) as WatchFolder[],
      stability_seconds: before.stability_seconds,
      storage_location_id: before.storage_location_id,
      destination_template: before.destination_template,
      enabled: before.enabled === 1,
      ...i,
    };
    // Given a service account, the server configures it from now on: the registration's
    // description, which says its station does, goes (unless this save writes one).
    if (
      i.description === undefined &&
      before.station_id === null &&
      merged.service_account_id !== null &&
      REGISTERED_DESCRIPTION.test(before.description)
    ) {
      merged.description = '';
    }
    check(db, merged, i, id);
    db.prepare(
      `UPDATE instruments SET name = ?, description = ?, tool_id = ?, station_id = ?, watch = ?,
         stability_seconds = ?, storage_location_id = ?, destination_template = ?, enabled = ?,
         updated_at = ? WHERE id = ?`,
    ).run(
      merged.name,
      merged.description,
      merged.tool_id,
      merged.service_account_id,
      JSON.stringify(i.watch === undefined ? merged.watch : watchFolders(i.watch)),
      merged.stability_seconds,
      merged.storage_location_id,
      merged.destination_template,
      merged.enabled ? 1 : 0,
      now,
      id,
    );
    bindStationTool(db, merged.service_account_id, merged.tool_id);
    // A schedule is deployed where its instrument runs: a move re-deploys it there.
    if (merged.service_account_id !== before.station_id) {
      moveSchedules(db, id, merged.service_account_id, now);
      // So are its manual runs still queued for the old station.
      if (before.station_id !== null) {
        moveQueuedRuns(db, id, before.station_id, merged.service_account_id, now);
      }
    }
    notifyStations(db, [before.station_id, merged.service_account_id]);
  },

  remove({ db }, id) {
    requireRecord(db, this, id);
    // Every record in the way is named at once, not one kind per attempt.
    const reasons: string[] = [];
    const files = countWhere(db, 'SELECT count(*) FROM harvest_files WHERE instrument_id = ?', id);
    if (files) {
      reasons.push(`has ${files} file record${files > 1 ? 's' : ''}; disable it instead`);
    }
    const schedules = db
      .prepare('SELECT id FROM harvest_schedules WHERE instrument_id = ? ORDER BY id')
      .pluck()
      .all(id) as number[];
    if (schedules.length) {
      reasons.push(`is used by schedule${schedules.length > 1 ? 's' : ''} ${schedules.join(', ')}`);
    }
    const hooks = db
      .prepare('SELECT name FROM harvest_hooks WHERE instrument_id = ? ORDER BY name')
      .pluck()
      .all(id) as string[];
    if (hooks.length) {
      reasons.push(`is used by hook${hooks.length > 1 ? 's' : ''} ${hooks.join(', ')}`);
    }
    if (reasons.length) throw new Conflict(`instrument ${id} ${reasons.join('; it ')}`);
    const stationId = row(db, id).station_id;
    db.prepare('DELETE FROM harvest_runs WHERE instrument_id = ?').run(id);
    db.prepare('DELETE FROM instruments WHERE id = ?').run(id);
    notifyStations(db, [stationId]);
  },
};
