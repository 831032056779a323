/**
 * What the server's answer to one push batch does to the outbox: the rows it acknowledged leave
 * it (kept a while as sent, resend.ts), the records waiting for them go again, a newer version
 * the server holds is logged, and the one record it refused is set aside. Apart from the push
 * loop, which picks the batch, sends it and retries: this is where acknowledged rows leave.
 */
import type { Db } from '../db/open.js';
import type { Logger } from '../util/log.js';
import type { HeldRecords } from './heldRecords.js';
import { UPLOAD_MISSING, type PushKind, type PushResult } from './protocol.js';
import { countStartsAnew, keepSent, seqStartsAnew, type SentMarks } from './resend.js';

/**
 * What the server answered it had taken from this data dir: the highest outbox id, the number
 * of the last push (either left out by a server that does not say).
 */
export interface ServerCounts {
  through?: number;
  seq?: number;
}

/** An outbox row as the push loop sent it. */
export interface PushedRow {
  id: number;
  kind: PushKind;
  record_uuid: string;
  payload: string;
  refusals: number;
}

/**
 * What the push loop does next: the next batch (`taken`; `held`, a record set aside, leaving
 * the loop's error and backoff as they were), or this batch again after a backoff (`failed`).
 */
export type PushOutcome = { kind: 'taken' } | { kind: 'held' } | { kind: 'failed'; error: string };

/** Takes an answer already checked whole (parseAnswer) for the batch `rows`. */
export function takePushAnswer(
  data: PushResult,
  batch: {
    rows: PushedRow[];
    /** What the server had acknowledged before this batch (resend.ts sentMarks). */
    sentBefore: SentMarks;
    /** HeldRecords.releases when the batch was sent. */
    releasesAtSend: number;
  },
  deps: {
    db: Db;
    log: Logger;
    held: HeldRecords;
    /** The server's counts are below what it had acknowledged: what it lost goes again. */
    resendLost: (server: ServerCounts, sentBefore: SentMarks) => void;
    /**
     * A transfer refused for lacking its upload on the server: its file is uploaded again, and
     * the transfer offered again once that is done.
     */
    uploadLost?: (transferUuid: string) => void;
  },
): PushOutcome {
  const { rows, sentBefore, releasesAtSend } = batch;
  const { db, log, held } = deps;
  const sent = new Set(rows.map((r) => r.id));
  const acked = data.acked.filter((id) => sent.has(id));
  // Before this batch is kept: what the server lost is what it had before it.
  if (data.acked_before === null) {
    // No count for this data dir: a server restored from a backup made before its first push
    // lost all it took from here; or another data dir held the key. All kept goes again.
    const resent = countStartsAnew(db);
    if (resent > 0) {
      log.warn(
        { records: resent },
        'sync: the server has no count of what it took from this station (restored from a ' +
          'backup, or another data dir held its key): what it acknowledged is sent again',
      );
    }
  }
  const server: ServerCounts = {};
  if (typeof data.acked_before === 'number') server.through = data.acked_before;
  if (typeof data.ack_seq_before === 'number') server.seq = data.ack_seq_before;
  else if (data.ack_seq_before === null) {
    // No number beside a count of ids: the server's state is from before it numbered this
    // data dir's pushes (restored from a backup made before its upgrade): every numbered push
    // was lost. With no count at all, another data dir held the key: the numbers start anew.
    if (typeof data.acked_before === 'number') server.seq = 0;
    else seqStartsAnew(db);
  }
  if (server.through !== undefined || server.seq !== undefined) {
    deps.resendLost(server, sentBefore);
  }
  // Kept a while, with the number of the push that took them: a server restored from a
  // backup gets them again (resend.ts).
  const ackSeq = typeof data.ack_seq === 'number' ? data.ack_seq : null;
  db.transaction(() => keepSent(db, acked, Date.now(), ackSeq))();
  const taken = rows.filter((r) => acked.includes(r.id));
  held.releaseWaiting(taken.map((r) => r.record_uuid));
  held.releaseSuperseded(taken);
  for (const id of data.stale) {
    const row = rows.find((r) => r.id === id);
    // A newer version of the record in the same batch, taken: this one is a resend whose
    // answer was lost, and the server already had the newer one from it.
    const resent = rows.some(
      (r) => r.id > id && r.record_uuid === row?.record_uuid && acked.includes(r.id),
    );
    if (resent) {
      log.debug(
        { kind: row?.kind, uuid: row?.record_uuid },
        'sync: an older version sent again; the server holds the newer one from this station',
      );
      continue;
    }
    log.warn(
      { kind: row?.kind, uuid: row?.record_uuid },
      'sync: the server holds a newer version of this record; the older one was dropped',
    );
  }
  if (data.error) {
    const refused = data.error;
    const row = rows.find((r) => r.id === refused.id);
    if (row && !acked.includes(refused.id)) {
      const missing = refused.code === 'unknown_reference' ? refused.missing : undefined;
      if (missing) held.sendAgain(missing);
      held.holdRecord(
        row,
        {
          code: refused.code,
          reason: `${refused.kind} ${refused.uuid} refused: ${refused.detail}`,
        },
        releasesAtSend,
        missing?.uuid ?? null,
      );
      if (refused.code === UPLOAD_MISSING && row.kind === 'harvest_transfer') {
        deps.uploadLost?.(row.record_uuid);
      }
      return { kind: 'held' };
    }
    return { kind: 'failed', error: `${refused.kind} ${refused.uuid} refused: ${refused.detail}` };
  }
  if (acked.length === 0) return { kind: 'failed', error: 'the server acknowledged nothing' };
  return { kind: 'taken' };
}
