/**
 * The built-in hooks, run here (the kinds that find metadata: metadataHooks.ts; `command`:
 * commandHook.ts). Pre-transfer hooks decide where a file goes (or that it does not);
 * post-transfer hooks add to its metadata_. Hooks run in priority order; a post-transfer hook
 * that fails is recorded in metadata_.hook_errors and the transfer stands.
 */
import { compileFilter, platformGlobOptions } from '../../../shared/harvest/glob.js';
import type { Db } from '../db/open.js';
import { getSetting } from '../station/settings.js';
import type { hookConfigSchemas as HookConfigSchemas } from '../../../shared/harvest/hookConfig.js';
import { hooksFor, type Hook, type HookConfig } from './config.js';
import { HarvestStopped, runCommand } from './commandHook.js';
import { fileInfo, sidecarJson, usageContext, type PostTransferContext } from './metadataHooks.js';
import type { FileRow } from './records.js';
import { METADATA_MAX_BYTES } from './metadataLimit.js';

export { METADATA_MAX_BYTES };

export interface PreTransferDecision {
  skip: { hook: string } | null;
  destinationTemplate: string | null;
  storageLocation: string | null;
  /** The redirect that chose storageLocation (a later one may change only the template). */
  storageLocationBy: string | null;
  /** Each redirect that matched, in the order they ran. */
  redirectedBy: string[];
}

/** Compiled hook globs by their patterns: a hook's rule is the same for every file it sees. */
const compiledGlobs = new Map<string, ReturnType<typeof compileFilter>>();

function globFilter(glob: string | string[]): ReturnType<typeof compileFilter> {
  const patterns = [glob].flat();
  const key = JSON.stringify(patterns);
  let filter = compiledGlobs.get(key);
  if (!filter) {
    filter = compileFilter(
      { include: patterns, exclude: [] },
      platformGlobOptions(process.platform),
    );
    if (compiledGlobs.size >= 256) compiledGlobs.clear();
    compiledGlobs.set(key, filter);
  }
  return filter;
}

function matches(
  config: {
    glob?: string | string[] | undefined;
    min_size?: number | undefined;
    max_size?: number | undefined;
  },
  file: FileRow,
): boolean {
  if (config.min_size !== undefined && file.size < config.min_size) return false;
  if (config.max_size !== undefined && file.size > config.max_size) return false;
  if (config.glob !== undefined) {
    const filter = globFilter(config.glob);
    if (!filter.ok || !filter.accepts(file.relative_path)) return false;
  }
  return true;
}

let schemas: typeof HookConfigSchemas | null = null;

/**
 * The hooks' config schemas, loaded with the first hook that runs: they load zod, which a
 * harvest without hooks never needs (its start is a good part of a one-shot harvest's).
 */
async function loadHookSchemas(): Promise<typeof HookConfigSchemas> {
  schemas ??= (await import('../../../shared/harvest/hookConfig.js')).hookConfigSchemas;
  return schemas;
}

/**
 * An instrument's pre-transfer hooks (config.ts hooksFor), with the schemas decidePreTransfer
 * needs loaded when there are any.
 */
export async function preTransferHooks(db: Db, instrumentId: number): Promise<Hook[]> {
  const hooks = hooksFor(db, instrumentId, 'pre_transfer');
  if (hooks.length) await loadHookSchemas();
  return hooks;
}

function loadedSchemas(): typeof HookConfigSchemas {
  if (!schemas) throw new Error('the hook config schemas are not loaded (preTransferHooks)');
  return schemas;
}

/**
 * A hook's config as its schema reads it (loadHookSchemas first). One stored before a rule was
 * added (or edited by hand) fails the hook naming the setting and the rule, as the import
 * would, rather than running as it stands: a post-transfer hook is listed in hook_errors, a
 * pre-transfer one (named) fails the transfer, which is retried once the hook is put right;
 * so a skip hook saved without a rule, before one was needed, skips nothing.
 */
function storedConfig<K extends 'skip' | 'redirect' | 'sidecar_json' | 'command'>(
  kind: K,
  config: unknown,
  hook?: string,
): HookConfig<K> {
  const parsed = loadedSchemas()[kind].safeParse(config);
  if (parsed.success) return parsed.data as HookConfig<K>;
  const [issue] = parsed.error.issues;
  const path = issue.path.map((key) => `.${String(key)}`).join('');
  const named = hook === undefined ? '' : `${JSON.stringify(hook)}: `;
  throw new Error(`${named}config${path}: ${issue.message}`);
}

/**
 * The first matching skip wins; later redirects override earlier ones field by field. `hooks`
 * come from preTransferHooks.
 */
export function decidePreTransfer(hooks: Hook[], file: FileRow): PreTransferDecision {
  const decision: PreTransferDecision = {
    skip: null,
    destinationTemplate: null,
    storageLocation: null,
    storageLocationBy: null,
    redirectedBy: [],
  };
  for (const hook of hooks) {
    if (hook.kind === 'skip') {
      const config = storedConfig('skip', hook.config, hook.name);
      if (matches(config, file)) return { ...decision, skip: { hook: hook.name } };
    } else if (hook.kind === 'redirect') {
      const config = storedConfig('redirect', hook.config, hook.name);
      if (matches(config, file)) {
        decision.destinationTemplate = config.destination_template ?? decision.destinationTemplate;
        if (config.storage_location) {
          decision.storageLocation = config.storage_location;
          decision.storageLocationBy = hook.name;
        }
        decision.redirectedBy.push(hook.name);
      }
    }
  }
  return decision;
}

/** The metadata_ keys that only the built-in hooks (and the station) write. */
const RESERVED_KEYS: readonly string[] = ['file_info', 'usage_context', 'hook_errors'];

interface HookError {
  hook: string;
  kind: string;
  error: string;
}

/** The hook an entry of metadata_.hook_errors names (null for an entry that is no object). */
const erredHook = (entry: unknown): unknown =>
  typeof entry === 'object' && entry !== null ? (entry as HookError).hook : null;

/**
 * Runs the post-transfer hooks in order and returns the file's new metadata_: what it had,
 * with each hook's output merged over it. `again`: only the hooks it picks run, once more,
 * after the file's transfer (a sidecar come late: lateSidecars.ts); the others' errors stay
 * listed, each in its hook's place.
 */
export async function runPostTransferHooks(
  hooks: Hook[],
  ctx: PostTransferContext,
  again?: (hook: Hook) => boolean,
): Promise<Record<string, unknown>> {
  const previous = JSON.parse(ctx.file.metadata_) as Record<string, unknown>;
  let metadata: Record<string, unknown> = { ...previous };
  delete metadata.hook_errors;
  const errors: HookError[] = [];
  const before = again && Array.isArray(previous.hook_errors) ? previous.hook_errors : [];
  for (const hook of hooks) {
    if (again && !again(hook)) {
      errors.push(...(before.filter((e) => erredHook(e) === hook.name) as HookError[]));
      continue;
    }
    try {
      let output: Record<string, unknown>;
      if (hook.kind === 'file_info') output = await fileInfo(ctx);
      else if (hook.kind === 'usage_context') output = usageContext(ctx);
      else if (hook.kind === 'sidecar_json') {
        await loadHookSchemas();
        output = await sidecarJson(ctx, storedConfig('sidecar_json', hook.config));
      } else if (hook.kind === 'command') {
        if (hook.from_server && !getSetting(ctx.db, 'harvest.serverCommandHooks')) {
          throw new Error(
            'command hooks from the server do not run on this station ' +
              '(station setting harvest.serverCommandHooks is off)',
          );
        }
        await loadHookSchemas();
        output = await runCommand(ctx, storedConfig('command', hook.config));
      } else continue;
      if (hook.kind === 'sidecar_json' || hook.kind === 'command') {
        // What the station itself finds out about the file is its own: a file beside it, or a
        // program, may add to the metadata but not pass off other values under those keys.
        const taken = RESERVED_KEYS.filter((key) => Object.hasOwn(output, key));
        if (taken.length) {
          output = Object.fromEntries(
            Object.entries(output).filter(([key]) => !RESERVED_KEYS.includes(key)),
          );
          errors.push({
            hook: hook.name,
            kind: hook.kind,
            error: `left out ${taken.join(', ')}: kept for the station's own hooks`,
          });
        }
      }
      const merged = { ...metadata, ...output };
      const bytes = Buffer.byteLength(JSON.stringify(merged), 'utf8');
      if (bytes > METADATA_MAX_BYTES) {
        errors.push({
          hook: hook.name,
          kind: hook.kind,
          error:
            `left out: its output would make the file's metadata ${count(bytes)} bytes, over ` +
            `the ${count(METADATA_MAX_BYTES)} (6 MiB) a record may hold`,
        });
        continue;
      }
      metadata = merged;
    } catch (error) {
      if (error instanceof HarvestStopped) throw error;
      errors.push({ hook: hook.name, kind: hook.kind, error: (error as Error).message });
    }
  }
  if (again) {
    // Errors of hooks no longer configured stay as they were recorded, after the others.
    const names = new Set<unknown>(hooks.map((h) => h.name));
    for (const e of before) if (!names.has(erredHook(e))) errors.push(e as HookError);
  }
  if (errors.length) metadata.hook_errors = errors;
  return metadata;
}

function count(bytes: number): string {
  return bytes.toLocaleString('en-US');
}
