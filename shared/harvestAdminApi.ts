/**
 * The server's harvest calls (`POST /rpc/<name>` with a login), part of the server-mode contract
 * of api.ts: the five management resources of spec 002 with their access grants and schedule
 * triggers (admins), and the file and transfer records (anyone, within their grants). The
 * argument schemas are the REST API's own (harvest/management.ts); the handlers run the same
 * resource functions, so a refusal names the same field, as `details.problems[].path`.
 */
import { z } from 'zod';
import {
  hookCreate,
  hookPatch,
  idSchema,
  instrumentCreate,
  instrumentPatch,
  MAX_PAGE_SIZE,
  scheduleCreate,
  schedulePatch,
  serviceAccountCreate,
  serviceAccountPatch,
  storageLocationCreate,
  storageLocationPatch,
  type Envelope,
  type FileOut,
  type GrantOut,
  type HookOut,
  type InstrumentOut,
  type ScheduleOut,
  type ServiceAccountOut,
  type StorageLocationOut,
  type TransferOut,
  type TriggerOut,
} from './harvest/management.js';

const paging = {
  page: z.number().int().min(1).optional(),
  size: z.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
};
const listArgs = z.object(paging).strict();
const byId = z.object({ id: idSchema }).strict();
const grantArgs = z.object({ instrument_id: idSchema, user_id: idSchema }).strict();

/**
 * An update from an editor carries the record as the editor loaded it (as a list or an update
 * answered it): the server refuses the save (409) when the record is not that any more, as a
 * save of a person, project or tool carries its updated_at. Left out by other callers.
 */
const loadedRecord = z.record(z.string(), z.unknown()).optional();

/** Each resource: list (paged), create, update (only the fields given), delete. */
export const harvestAdminSchemas = {
  'admin.instruments.list': listArgs,
  'admin.instruments.create': instrumentCreate,
  'admin.instruments.update': instrumentPatch.extend({ id: idSchema, loaded: loadedRecord }),
  'admin.instruments.delete': byId,
  'admin.storageLocations.list': listArgs,
  'admin.storageLocations.create': storageLocationCreate,
  'admin.storageLocations.update': storageLocationPatch.extend({
    id: idSchema,
    loaded: loadedRecord,
  }),
  'admin.storageLocations.delete': byId,
  'admin.serviceAccounts.list': listArgs,
  'admin.serviceAccounts.create': serviceAccountCreate,
  'admin.serviceAccounts.update': serviceAccountPatch.extend({
    id: idSchema,
    loaded: loadedRecord,
  }),
  'admin.serviceAccounts.delete': byId,
  'admin.schedules.list': listArgs,
  'admin.schedules.create': scheduleCreate,
  'admin.schedules.update': schedulePatch.extend({ id: idSchema, loaded: loadedRecord }),
  'admin.schedules.delete': byId,
  'admin.hooks.list': listArgs,
  'admin.hooks.create': hookCreate,
  'admin.hooks.update': hookPatch.extend({ id: idSchema, loaded: loadedRecord }),
  'admin.hooks.delete': byId,
  'admin.schedules.trigger': byId,
  'admin.access.list': z.object({ instrument_id: idSchema }).strict(),
  'admin.access.grant': grantArgs,
  'admin.access.revoke': grantArgs,
};

/** Any logged-in person: admins see every record, others those of instruments granted to them. */
export const harvestRecordSchemas = {
  'files.list': z
    .object({
      ...paging,
      instrument_id: idSchema.optional(),
      /** The file name, exactly. */
      filename: z.string().max(1000).optional(),
      /** An ARK; `ark:/...` is the same identifier. */
      persistent_id: z.string().max(512).optional(),
      /** A metadata_ key, dotted for nesting (file_info.mime_type). */
      metadata_key: z.string().max(500).optional(),
      metadata_value: z.string().max(2000).optional(),
    })
    .strict(),
  'files.get': byId,
  /** The instruments whose files this person may read (for the filter). */
  'files.instruments': z.object({}).strict(),
};

/** One resource's results: a page, the record as stored after a change, or done. */
type ResourceResults<P extends string, Out, Created = { item: Out }> = Record<
  `${P}.list`,
  Envelope<Out>
> &
  Record<`${P}.create`, Created> &
  Record<`${P}.update`, { item: Out }> &
  Record<`${P}.delete`, { ok: true }>;

export interface InstrumentName {
  id: number;
  name: string;
}

export type HarvestApiResults = ResourceResults<'admin.instruments', InstrumentOut> &
  ResourceResults<'admin.storageLocations', StorageLocationOut> &
  /** `key` is shown once: only its hash is stored. */
  ResourceResults<
    'admin.serviceAccounts',
    ServiceAccountOut,
    { item: ServiceAccountOut; key: string }
  > &
  ResourceResults<'admin.schedules', ScheduleOut> &
  ResourceResults<'admin.hooks', HookOut> & {
    'admin.schedules.trigger': TriggerOut;
    'admin.access.list': { grants: GrantOut[] };
    /** `created` false: the person had access already. */
    'admin.access.grant': { grant: GrantOut; created: boolean };
    'admin.access.revoke': { ok: true };
    'files.list': Envelope<FileOut>;
    /** The latest 1,000 transfers, oldest first, and how many the file has in all. */
    'files.get': { file: FileOut; transfers: TransferOut[]; transfers_total: number };
    'files.instruments': { instruments: InstrumentName[] };
  };

export const harvestApiSchemas = { ...harvestAdminSchemas, ...harvestRecordSchemas };

function accessOf<K extends string, A extends 'any' | 'admin'>(
  schemas: Record<K, unknown>,
  access: A,
): Record<K, A> {
  return Object.fromEntries(Object.keys(schemas).map((name) => [name, access])) as Record<K, A>;
}

/** Who may make each call; the carrier checks it before the handler runs. */
export const harvestApiAccess = {
  ...accessOf(harvestAdminSchemas, 'admin'),
  ...accessOf(harvestRecordSchemas, 'any'),
};
