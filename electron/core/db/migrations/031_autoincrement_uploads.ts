import type { Migration } from '../migrations.js';
import { addAutoincrement } from './shared.js';

export const migration031: Migration = {
  version: 31,
  name: "ids of deleted uploads are never given again, so a refused station's request at work cannot reach another upload",
  // Server side. A station refused (a new key, disabled, deleted) loses its unfinished
  // uploads' records at once (dropUploadsOfRefused) while a request of it may still be at
  // work on one; SQLite gave the highest id freed to the next upload, another station's. The
  // receiver names uploads by uuid (uploads/receive.ts), and ids now only grow as well.
  sql: '',
  rebuildsTables: true,
  run: (db) => addAutoincrement(db, 'harvest_uploads'),
};
