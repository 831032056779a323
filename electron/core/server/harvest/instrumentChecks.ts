/**
 * The checks of an instrument's save (instruments.ts): each problem named at its field, with
 * what a station needs to run the instrument.
 */
import type { z } from 'zod';
import { patternProblems } from '../../../../shared/harvest/glob.js';
import type { InstrumentInput, watchFolderIn } from '../../../../shared/harvest/management.js';
import { parseTemplate } from '../../../../shared/harvest/template.js';
import type { Db } from '../../db/open.js';
import { defaultExclude, type WatchFolder } from '../../harvest/config.js';
import { NOT_STATION_ABSOLUTE, STATION_ABSOLUTE } from '../../harvest/configCheck.js';
import { ValidationProblems, problem, type Problem } from './problems.js';
import { checkReference, checkUniqueName } from './resource.js';

/** The watched folders as given, each with its filters (the default excludes when none). */
export function watchFolders(watch: z.infer<typeof watchFolderIn>[]): WatchFolder[] {
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
      problems.push(problem(['body', 'watch', i, 'path'], NOT_STATION_ABSOLUTE));
    }
    for (const p of patternProblems({ include: w.include, exclude: w.exclude })) {
      problems.push(problem(['body', 'watch', i, p.field, p.index], p.message, 'glob'));
    }
  });
  return problems;
}

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

/**
 * Every problem of an instrument's save (create: `id` null), each at its field: names and
 * references, watched folders and filters, the template, the station's tool, what a station
 * needs to run it; ValidationProblems when there is any.
 */
export function checkInstrumentSave(
  db: Db,
  merged: Required<InstrumentInput>,
  input: InstrumentInput,
  id: number | null,
): void {
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
  merged: Required<InstrumentInput>,
  input: InstrumentInput,
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
