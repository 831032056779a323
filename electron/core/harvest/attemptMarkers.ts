/**
 * The markers of a transfer under way, kept in its file's record: the partial's name before the
 * copy, the verified hash and the destination before the rename. A restart reads them to clean
 * up or finish what the process left (records.ts interruptedFiles, recovery.ts
 * recoverInterrupted); a failure keeps them for the file's next attempt (records.ts
 * storeOutcome).
 */
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';

/**
 * Most attempt markers below are written without waiting for the disk (synchronous=NORMAL for
 * that one commit): they must survive the process dying, which they do, since SQLite has
 * handed them to the OS; a power cut may lose them, and then costs an orphan partial or a
 * copy recorded as skipped instead of completed. Waiting for the disk twice more per file
 * halved the rate of small files. The verified marks of a copy not yet durable, or of a name
 * after one found taken, wait (markVerified's waitForDisk, markVerifiedMany): lost in a power cut,
 * they would leave a file at a final name that no record speaks for, or a wrong one.
 */
function relaxed(db: Db, write: () => void): void {
  cachedStatement(db, 'PRAGMA synchronous = NORMAL').run();
  try {
    write();
  } finally {
    cachedStatement(db, 'PRAGMA synchronous = FULL').run();
  }
}

const BEGIN_ATTEMPT = 'UPDATE harvest_files SET partial_path = ?, made_folders = ? WHERE id = ?';

function madeFoldersJson(made: readonly string[]): string | null {
  return made.length === 0 ? null : JSON.stringify(made);
}

/**
 * Written before the copy creates the partial: a crash leaves a name to clean up, and the
 * destination folders the attempt's check made (`made`, outermost first), for the recovery to
 * take back once empty.
 */
export function beginAttempt(
  db: Db,
  id: number,
  partialPath: string,
  made: readonly string[] = [],
): void {
  relaxed(db, () => cachedStatement(db, BEGIN_ATTEMPT).run(partialPath, madeFoldersJson(made), id));
}

/**
 * The folders an attempt recorded as made (beginAttempt), outermost first; none when it made
 * none, or when the column holds anything else than a list of paths.
 */
export function madeFolders(file: { made_folders: string | null }): string[] {
  if (file.made_folders === null) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(file.made_folders);
  } catch {
    return [];
  }
  return Array.isArray(parsed) && parsed.every((at) => typeof at === 'string' && at !== '')
    ? (parsed as string[])
    : [];
}

/**
 * Where a verified copy goes, as its transfer record will say: its storage location and the
 * record's note (completedNote), kept with the marker for recovery.ts.
 */
export interface PendingPlace {
  locationId: number | null;
  note: string;
}

const MARK_VERIFIED = `UPDATE harvest_files SET verified_hash = ?, pending_destination = ?,
  pending_location_id = ?, pending_note = ? WHERE id = ?`;

/**
 * Written after verification, before the rename: a crash after the rename can be finished.
 * `waitForDisk` (a commit with the disk's answer) where losing it to a power cut costs more
 * than a skip: a copy placed before its data is flushed (a small one, durable.ts), whose
 * damaged link recovery.ts must find; a name after one found taken, whose loss would leave the
 * marks naming the other file there with the partial gone once linked, which recovery.ts takes
 * for this copy (placedByUs) and removes as damaged. A copy made durable first, at its own name,
 * costs only a skip when its mark is lost: the same content is found there.
 */
export function markVerified(
  db: Db,
  id: number,
  hash: string,
  destination: string,
  place: PendingPlace & { waitForDisk?: boolean },
): void {
  const mark = (): void => {
    cachedStatement(db, MARK_VERIFIED).run(hash, destination, place.locationId, place.note, id);
  };
  if (place.waitForDisk) mark();
  else relaxed(db, mark);
}

/**
 * beginAttempt for a batch of small files (batch.ts), in one commit: every partial name is
 * recorded before the batch is handed to a copy worker.
 */
export function beginAttempts(
  db: Db,
  attempts: { id: number; partialPath: string; made?: readonly string[] }[],
): void {
  if (!attempts.length) return;
  relaxed(db, () =>
    db
      .transaction(() => {
        const set = cachedStatement(db, BEGIN_ATTEMPT);
        for (const a of attempts) set.run(a.partialPath, madeFoldersJson(a.made ?? []), a.id);
      })
      .immediate(),
  );
}

/**
 * markVerified for a batch, in one commit, before any of its copies is placed. It waits for the
 * disk: the batch's copies are placed before their flush (durable.ts), so a power cut may keep a
 * link without its data; these marks let recovery.ts find that damaged copy and remove it.
 */
export function markVerifiedMany(
  db: Db,
  verified: ({ id: number; hash: string; destination: string } & PendingPlace)[],
): void {
  if (!verified.length) return;
  db.transaction(() => {
    const set = cachedStatement(db, MARK_VERIFIED);
    for (const v of verified) set.run(v.hash, v.destination, v.locationId, v.note, v.id);
  }).immediate();
}

/**
 * Written before a verified copy's partial is removed without having been placed (its name was
 * taken, the same content was found there, the placement failed): the verified marks go first,
 * with the disk's answer. Recovery takes a verified mark whose partial is gone for a copy that
 * reached its name (recovery.ts placedByUs): left behind, it would take the file of another at
 * that name for this station's copy, and remove it or record it. The partial's name stays, for
 * a crash before its removal to clean up.
 */
export function unmarkVerified(db: Db, id: number): void {
  cachedStatement(
    db,
    `UPDATE harvest_files SET verified_hash = NULL, pending_destination = NULL,
       pending_location_id = NULL, pending_note = NULL
     WHERE id = ? AND verified_hash IS NOT NULL`,
  ).run(id);
}

export function clearAttempt(db: Db, id: number): void {
  cachedStatement(
    db,
    `UPDATE harvest_files SET partial_path = NULL, verified_hash = NULL,
       pending_destination = NULL, pending_location_id = NULL, pending_note = NULL,
       made_folders = NULL WHERE id = ?`,
  ).run(id);
}
