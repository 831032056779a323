/**
 * The shapes of the harvest management API (spec 002): what each of the five resources takes
 * on create and update, what it answers, and the records, runs and grants around them. One
 * copy, used by the REST routes (electron/core/server/harvest/), the server's rpc contract
 * (harvestAdminApi.ts) and the admin pages that check a form before sending it. The rules that
 * need the database (references, unique names, paths, globs, cron) stay with the resources.
 */
import { z } from 'zod';
import { HOOK_KINDS } from './hookKinds.js';
import { TRANSFER_STATUSES } from './states.js';

export const idSchema = z.number().int().positive();
export const nameSchema = z.string().trim().min(1, 'must not be empty').max(200);

// --- Storage locations ---------------------------------------------------------------------

export const STORAGE_TYPES = ['local', 'server'] as const;

export const storageLocationFields = {
  name: nameSchema,
  type: z.enum(STORAGE_TYPES, {
    message: 'must be "local" (a folder on the station) or "server" (upload to this server)',
  }),
  base_path: z.string().min(1, 'must not be empty').max(1000),
  enabled: z.boolean(),
};
export const storageLocationCreate = z
  .object({ ...storageLocationFields, enabled: storageLocationFields.enabled.optional() })
  .strict();
export const storageLocationPatch = z.object(storageLocationFields).partial().strict();

export const storageLocationOut = z
  .object({
    id: z.number().int(),
    name: z.string(),
    type: z.enum(STORAGE_TYPES),
    base_path: z.string(),
    enabled: z.boolean(),
  })
  .meta({ id: 'StorageLocation' });
export type StorageLocationOut = z.infer<typeof storageLocationOut>;

// --- Service accounts ----------------------------------------------------------------------

export const serviceAccountFields = {
  name: nameSchema,
  description: z.string().max(2000),
  enabled: z.boolean(),
};
export const serviceAccountCreate = z
  .object({
    name: serviceAccountFields.name,
    description: serviceAccountFields.description.optional(),
    enabled: serviceAccountFields.enabled.optional(),
  })
  .strict();
export const serviceAccountPatch = z.object(serviceAccountFields).partial().strict();

export const serviceAccountOut = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    enabled: z.boolean(),
    last_seen_at: z.string().nullable(),
  })
  .meta({ id: 'ServiceAccount' });
export type ServiceAccountOut = z.infer<typeof serviceAccountOut>;

// --- Instruments ---------------------------------------------------------------------------

export const watchFolderIn = z
  .object({
    path: z.string().min(1, 'must not be empty').max(1000),
    include: z.array(z.string().max(500)).max(100).optional(),
    exclude: z.array(z.string().max(500)).max(100).optional(),
  })
  .strict();

export const instrumentFields = {
  name: nameSchema,
  description: z.string().max(2000),
  tool_id: idSchema,
  service_account_id: idSchema.nullable(),
  watch: z.array(watchFolderIn).max(50),
  stability_seconds: z.number().min(0).max(86400),
  storage_location_id: idSchema.nullable(),
  destination_template: z.string().min(1, 'must not be empty').max(1000),
  enabled: z.boolean(),
};
export const instrumentCreate = z
  .object({
    name: instrumentFields.name,
    description: instrumentFields.description.optional(),
    tool_id: instrumentFields.tool_id,
    service_account_id: instrumentFields.service_account_id.optional(),
    watch: instrumentFields.watch.optional(),
    stability_seconds: instrumentFields.stability_seconds.optional(),
    storage_location_id: instrumentFields.storage_location_id.optional(),
    destination_template: instrumentFields.destination_template.optional(),
    enabled: instrumentFields.enabled.optional(),
  })
  .strict();
export const instrumentPatch = z.object(instrumentFields).partial().strict();
export type InstrumentInput = Partial<z.infer<z.ZodObject<typeof instrumentFields>>>;

export const instrumentOut = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    tool_id: z.number().int(),
    service_account_id: z.number().int().nullable(),
    watch: z.array(
      z.object({ path: z.string(), include: z.array(z.string()), exclude: z.array(z.string()) }),
    ),
    stability_seconds: z.number(),
    storage_location_id: z.number().int().nullable(),
    destination_template: z.string(),
    enabled: z.boolean(),
    last_harvested_at: z.string().nullable(),
  })
  .meta({ id: 'Instrument' });
export type InstrumentOut = z.infer<typeof instrumentOut>;

// --- Schedules, their deployments and runs --------------------------------------------------

export const RUN_STATES = ['queued', 'running', 'completed', 'failed'] as const;

export const runOut = z
  .object({
    id: z.number().int(),
    trigger: z.enum(['manual', 'schedule']),
    state: z.enum(RUN_STATES),
    requested_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    files_completed: z.number().int(),
    files_skipped: z.number().int(),
    files_failed: z.number().int(),
    error: z.string(),
  })
  .meta({ id: 'HarvestRun' });
export type RunOut = z.infer<typeof runOut>;

export const triggerOut = z
  .object({
    run_id: z.number().int(),
    state: z.literal('queued'),
    station: z.object({ id: z.number().int(), name: z.string(), online: z.boolean() }),
    /** True when the station is not in touch now: the run waits until it is. */
    queued_offline: z.boolean(),
    detail: z.string(),
  })
  .meta({ id: 'TriggerAnswer' });
export type TriggerOut = z.infer<typeof triggerOut>;

export const scheduleFields = {
  instrument_id: idSchema,
  cron: z.string().trim().min(1, 'must not be empty').max(200),
  timezone: z.string().min(1).max(100).nullable(),
  enabled: z.boolean(),
};
export const scheduleCreate = z
  .object({
    instrument_id: scheduleFields.instrument_id,
    cron: scheduleFields.cron,
    timezone: scheduleFields.timezone.optional(),
    enabled: scheduleFields.enabled.optional(),
  })
  .strict();
export const schedulePatch = z.object(scheduleFields).partial().strict();
export type ScheduleInput = Partial<z.infer<z.ZodObject<typeof scheduleFields>>>;

export const DEPLOYMENT_STATES = ['pending', 'deployed', 'failed', 'removed'] as const;

export const deploymentOut = z
  .object({
    station: z.object({ id: z.number().int(), name: z.string() }).nullable(),
    state: z.enum(DEPLOYMENT_STATES),
    deployed_at: z.string().nullable(),
    last_run_at: z.string().nullable(),
    next_run_at: z.string().nullable(),
    /** Why the deployment failed or cannot happen yet; empty otherwise. */
    error: z.string(),
    /** The latest runs, newest first (at most 10). */
    runs: z.array(runOut),
  })
  .meta({ id: 'Deployment' });

export const scheduleOut = z
  .object({
    id: z.number().int(),
    instrument_id: z.number().int(),
    cron: z.string(),
    timezone: z.string().nullable(),
    enabled: z.boolean(),
    deployment: deploymentOut,
  })
  .meta({ id: 'Schedule' });
export type ScheduleOut = z.infer<typeof scheduleOut>;

// --- Hooks ---------------------------------------------------------------------------------

export const hookTriggers = z.enum(['pre_transfer', 'post_transfer']);

export const hookFields = {
  name: nameSchema,
  trigger: hookTriggers,
  // Checked against HOOK_KINDS with the config (server/harvest/hooks.ts), in words of its own;
  // the docs list them.
  kind: z
    .string()
    .min(1)
    .meta({ enum: [...HOOK_KINDS] }),
  config: z.record(z.string(), z.unknown()),
  priority: z.number().int().min(-1_000_000).max(1_000_000),
  instrument_id: idSchema.nullable(),
  enabled: z.boolean(),
};
export const hookCreate = z
  .object({
    name: hookFields.name,
    trigger: hookFields.trigger,
    kind: hookFields.kind,
    config: hookFields.config.optional(),
    priority: hookFields.priority.optional(),
    instrument_id: hookFields.instrument_id.optional(),
    enabled: hookFields.enabled.optional(),
  })
  .strict();
export const hookPatch = z.object(hookFields).partial().strict();
export type HookInput = Partial<z.infer<z.ZodObject<typeof hookFields>>>;

export const hookOut = z
  .object({
    id: z.number().int(),
    name: z.string(),
    trigger: hookTriggers,
    kind: z.string(),
    config: z.record(z.string(), z.unknown()),
    priority: z.number().int(),
    instrument_id: z.number().int().nullable(),
    enabled: z.boolean(),
  })
  .meta({ id: 'Hook' });
export type HookOut = z.infer<typeof hookOut>;

// --- Access grants -------------------------------------------------------------------------

export const grantOut = z.object({ user_id: z.number().int(), granted_at: z.string() });
export type GrantOut = z.infer<typeof grantOut>;
export const grantIn = z.object({ user_id: idSchema }).strict();

// --- File and transfer records -------------------------------------------------------------

// The states and statuses themselves are in states.ts, which needs no zod: `labstation files`
// checks its --state against them without loading the schemas (about 0.1 s of its start).
export { FILE_STATES, TRANSFER_STATUSES, type FileState, type TransferStatus } from './states.js';

export const fileOut = z
  .object({
    id: z.number().int(),
    uuid: z.string(),
    instrument_id: z.number().int(),
    persistent_id: z.string(),
    persistent_id_type: z.string(),
    source_path: z.string(),
    filename: z.string(),
    size: z.number().int(),
    xxhash: z.string().nullable(),
    hash_algorithm: z.string(),
    first_discovered_at: z.string(),
    metadata_: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'FileRecord' });
export type FileOut = z.infer<typeof fileOut>;

export const transferOut = z
  .object({
    id: z.number().int(),
    uuid: z.string(),
    file_id: z.number().int(),
    status: z.enum(TRANSFER_STATUSES),
    storage_location_id: z.number().int().nullable(),
    destination_path: z.string().nullable(),
    bytes_transferred: z.number().int(),
    dest_checksum: z.string().nullable(),
    checksum_verified: z.boolean(),
    started_at: z.string(),
    completed_at: z.string().nullable(),
    error: z.string(),
    note: z.string(),
  })
  .meta({ id: 'TransferRecord' });
export type TransferOut = z.infer<typeof transferOut>;

/** One page of a list, as the REST API answers it. */
export interface Envelope<T> {
  items: T[];
  total: number;
  page: number;
  size: number;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;
