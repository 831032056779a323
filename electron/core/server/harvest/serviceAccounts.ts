/**
 * Service accounts: the stations. Each syncs with the key that only its create response
 * carries (only a hash is kept), and runs the instruments that name it. The tool a station
 * runs follows from its instruments (see instruments.ts, instrumentChecks.ts), or from the
 * admin page.
 */
import type { z } from 'zod';
import {
  serviceAccountCreate,
  serviceAccountOut,
  serviceAccountPatch,
  type ServiceAccountOut,
} from '../../../../shared/harvest/management.js';
import type { Db } from '../../db/open.js';
import { createStationAccount } from '../accounts.js';
import { dropUploadsOfRefused } from '../uploads/refused.js';
import { Conflict, ValidationProblems } from './problems.js';
import {
  checkUniqueName,
  countWhere,
  requireRecord,
  type Context,
  type ManagedResource,
} from './resource.js';

const createSchema = serviceAccountCreate;
const patchSchema = serviceAccountPatch;

interface Row {
  id: number;
  name: string;
  description: string;
  enabled: number;
  last_seen_at: string | null;
}

function row(db: Db, id: number): Row {
  return db
    .prepare('SELECT id, name, description, enabled, last_seen_at FROM stations WHERE id = ?')
    .get(id) as Row;
}

export const serviceAccounts: ManagedResource<ServiceAccountOut> = {
  path: 'service-accounts',
  label: 'service account',
  table: 'stations',
  createSchema,
  patchSchema,
  outSchema: serviceAccountOut,
  readOnly: ['id', 'last_seen_at', 'key'],
  examples: {
    out: {
      id: 3,
      name: 'tem-pc',
      description: 'Acquisition PC of the TEM',
      enabled: true,
      last_seen_at: '2026-11-20T09:14:03.120Z',
    },
    create: { name: 'tem-pc', description: 'Acquisition PC of the TEM' },
    patch: { enabled: false },
  },

  serialize(db, id) {
    const r = row(db, id);
    return { ...r, enabled: r.enabled === 1 };
  },

  create({ db }: Context, input) {
    const i = input as z.infer<typeof createSchema>;
    const problems = checkUniqueName(db, 'stations', 'service account', i.name, null);
    if (problems.length) throw new ValidationProblems(problems);
    const { id, key } = createStationAccount(db, {
      name: i.name,
      tool: null,
      description: i.description ?? '',
    });
    if (i.enabled === false) db.prepare('UPDATE stations SET enabled = 0 WHERE id = ?').run(id);
    return { id, extra: { key } };
  },

  update({ db }, id, input) {
    requireRecord(db, this, id);
    const i = input as z.infer<typeof patchSchema>;
    const problems = checkUniqueName(db, 'stations', 'service account', i.name, id);
    if (problems.length) throw new ValidationProblems(problems);
    const before = row(db, id);
    const enabled = i.enabled === undefined ? before.enabled : i.enabled ? 1 : 0;
    // The sync trigger on stations logs a change of name or enabled: the station pulls it.
    db.prepare('UPDATE stations SET name = ?, description = ?, enabled = ? WHERE id = ?').run(
      i.name ?? before.name,
      i.description ?? before.description,
      enabled,
      id,
    );
    if (enabled !== 1) dropUploadsOfRefused(db, id);
  },

  remove({ db, now }, id) {
    requireRecord(db, this, id);
    const instruments = db
      .prepare('SELECT name FROM instruments WHERE station_id = ? ORDER BY name')
      .pluck()
      .all(id) as string[];
    // Every record in the way is named at once, not one kind per attempt.
    const reasons: string[] = [];
    if (instruments.length) {
      reasons.push(`runs instrument${instruments.length > 1 ? 's' : ''} ${instruments.join(', ')}`);
    }
    const pushed =
      countWhere(db, 'SELECT count(*) FROM usage_events WHERE station_id = ?', id) +
      countWhere(db, 'SELECT count(*) FROM harvest_files WHERE station_id = ?', id) +
      countWhere(db, 'SELECT count(*) FROM problem_reports WHERE station_id = ?', id) +
      countWhere(db, 'SELECT count(*) FROM consumable_withdrawals WHERE station_id = ?', id) +
      // Runs it reported (a started one, or one its schedule made), not runs an admin queued
      // for it that it never took.
      countWhere(
        db,
        `SELECT count(*) FROM harvest_runs WHERE station_id = ?
           AND (started_at IS NOT NULL OR "trigger" = 'schedule')`,
        id,
      ) +
      countWhere(db, 'SELECT count(*) FROM notebook_entries WHERE station_id = ?', id);
    // Its schedules are not among them: they are the admin's, deployed with its instruments
    // (named above), and move with them (schedules.ts moveSchedules).
    // Files it uploaded into a server location, kept here: their transfer records may still be
    // on their way, and the upload (station, hash) is what such a record is checked against.
    const uploaded = countWhere(
      db,
      `SELECT count(*) FROM harvest_uploads WHERE station_id = ?
         AND state IN ('completed', 'skipped')`,
      id,
    );
    const held = [
      ...(pushed ? [`is named by ${pushed} record${pushed > 1 ? 's' : ''} it synced`] : []),
      ...(uploaded
        ? [`uploaded ${uploaded} file${uploaded > 1 ? 's' : ''} this server keeps`]
        : []),
    ];
    if (held.length) reasons.push(`${held.join('; it ')}; disable it instead`);
    if (reasons.length) throw new Conflict(`service account ${id} ${reasons.join('; it ')}`);
    // What was queued for it and never taken ends with it, kept in its schedule's history.
    db.prepare(
      `UPDATE harvest_runs SET station_id = NULL,
         state = CASE state WHEN 'queued' THEN 'failed' ELSE state END,
         finished_at = CASE state WHEN 'queued' THEN ? ELSE finished_at END,
         error = CASE state WHEN 'queued'
           THEN 'its service account was deleted before this run started' ELSE error END
       WHERE station_id = ?`,
    ).run(now, id);
    db.prepare('DELETE FROM station_tools WHERE station_id = ?').run(id);
    // Its unfinished uploads would go with it (ON DELETE CASCADE), their partial files left.
    dropUploadsOfRefused(db, id);
    db.prepare('DELETE FROM stations WHERE id = ?').run(id);
  },
};
