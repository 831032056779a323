/**
 * The built-in hooks. Pre-transfer hooks decide where a file goes (or that it does not);
 * post-transfer hooks add to its metadata_. Hooks run in priority order; a post-transfer hook
 * that fails is recorded in metadata_.hook_errors and the transfer stands.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { compileFilter, platformGlobOptions } from '../../../shared/harvest/glob.js';
import { sniffMime } from '../../../shared/harvest/mime.js';
import { MAX_DEPTH } from '../../../shared/metadata/json.js';
import { isPlainObject } from '../../../shared/questions/json.js';
import type { Db } from '../db/open.js';
import { getSetting } from '../station/settings.js';
import type { hookConfigSchemas as HookConfigSchemas } from '../../../shared/harvest/hookConfig.js';
import { hooksFor, type Hook, type HookConfig } from './config.js';
import type { FileRow } from './records.js';
import { storedUsageContext, usageContextOf } from './usageContext.js';

export interface PreTransferDecision {
  skip: { hook: string } | null;
  destinationTemplate: string | null;
  storageLocation: string | null;
  redirectedBy: string | null;
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
 * A post-transfer hook's config as its schema reads it (loadHookSchemas first). One stored
 * before a rule was added (or edited by hand) fails the hook naming the setting and the rule,
 * as the import would, rather than running as it stands.
 */
function storedConfig<K extends 'sidecar_json' | 'command'>(
  kind: K,
  config: unknown,
): HookConfig<K> {
  const parsed = loadedSchemas()[kind].safeParse(config);
  if (parsed.success) return parsed.data as HookConfig<K>;
  const [issue] = parsed.error.issues;
  const path = issue.path.map((key) => `.${String(key)}`).join('');
  throw new Error(`config${path}: ${issue.message}`);
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
    redirectedBy: null,
  };
  for (const hook of hooks) {
    if (hook.kind === 'skip') {
      const config = loadedSchemas().skip.parse(hook.config);
      if (matches(config, file)) return { ...decision, skip: { hook: hook.name } };
    } else if (hook.kind === 'redirect') {
      const config = loadedSchemas().redirect.parse(hook.config);
      if (matches(config, file)) {
        decision.destinationTemplate = config.destination_template ?? decision.destinationTemplate;
        decision.storageLocation = config.storage_location ?? decision.storageLocation;
        decision.redirectedBy = hook.name;
      }
    }
  }
  return decision;
}

export interface PostTransferContext {
  db: Db;
  file: FileRow;
  sourcePath: string;
  destinationPath: string;
  instrument: string;
}

/**
 * When the instrument made the file: its source's birth time, as modified_at is its source's
 * mtime (the copy's own birth time is only when it was copied, after the file was last
 * written). Null where the file system keeps none, or where the source is gone or is no longer
 * the version copied (a later version at its path has a time of its own).
 */
async function sourceCreatedAt(ctx: PostTransferContext): Promise<string | null> {
  try {
    const stats = await lstat(ctx.sourcePath);
    const same = stats.size === ctx.file.size && stats.mtimeMs === ctx.file.mtime_ms;
    return same && stats.birthtimeMs > 0 ? new Date(stats.birthtimeMs).toISOString() : null;
  } catch {
    return null;
  }
}

async function fileInfo(ctx: PostTransferContext): Promise<Record<string, unknown>> {
  const handle = await open(ctx.destinationPath, 'r');
  try {
    const head = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    const stats = await handle.stat();
    return {
      file_info: {
        size: stats.size,
        mime_type: sniffMime(head.subarray(0, bytesRead)),
        extension: extname(ctx.file.filename).toLowerCase(),
        modified_at: new Date(ctx.file.mtime_ms).toISOString(),
        created_at: await sourceCreatedAt(ctx),
        first_discovered_at: ctx.file.first_discovered_at,
      },
    };
  } finally {
    await handle.close();
  }
}

function usageContext(ctx: PostTransferContext): Record<string, unknown> {
  const { usage_event_id: id, usage_elsewhere: elsewhere } = ctx.file;
  if (id !== null) return { usage_context: usageContextOf(ctx.db, id) };
  // A file of an instrument's history first seen on another station: its usage, which this
  // station does not hold, as the server described it.
  return { usage_context: storedUsageContext(elsewhere) };
}

/** The most a sidecar may hold, as a command hook may print. */
const SIDECAR_MAX = 4 * 1024 * 1024;

/**
 * How deep what a sidecar or a command gives may nest: as deep as a notebook's metadata may
 * (MAX_DEPTH). SQLite reads JSON up to 1,000 levels only, and a file's record, its metadata_
 * in it, could not be stored (nor sent) past that.
 */
const OUTPUT_MAX_DEPTH = MAX_DEPTH;

/** Whether `value` holds objects or lists nested more than OUTPUT_MAX_DEPTH levels deep. */
function nestedTooDeep(value: unknown): boolean {
  // Without recursion: JSON.parse reads deeper than a recursive walk could.
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > OUTPUT_MAX_DEPTH) return true;
    for (const item of Object.values(next.value)) stack.push({ value: item, depth });
  }
  return false;
}

/**
 * A sidecar's text, or null when there is none. Only a file of the watched folder itself is
 * read: not a link (the harvest follows none), a folder or a FIFO (whose open would wait for a
 * writer and hold the harvest), nor more than SIDECAR_MAX. A byte-order mark, as Windows
 * programs write, is dropped.
 */
async function readSidecar(path: string, name: string): Promise<string | null> {
  let info;
  try {
    info = await lstat(path);
  } catch (error) {
    // No such file; nor can there be one by a name too long for the file system (a sidecar
    // name is the file's own with a suffix: the next candidate, the stem's, may fit).
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENAMETOOLONG') return null;
    throw new Error(`${name} cannot be read: ${(error as Error).message}`);
  }
  if (info.isSymbolicLink()) throw new Error(`${name} is a link; links are not followed`);
  if (!info.isFile()) throw new Error(`${name} is not a file`);
  // No following and no waiting, should the name have been swapped since the look above.
  const flags = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
  const handle = await open(path, flags).catch((error: unknown) => {
    throw new Error(`${name} cannot be read: ${(error as Error).message}`);
  });
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) throw new Error(`${name} is not a file`);
    if (opened.size > SIDECAR_MAX) {
      throw new Error(`${name} holds more than ${SIDECAR_MAX / (1024 * 1024)} MiB`);
    }
    // As big as the file, and one byte more to see it grew; up to one past the limit.
    let buffer = Buffer.allocUnsafe(opened.size + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > SIDECAR_MAX) {
          throw new Error(`${name} holds more than ${SIDECAR_MAX / (1024 * 1024)} MiB`);
        }
        const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, SIDECAR_MAX + 1));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    const text = buffer.toString('utf8', 0, length);
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  } finally {
    await handle.close();
  }
}

async function sidecarJson(
  ctx: PostTransferContext,
  config: HookConfig<'sidecar_json'>,
): Promise<Record<string, unknown>> {
  const dir = dirname(ctx.sourcePath);
  const name = basename(ctx.sourcePath);
  const stem = name.slice(0, name.length - extname(name).length);
  const candidates = (config.suffixes ?? ['.json']).flatMap((s) => [`${name}${s}`, `${stem}${s}`]);
  for (const candidate of [...new Set(candidates)]) {
    if (candidate === name) continue;
    const text = await readSidecar(join(dir, candidate), candidate);
    if (text === null) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new Error(`${candidate} is not JSON: ${(error as Error).message}`);
    }
    if (!isPlainObject(value)) throw new Error(`${candidate} holds no JSON object`);
    if (nestedTooDeep(value)) {
      throw new Error(`${candidate} is nested more than ${OUTPUT_MAX_DEPTH} levels deep`);
    }
    return value;
  }
  return {};
}

/**
 * How long the output of a command that has exited is still read: what it printed is in the
 * pipe already, and a child it left running may hold the pipe open for ever.
 */
const EXIT_GRACE_MS = 200;
/** What a command hook may print, in bytes (UTF-8, not letters): more ends it, as a hook gone wrong. */
const COMMAND_OUTPUT_MAX = 4 * 1024 * 1024;
/** A command's own process group (POSIX): a timeout ends what it started too. */
const OWN_GROUP = process.platform !== 'win32';
/**
 * The process groups of command hooks running now. In a group of its own a hook no longer
 * gets the terminal's Ctrl+C with the harvest; they are ended when this process exits.
 */
const runningGroups = new Set<number>();
let endGroupsAtExit = false;
/** How to end each command hook running now (endRunningHooks). */
const runningHooks = new Set<(why: string, byStop: boolean) => void>();
/** Set by endRunningHooks until acceptHooks: a harvest stops, and starts no command hook. */
let refusing: string | null = null;

/**
 * Ends every command hook running now, with what it started, and refuses new ones until
 * acceptHooks: the harvest stops, and must not wait out their timeouts. The hooks of a file
 * end with a HarvestStopped error, not a hook error: its copy is recorded at the next start,
 * when its hooks run again.
 */
export function endRunningHooks(why: string): void {
  refusing = why;
  // Those waiting for a turn are refused now, not when the hooks ended here free their turns
  // (once their processes have gone): a harvest started again meanwhile would run them.
  for (const waiting of commandsWaiting.splice(0)) waiting.refuse(why);
  for (const end of runningHooks) end(why, true);
}

/** A harvest starts: command hooks run again. */
export function acceptHooks(): void {
  refusing = null;
}

/** A file's hooks were cut short by the harvest stopping: not a hook error, nothing to record. */
export class HarvestStopped extends Error {}

/**
 * Command hooks running at once, at most: the others wait their turn, their timeout running
 * from their own start. A burst of files (hundreds in flight in batches), or a hook that hangs
 * until its timeout, started a process per file at once.
 */
export const COMMAND_HOOKS_AT_ONCE = 8;
let commandsRunning = 0;
/** Hooks waiting for a turn: started in order as turns free up, refused when the harvest stops. */
const commandsWaiting: { start: () => void; refuse: (why: string) => void }[] = [];

function commandSlot(): Promise<void> {
  if (commandsRunning < COMMAND_HOOKS_AT_ONCE) {
    commandsRunning += 1;
    return Promise.resolve();
  }
  return new Promise((resolve, reject) =>
    commandsWaiting.push({
      start: () => {
        commandsRunning += 1;
        resolve();
      },
      refuse: (why) => reject(new HarvestStopped(why)),
    }),
  );
}

function freeCommandSlot(): void {
  commandsRunning -= 1;
  while (commandsRunning < COMMAND_HOOKS_AT_ONCE && commandsWaiting.length) {
    commandsWaiting.shift()?.start();
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/**
 * Runs a command hook once one of COMMAND_HOOKS_AT_ONCE is free. A harvest that stops
 * meanwhile refuses it (endRunningHooks), and it never starts.
 */
async function runCommand(
  ctx: PostTransferContext,
  config: HookConfig<'command'>,
): Promise<Record<string, unknown>> {
  if (refusing !== null) throw new HarvestStopped(refusing);
  await commandSlot();
  try {
    return await runCommandNow(ctx, config);
  } finally {
    freeCommandSlot();
  }
}

/**
 * Runs a command hook with the destination path and reads its JSON from stdout. The program
 * runs in a process group of its own, and a timeout kills the whole group: a script's own
 * children (a `sleep`, a converter it started) do not outlive it, nor hold its output open.
 */
function runCommandNow(
  ctx: PostTransferContext,
  config: HookConfig<'command'>,
): Promise<Record<string, unknown>> {
  const args = config.args ?? [];
  const withPath = args.some((a) => a.includes('{path}'))
    ? // A function, not a string: a $ in the path is no replacement pattern ("$&", "$`").
      args.map((a) => a.replaceAll('{path}', () => ctx.destinationPath))
    : [...args, ctx.destinationPath];
  const timeout = (config.timeout_seconds ?? 30) * 1000;
  if (refusing !== null) return Promise.reject(new HarvestStopped(refusing));
  return new Promise((resolve, reject) => {
    const child = spawn(config.command, withPath, {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: OWN_GROUP,
      windowsHide: true,
      env: {
        ...process.env,
        LABSTATION_SOURCE_PATH: ctx.sourcePath,
        LABSTATION_DESTINATION_PATH: ctx.destinationPath,
        LABSTATION_ARK: ctx.file.persistent_id,
        LABSTATION_INSTRUMENT: ctx.instrument,
      },
    });
    const group = OWN_GROUP ? child.pid : undefined;
    if (group !== undefined) {
      runningGroups.add(group);
      if (!endGroupsAtExit) {
        endGroupsAtExit = true;
        process.on('exit', () => runningGroups.forEach(killGroup));
      }
    }
    // Raw bytes, decoded once at the end: the limit counts bytes (a letter such as é is two),
    // and a letter split across two chunks is decoded whole.
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    let ended: string | null = null;
    let stopped = false;
    /** The command has exited: what it left running in the background is not ours to end. */
    let exited = false;
    /** Its output is still taken (until the grace after its exit ends). */
    let reading = true;
    const end = (why: string, byStop = false): void => {
      if (ended === null) stopped = byStop;
      ended ??= why;
      if (exited) return;
      if (group !== undefined) killGroup(group);
      else child.kill('SIGKILL');
    };
    runningHooks.add(end);
    const timer = setTimeout(() => end(`timed out after ${timeout / 1000} s`), timeout);
    child.stdout.on('data', (chunk: Buffer) => {
      if (!reading || ended !== null) return;
      stdoutBytes += chunk.length;
      if (stdoutBytes > COMMAND_OUTPUT_MAX) {
        end(`printed more than ${COMMAND_OUTPUT_MAX / (1024 * 1024)} MiB`);
        return;
      }
      stdout.push(chunk);
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => {
      if (reading && stderr.length < 4096) stderr += text;
    });
    child.on('error', (error) => {
      runningHooks.delete(end);
      clearTimeout(timer);
      reject(new Error(`cannot run ${config.command}: ${error.message}`));
    });
    let settled = false;
    let grace: NodeJS.Timeout | undefined;
    child.on('exit', (code, signal) => {
      runningHooks.delete(end);
      if (group !== undefined) runningGroups.delete(group);
      if (ended) {
        // Ended by us: what still holds its output (a child that left its group, or any child
        // on Windows) must not keep the transfer waiting for 'close'.
        clearTimeout(timer);
        child.stdout.destroy();
        child.stderr.destroy();
        reject(stopped ? new HarvestStopped(ended) : new Error(ended));
        return;
      }
      // The command is done. A child it left running in the background (a viewer, a daemon)
      // holds its output open, and 'close' would wait for that child, up to the timeout: what
      // the command printed is taken once its last output has been read, and the child is
      // left to run. Its output is still read, and dropped (closing the pipe would end it
      // with SIGPIPE at its next write), without holding this process open.
      exited = true;
      clearTimeout(timer);
      grace = setTimeout(() => {
        reading = false;
        for (const stream of [child.stdout, child.stderr]) {
          (stream as unknown as { unref?: () => void }).unref?.();
        }
        finish(code, signal);
      }, EXIT_GRACE_MS);
    });
    child.on('close', (code, signal) => finish(code, signal));
    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(grace);
      clearTimeout(timer);
      if (ended) return reject(stopped ? new HarvestStopped(ended) : new Error(ended));
      if (code !== 0) {
        const how = code === null ? `ended by ${signal}` : `exited with ${code}`;
        const said = stderr.trim().slice(0, 500);
        return reject(new Error(`${config.command} ${how}${said ? `: ${said}` : ''}`));
      }
      const text = Buffer.concat(stdout, stdoutBytes).toString('utf8').trim();
      if (!text) return resolve({});
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return reject(new Error(`printed no JSON object: ${text.slice(0, 200)}`));
      }
      if (!isPlainObject(value)) reject(new Error('printed JSON that is not an object'));
      else if (nestedTooDeep(value)) {
        reject(new Error(`printed JSON nested more than ${OUTPUT_MAX_DEPTH} levels deep`));
      } else resolve(value);
    };
  });
}

/** The metadata_ keys that only the built-in hooks (and the station) write. */
const RESERVED_KEYS: readonly string[] = ['file_info', 'usage_context', 'hook_errors'];

/**
 * Runs the post-transfer hooks in order and returns the file's new metadata_: what it had,
 * with each hook's output merged over it.
 */
export async function runPostTransferHooks(
  hooks: Hook[],
  ctx: PostTransferContext,
): Promise<Record<string, unknown>> {
  const previous = JSON.parse(ctx.file.metadata_) as Record<string, unknown>;
  let metadata: Record<string, unknown> = { ...previous };
  delete metadata.hook_errors;
  const errors: { hook: string; kind: string; error: string }[] = [];
  for (const hook of hooks) {
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
      metadata = { ...metadata, ...output };
    } catch (error) {
      if (error instanceof HarvestStopped) throw error;
      errors.push({ hook: hook.name, kind: hook.kind, error: (error as Error).message });
    }
  }
  if (errors.length) metadata.hook_errors = errors;
  return metadata;
}
