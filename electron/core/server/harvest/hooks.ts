/**
 * Hooks: the built-in kinds of the station harvest (electron/core/harvest/hooks.ts), checked
 * here with the same rules as a facility bundle. `instrument_id` null: every instrument.
 */
import { z } from 'zod';
import { hookConfigSchemas } from '../../../../shared/harvest/hookConfig.js';
import { isHookKind } from '../../../../shared/harvest/hookKinds.js';
import {
  hookCreate,
  hookOut,
  hookPatch,
  type HookInput,
  type HookOut,
} from '../../../../shared/harvest/management.js';
import type { Db } from '../../db/open.js';
import { newUuid } from '../../util/ids.js';
import { hookProblems } from '../../harvest/configCheck.js';
import { notifyStations, stationOfInstrument, stationsRunningInstruments } from './notify.js';
import { ValidationProblems, pathProblem, problem, zodProblems, type Problem } from './problems.js';
import {
  checkReference,
  checkUniqueName,
  requireRecord,
  type Context,
  type ManagedResource,
} from './resource.js';

const createSchema = hookCreate;
const patchSchema = hookPatch;
type Input = HookInput;

interface Row {
  id: number;
  name: string;
  trigger: 'pre_transfer' | 'post_transfer';
  kind: string;
  config: string;
  priority: number;
  instrument_id: number | null;
  enabled: number;
}

function row(db: Db, id: number): Row {
  return db
    .prepare(
      `SELECT id, name, "trigger", kind, config, priority, instrument_id, enabled
       FROM harvest_hooks WHERE id = ?`,
    )
    .get(id) as Row;
}

function check(db: Db, merged: Required<Input>, input: Input, id: number | null): void {
  const problems: Problem[] = [
    ...checkUniqueName(db, 'harvest_hooks', 'hook', input.name, id),
    ...checkReference(db, 'instruments', 'instrument', 'instrument_id', input.instrument_id),
  ];
  if (input.kind !== undefined || input.trigger !== undefined || input.config !== undefined) {
    // The config's own shape, as every body is checked (parseBody): each problem with its
    // FastAPI type (extra_forbidden, string_type, ...); the rules across fields after it.
    const shape = isHookKind(merged.kind)
      ? z.object({ config: hookConfigSchemas[merged.kind] })
      : null;
    const given = { config: merged.config };
    const parsed = shape?.safeParse(given);
    if (parsed && !parsed.success) {
      problems.push(...zodProblems('body', parsed.error, given, shape ?? undefined));
    }
    for (const text of hookProblems('body', merged)) {
      if (parsed && !parsed.success && text.startsWith('body.config')) continue;
      problems.push(pathProblem('body', 'body', text));
    }
    const location = merged.config.storage_location;
    if (
      typeof location === 'string' &&
      !db.prepare('SELECT 1 FROM storage_locations WHERE name = ?').get(location)
    ) {
      problems.push(
        problem(
          ['body', 'config', 'storage_location'],
          `no storage location named ${JSON.stringify(location)}`,
          'missing_reference',
        ),
      );
    }
  }
  // An enabled redirect to a location turned off: every file it redirects would fail there, as
  // an instrument's own location may not be off under it (storageLocations.ts keeps the same).
  const location = merged.config.storage_location;
  if (merged.kind === 'redirect' && Boolean(merged.enabled) && typeof location === 'string') {
    const off = db
      .prepare('SELECT 1 FROM storage_locations WHERE name = ? AND enabled = 0')
      .get(location);
    if (off) {
      problems.push(
        problem(
          ['body', 'config', 'storage_location'],
          `storage location ${JSON.stringify(location)} is disabled: every file this hook ` +
            'redirects would fail there; enable it first, or save the hook disabled',
          'needed_by_station',
        ),
      );
    }
  }
  if (problems.length) throw new ValidationProblems(problems);
}

/** A hook for one instrument concerns its station; one for every instrument, all of them. */
function concerned(db: Db, instrumentId: number | null): (number | null)[] {
  return instrumentId === null
    ? stationsRunningInstruments(db)
    : [stationOfInstrument(db, instrumentId)];
}

export const hooks: ManagedResource<HookOut> = {
  path: 'hooks',
  label: 'hook',
  table: 'harvest_hooks',
  createSchema,
  patchSchema,
  outSchema: hookOut,
  readOnly: ['id'],
  examples: {
    out: {
      id: 4,
      name: 'sidecars',
      trigger: 'post_transfer',
      kind: 'sidecar_json',
      config: { suffixes: ['.json'] },
      priority: 100,
      instrument_id: null,
      enabled: true,
    },
    create: {
      name: 'sidecars',
      trigger: 'post_transfer',
      kind: 'sidecar_json',
      config: { suffixes: ['.json'] },
    },
    patch: { priority: 50 },
  },

  serialize(db, id) {
    const r = row(db, id);
    return {
      ...r,
      config: JSON.parse(r.config) as Record<string, unknown>,
      enabled: r.enabled === 1,
    };
  },

  create({ db, now }: Context, input) {
    const i = input as Input & { name: string; trigger: Row['trigger']; kind: string };
    const merged: Required<Input> = {
      config: {},
      priority: 100,
      instrument_id: null,
      enabled: true,
      ...i,
    };
    check(db, merged, i, null);
    const id = Number(
      db
        .prepare(
          `INSERT INTO harvest_hooks (uuid, name, "trigger", kind, config, priority, instrument_id,
             enabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          newUuid(),
          merged.name,
          merged.trigger,
          merged.kind,
          JSON.stringify(merged.config),
          merged.priority,
          merged.instrument_id,
          merged.enabled ? 1 : 0,
          now,
          now,
        ).lastInsertRowid,
    );
    notifyStations(db, concerned(db, merged.instrument_id));
    return { id };
  },

  update({ db, now }, id, input) {
    requireRecord(db, this, id);
    const before = row(db, id);
    const i = input as Input;
    const merged: Required<Input> = {
      name: before.name,
      trigger: before.trigger,
      kind: before.kind,
      config: JSON.parse(before.config) as Record<string, unknown>,
      priority: before.priority,
      instrument_id: before.instrument_id,
      enabled: before.enabled === 1,
      ...i,
    };
    check(db, merged, i, id);
    db.prepare(
      `UPDATE harvest_hooks SET name = ?, "trigger" = ?, kind = ?, config = ?, priority = ?,
         instrument_id = ?, enabled = ?, updated_at = ? WHERE id = ?`,
    ).run(
      merged.name,
      merged.trigger,
      merged.kind,
      JSON.stringify(merged.config),
      merged.priority,
      merged.instrument_id,
      merged.enabled ? 1 : 0,
      now,
      id,
    );
    notifyStations(db, [
      ...concerned(db, before.instrument_id),
      ...concerned(db, merged.instrument_id),
    ]);
  },

  remove({ db }, id) {
    requireRecord(db, this, id);
    const before = row(db, id);
    db.prepare('DELETE FROM harvest_hooks WHERE id = ?').run(id);
    notifyStations(db, concerned(db, before.instrument_id));
  },
};
