/**
 * The checks of a facility bundle's harvest part (bundle.ts), across its fields and against
 * what the data dir holds: each problem named at its field, with the rule.
 */
import { isAbsolute } from 'node:path';
import { compileFilter, platformGlobOptions } from '../../../shared/harvest/glob.js';
import type { Db } from '../db/open.js';
import { hookFields, instrumentFields, watchFolderOf, type HarvestBundle } from './bundle.js';
import { DEFAULT_TEMPLATE, type WatchFolder } from './config.js';
import {
  arkProblems,
  absolutePathProblem,
  cronKey,
  cronProblems,
  hookProblems,
  templateProblems,
  timezoneProblems,
  zoneName,
  watchProblems,
} from './configCheck.js';
import { realOrNearestSync, storageFolderIn } from './storageGuard.js';

/** Problems that the schema cannot see: references, globs, templates, cron, hook configs. */
export function harvestBundleProblems(
  db: Db,
  bundle: HarvestBundle,
  toolNames: ReadonlySet<string>,
  /** The station's tool after the import; null on a server's data dir. */
  stationTool: string | null,
  /** A server's data dir: its paths are its stations', which may run Windows. */
  onServer: boolean,
  /**
   * The bundle makes this data dir a station or gives it another tool: the instruments of that
   * tool stored before (their paths checked then as a server's, or not harvested here) are
   * harvested from now on, and checked as the station's.
   */
  toolChanges = false,
): string[] {
  const problems: string[] = [];
  const locations = new Set([
    ...(bundle.storage_locations ?? []).map((l) => l.name),
    ...(db.prepare('SELECT name FROM storage_locations').pluck().all() as string[]),
  ]);
  const instruments = new Set([
    ...(bundle.instruments ?? []).map((i) => i.name),
    ...(db.prepare('SELECT name FROM instruments').pluck().all() as string[]),
  ]);
  // On a station, those the server deployed are the server's: a pull would put them back. A
  // bundle may name them as they are (the station's own setup bundle, run again).
  const fromServer = (at: string, what: string): string =>
    `${at}.name: ${what} was deployed here by the server; change it there (the next pull would ` +
    "put the server's back)";
  const locationNames = new Set<string>();
  (bundle.storage_locations ?? []).forEach((l, i) => {
    const at = `storage_locations[${i}] (${l.name})`;
    if (locationNames.has(l.name)) problems.push(`${at}.name: ${l.name} is listed twice`);
    locationNames.add(l.name);
    const notAbsolute = absolutePathProblem(l.base_path, onServer);
    if (notAbsolute) problems.push(`${at}.base_path: ${notAbsolute}`);
    if (l.base_path.includes('\0')) problems.push(`${at}.base_path: must not contain NUL`);
  });
  const instrumentNames = new Set<string>();
  (bundle.instruments ?? []).forEach((inst, i) => {
    const at = `instruments[${i}] (${inst.name})`;
    if (instrumentNames.has(inst.name)) problems.push(`${at}.name: ${inst.name} is listed twice`);
    instrumentNames.add(inst.name);
    if (!onServer && deployedInstrumentDiffers(db, inst)) {
      problems.push(fromServer(at, `instrument ${inst.name}`));
    }
    if (!toolNames.has(inst.tool))
      problems.push(`${at}.tool: no tool named ${JSON.stringify(inst.tool)}`);
    else problems.push(...serviceAccountToolProblems(db, at, inst.name, inst.tool));
    if (!locations.has(inst.storage_location)) {
      problems.push(
        `${at}.storage_location: no storage location named ${JSON.stringify(inst.storage_location)}`,
      );
    }
    inst.watch.forEach((w, j) => {
      problems.push(...watchProblems(`${at}.watch[${j}]`, watchFolderOf(w), onServer));
    });
    problems.push(
      ...templateProblems(
        `${at}.destination_template`,
        inst.destination_template ?? DEFAULT_TEMPLATE,
      ),
    );
  });
  const hookNames = new Set<string>();
  (bundle.hooks ?? []).forEach((hook, i) => {
    const at = `hooks[${i}] (${hook.name})`;
    if (hookNames.has(hook.name)) problems.push(`${at}.name: ${hook.name} is listed twice`);
    hookNames.add(hook.name);
    if (!onServer && deployedHookDiffers(db, hook))
      problems.push(fromServer(at, `hook ${hook.name}`));
    problems.push(...hookProblems(at, hook));
    if (hook.instrument && !instruments.has(hook.instrument)) {
      problems.push(`${at}.instrument: no instrument named ${JSON.stringify(hook.instrument)}`);
    }
    const location = (hook.config as { storage_location?: unknown } | undefined)?.storage_location;
    if (typeof location === 'string' && !locations.has(location)) {
      problems.push(
        `${at}.config.storage_location: no storage location named ${JSON.stringify(location)}`,
      );
    }
  });
  const enabledSchedules = new Map<string, number>();
  (bundle.schedules ?? []).forEach((s, i) => {
    const at = `schedules[${i}]`;
    // Two enabled schedules of an instrument at the same times would start every run twice
    // (the API refuses the second one too).
    const times = JSON.stringify([s.instrument, cronKey(s.cron), zoneName(s.timezone)]);
    const first = enabledSchedules.get(times);
    if (s.enabled !== false && first !== undefined) {
      problems.push(
        `${at}.cron: schedules[${first}] already runs ${s.instrument} at these times (the same cron and time zone)`,
      );
    } else if (s.enabled !== false) enabledSchedules.set(times, i);
    if (!instruments.has(s.instrument)) {
      problems.push(`${at}.instrument: no instrument named ${JSON.stringify(s.instrument)}`);
    }
    problems.push(...cronProblems(`${at}.cron`, s.cron));
    problems.push(...timezoneProblems(`${at}.timezone`, s.timezone));
  });
  problems.push(...storageInWatchProblems(db, bundle, stationTool, toolChanges));
  if (toolChanges && stationTool !== null && !onServer) {
    problems.push(...storedPathProblems(db, bundle, stationTool));
  }
  if (bundle.ark) problems.push(...arkProblems('ark', bundle.ark));
  return problems;
}

/**
 * On a server, an instrument a service account harvests stays on that station's tool: the
 * station runs its own tool's instruments only (the API refuses the move too).
 */
/** JSON text as JSON.stringify writes it (the server's deltas and the bundle may space it). */
function jsonText(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

/** Whether the bundle would change an instrument the server deployed on this station. */
function deployedInstrumentDiffers(
  db: Db,
  inst: NonNullable<HarvestBundle['instruments']>[number],
): boolean {
  const stored = db
    .prepare(
      `SELECT i.description, t.name AS tool, i.watch, i.stability_seconds AS stability,
         l.name AS location, i.destination_template AS template, i.enabled
       FROM instruments i LEFT JOIN tools t ON t.id = i.tool_id
         LEFT JOIN storage_locations l ON l.id = i.storage_location_id
       WHERE i.name = ? AND i.from_server = 1`,
    )
    .get(inst.name) as Record<string, unknown> | undefined;
  if (!stored) return false;
  const given: Record<string, unknown> = instrumentFields(inst);
  stored.watch = JSON.stringify(
    (JSON.parse(String(stored.watch)) as WatchFolder[]).map(watchFolderOf),
  );
  return Object.keys(stored).some((field) => stored[field] !== given[field]);
}

/** Whether the bundle would change a hook the server deployed on this station. */
function deployedHookDiffers(db: Db, hook: NonNullable<HarvestBundle['hooks']>[number]): boolean {
  const stored = db
    .prepare(
      `SELECT h."trigger", h.kind, h.config, h.priority, i.name AS instrument, h.enabled
       FROM harvest_hooks h LEFT JOIN instruments i ON i.id = h.instrument_id
       WHERE h.name = ? AND h.from_server = 1`,
    )
    .get(hook.name) as Record<string, unknown> | undefined;
  if (!stored) return false;
  const given: Record<string, unknown> = hookFields(hook);
  stored.config = jsonText(String(stored.config));
  return Object.keys(stored).some((field) => stored[field] !== given[field]);
}

function serviceAccountToolProblems(db: Db, at: string, name: string, tool: string): string[] {
  const station = db
    .prepare(
      `SELECT st.name AS station, t.name AS tool FROM instruments i
         JOIN stations st ON st.id = i.station_id JOIN tools t ON t.id = st.tool_id
       WHERE i.name = ?`,
    )
    .get(name) as { station: string; tool: string } | undefined;
  if (!station || station.tool === tool) return [];
  return [
    `${at}.tool: service account ${station.station} harvests it and runs ${station.tool}; ` +
      `its instruments must be on that tool, not on ${tool}`,
  ];
}

/**
 * Whether a copy stored at `base` would be found again by a watch of `watch`: `base` is the
 * watched folder or inside it, in no folder the watch's filter skips. Only exclude globs skip
 * folders; one that does not compile (reported on its own) is left out, so that a broken glob
 * does not hide the loop until it is fixed. `partly` says a broken glob was left out.
 */
function watchedBy(watch: WatchFolder, base: string): { watched: boolean; partly: boolean } {
  // Where both are on disk: a link (the watched folder, the base, or a folder above either)
  // must not hide that the copies land in the watched tree.
  const inside = storageFolderIn(realOrNearestSync(watch.path), realOrNearestSync(base));
  if (inside === null) return { watched: false, partly: false };
  if (inside === '') return { watched: true, partly: false };
  const options = platformGlobOptions(process.platform);
  const exclude = watch.exclude.filter(
    (glob) => compileFilter({ include: [], exclude: [glob] }, options).ok,
  );
  const filter = compileFilter({ include: [], exclude }, options);
  if (!filter.ok) return { watched: true, partly: true };
  const parts = inside.split('/');
  return {
    watched: !parts.some((_, i) => filter.skipsDirectory(parts.slice(0, i + 1).join('/'))),
    partly: exclude.length < watch.exclude.length,
  };
}

/**
 * A storage location inside a watched folder: each harvest would find its own copies there and
 * harvest them again, a folder deeper each time. Checked over what the station will harvest
 * after the import (its tool's enabled instruments and its local storage locations, the
 * bundle's and the stored ones it does not name), and reported where the bundle names one
 * side of the pair. Not on a server's data dir: its paths are on other machines.
 */
function storageInWatchProblems(
  db: Db,
  bundle: HarvestBundle,
  stationTool: string | null,
  toolChanges: boolean,
): string[] {
  if (stationTool === null) return [];
  const bundled = bundle.storage_locations ?? [];
  const locations = [
    ...bundled.map((l, i) => ({ ...l, at: `storage_locations[${i}] (${l.name})` })),
    ...(
      db
        .prepare(`SELECT name, base_path FROM storage_locations WHERE type = 'local'`)
        .all() as LocationRow[]
    )
      .filter((l) => !bundled.some((b) => b.name === l.name))
      .map((l) => ({ ...l, at: null })),
  ];
  const instruments = bundle.instruments ?? [];
  const watches = [
    ...instruments.flatMap((inst, i) =>
      inst.tool === stationTool && inst.enabled !== false
        ? inst.watch.map((w, j) => ({
            name: inst.name,
            watch: watchFolderOf(w),
            at: `instruments[${i}] (${inst.name}).watch[${j}].path`,
          }))
        : [],
    ),
    ...storedInstrumentsOf(db, bundle, stationTool).flatMap((row) =>
      row.watch.map((watch) => ({ name: row.name, watch, at: null })),
    ),
  ];
  const problems: string[] = [];
  for (const l of locations) {
    if (!isAbsolute(l.base_path)) continue;
    for (const { name, watch, at } of watches) {
      if (!isAbsolute(watch.path)) continue;
      const { watched, partly } = watchedBy(watch, l.base_path);
      if (!watched) continue;
      const rule =
        'the harvest would take its own copies again' +
        (partly ? ' (judged without the exclude globs that do not compile)' : '');
      if (l.at) {
        problems.push(
          `${l.at}.base_path: must not be inside a watched folder (${name} watches ${watch.path}): ${rule}`,
        );
      } else if (at) {
        problems.push(
          `${at}: must not hold a storage location (${l.name} at ${l.base_path}): ${rule}`,
        );
      } else if (toolChanges) {
        // Both stored; harvested here from this import on.
        problems.push(
          `station.tool: ${stationTool} has instrument ${name} watch ${watch.path}, which holds ` +
            `storage location ${l.name} (${l.base_path}): ${rule}`,
        );
      }
    }
  }
  return problems;
}

/**
 * The paths of the stored instruments the station's tool harvests from this import on (and of
 * their storage locations), which a bundle that does not name them does not check: stored
 * before as a server's data dir takes them (a Windows station's `D:\\Data`), they would fail every
 * file on this one. Named under `station.tool`, which makes them harvested here.
 */
function storedPathProblems(db: Db, bundle: HarvestBundle, stationTool: string): string[] {
  const bundledLocations = new Set((bundle.storage_locations ?? []).map((l) => l.name));
  const problems: string[] = [];
  for (const row of storedInstrumentsOf(db, bundle, stationTool)) {
    for (const watch of row.watch) {
      const problem = absolutePathProblem(watch.path, false);
      if (problem) {
        problems.push(
          `station.tool: ${stationTool} has instrument ${row.name} watch ${JSON.stringify(watch.path)}: ${problem} on this station`,
        );
      }
    }
    if (row.location !== null && row.base_path !== null && !bundledLocations.has(row.location)) {
      const problem = absolutePathProblem(row.base_path, false);
      if (problem) {
        problems.push(
          `station.tool: ${stationTool} has instrument ${row.name} store into ${row.location} (${JSON.stringify(row.base_path)}): ${problem} on this station`,
        );
      }
    }
  }
  return [...new Set(problems)];
}

/**
 * The enabled instruments of `tool` stored here that the bundle does not name, with their
 * watched folders (as applyHarvestBundle wrote them: include and exclude filled in) and their
 * local storage location, if any.
 */
function storedInstrumentsOf(
  db: Db,
  bundle: HarvestBundle,
  tool: string,
): { name: string; watch: WatchFolder[]; location: string | null; base_path: string | null }[] {
  const bundled = new Set((bundle.instruments ?? []).map((i) => i.name));
  return (
    db
      .prepare(
        `SELECT i.name, i.watch, l.name AS location, l.base_path
         FROM instruments i JOIN tools t ON t.id = i.tool_id
         LEFT JOIN storage_locations l ON l.id = i.storage_location_id AND l.type = 'local'
         WHERE t.name = ? AND i.enabled = 1 ORDER BY i.id`,
      )
      .all(tool) as (InstrumentRow & { location: string | null; base_path: string | null })[]
  )
    .filter((row) => !bundled.has(row.name))
    .map((row) => ({ ...row, watch: JSON.parse(row.watch) as WatchFolder[] }));
}

interface LocationRow {
  name: string;
  base_path: string;
}

interface InstrumentRow {
  name: string;
  watch: string;
}
