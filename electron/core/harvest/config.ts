/**
 * Harvest configuration: what a facility bundle (and, on the server, the harvest API) may say
 * about instruments, storage locations, hooks and schedules, and how the station reads it back
 * from its database. How it is checked is in configCheck.ts.
 */
import { TEST_NAAN, TEST_SHOULDER, type ArkConfig } from '../../../shared/ark.js';
import { DEFAULT_EXCLUDE } from '../../../shared/harvest/glob.js';
import { isHookKind, type HookKind, type HookTrigger } from '../../../shared/harvest/hookKinds.js';
import { DEFAULT_TEMPLATE } from '../../../shared/harvest/template.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';

export {
  isHookKind,
  POST_TRANSFER_KINDS,
  PRE_TRANSFER_KINDS,
  triggerOf,
  type HookKind,
  type HookTrigger,
} from '../../../shared/harvest/hookKinds.js';
export type { HookConfig } from '../../../shared/harvest/hookConfig.js';

export interface WatchFolder {
  path: string;
  include: string[];
  exclude: string[];
}

export { DEFAULT_TEMPLATE };
export const DEFAULT_ARK: ArkConfig = { naan: TEST_NAAN, shoulder: TEST_SHOULDER };

export function defaultExclude(): string[] {
  return [...DEFAULT_EXCLUDE];
}

// --- What the station reads back -------------------------------------------------------------

export interface StorageLocation {
  id: number;
  uuid: string;
  name: string;
  type: 'local' | 'server';
  base_path: string;
  enabled: boolean;
}

export interface Instrument {
  id: number;
  uuid: string;
  name: string;
  tool_id: number;
  tool_name: string;
  watch: WatchFolder[];
  stability_seconds: number;
  storage_location: StorageLocation | null;
  destination_template: string;
  enabled: boolean;
}

export interface Hook {
  id: number;
  name: string;
  trigger: HookTrigger;
  kind: HookKind;
  config: Record<string, unknown>;
  priority: number;
  instrument_id: number | null;
  /** Sent by the server (not from this station's own bundle). */
  from_server: boolean;
}

export interface Schedule {
  id: number;
  instrument_id: number;
  cron: string;
  timezone: string | null;
}

interface StorageRow {
  id: number;
  uuid: string;
  name: string;
  type: 'local' | 'server';
  base_path: string;
  enabled: number;
}

function storageOf(row: StorageRow): StorageLocation {
  return { ...row, enabled: row.enabled === 1 };
}

export function storageLocations(db: Db): StorageLocation[] {
  return (
    cachedStatement(
      db,
      'SELECT id, uuid, name, type, base_path, enabled FROM storage_locations ORDER BY name',
    ).all() as StorageRow[]
  ).map(storageOf);
}

export function storageLocationByName(db: Db, name: string): StorageLocation | null {
  const row = cachedStatement(
    db,
    'SELECT id, uuid, name, type, base_path, enabled FROM storage_locations WHERE name = ?',
  ).get(name) as StorageRow | undefined;
  return row ? storageOf(row) : null;
}

/** The instruments of one tool (a station's), enabled or not, by name. */
export function instrumentsOfTool(db: Db, toolName: string): Instrument[] {
  const rows = cachedStatement(
    db,
    `SELECT i.id, i.uuid, i.name, i.tool_id, t.name AS tool_name, i.watch, i.stability_seconds,
         i.storage_location_id, i.destination_template, i.enabled
       FROM instruments i JOIN tools t ON t.id = i.tool_id
       WHERE t.name = ? ORDER BY i.name`,
  ).all(toolName) as (Omit<Instrument, 'watch' | 'enabled' | 'storage_location'> & {
    watch: string;
    enabled: number;
    storage_location_id: number | null;
  })[];
  const locations = new Map(storageLocations(db).map((l) => [l.id, l]));
  return rows.map((r) => ({
    id: r.id,
    uuid: r.uuid,
    name: r.name,
    tool_id: r.tool_id,
    tool_name: r.tool_name,
    watch: JSON.parse(r.watch) as WatchFolder[],
    stability_seconds: r.stability_seconds,
    storage_location:
      r.storage_location_id === null ? null : (locations.get(r.storage_location_id) ?? null),
    destination_template: r.destination_template,
    enabled: r.enabled === 1,
  }));
}

/** Enabled hooks that apply to an instrument, in the order they run (priority, then name). */
export function hooksFor(db: Db, instrumentId: number, trigger: HookTrigger): Hook[] {
  const rows = cachedStatement(
    db,
    `SELECT id, name, "trigger", kind, config, priority, instrument_id, from_server
       FROM harvest_hooks WHERE enabled = 1 AND "trigger" = ? AND (instrument_id IS NULL OR instrument_id = ?)
       ORDER BY priority, name`,
  ).all(trigger, instrumentId) as (Omit<Hook, 'config' | 'from_server'> & {
    config: string;
    from_server: number;
  })[];
  return rows
    .filter((r) => isHookKind(r.kind))
    .map((r) => ({
      ...r,
      config: JSON.parse(r.config) as Record<string, unknown>,
      from_server: r.from_server === 1,
    }));
}

export function schedulesFor(db: Db, instrumentIds: number[]): Schedule[] {
  if (!instrumentIds.length) return [];
  return cachedStatement(
    db,
    `SELECT id, instrument_id, cron, timezone FROM harvest_schedules
       WHERE enabled = 1 AND instrument_id IN (${instrumentIds.map(() => '?').join(', ')})
       ORDER BY id`,
  ).all(...instrumentIds) as Schedule[];
}
