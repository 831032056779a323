/**
 * The station's side of the harvest configuration the server sends (protocol.ts SyncHarvest):
 * storage locations, instruments, hooks and schedules, matched by uuid, else by name (a record
 * a local bundle made before the station was connected, which then takes the server's uuid).
 * What came from the server and is no longer listed stops running: instruments are disabled
 * (their file records stay), hooks and schedules are removed. What only a local bundle made is
 * left alone.
 */
import type { Db } from '../db/open.js';
import { moveFolderRecords } from '../harvest/folderMoves.js';
import { enqueue } from '../station/outbox.js';
import { nowIso } from '../util/ids.js';
import { awaitHistory } from './history.js';
import type { SyncHarvest, SyncRun } from './protocol.js';

type Named = 'storage_locations' | 'instruments' | 'harvest_hooks';

/**
 * The local row for a server record: by uuid, else one a local bundle made with that name
 * (never one the server sent under another uuid), which then takes the server's uuid. Any other
 * row holding the name (local, or the server's and no longer listed) is renamed aside, so a
 * name the server reuses never blocks the whole delta.
 */
function localId(db: Db, table: Named, uuid: string, name: string): number | null {
  const byUuid = db.prepare(`SELECT id FROM ${table} WHERE uuid = ?`).pluck().get(uuid) as
    number | undefined;
  const local = table === 'storage_locations' ? '' : 'AND from_server = 0';
  const byName =
    byUuid === undefined
      ? (db.prepare(`SELECT id FROM ${table} WHERE name = ? ${local}`).pluck().get(name) as
          number | undefined)
      : undefined;
  const id = byUuid ?? byName;
  if (byName !== undefined) {
    db.prepare(`UPDATE ${table} SET uuid = ? WHERE id = ?`).run(uuid, byName);
  }
  db.prepare(
    `UPDATE ${table} SET name = name || ' (local ' || substr(uuid, -6) || ')'
     WHERE name = ? AND id IS NOT ?`,
  ).run(name, id ?? null);
  return id ?? null;
}

/** Names are unique and the server may have swapped two: each takes its uuid as a stand-in. */
function parkNames(db: Db, table: Named, records: { uuid: string; name: string }[]): void {
  const park = db.prepare(`UPDATE ${table} SET name = uuid WHERE uuid = ? AND name <> ?`);
  for (const r of records) park.run(r.uuid, r.name);
}

function idByUuid(db: Db, table: string, uuid: string | null): number | null {
  if (uuid === null) return null;
  return (
    (db.prepare(`SELECT id FROM ${table} WHERE uuid = ?`).pluck().get(uuid) as
      number | undefined) ?? null
  );
}

/**
 * Applies the server's harvest configuration; runs inside the delta's transaction. Returns the
 * names of instruments it could not take (their tool is unknown here).
 */
export function applyHarvestConfig(db: Db, harvest: SyncHarvest): string[] {
  const skipped: string[] = [];
  const now = nowIso();
  parkNames(db, 'storage_locations', harvest.storage_locations);
  for (const l of harvest.storage_locations) {
    const id = localId(db, 'storage_locations', l.uuid, l.name);
    const values = [l.name, l.type, l.base_path, l.enabled ? 1 : 0, now];
    if (id === null) {
      db.prepare(
        `INSERT INTO storage_locations (name, type, base_path, enabled, updated_at, uuid,
           created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ).run(...values, l.uuid, now);
    } else {
      db.prepare(
        `UPDATE storage_locations SET name = ?, type = ?, base_path = ?, enabled = ?,
           updated_at = ? WHERE id = ?`,
      ).run(...values, id);
    }
  }

  parkNames(db, 'instruments', harvest.instruments);
  const listed = new Set<string>();
  for (const i of harvest.instruments) {
    const toolId = idByUuid(db, 'tools', i.tool_uuid);
    if (toolId === null) {
      skipped.push(i.name);
      continue;
    }
    listed.add(i.uuid);
    const before = db
      .prepare('SELECT enabled FROM instruments WHERE uuid = ?')
      .pluck()
      .get(i.uuid) as number | undefined;
    const id = localId(db, 'instruments', i.uuid, i.name);
    const values = [
      i.name,
      i.description,
      toolId,
      JSON.stringify(i.watch),
      i.stability_seconds,
      idByUuid(db, 'storage_locations', i.storage_location_uuid),
      i.destination_template,
      i.enabled ? 1 : 0,
      now,
    ];
    if (id === null) {
      db.prepare(
        `INSERT INTO instruments (name, description, tool_id, watch, stability_seconds,
           storage_location_id, destination_template, enabled, updated_at, uuid, created_at,
           from_server) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`,
      ).run(...values, i.uuid, now);
    } else {
      const watchBefore = db.prepare('SELECT watch FROM instruments WHERE id = ?').pluck().get(id);
      db.prepare(
        `UPDATE instruments SET name = ?, description = ?, tool_id = ?, watch = ?,
           stability_seconds = ?, storage_location_id = ?, destination_template = ?, enabled = ?,
           updated_at = ?, from_server = 1 WHERE id = ?`,
      ).run(...values, id);
      // A watched folder given a new path: its files' records follow it (folderMoves.ts).
      moveFolderRecords(db, id, String(watchBefore), JSON.stringify(i.watch));
    }
    // New here (or a local one that took the server's uuid), or back after it was off: the
    // server may hold records of its files made elsewhere meanwhile (sync/history.ts).
    if (i.enabled && before !== 1) awaitHistory(db, i.uuid);
  }
  // Moved to another station, or deleted there: no longer harvested here.
  const disable = db.prepare(
    'UPDATE instruments SET enabled = 0, updated_at = ? WHERE uuid = ? AND enabled = 1',
  );
  for (const uuid of db
    .prepare('SELECT uuid FROM instruments WHERE from_server = 1')
    .pluck()
    .all() as string[]) {
    if (!listed.has(uuid)) disable.run(now, uuid);
  }

  parkNames(db, 'harvest_hooks', harvest.hooks);
  const hooks = new Set<string>();
  for (const h of harvest.hooks) {
    const instrumentId = idByUuid(db, 'instruments', h.instrument_uuid);
    // A hook for an instrument not taken here is not taken either: it would apply to all.
    if (h.instrument_uuid !== null && instrumentId === null) continue;
    hooks.add(h.uuid);
    const id = localId(db, 'harvest_hooks', h.uuid, h.name);
    const values = [
      h.name,
      h.trigger,
      h.kind,
      JSON.stringify(h.config),
      h.priority,
      instrumentId,
      h.enabled ? 1 : 0,
      now,
    ];
    if (id === null) {
      db.prepare(
        `INSERT INTO harvest_hooks (name, "trigger", kind, config, priority, instrument_id,
           enabled, updated_at, uuid, created_at, from_server)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`,
      ).run(...values, h.uuid, now);
    } else {
      db.prepare(
        `UPDATE harvest_hooks SET name = ?, "trigger" = ?, kind = ?, config = ?, priority = ?,
           instrument_id = ?, enabled = ?, updated_at = ?, from_server = 1 WHERE id = ?`,
      ).run(...values, id);
    }
  }
  const dropHook = db.prepare('DELETE FROM harvest_hooks WHERE uuid = ?');
  for (const uuid of db
    .prepare('SELECT uuid FROM harvest_hooks WHERE from_server = 1')
    .pluck()
    .all() as string[]) {
    if (!hooks.has(uuid)) dropHook.run(uuid);
  }

  const schedules = new Set<string>();
  for (const s of harvest.schedules) {
    const instrumentId = idByUuid(db, 'instruments', s.instrument_uuid);
    if (instrumentId === null) continue;
    schedules.add(s.uuid);
    const values = [instrumentId, s.cron, s.timezone, s.enabled ? 1 : 0, s.version, now];
    const id = idByUuid(db, 'harvest_schedules', s.uuid);
    if (id === null) {
      db.prepare(
        `INSERT INTO harvest_schedules (instrument_id, cron, timezone, enabled, version,
           updated_at, uuid, created_at, from_server) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)`,
      ).run(...values, s.uuid, now);
    } else {
      db.prepare(
        `UPDATE harvest_schedules SET instrument_id = ?, cron = ?, timezone = ?, enabled = ?,
           version = ?, updated_at = ?, from_server = 1 WHERE id = ?`,
      ).run(...values, id);
    }
  }
  const dropSchedule = db.prepare('DELETE FROM harvest_schedules WHERE uuid = ?');
  for (const uuid of db
    .prepare('SELECT uuid FROM harvest_schedules WHERE from_server = 1')
    .pluck()
    .all() as string[]) {
    if (!schedules.has(uuid)) dropSchedule.run(uuid);
  }
  return skipped;
}

/** A run the server queued that this station cannot take, and why (reported failed, once). */
export interface DeclinedRun {
  run: string;
  instrument: string;
  reason: string;
}

const NOT_HERE = 'this station does not run that instrument';

/**
 * Takes up the runs the server queued for this station (once each: a run already taken is in
 * harvest_runs). A run for an instrument this station does not have is reported failed, once:
 * the server lists the run at every pull until it has taken that report, which may be a while
 * (the push failing, or the report refused and set aside), and a report already queued, or
 * taken and kept as sent, is not queued again. Returns how many runs were new, and the runs
 * declined at this pull (for the log).
 */
export function takeQueuedRuns(
  db: Db,
  runs: SyncRun[],
): { added: number; declined: DeclinedRun[] } {
  let added = 0;
  const declined: DeclinedRun[] = [];
  for (const run of runs) {
    if (db.prepare('SELECT 1 FROM harvest_runs WHERE uuid = ?').get(run.uuid)) continue;
    const instrumentId = idByUuid(db, 'instruments', run.instrument_uuid);
    if (instrumentId === null) {
      const reported = db
        .prepare(
          `SELECT 1 FROM outbox WHERE kind = 'harvest_run' AND record_uuid = ?
           UNION ALL SELECT 1 FROM outbox_sent WHERE kind = 'harvest_run' AND record_uuid = ?`,
        )
        .get(run.uuid, run.uuid);
      if (reported) continue;
      const now = nowIso();
      enqueue(db, 'harvest_run', run.uuid, {
        uuid: run.uuid,
        schedule_uuid: run.schedule_uuid,
        instrument_uuid: run.instrument_uuid,
        trigger: 'manual',
        state: 'failed',
        requested_at: run.requested_at,
        started_at: now,
        finished_at: now,
        files_completed: 0,
        files_skipped: 0,
        files_failed: 0,
        error: NOT_HERE,
        reported_at: now,
      });
      declined.push({ run: run.uuid, instrument: run.instrument_uuid, reason: NOT_HERE });
      continue;
    }
    db.prepare(
      `INSERT INTO harvest_runs (uuid, schedule_id, instrument_id, "trigger", state, requested_at)
       VALUES (?, ?, ?, 'manual', 'queued', ?)`,
    ).run(
      run.uuid,
      idByUuid(db, 'harvest_schedules', run.schedule_uuid),
      instrumentId,
      run.requested_at,
    );
    added += 1;
  }
  return { added, declined };
}
