/**
 * A station's data dir restored from a backup (or a copy of an older one put back) does not
 * hold the file records it made after that backup, though the server has them: each of those
 * files would be found again by the harvest and recorded anew, under a new ARK, the old one
 * dangling on the server. The server tells it: every pull answers the highest outbox id it took
 * from this data dir (FacilityDelta.acked_through); outbox ids only grow (migration 21), so an
 * outbox that has not yet made that id is older than what it pushed. The station then fetches
 * its instruments' file records from the server before it harvests them again (history.ts), as
 * a data dir made anew does, and its outbox numbers on from that id.
 */
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { awaitHistory } from './history.js';

/**
 * How long a station with a server waits for the server's first answer before its harvest
 * starts: the answer says whether the data dir was restored. Offline, the harvest starts
 * after this alone (and a restored data dir then records anew what it finds before it hears).
 */
export const RESTORE_CHECK_WAIT_MS = 5_000;

/** The highest id the outbox has made (0 before its first row). */
export function outboxMadeThrough(db: Db): number {
  return (
    (cachedStatement(db, "SELECT seq FROM sqlite_sequence WHERE name = 'outbox'").pluck().get() as
      number | undefined) ?? 0
  );
}

/**
 * Takes the server's `ackedThrough`: when this outbox never made that id, the data dir was
 * restored; its instruments then wait for their file records (history.ts), those configured on
 * the station too (the server keeps the records it took of them), and the outbox numbers on
 * after that id. Returns the names of the instruments that wait, or null when
 * the data dir is not older than what the server took from it.
 */
export function noteRestored(db: Db, ackedThrough: number): string[] | null {
  return db
    .transaction((): string[] | null => {
      if (ackedThrough <= outboxMadeThrough(db)) return null;
      const bumped = cachedStatement(
        db,
        "UPDATE sqlite_sequence SET seq = ? WHERE name = 'outbox'",
      ).run(ackedThrough);
      if (bumped.changes === 0) {
        cachedStatement(db, "INSERT INTO sqlite_sequence (name, seq) VALUES ('outbox', ?)").run(
          ackedThrough,
        );
      }
      // The server sends the history of the instruments it gave this station and of those the
      // station registered with its records; one turned off waits until it is on again
      // (history.ts pendingHistory).
      const waiting = cachedStatement(
        db,
        'SELECT uuid, name FROM instruments ORDER BY id',
      ).all() as {
        uuid: string;
        name: string;
      }[];
      for (const instrument of waiting) awaitHistory(db, instrument.uuid);
      return waiting.map((instrument) => instrument.name);
    })
    .immediate();
}
