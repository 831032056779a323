/**
 * Notebook entries pushed by a station (push kind notebook_entry), stored in the station's own
 * tables with their derived search rows. The station that made an entry is its only writer;
 * its version decides: a resend changes nothing, an older version is stale, the same version
 * with other content is refused.
 */
import { z } from 'zod';
import { ENTRY_KINDS } from '../../../../shared/notebookApi.js';
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';
import {
  entryByUuid,
  insertEntry,
  normalizeTags,
  prepareMetadata,
  replaceEntry,
  type EntryValues,
} from '../../notebook/store.js';
import type { PushRecord } from '../../sync/protocol.js';
import { AppError } from '../../util/errors.js';
import {
  RecordRefused,
  checkOwner,
  idOf,
  jsonObject,
  optionalId,
  parse,
  time,
  uuid,
  type StationRef,
} from './records.js';

export const notebookEntrySchema = z.object({
  uuid,
  kind: z.enum(ENTRY_KINDS),
  title: z.string().min(1).max(500),
  body: z.string().max(1_000_000),
  tags: z.array(z.string().max(100)).max(100),
  metadata: jsonObject.nullable(),
  owner_uuid: uuid,
  owner_username: z.string().optional(),
  template_uuid: uuid.nullable().optional(),
  usage_event_uuid: uuid.nullable().optional(),
  created_at: time,
  updated_at: time,
  version: z.number().int().min(1),
  deleted_at: time.nullable(),
  /** The version this one was made from (its updated_at); left out by stations before it. */
  previous_updated_at: time.nullable().optional(),
});

function templateId(db: Db, ref: string | null | undefined): number | null {
  if (ref === null || ref === undefined) return null;
  const row = entryByUuid(db, ref);
  if (!row)
    throw new RecordRefused('unknown_reference', `template_uuid: no entry ${ref} on the server`);
  return row.id;
}

export function upsertNotebookEntry(
  db: Db,
  station: StationRef,
  record: PushRecord,
): 'ok' | 'stale' {
  const p = parse(notebookEntrySchema, record);
  const existing = entryByUuid(db, p.uuid);
  checkOwner(existing, station.id, record);
  if (existing && p.version < existing.version) {
    // An older version sent again is stale. One changed after the version the server holds was
    // (each change bumps the version and updated_at together) is not: it comes from a data dir
    // restored from a backup and changed again, and is refused by name as below, not dropped.
    if (p.updated_at <= existing.updated_at) return 'stale';
    throw new RecordRefused(
      'conflict',
      `notebook_entry ${record.uuid}: the server holds version ${existing.version} of it, ` +
        `changed before this version ${p.version} was; was this station restored from a backup? ` +
        'The server keeps its version; staff settle the difference',
    );
  }
  if (
    existing &&
    p.version > existing.version &&
    p.previous_updated_at !== undefined &&
    p.previous_updated_at !== existing.updated_at
  ) {
    // A later version is taken only as made from the version the server holds: made from
    // another (or past one the server never got), it comes from a data dir restored from a
    // backup and changed again, whose numbers ran on past the server's. Taken, it replaced
    // what the server held, which was lost. Its number may skip some: versions this server
    // refused, which the station names it made from what came before them (entryChain.ts).
    throw new RecordRefused(
      'conflict',
      `notebook_entry ${record.uuid}: the server holds version ${existing.version} of it ` +
        `(changed ${existing.updated_at}), and this version ${p.version} was made from ` +
        `${p.previous_updated_at === null ? 'none' : `one changed ${p.previous_updated_at}`}; was this station ` +
        'restored from a backup? The server keeps its version; staff settle the difference',
    );
  }
  if (existing && p.version === existing.version) {
    // A resend carries what was stored (each change on the station bumps the version and
    // updated_at together). The same version saying otherwise comes from a data dir restored
    // from a backup that changed the entry again: refused by name, the server keeps its own.
    const pushed = {
      kind: p.kind,
      title: p.title,
      body: p.body,
      tags: JSON.stringify(normalizeTags(p.tags)),
      updated_at: p.updated_at,
      deleted_at: p.deleted_at,
    };
    // Tags stored under an older rule (normalizeTags kept two Unicode forms of one tag) are
    // read by today's, or the resend of what was stored would differ from it.
    const held = {
      ...existing,
      tags: JSON.stringify(normalizeTags(JSON.parse(existing.tags) as string[])),
    };
    const differ = (Object.keys(pushed) as (keyof typeof pushed)[]).filter(
      (field) => pushed[field] !== held[field],
    );
    if (differ.length) {
      throw new RecordRefused(
        'conflict',
        `notebook_entry ${record.uuid}: the server holds version ${existing.version} of it with ` +
          `other ${differ.join(', ')}; was this station restored from a backup? The server ` +
          'keeps its version; staff settle the difference',
      );
    }
    return 'ok';
  }
  if (p.usage_event_uuid && p.kind !== 'experiment') {
    throw new RecordRefused(
      'invalid',
      `notebook_entry ${record.uuid}: only experiments link to usage`,
    );
  }
  let metadata;
  try {
    metadata = prepareMetadata(p.metadata);
  } catch (error) {
    if (error instanceof AppError) {
      throw new RecordRefused('invalid', `notebook_entry ${record.uuid}: ${error.message}`);
    }
    throw error;
  }
  const ownerId = idOf(db, 'users', p.owner_uuid, 'owner_uuid');
  const usageId = optionalId(db, 'usage_events', p.usage_event_uuid, 'usage_event_uuid');
  if (usageId !== null) checkUsageLink(db, station, record, usageId, ownerId);
  const values: EntryValues = {
    uuid: p.uuid.toLowerCase(),
    kind: p.kind,
    title: p.title,
    body: p.body,
    tags: normalizeTags(p.tags),
    metadata,
    owner_id: ownerId,
    template_id: templateId(db, p.template_uuid),
    usage_event_id: usageId,
    created_at: p.created_at,
    updated_at: p.updated_at,
    version: p.version,
    deleted_at: p.deleted_at,
    station_id: station.id,
  };
  if (existing) replaceEntry(db, existing.id, values);
  else insertEntry(db, values);
  return 'ok';
}

/**
 * An experiment links only to a usage this station recorded (a station holds no other: an
 * entry may link to one it made before it was moved off that tool), made by its owner (as user
 * or operator) unless the owner is staff: as the station itself allows (notebook.attachUsage),
 * so no key, not even another station's on the same tool, can attach an entry to another
 * station's usage.
 */
function checkUsageLink(
  db: Db,
  station: StationRef,
  record: PushRecord,
  usageId: number,
  ownerId: number,
): void {
  const usage = cachedStatement(
    db,
    'SELECT station_id, user_id, operator_id FROM usage_events WHERE id = ?',
  ).get(usageId) as { station_id: number | null; user_id: number; operator_id: number };
  if (usage.station_id !== station.id) {
    throw new RecordRefused(
      'forbidden',
      `notebook_entry ${record.uuid}: usage_event_uuid: that usage was recorded by another station`,
    );
  }
  if (usage.user_id === ownerId || usage.operator_id === ownerId) return;
  const staff = cachedStatement(db, 'SELECT is_staff FROM users WHERE id = ?').pluck().get(ownerId);
  if (staff !== 1) {
    throw new RecordRefused(
      'forbidden',
      `notebook_entry ${record.uuid}: its owner neither used nor operated that usage`,
    );
  }
}
