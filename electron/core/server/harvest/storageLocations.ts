import { dirname, isAbsolute } from 'node:path';
import type { z } from 'zod';
import {
  storageLocationCreate,
  storageLocationOut,
  storageLocationPatch,
  type StorageLocationOut,
} from '../../../../shared/harvest/management.js';
import type { Db } from '../../db/open.js';
import { NOT_STATION_ABSOLUTE, STATION_ABSOLUTE } from '../../harvest/configCheck.js';
import { foldersOverlap, realOrNearestSync } from '../../harvest/storageGuard.js';
import { newUuid } from '../../util/ids.js';
import { dropUploadsInto } from '../uploads/refused.js';
import { notifyStations, stationsRunningInstruments } from './notify.js';
import { Conflict, ValidationProblems, problem, type Problem } from './problems.js';
import {
  checkUniqueName,
  countWhere,
  requireRecord,
  type Context,
  type ManagedResource,
} from './resource.js';

const createSchema = storageLocationCreate;
const patchSchema = storageLocationPatch;

function pathProblems(db: Db, type: string, basePath: string, id: number | null): Problem[] {
  if (basePath.includes('\0')) return [problem(['body', 'base_path'], 'must not contain NUL')];
  if (type === 'server') {
    if (!isAbsolute(basePath)) {
      return [problem(['body', 'base_path'], 'must be an absolute path on this server')];
    }
    if (basePath.split(/[\\/]/).some((part) => part === '.' || part === '..')) {
      return [problem(['body', 'base_path'], 'must not hold "." or ".." parts')];
    }
    // Stations write new files under it: never among the server's own (its database, secrets,
    // logs), nor in a folder that holds them.
    const dataDir = dirname(db.name);
    if (!db.memory) {
      const base = realOrNearestSync(basePath);
      const data = realOrNearestSync(dataDir);
      if (foldersOverlap(data, base)) {
        return [
          problem(
            ['body', 'base_path'],
            `must not be the server's data folder (${dataDir}), inside it, or a folder holding it`,
          ),
        ];
      }
      // Each instrument storing in a location owns its folder there, and an upload is checked
      // against the instruments of the location it names: another location on the same
      // folder, inside it or holding it would let a station write into a folder another one's
      // instrument owns, named through the other location.
      const overlapping = (
        db
          .prepare("SELECT id, name, base_path FROM storage_locations WHERE type = 'server'")
          .all() as { id: number; name: string; base_path: string }[]
      ).find((other) => {
        if (other.id === id) return false;
        return foldersOverlap(realOrNearestSync(other.base_path), base);
      });
      if (overlapping) {
        return [
          problem(
            ['body', 'base_path'],
            `must not be the folder of the server storage location ${overlapping.name} ` +
              `(${overlapping.base_path}), inside it, or a folder holding it`,
          ),
        ];
      }
    }
  }
  if (type === 'local' && !STATION_ABSOLUTE.test(basePath)) {
    return [problem(['body', 'base_path'], NOT_STATION_ABSOLUTE)];
  }
  return [];
}

interface Row {
  id: number;
  name: string;
  type: 'local' | 'server';
  base_path: string;
  enabled: number;
}

function row(db: Db, id: number): Row {
  return db
    .prepare('SELECT id, name, type, base_path, enabled FROM storage_locations WHERE id = ?')
    .get(id) as Row;
}

/** How many transfer records name the location (its type and its deletion wait on them). */
function transfersIn(db: Db, id: number): number {
  return countWhere(db, 'SELECT count(*) FROM harvest_transfers WHERE storage_location_id = ?', id);
}

function hooksNaming(db: Db, name: string): string[] {
  return db
    .prepare(
      `SELECT name FROM harvest_hooks WHERE json_extract(config, '$.storage_location') = ?
       ORDER BY name`,
    )
    .pluck()
    .all(name) as string[];
}

export const storageLocations: ManagedResource<StorageLocationOut> = {
  path: 'storage-locations',
  label: 'storage location',
  table: 'storage_locations',
  createSchema,
  patchSchema,
  outSchema: storageLocationOut,
  readOnly: ['id'],
  examples: {
    out: { id: 1, name: 'archive', type: 'local', base_path: '/mnt/archive', enabled: true },
    create: { name: 'archive', type: 'local', base_path: '/mnt/archive' },
    patch: { enabled: false },
  },

  serialize(db, id) {
    const r = row(db, id);
    return { ...r, enabled: r.enabled === 1 };
  },

  create({ db, now }: Context, input) {
    const i = input as z.infer<typeof createSchema>;
    const problems = [
      ...checkUniqueName(db, 'storage_locations', 'storage location', i.name, null),
      ...pathProblems(db, i.type, i.base_path, null),
    ];
    if (problems.length) throw new ValidationProblems(problems);
    const id = Number(
      db
        .prepare(
          `INSERT INTO storage_locations (uuid, name, type, base_path, enabled, created_at,
             updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(newUuid(), i.name, i.type, i.base_path, i.enabled === false ? 0 : 1, now, now)
        .lastInsertRowid,
    );
    return { id };
  },

  update({ db, now }, id, input) {
    requireRecord(db, this, id);
    const i = input as z.infer<typeof patchSchema>;
    const before = row(db, id);
    const merged = { ...before, ...i };
    const problems = [
      ...checkUniqueName(db, 'storage_locations', 'storage location', i.name, id),
      ...(i.type !== undefined || i.base_path !== undefined
        ? pathProblems(db, merged.type, merged.base_path, id)
        : []),
    ];
    if (problems.length) throw new ValidationProblems(problems);
    if (merged.type !== before.type) {
      // A transfer record's destination is a path of its location's kind (a station's folder,
      // or the server's): another type would make its records say what they are not.
      const transfers = transfersIn(db, id);
      if (transfers) {
        throw new Conflict(
          `storage location ${id} holds ${transfers} transfer record${transfers > 1 ? 's' : ''} ` +
            `made as a ${before.type} location; its type stays (make a new ${merged.type} ` +
            'location instead)',
        );
      }
    }
    if (i.enabled === false && before.enabled === 1) {
      // The rule an instrument's save keeps (instrumentChecks.ts runnableProblems), kept from
      // this side too: disabled under them, every file their stations find would fail there.
      const running = db
        .prepare(
          `SELECT name FROM instruments WHERE storage_location_id = ? AND enabled = 1
             AND station_id IS NOT NULL ORDER BY name`,
        )
        .pluck()
        .all(id) as string[];
      if (running.length) {
        const many = running.length > 1;
        throw new Conflict(
          `storage location ${id} is used by enabled instrument${many ? 's' : ''} ` +
            `${running.join(', ')}, which ${many ? 'their stations run' : 'its station runs'}: ` +
            `every file found there would fail; move ${many ? 'them' : 'it'} to another ` +
            `location or disable ${many ? 'them' : 'it'} first`,
        );
      }
      // Nor under enabled redirect hooks that send files there.
      const redirecting = db
        .prepare(
          `SELECT name FROM harvest_hooks WHERE kind = 'redirect' AND enabled = 1
             AND json_extract(config, '$.storage_location') = ? ORDER BY name`,
        )
        .pluck()
        .all(before.name) as string[];
      if (redirecting.length) {
        const many = redirecting.length > 1;
        throw new Conflict(
          `storage location ${id} is where enabled redirect hook${many ? 's' : ''} ` +
            `${redirecting.join(', ')} send${many ? '' : 's'} files: every file redirected there ` +
            `would fail; change ${many ? 'their' : 'its'} config or disable ${many ? 'them' : 'it'} first`,
        );
      }
    }
    if (merged.name !== before.name) {
      // Redirect hooks name their location: a rename would leave them pointing nowhere.
      const naming = hooksNaming(db, before.name);
      if (naming.length) {
        throw new Conflict(
          `storage location ${id} is named by hook${naming.length > 1 ? 's' : ''} ` +
            `${naming.join(', ')}; change ${naming.length > 1 ? 'their' : 'its'} config first`,
        );
      }
    }
    db.prepare(
      `UPDATE storage_locations SET name = ?, type = ?, base_path = ?, enabled = ?, updated_at = ?
       WHERE id = ?`,
    ).run(
      merged.name,
      merged.type,
      merged.base_path,
      i.enabled === undefined ? before.enabled : i.enabled ? 1 : 0,
      now,
      id,
    );
    // Moved (or no longer a server one): an unfinished upload's partial lies under the old
    // folder, where it could never be placed into the new one (another file system) and no
    // sweep looks; it goes, and its station opens the upload anew, where the location is now.
    if (merged.base_path !== before.base_path || merged.type !== before.type) {
      dropUploadsInto(db, id);
    }
    // Redirect hooks name locations, so any station may use this one.
    notifyStations(db, stationsRunningInstruments(db));
  },

  remove({ db }, id) {
    requireRecord(db, this, id);
    const name = row(db, id).name;
    // Every record in the way is named at once, not one kind per attempt.
    const reasons: string[] = [];
    const instruments = db
      .prepare('SELECT name FROM instruments WHERE storage_location_id = ? ORDER BY name')
      .pluck()
      .all(id) as string[];
    if (instruments.length) {
      reasons.push(
        `is used by instrument${instruments.length > 1 ? 's' : ''} ${instruments.join(', ')}`,
      );
    }
    const hooks = hooksNaming(db, name);
    if (hooks.length) {
      reasons.push(`is named by hook${hooks.length > 1 ? 's' : ''} ${hooks.join(', ')}`);
    }
    const transfers = transfersIn(db, id);
    if (transfers) {
      reasons.push(
        `holds ${transfers} transfer record${transfers > 1 ? 's' : ''}; disable it instead`,
      );
    }
    if (reasons.length) throw new Conflict(`storage location ${id} ${reasons.join('; it ')}`);
    dropUploadsInto(db, id);
    db.prepare('DELETE FROM storage_locations WHERE id = ?').run(id);
  },
};
