/**
 * How a change made on the server reaches the stations it concerns: a `station` entry in the
 * sync change log (migration 3) wakes each one's held long-poll. After a change through the
 * harvest API its next delta carries its whole harvest configuration; after answers or a
 * validation given to one of its usage events, what it is owed of them
 * (electron/core/server/sync/export.ts).
 */
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';

/** Logs a harvest change for each of these stations (nulls and repeats are skipped). */
export function notifyStations(db: Db, stationIds: Iterable<number | null | undefined>): void {
  const seen = new Set<number>();
  for (const id of stationIds) {
    if (id === null || id === undefined || seen.has(id)) continue;
    seen.add(id);
    cachedStatement(
      db,
      `INSERT INTO sync_changes (entity, uuid) SELECT 'station', uuid FROM stations WHERE id = ?`,
    ).run(id);
  }
}

/** Logs a change for the station that recorded usage event `usageId` (none: nothing). */
export function notifyStationOfUsage(db: Db, usageId: number): void {
  cachedStatement(
    db,
    `INSERT INTO sync_changes (entity, uuid)
     SELECT 'station', s.uuid FROM usage_events e JOIN stations s ON s.id = e.station_id
     WHERE e.id = ?`,
  ).run(usageId);
}

/** Every station that runs an instrument: what a change of shared configuration concerns. */
export function stationsRunningInstruments(db: Db): number[] {
  return cachedStatement(
    db,
    'SELECT DISTINCT station_id FROM instruments WHERE station_id IS NOT NULL',
  )
    .pluck()
    .all() as number[];
}

export function stationOfInstrument(db: Db, instrumentId: number | null): number | null {
  if (instrumentId === null) return null;
  return (
    (cachedStatement(db, 'SELECT station_id FROM instruments WHERE id = ?')
      .pluck()
      .get(instrumentId) as number | null | undefined) ?? null
  );
}
