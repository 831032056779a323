/** The config object each built-in hook kind (hookKinds.ts) takes. */
import { z } from 'zod';
import type { HookKind } from './hookKinds.js';

const GLOB_RULE = 'must be a glob or a list of globs (text), such as "*.tmp" or ["*.tmp", "*.bak"]';
// One message for either shape: a union's own ("Invalid input") names no rule.
// An empty list is refused where hooks are given (configCheck.ts), not here: a redirect stored
// with one before that rule redirects every file, as one without glob does, and goes on.
const globList = z.union([z.string(), z.array(z.string())], { error: GLOB_RULE });
const matchRules = {
  /** The file's path relative to its watched folder matches one of these. */
  glob: globList.optional(),
  min_size: z.number().int().min(0).optional(),
  max_size: z.number().int().min(0).optional(),
};

/**
 * What a sidecar's name adds to its file's name (or stem): no folder in it, or `/../x.json`
 * would read a file of another folder, out of the watched one too, into the metadata.
 */
const sidecarSuffix = z
  .string()
  .min(1)
  .refine((suffix) => !/[/\\\0]/.test(suffix), {
    message: 'must be the end of a name, without / or \\ (a sidecar is read beside its file)',
  });

/** The config object of each built-in hook kind. */
export const hookConfigSchemas = {
  // Without a rule a skip hook would keep every file of its instruments out for good (files a
  // skip hook skipped stay skipped): a hook to pause a harvest is `"enabled": false` on the
  // instrument instead.
  skip: z
    .object(matchRules)
    .strict()
    .refine(
      (c) =>
        (c.glob !== undefined && [c.glob].flat().length > 0) ||
        c.min_size !== undefined ||
        c.max_size !== undefined,
      { message: 'give glob, min_size or max_size: without one a skip hook skips every file' },
    ),
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
  sidecar_json: z.object({ suffixes: z.array(sidecarSuffix).min(1).optional() }).strict(),
  command: z
    .object({
      command: z.string().min(1, 'must name a program'),
      args: z.array(z.string()).optional(),
      timeout_seconds: z.number().positive().max(3600).optional(),
    })
    .strict(),
} satisfies Record<HookKind, z.ZodType>;

export type HookConfig<K extends HookKind> = z.infer<(typeof hookConfigSchemas)[K]>;
