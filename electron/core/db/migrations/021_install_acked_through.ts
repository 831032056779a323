import type { Migration } from '../migrations.js';
import { addAutoincrement } from './shared.js';

export const migration021: Migration = {
  version: 21,
  name: 'a data dir restored from a backup is told apart by the outbox ids the server took',
  // Station side: outbox ids only grow (AUTOINCREMENT), also once every row has left, so the
  // highest the server acknowledged from this data dir is one it made. Server side: that id
  // (install_acked_through, for the data dir that holds the key); a data dir whose outbox
  // has made no id that high is older than what it pushed: restored from a backup
  // (sync/restored.ts).
  sql: 'ALTER TABLE stations ADD COLUMN install_acked_through INTEGER;',
  rebuildsTables: true,
  run: (db) => addAutoincrement(db, 'outbox'),
};
