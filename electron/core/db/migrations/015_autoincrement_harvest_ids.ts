import type { Migration } from '../migrations.js';
import { addAutoincrement } from './shared.js';

export const migration015: Migration = {
  version: 15,
  name: 'ids of deleted instruments, storage locations, service accounts, schedules and hooks are never given again',
  // The harvest API (spec 002) names these by id: a client holding the id of a deleted
  // schedule must get 404, not the next schedule made, which SQLite gave the highest id
  // freed. AUTOINCREMENT ids only grow; a table gets it by being made anew.
  sql: '',
  rebuildsTables: true,
  run: (db) => {
    for (const table of [
      'instruments',
      'storage_locations',
      'stations',
      'harvest_schedules',
      'harvest_hooks',
    ]) {
      addAutoincrement(db, table);
    }
  },
};
