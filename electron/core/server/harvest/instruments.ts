/**
 * Instruments: what a station harvests (watched folders with their filters, the stability
 * window, where files go and under which name). `service_account_id` names the station that
 * runs it; a station runs one tool, so its instruments are all on that tool.
 */
import {
  instrumentCreate,
  instrumentOut,
  instrumentPatch,
  type InstrumentInput,
  type InstrumentOut,
} from '../../../../shared/harvest/management.js';
import type { Db } from '../../db/open.js';
import { newUuid } from '../../util/ids.js';
import { DEFAULT_TEMPLATE, type WatchFolder } from '../../harvest/config.js';
import { checkInstrumentSave, watchFolders } from './instrumentChecks.js';
import { notifyStations } from './notify.js';
import { moveQueuedRuns } from './runs.js';
import { moveSchedules } from './schedules.js';
import { Conflict } from './problems.js';
import { countWhere, requireRecord, type Context, type ManagedResource } from './resource.js';

const createSchema = instrumentCreate;
const patchSchema = instrumentPatch;
type Input = InstrumentInput;

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

/**
 * The description of an instrument the server registered from the records of a station that
 * configured it itself (sync/ingestHarvestFile.ts), until an admin writes another.
 */
export function registeredDescription(stationName: string): string {
  return `Configured on station ${stationName}; its records arrive from there.`;
}
const REGISTERED_DESCRIPTION = /^Configured on station .*; its records arrive from there\.$/s;

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
    checkInstrumentSave(db, merged, i, null);
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
    checkInstrumentSave(db, merged, i, id);
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
