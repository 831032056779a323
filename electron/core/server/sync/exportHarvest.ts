/**
 * The harvest part of a station's delta: its whole configuration when anything in it changed
 * (the harvest API logs a `station` change for each station concerned: server/harvest/notify.ts),
 * and the runs queued for it.
 */
import type { Db } from '../../db/open.js';
import { usageContextOf, type UsageContext } from '../../harvest/usageContext.js';
import type {
  SyncHarvest,
  SyncHistoryFile,
  SyncHistoryPage,
  SyncHistoryTransfer,
  SyncHook,
  SyncInstrument,
  SyncRun,
  SyncSchedule,
  SyncStorageLocation,
} from '../../sync/protocol.js';

export function harvestChangedSince(db: Db, stationUuid: string, cursor: number): boolean {
  return (
    db
      .prepare("SELECT 1 FROM sync_changes WHERE seq > ? AND entity = 'station' AND uuid = ?")
      .get(cursor, stationUuid) !== undefined
  );
}

export function harvestConfig(db: Db, stationId: number): SyncHarvest {
  const instruments = (
    db
      .prepare(
        `SELECT i.id, i.uuid, i.name, i.description, t.uuid AS tool_uuid, i.watch,
           i.stability_seconds, l.uuid AS storage_location_uuid, i.storage_location_id,
           i.destination_template, i.enabled
         FROM instruments i JOIN tools t ON t.id = i.tool_id
         LEFT JOIN storage_locations l ON l.id = i.storage_location_id
         WHERE i.station_id = ? ORDER BY i.id`,
      )
      .all(stationId) as (Omit<SyncInstrument, 'watch' | 'enabled'> & {
      id: number;
      watch: string;
      enabled: number;
      storage_location_id: number | null;
    })[]
  ).map((r) => ({
    id: r.id,
    locationId: r.storage_location_id,
    sync: {
      uuid: r.uuid,
      name: r.name,
      description: r.description,
      tool_uuid: r.tool_uuid,
      watch: JSON.parse(r.watch) as SyncInstrument['watch'],
      stability_seconds: r.stability_seconds,
      storage_location_uuid: r.storage_location_uuid,
      destination_template: r.destination_template,
      enabled: r.enabled === 1,
    } satisfies SyncInstrument,
  }));
  const ids = JSON.stringify(instruments.map((i) => i.id));

  const hooks = (
    db
      .prepare(
        `SELECT h.uuid, h.name, h."trigger", h.kind, h.config, h.priority,
           i.uuid AS instrument_uuid, h.enabled
         FROM harvest_hooks h LEFT JOIN instruments i ON i.id = h.instrument_id
         WHERE h.instrument_id IS NULL OR h.instrument_id IN (SELECT value FROM json_each(?))
         ORDER BY h.id`,
      )
      .all(ids) as (Omit<SyncHook, 'config' | 'enabled'> & { config: string; enabled: number })[]
  ).map((r) => ({
    ...r,
    config: JSON.parse(r.config) as Record<string, unknown>,
    enabled: r.enabled === 1,
  }));

  // The locations its instruments use, and those its redirect hooks name.
  const named = hooks
    .map((h) => h.config.storage_location)
    .filter((n): n is string => typeof n === 'string');
  const locations = (
    db
      .prepare(
        `SELECT uuid, name, type, base_path, enabled FROM storage_locations
         WHERE id IN (SELECT value FROM json_each(?)) OR name IN (SELECT value FROM json_each(?))
         ORDER BY id`,
      )
      .all(
        JSON.stringify(instruments.map((i) => i.locationId).filter((id) => id !== null)),
        JSON.stringify(named),
      ) as (Omit<SyncStorageLocation, 'enabled'> & { enabled: number })[]
  ).map((r) => ({ ...r, enabled: r.enabled === 1 }));

  const schedules = (
    db
      .prepare(
        `SELECT s.uuid, i.uuid AS instrument_uuid, s.cron, s.timezone, s.enabled, s.version
         FROM harvest_schedules s JOIN instruments i ON i.id = s.instrument_id
         WHERE s.station_id = ? AND i.station_id = ? ORDER BY s.id`,
      )
      .all(stationId, stationId) as (Omit<SyncSchedule, 'enabled'> & { enabled: number })[]
  ).map((r) => ({ ...r, enabled: r.enabled === 1 }));

  return {
    storage_locations: locations,
    instruments: instruments.map((i) => i.sync),
    hooks,
    schedules,
  };
}

export function queuedRuns(db: Db, stationId: number): SyncRun[] {
  return db
    .prepare(
      `SELECT r.uuid, i.uuid AS instrument_uuid, s.uuid AS schedule_uuid, r.requested_at
       FROM harvest_runs r JOIN instruments i ON i.id = r.instrument_id
       LEFT JOIN harvest_schedules s ON s.id = r.schedule_id
       WHERE r.station_id = ? AND r.state = 'queued' ORDER BY r.id`,
    )
    .all(stationId) as SyncRun[];
}

/**
 * A page of the file records of an instrument this station runs, made wherever (another
 * station, or this one before its data dir was made anew), with their transfers; also those it
 * made of one it registered (configured on the station, run by no station here). An
 * instrument the server does not know has none: an empty page. Null when the station does not
 * run that instrument.
 */
export function harvestHistory(
  db: Db,
  stationId: number,
  instrumentUuid: string,
  after: number,
  limit: number,
): SyncHistoryPage | null {
  const found = db
    .prepare(
      `SELECT i.id, i.station_id AS runBy, s.station_id IS NOT NULL AS registered
       FROM instruments i
       LEFT JOIN station_instruments s ON s.instrument_id = i.id AND s.station_id = ?
       WHERE i.uuid = ?`,
    )
    .get(stationId, instrumentUuid.toLowerCase()) as
    { id: number; runBy: number | null; registered: number } | undefined;
  if (found === undefined) return { files: [], next: null };
  const runs = found.runBy === stationId;
  if (!runs && !(found.runBy === null && found.registered === 1)) return null;
  const instrument = found.id;
  // Run by no station: the records this one made only (another may have run it in between).
  const own = runs ? null : stationId;
  const rows = db
    .prepare(
      `SELECT f.id, f.uuid, f.persistent_id, f.persistent_id_type, f.watch_path, f.source_path,
         f.relative_path, f.filename, f.size, f.mtime_ms, f.xxhash, f.hash_algorithm,
         f.first_discovered_at, f.usage_event_id, e.uuid AS usage_event_uuid, f.metadata_,
         f.state, f.updated_at
       FROM harvest_files f LEFT JOIN usage_events e ON e.id = f.usage_event_id
       WHERE f.instrument_id = ? AND f.id > ? AND (? IS NULL OR f.station_id = ?)
       ORDER BY f.id LIMIT ?`,
    )
    .all(instrument, after, own, own, limit + 1) as (Omit<
    SyncHistoryFile,
    'metadata_' | 'transfers' | 'usage_context'
  > & {
    metadata_: string;
    usage_event_id: number | null;
  })[];
  const page = rows.slice(0, limit);
  const transfersOf = db.prepare(
    `SELECT t.uuid, t.status, l.uuid AS storage_location_uuid, t.destination_path,
       t.bytes_transferred, t.dest_checksum, t.checksum_verified, t.started_at, t.completed_at,
       t.error, t.note
     FROM harvest_transfers t LEFT JOIN storage_locations l ON l.id = t.storage_location_id
     WHERE t.file_id = ? ORDER BY t.id`,
  );
  // A station that does not hold a file's usage (it was made on another) is sent the usage
  // as the usage_context hook describes it; the files of one usage share one.
  const contexts = new Map<number, UsageContext | null>();
  const contextOf = (id: number): UsageContext | null => {
    if (!contexts.has(id)) contexts.set(id, usageContextOf(db, id));
    return contexts.get(id) ?? null;
  };
  const files = page.map(({ usage_event_id: usageEventId, ...r }) => ({
    ...r,
    usage_context: usageEventId === null ? null : contextOf(usageEventId),
    metadata_: JSON.parse(r.metadata_) as Record<string, unknown>,
    transfers: (
      transfersOf.all(r.id) as (Omit<SyncHistoryTransfer, 'checksum_verified'> & {
        checksum_verified: number;
      })[]
    ).map((t) => ({ ...t, checksum_verified: t.checksum_verified === 1 })),
  }));
  const last = page[page.length - 1];
  return { files, next: rows.length > limit && last ? last.id : null };
}
