/**
 * The built-in hook kinds of the harvest. Shared so the station runs them, the server checks
 * them (harvest API, facility bundle) and the admin page offers them from one list. The config
 * object each one takes is in hookConfig.ts, apart: its schemas load zod, which a harvest
 * without hooks never needs.
 */

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
  return (HOOK_KINDS as readonly string[]).includes(kind);
}

export function triggerOf(kind: HookKind): HookTrigger {
  return (PRE_TRANSFER_KINDS as readonly string[]).includes(kind)
    ? 'pre_transfer'
    : 'post_transfer';
}
