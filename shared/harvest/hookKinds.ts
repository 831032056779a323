/**
 * The built-in hook kinds of the harvest and the config object each one takes. Shared so the
 * station runs them, the server checks them (harvest API, facility bundle) and the admin page
 * offers them from one list.
 */
import { z } from 'zod';

export const PRE_TRANSFER_KINDS = ['skip', 'redirect'] as const;
export const POST_TRANSFER_KINDS = [
  'file_info',
  'usage_context',
  'sidecar_json',
  'command',
] as const;
export const HOOK_KINDS = [...PRE_TRANSFER_KINDS, ...POST_TRANSFER_KINDS] as const;
export type HookKind = (typeof HOOK_KINDS)[number];
export type HookTrigger = 'pre_transfer' | 'post_transfer';

const globList = z.union([z.string(), z.array(z.string())]);
const matchRules = {
  /** The file's path relative to its watched folder matches one of these. */
  glob: globList.optional(),
  min_size: z.number().int().min(0).optional(),
  max_size: z.number().int().min(0).optional(),
};

/** The config object of each built-in hook kind. */
export const hookConfigSchemas = {
  skip: z.object(matchRules).strict(),
  redirect: z
    .object({
      ...matchRules,
      destination_template: z.string().optional(),
      storage_location: z.string().optional(),
    })
    .strict()
    .refine((c) => c.destination_template !== undefined || c.storage_location !== undefined, {
      message: 'give destination_template, storage_location or both',
    }),
  file_info: z.object({}).strict(),
  usage_context: z.object({}).strict(),
  sidecar_json: z.object({ suffixes: z.array(z.string().min(1)).min(1).optional() }).strict(),
  command: z
    .object({
      command: z.string().min(1, 'must name a program'),
      args: z.array(z.string()).optional(),
      timeout_seconds: z.number().positive().max(3600).optional(),
    })
    .strict(),
} satisfies Record<HookKind, z.ZodType>;

export type HookConfig<K extends HookKind> = z.infer<(typeof hookConfigSchemas)[K]>;

/** What each kind does and a config to start from, for the people who set hooks up. */
export const HOOK_KIND_GUIDE: Record<HookKind, { does: string; example: object }> = {
  skip: {
    does: 'Leaves matching files where they are (no transfer).',
    example: { glob: ['*.tmp'], max_size: 0 },
  },
  redirect: {
    does: 'Sends matching files elsewhere: another storage location and/or template.',
    example: { glob: '*.raw', storage_location: 'archive' },
  },
  file_info: { does: 'Adds size, times and MIME type to the metadata.', example: {} },
  usage_context: {
    does: 'Adds the user, project and usage event active when the file appeared.',
    example: {},
  },
  sidecar_json: {
    does: 'Merges a JSON file beside the data file into its metadata.',
    example: { suffixes: ['.json'] },
  },
  command: {
    does:
      'Runs a program on the station with the stored file ({path}); its JSON output becomes ' +
      'metadata. Stations run it only with their setting harvest.serverCommandHooks on.',
    example: { command: '/opt/extract', args: ['{path}'], timeout_seconds: 60 },
  },
};

export function isHookKind(kind: string): kind is HookKind {
  return Object.hasOwn(hookConfigSchemas, kind);
}

export function triggerOf(kind: HookKind): HookTrigger {
  return (PRE_TRANSFER_KINDS as readonly string[]).includes(kind)
    ? 'pre_transfer'
    : 'post_transfer';
}
