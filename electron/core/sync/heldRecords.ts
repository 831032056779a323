/**
 * The records the server refused, set aside in the outbox (held_until, refusal, waits_for) so
 * that the records queued after them still go, and offered again later. Apart from the push
 * loop because when a record goes again depends on more than the push: a pull that changes the
 * facility, a new start of the link, and the server taking a record another one waits for.
 */
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { enqueueFile } from '../harvest/records.js';
import { enqueue, enqueueUsage } from '../station/outbox.js';
import type { Logger } from '../util/log.js';

/**
 * A record the server refuses is set aside this long after its first refusal, twice as long
 * after each next one up to HOLD_CAP_MS, then offered again; a change of the facility pulled
 * from the server (for a record naming something the server lacked), or a new start of the
 * link, offers it again sooner (an admin may have added the person it names).
 */
export const HOLD_MS = 10 * 60_000;

/**
 * The older versions set aside of a record (record_uuid, kind, below id). A usage event or
 * entry set aside was refused (refusals > 0): found by the partial index outbox_refused, not by
 * a scan of an outbox that may hold a long harvest's records.
 */
export const RELEASE_SUPERSEDED_SQL = `UPDATE outbox SET held_until = NULL
  WHERE record_uuid = ? AND refusals > 0 AND kind = ? AND id < ? AND held_until IS NOT NULL`;

/** Kinds whose later version, taken, makes an older one stale on the server (versioned upserts). */
const SUPERSEDED_BY_LATER = new Set(['usage_event', 'notebook_entry']);
export const HOLD_CAP_MS = 6 * 3_600_000;

/**
 * The records a station sends again when the server says it lacks them (PushError.missing),
 * by the server's table name: those a later record names.
 */
const SENT_AGAIN = new Map<
  string,
  { table: string; kind: 'usage_event' | 'harvest_file'; enqueue: (db: Db, id: number) => void }
>([
  ['usage_events', { table: 'usage_events', kind: 'usage_event', enqueue: enqueueUsage }],
  ['harvest_files', { table: 'harvest_files', kind: 'harvest_file', enqueue: enqueueFile }],
]);

const UUID_RE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/**
 * `text` with each uuid of a person, project, tool or usage event held here followed by what
 * it is ("user_uuid: no record 01a2… (person "dave") on the server"): the server knows only
 * the uuid. What the station shows of a usage anyway (who, which tool, since when), nothing
 * more: no notebook titles. Shown to staff only (sync.status).
 */
export function nameUuids(db: Db, text: string): string {
  const lookups: [string, string][] = [
    ['person', 'SELECT username FROM users WHERE uuid = ?'],
    ['project', 'SELECT name FROM projects WHERE uuid = ?'],
    ['tool', 'SELECT name FROM tools WHERE uuid = ?'],
    [
      'usage',
      `SELECT u.username || ' on ' || t.name || ' from ' || e.start FROM usage_events e
         JOIN users u ON u.id = e.user_id JOIN tools t ON t.id = e.tool_id WHERE e.uuid = ?`,
    ],
  ];
  return text.replace(UUID_RE, (uuid) => {
    for (const [what, sql] of lookups) {
      const name = cachedStatement(db, sql).pluck().get(uuid.toLowerCase()) as string | undefined;
      if (name !== undefined) return `${uuid} (${what} ${JSON.stringify(name)})`;
    }
    return uuid;
  });
}

export class HeldRecords {
  /** Counts releaseHeld: a refusal that comes back after a release is offered again at once. */
  private releaseCount = 0;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    /** How long a record refused for the first time is set aside (ms). */
    private readonly holdMs: number,
  ) {}

  /** Taken before a push is sent, and given back to holdRecord with its answer. */
  get releases(): number {
    return this.releaseCount;
  }

  /**
   * Sets a record the server refused aside until `holdMs` from now, with why: the records
   * queued after it still go. It is offered again then, when the facility changes, or when the
   * link starts again; it leaves the outbox only once the server takes it.
   */
  holdRecord(
    row: { id: number; kind: string; record_uuid: string; payload: string; refusals: number },
    refusal: { code: string; reason: string },
    releasesAtSend: number,
    waitsFor: string | null = null,
  ): void {
    // Not when the facility changed while it was on its way: what it names may be there now.
    if (this.releaseCount !== releasesAtSend) return;
    const named = nameUuids(this.db, refusal.reason);
    const refusals = row.refusals;
    const holdMs = Math.min(this.holdMs * 2 ** Math.min(refusals, 20), HOLD_CAP_MS);
    const until = new Date(Date.now() + holdMs).toISOString();
    // Nor when the row changed on its way: a pull that took the server's people and tools
    // rewrote its uuids (apply.ts localId), and it goes again as it is now.
    const held = cachedStatement(
      this.db,
      `UPDATE outbox SET held_until = ?, refusal = ?, refusal_code = ?, refusals = refusals + 1,
         waits_for = ?
       WHERE id = ? AND payload = ?`,
    ).run(until, named, refusal.code, waitsFor, row.id, row.payload);
    if (held.changes === 0) return;
    if (row.kind === 'usage_event') this.holdEffects(row, until, named, refusal.code);
    if (row.kind === 'problem_report' && refusal.code === 'unknown_reference') {
      this.resolveWithoutResolver(row, waitsFor);
    }
    // Once per record, not at each offer: the status line keeps saying it meanwhile.
    if (refusals === 0) {
      this.log.warn(
        { id: row.id, reason: named, retryAt: until },
        'sync: the server refused a record; it is set aside and the rest still goes',
      );
    }
  }

  /**
   * The consumable withdrawals and problem reports queued after a usage event's version the
   * server refused were made by its answers (answerEffects.ts): stored on the server against
   * the version it holds (in progress, without those answers), they would bill and report a
   * usage it does not show as ended. They wait for the usage (released with it, releaseWaiting),
   * set aside as long as it is, and counted with it among the refused (its refusal says why);
   * what was queued before it goes as it is.
   */
  private holdEffects(
    usage: { id: number; record_uuid: string },
    until: string,
    reason: string,
    code: string,
  ): void {
    cachedStatement(
      this.db,
      `UPDATE outbox SET held_until = ?, waits_for = ?, refusal = ?, refusal_code = ?
       WHERE id > ? AND kind IN ('consumable_withdrawal', 'problem_report')
         AND json_extract(payload, '$.usage_event_uuid') = ?`,
    ).run(
      until,
      usage.record_uuid,
      `held back with its usage event ${usage.record_uuid}, which was refused: ${reason}`,
      code,
      usage.id,
      usage.record_uuid,
    );
  }

  /**
   * A report's resolution refused for naming who resolved it, a person the server lacks (known
   * at this station only, or gone from the server), would keep the tool shut down on the server
   * as long as it waits. The resolution goes on without the name meanwhile (queued once), and
   * the server brings the tool back into service; the report as resolved, named, stays set aside
   * and goes when the person is there (the server fills in a resolver it lacked).
   */
  private resolveWithoutResolver(
    row: { record_uuid: string; payload: string },
    waitsFor: string | null,
  ): void {
    const report = JSON.parse(row.payload) as {
      user_uuid?: string;
      resolved_at?: string | null;
      resolved_by_uuid?: string | null;
    };
    if (!report.resolved_at || !report.resolved_by_uuid) return;
    // Refused for another record it names (its tool, its usage, its reporter): no help.
    if (waitsFor !== report.resolved_by_uuid || report.user_uuid === report.resolved_by_uuid) {
      return;
    }
    // Once: still queued, or taken already (kept a while after, outbox_sent), it is not queued
    // again at the next refusal of the named one.
    const queued = cachedStatement(
      this.db,
      `SELECT 1 FROM outbox WHERE kind = 'problem_report' AND record_uuid = @uuid
         AND json_extract(payload, '$.resolved_at') IS NOT NULL
         AND json_extract(payload, '$.resolved_by_uuid') IS NULL
       UNION ALL
       SELECT 1 FROM outbox_sent WHERE kind = 'problem_report' AND record_uuid = @uuid
         AND json_extract(payload, '$.resolved_at') IS NOT NULL
         AND json_extract(payload, '$.resolved_by_uuid') IS NULL`,
    ).get({ uuid: row.record_uuid });
    if (queued) return;
    enqueue(this.db, 'problem_report', row.record_uuid, { ...report, resolved_by_uuid: null });
  }

  /**
   * Offers records set aside again at the next push: every one (a new start of the link), or
   * those refused for naming something the server lacked (the facility changed).
   */
  releaseHeld(onlyCode?: string): void {
    this.releaseCount += 1;
    cachedStatement(
      this.db,
      `UPDATE outbox SET held_until = NULL
       WHERE held_until IS NOT NULL AND (? IS NULL OR refusal_code = ?)`,
    ).run(onlyCode ?? null, onlyCode ?? null);
  }

  /**
   * The server lacks a record this station made and pushed before (it acknowledged it, so the
   * outbox no longer holds it): a new server, or one restored from a backup. It is queued
   * again as it is now, unless a version of it is queued already; the record that named it
   * waits for it (waits_for).
   */
  sendAgain(missing: { table: string; uuid: string }): void {
    const again = SENT_AGAIN.get(missing.table);
    if (!again) return;
    const queued = cachedStatement(
      this.db,
      'SELECT 1 FROM outbox WHERE kind = ? AND record_uuid = ?',
    ).get(again.kind, missing.uuid);
    if (queued) return;
    const id = cachedStatement(this.db, `SELECT id FROM ${again.table} WHERE uuid = ?`)
      .pluck()
      .get(missing.uuid) as number | undefined;
    if (id === undefined) return;
    this.db.transaction(() => again.enqueue(this.db, id))();
    this.log.warn(
      { kind: again.kind, uuid: missing.uuid },
      'sync: the server lacks a record it took before (a new server, or one restored from a ' +
        'backup); it is sent again',
    );
  }

  /** Offers again at once a record set aside (what it lacked is there now). */
  releaseRecord(kind: string, uuid: string): void {
    cachedStatement(
      this.db,
      `UPDATE outbox SET held_until = NULL
       WHERE kind = ? AND record_uuid = ? AND held_until IS NOT NULL`,
    ).run(kind, uuid);
  }

  /**
   * Offers again at once the older versions set aside of records the server took a version of
   * (`taken`: outbox rows): a usage event or notebook entry whose later version was taken is
   * answered stale and leaves, instead of counting among the refused until its hold ends.
   */
  releaseSuperseded(taken: { id: number; kind: string; record_uuid: string }[]): void {
    const release = cachedStatement(this.db, RELEASE_SUPERSEDED_SQL);
    for (const row of taken) {
      if (SUPERSEDED_BY_LATER.has(row.kind)) release.run(row.record_uuid, row.kind, row.id);
    }
  }

  /** Offers again at once the records set aside until the server had one of these. */
  releaseWaiting(uuids: string[]): void {
    if (!uuids.length) return;
    cachedStatement(
      this.db,
      `UPDATE outbox SET held_until = NULL, waits_for = NULL
       WHERE waits_for IN (SELECT value FROM json_each(?))`,
    ).run(JSON.stringify(uuids));
  }
}
