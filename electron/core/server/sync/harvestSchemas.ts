/**
 * The zod schemas of the harvest records a station pushes (spec 002 fields for files and
 * transfers): one place for what each record kind must hold before anything is stored.
 */
import { z } from 'zod';
import { FILE_STATES, TRANSFER_STATUSES } from '../../../../shared/harvest/management.js';
import { jsonObject, time, uuid } from './records.js';

export const fileSchema = z.object({
  uuid,
  instrument_uuid: uuid,
  instrument: z.string().min(1),
  tool_uuid: uuid.nullable().optional(),
  persistent_id: z.string().min(1).max(512),
  /** Spec 002: the identifier's type, "ark" (persistent_id is checked as one). */
  persistent_id_type: z.literal('ark'),
  watch_path: z.string().optional(),
  source_path: z.string(),
  relative_path: z.string(),
  filename: z.string(),
  size: z.number().int().min(0),
  mtime_ms: z.number(),
  xxhash: z.string().nullable(),
  hash_algorithm: z.string().min(1),
  first_discovered_at: time,
  usage_event_uuid: uuid.nullable().optional(),
  metadata_: jsonObject,
  state: z.enum(FILE_STATES),
  updated_at: time,
});

export const transferSchema = z.object({
  uuid,
  file_uuid: uuid,
  status: z.enum(TRANSFER_STATUSES),
  storage_location: z.string().nullable().optional(),
  storage_location_uuid: uuid.nullable().optional(),
  destination_path: z.string().nullable(),
  bytes_transferred: z.number().int().min(0),
  dest_checksum: z.string().nullable(),
  checksum_verified: z.boolean(),
  started_at: time,
  completed_at: time.nullable(),
  error: z.string(),
  note: z.string(),
});

export const deploymentSchema = z.object({
  uuid,
  version: z.number().int().min(1),
  state: z.enum(['deployed', 'failed', 'removed']),
  deployed_at: time.nullable(),
  next_run_at: time.nullable(),
  last_run_at: time.nullable(),
  error: z.string(),
  /** When the station made the report (harvest/runs.ts NEXT_REPORTED_AT); older stations send none. */
  reported_at: time.optional(),
});

export const runSchema = z.object({
  uuid,
  schedule_uuid: uuid.nullable(),
  instrument_uuid: uuid,
  trigger: z.enum(['manual', 'schedule']),
  state: z.enum(['queued', 'running', 'completed', 'failed']),
  requested_at: time,
  started_at: time.nullable(),
  finished_at: time.nullable(),
  files_completed: z.number().int().min(0),
  files_skipped: z.number().int().min(0),
  files_failed: z.number().int().min(0),
  error: z.string(),
  reported_at: time.optional(),
});
