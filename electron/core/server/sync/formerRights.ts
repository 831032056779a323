/**
 * A station's rights to a tool or an instrument it ran before (station_tools,
 * station_instruments). The records it made then may still wait in its outbox, offline for days,
 * and are taken; but a right that never ended let the key of a station moved elsewhere, or of a
 * PC replaced and never disabled, go on writing usage (billed) and file records for them.
 *
 * So each right that ended says when (ended_at, migration 51), and learned_at says when the
 * station first asked for changes with its configuration current, the move applied: by the
 * station's own clock, as its pull gives it (STATION_CLOCK_HEADER), the clock its records are
 * dated by, so a station whose clock is off (a wrong time zone) is judged by it; by the
 * server's where a pull gives none. A record made after that is refused; before it, every
 * record is taken (a station that has not heard of the move goes on as before, and rightly).
 * CLOCK_ALLOWANCE_MS spares a clock stepped back since, and one off the server's where the
 * pull named none.
 */
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';
import { changeMark, latestChange } from './export.js';
import { harvestChangedSince } from './exportHarvest.js';

/** How far past the move a record's time may be and still be taken (a clock stepped back). */
export const CLOCK_ALLOWANCE_MS = 60 * 60 * 1000;

export interface FormerRight {
  ended_at: string | null;
  learned_at: string | null;
}

/**
 * Null when a record made at `madeAt` may be written under `right` (one the station holds now,
 * one it has not heard it lost, or a record made before it did); else when the station took
 * the move, for the refusal to name.
 */
export function movedBefore(right: FormerRight, madeAt: string): string | null {
  if (right.ended_at === null || right.learned_at === null) return null;
  const limit = Date.parse(right.learned_at) + CLOCK_ALLOWANCE_MS;
  // A time that does not parse is not taken for one before the move.
  return Date.parse(madeAt) <= limit ? null : right.learned_at;
}

/** The station's right to write for `toolId` as a former tool (not its current one). */
export function formerToolRight(
  db: Db,
  stationId: number,
  toolId: number,
): FormerRight | undefined {
  return cachedStatement(
    db,
    'SELECT ended_at, learned_at FROM station_tools WHERE station_id = ? AND tool_id = ?',
  ).get(stationId, toolId) as FormerRight | undefined;
}

export function instrumentRight(
  db: Db,
  stationId: number,
  instrumentId: number,
): FormerRight | undefined {
  return cachedStatement(
    db,
    `SELECT ended_at, learned_at FROM station_instruments
     WHERE station_id = ? AND instrument_id = ?`,
  ).get(stationId, instrumentId) as FormerRight | undefined;
}

/**
 * A station asks for the changes since `cursor` (and `mark`, its fingerprint): it has applied
 * every change up to there. When that includes every change logged for it (its tool, its
 * instruments: a `station` entry), the moves that ended its rights are applied, and learned
 * now. Only where a right waits for that, so a pull of a station with none writes nothing.
 */
export function noteMovesTaken(
  db: Db,
  station: { id: number; uuid: string },
  cursor: number,
  mark: string | undefined,
  now: string,
): void {
  const waiting = cachedStatement(
    db,
    `SELECT 1 FROM station_tools WHERE station_id = @id AND ended_at IS NOT NULL
       AND learned_at IS NULL
     UNION ALL
     SELECT 1 FROM station_instruments WHERE station_id = @id AND ended_at IS NOT NULL
       AND learned_at IS NULL
     LIMIT 1`,
  ).get({ id: station.id });
  if (waiting === undefined) return;
  db.transaction(() => {
    // A cursor this server never issued (0, past its last change, or another change of that
    // number: a restored database) says nothing of what the station applied.
    if (cursor <= 0 || cursor > latestChange(db)) return;
    if (mark !== undefined && mark !== changeMark(db, cursor)) return;
    if (harvestChangedSince(db, station.uuid, cursor)) return;
    for (const table of ['station_tools', 'station_instruments']) {
      db.prepare(
        `UPDATE ${table} SET learned_at = ? WHERE station_id = ? AND ended_at IS NOT NULL
           AND learned_at IS NULL`,
      ).run(now, station.id);
    }
  }).immediate();
}
