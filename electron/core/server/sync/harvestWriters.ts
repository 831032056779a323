/**
 * Which station may write a pushed harvest record: the instruments a station runs or was given,
 * and the writers of a file record (and its transfers) as its instrument moves between stations.
 */
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';
import type { PushRecord } from '../../sync/protocol.js';
import { instrumentRight, movedBefore } from './formerRights.js';
import { RecordRefused, checkOwner, type StationRef } from './records.js';

export interface InstrumentRef {
  id: number;
  tool_id: number;
  station_id: number | null;
}

/**
 * A station writes records of the instruments it runs or was given before (station_instruments:
 * records made then may still wait in its outbox) that it made before it took the instrument's
 * move to another station (`madeAt`, the record's own time: formerRights.ts); a key cannot
 * write for any other.
 */
export function checkInstrument(
  db: Db,
  station: StationRef,
  instrumentId: number,
  record: PushRecord,
  madeAt: string,
): void {
  const right = instrumentRight(db, station.id, instrumentId);
  if (!right) {
    throw new RecordRefused(
      'forbidden',
      `${record.kind} ${record.uuid}: this station does not run that instrument`,
    );
  }
  const learned = movedBefore(right, madeAt);
  if (learned !== null) {
    throw new RecordRefused(
      'forbidden',
      `${record.kind} ${record.uuid}: made at ${madeAt}, after that instrument was moved to ` +
        `another station (this one took the move at ${learned})`,
    );
  }
}

/**
 * Who may write a file record (or a transfer of it): the station that made it, and the station
 * that runs its instrument now, which took the records with the instrument's history (GET
 * /sync/harvest/history) and records what becomes of those files (a retry, a file gone). A
 * station that ran the instrument in between and still has such a record waiting in its
 * outbox is not refused (that would stop its whole outbox): its record is kept out, as stale.
 * A key never writes records of an instrument it was never given.
 */
export function fileWriter(
  db: Db,
  existing:
    { station_id: number | null; instrument_id: number; written_by?: number | null } | undefined,
  station: StationRef,
  record: PushRecord,
  /**
   * For a version of the file record (not a transfer of it): the station that made it writes
   * it, while it no longer runs its instrument, only until another station has (written_by,
   * migration 49). Its outbox may still hold versions from before the move, and those drain,
   * but a later one, a failure retried offline or its clock ahead, had put a file the new
   * station completed back to failed.
   */
  options: { takenOver?: boolean } = {},
): 'ok' | 'stale' {
  if (!existing) return 'ok';
  // Read only where needed: the maker's own pushes, nearly all of them, need none.
  // Plucked, as notify.ts uses the same statement (a cached statement keeps its mode).
  const runBy = (): number | null | undefined =>
    cachedStatement(db, 'SELECT station_id FROM instruments WHERE id = ?')
      .pluck()
      .get(existing.instrument_id) as number | null | undefined;
  if (existing.station_id === station.id) {
    // Another station wrote it since (only one that ran the instrument can): it is theirs.
    const writer = existing.written_by ?? station.id;
    return options.takenOver === true && writer !== station.id && runBy() !== station.id
      ? 'stale'
      : 'ok';
  }
  if (runBy() === station.id) return 'ok';
  const given = cachedStatement(
    db,
    'SELECT 1 FROM station_instruments WHERE station_id = ? AND instrument_id = ?',
  ).get(station.id, existing.instrument_id);
  if (given && existing.station_id !== null) return 'stale';
  checkOwner(existing, station.id, record);
  return 'ok';
}
