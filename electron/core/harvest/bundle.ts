/**
 * The harvest part of a facility bundle (`labstation import`): storage locations, instruments,
 * hooks, schedules and the ARK authority. Records are matched by name (schedules by instrument),
 * so importing the same bundle twice changes nothing (a record is written only where it
 * differs: its updated_at, which an admin's open editor compares, stays). Its checks are in bundleCheck.ts.
 */
import { nameSchema } from '../../../shared/harvest/management.js';
import { oneLine } from '../../../shared/text.js';
import { z } from 'zod';
import type { Db } from '../db/open.js';
import { newUuid } from '../util/ids.js';
import { setSetting } from '../station/settings.js';
import { DEFAULT_TEMPLATE, defaultExclude, type WatchFolder } from './config.js';
import { cronKey, sameZone } from './configCheck.js';
import { moveFolderRecords } from './folderMoves.js';

// As the harvest API's names (one line: no control characters or line separators); a station
// registers its instruments on the server under them.
const name = oneLine(nameSchema);

export const harvestBundleShape = {
  storage_locations: z
    .array(
      z
        .object({
          name,
          type: z.literal('local', { message: 'must be "local" (a folder on this machine)' }),
          base_path: z.string().min(1),
          enabled: z.boolean().optional(),
        })
        .strict(),
    )
    .optional(),
  instruments: z
    .array(
      z
        .object({
          name,
          tool: name,
          description: z.string().max(2000).optional(),
          watch: z
            .array(
              z
                .object({
                  path: z.string().min(1),
                  include: z.array(z.string()).optional(),
                  exclude: z.array(z.string()).optional(),
                })
                .strict(),
            )
            .min(1, 'needs at least one watched folder'),
          stability_seconds: z.number().min(0).max(86400).optional(),
          storage_location: name,
          destination_template: z.string().optional(),
          enabled: z.boolean().optional(),
        })
        .strict(),
    )
    .optional(),
  hooks: z
    .array(
      z
        .object({
          name,
          trigger: z.enum(['pre_transfer', 'post_transfer']),
          kind: z.string().min(1),
          config: z.record(z.string(), z.unknown()).optional(),
          priority: z.number().int().optional(),
          instrument: name.nullable().optional(),
          enabled: z.boolean().optional(),
        })
        .strict(),
    )
    .optional(),
  schedules: z
    .array(
      z
        .object({
          instrument: name,
          cron: z.string().min(1),
          timezone: z.string().min(1).optional(),
          enabled: z.boolean().optional(),
        })
        .strict(),
    )
    .optional(),
  ark: z.object({ naan: z.string(), shoulder: z.string() }).strict().optional(),
};

export type HarvestBundle = z.infer<z.ZodObject<typeof harvestBundleShape>>;

/** A bundle's watched folder as stored: no include takes everything, no exclude the defaults. */
export function watchFolderOf(w: {
  path: string;
  include?: string[];
  exclude?: string[];
}): WatchFolder {
  return { path: w.path, include: w.include ?? [], exclude: w.exclude ?? defaultExclude() };
}

type BundleInstrument = NonNullable<HarvestBundle['instruments']>[number];
type BundleHook = NonNullable<HarvestBundle['hooks']>[number];

/** An instrument's fields as the bundle gives them, with their defaults (names for ids). */
export function instrumentFields(inst: BundleInstrument) {
  return {
    name: inst.name,
    description: inst.description ?? '',
    tool: inst.tool,
    watch: JSON.stringify(inst.watch.map(watchFolderOf)),
    stability: inst.stability_seconds ?? 5,
    location: inst.storage_location,
    template: inst.destination_template ?? DEFAULT_TEMPLATE,
    enabled: inst.enabled === false ? 0 : 1,
  };
}

/** A hook's fields as the bundle gives them, with their defaults (names for ids). */
export function hookFields(hook: BundleHook) {
  return {
    name: hook.name,
    trigger: hook.trigger,
    kind: hook.kind,
    config: JSON.stringify(hook.config ?? {}),
    priority: hook.priority ?? 100,
    instrument: hook.instrument ?? null,
    enabled: hook.enabled === false ? 0 : 1,
  };
}

/** Writes the harvest part of a checked bundle; runs inside the import's transaction. */
export function applyHarvestBundle(
  db: Db,
  bundle: HarvestBundle,
  now: string,
  /** A server's data dir, where admins also make schedules through the API. */
  server: boolean,
): void {
  for (const l of bundle.storage_locations ?? []) {
    db.prepare(
      `INSERT INTO storage_locations (uuid, name, type, base_path, enabled, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET type = excluded.type, base_path = excluded.base_path,
         enabled = excluded.enabled, updated_at = excluded.updated_at
       WHERE (type, base_path, enabled) IS NOT (excluded.type, excluded.base_path, excluded.enabled)`,
    ).run(newUuid(), l.name, l.type, l.base_path, l.enabled === false ? 0 : 1, now, now);
  }
  for (const inst of bundle.instruments ?? []) {
    const fields = instrumentFields(inst);
    const before = db.prepare('SELECT id, watch FROM instruments WHERE name = ?').get(inst.name) as
      { id: number; watch: string } | undefined;
    db.prepare(
      `INSERT INTO instruments (uuid, name, description, tool_id, watch, stability_seconds,
         storage_location_id, destination_template, enabled, created_at, updated_at)
       VALUES (@uuid, @name, @description, (SELECT id FROM tools WHERE name = @tool), @watch,
         @stability, (SELECT id FROM storage_locations WHERE name = @location), @template,
         @enabled, @now, @now)
       ON CONFLICT (name) DO UPDATE SET description = excluded.description,
         tool_id = excluded.tool_id, watch = excluded.watch,
         stability_seconds = excluded.stability_seconds,
         storage_location_id = excluded.storage_location_id,
         destination_template = excluded.destination_template, enabled = excluded.enabled,
         updated_at = excluded.updated_at
       WHERE (description, tool_id, watch, stability_seconds, storage_location_id,
           destination_template, enabled)
         IS NOT (excluded.description, excluded.tool_id, excluded.watch,
           excluded.stability_seconds, excluded.storage_location_id,
           excluded.destination_template, excluded.enabled)`,
    ).run({ uuid: newUuid(), ...fields, now });
    // A station's watched folder given a new path: its files' records follow it
    // (folderMoves.ts). A server's records are the stations': each moves its own.
    if (before && !server) moveFolderRecords(db, before.id, before.watch, fields.watch);
  }
  for (const hook of bundle.hooks ?? []) {
    db.prepare(
      `INSERT INTO harvest_hooks (uuid, name, "trigger", kind, config, priority, instrument_id,
         enabled, created_at, updated_at)
       VALUES (@uuid, @name, @trigger, @kind, @config, @priority,
         (SELECT id FROM instruments WHERE name = @instrument), @enabled, @now, @now)
       ON CONFLICT (name) DO UPDATE SET "trigger" = excluded."trigger", kind = excluded.kind,
         config = excluded.config, priority = excluded.priority,
         instrument_id = excluded.instrument_id, enabled = excluded.enabled,
         updated_at = excluded.updated_at
       WHERE ("trigger", kind, config, priority, instrument_id, enabled)
         IS NOT (excluded."trigger", excluded.kind, excluded.config, excluded.priority,
           excluded.instrument_id, excluded.enabled)`,
    ).run({ uuid: newUuid(), ...hookFields(hook), now });
  }
  if (bundle.schedules) {
    // A station's bundle's schedules are the whole list: what it leaves out no longer runs.
    // Those the server deployed here are the server's to change. On a server the bundle only
    // adds and changes: its admins make schedules through the API too, which a bundle that
    // does not list them must not take away. A schedule of the same instrument and cron as one
    // the bundle lists (the same times: cronKey, however spaced, its seconds given or not) is
    // that one, kept with its id, uuid and runs; only its cron as written, its time zone and
    // whether it is enabled follow the bundle.
    const kept = db
      .prepare(
        `SELECT s.id, i.name AS instrument, s.cron, s.timezone, s.enabled
           FROM harvest_schedules s JOIN instruments i ON i.id = s.instrument_id
         WHERE s.from_server = 0 ORDER BY s.id`,
      )
      .all() as {
      id: number;
      instrument: string;
      cron: string;
      timezone: string | null;
      enabled: number;
    }[];
    const matched = new Set<number>();
    for (const s of bundle.schedules) {
      const timezone = s.timezone ?? null;
      const enabled = s.enabled === false ? 0 : 1;
      const free = kept.filter(
        (k) =>
          !matched.has(k.id) &&
          k.instrument === s.instrument &&
          cronKey(k.cron) === cronKey(s.cron),
      );
      // The likest first: its time zone, then its cron as written, then whether it is on.
      // Taking another's and changing its zone or state would leave two alike running where the
      // list keeps the others (on a server), or swap two that a station's list names.
      const rank = (k: (typeof free)[number]): number =>
        (sameZone(k.timezone, timezone) ? 4 : 0) +
        (k.cron === s.cron ? 2 : 0) +
        (k.enabled === enabled ? 1 : 0);
      const same = free.reduce<(typeof free)[number] | undefined>(
        (best, k) => (best === undefined || rank(k) > rank(best) ? k : best),
        undefined,
      );
      if (same) {
        matched.add(same.id);
        db.prepare(
          `UPDATE harvest_schedules SET cron = ?, timezone = ?, enabled = ?, updated_at = ?
           WHERE id = ? AND (cron IS NOT ? OR timezone IS NOT ? OR enabled IS NOT ?)`,
        ).run(s.cron, timezone, enabled, now, same.id, s.cron, timezone, enabled);
        continue;
      }
      const made = db
        .prepare(
          `INSERT INTO harvest_schedules (uuid, instrument_id, cron, timezone, enabled, created_at,
             updated_at)
           VALUES (?, (SELECT id FROM instruments WHERE name = ?), ?, ?, ?, ?, ?)`,
        )
        .run(newUuid(), s.instrument, s.cron, timezone, enabled, now, now);
      matched.add(Number(made.lastInsertRowid));
    }
    const gone = db.prepare('DELETE FROM harvest_schedules WHERE id = ?');
    if (!server) for (const k of kept) if (!matched.has(k.id)) gone.run(k.id);
  }
  if (bundle.ark) setSetting(db, 'harvest.ark', bundle.ark);
}
