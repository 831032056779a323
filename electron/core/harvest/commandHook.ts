/**
 * The `command` post-transfer hook: a program run with the copy's path, whose JSON output is
 * added to the file's metadata. Its processes take turns (COMMAND_HOOKS_AT_ONCE), each in a
 * group of its own that a timeout ends whole, and a harvest that stops ends them all
 * (endRunningHooks).
 */
import { spawn } from 'node:child_process';
import { isPlainObject } from '../../../shared/questions/json.js';
import type { HookConfig } from './config.js';
import { nestedTooDeep, OUTPUT_MAX_DEPTH, type PostTransferContext } from './metadataHooks.js';

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
export async function runCommand(
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
    /**
     * A failure's reason, with what the program wrote to stderr (its own word on why, often
     * the only one), whichever way it failed.
     */
    const said = (): string => stderr.trim().slice(0, 500);
    const failed = (why: string): Error =>
      new Error(said() ? `${why}; it wrote to stderr: ${said()}` : why);
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
        reject(stopped ? new HarvestStopped(ended) : failed(ended));
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
      if (ended) return reject(stopped ? new HarvestStopped(ended) : failed(ended));
      if (code !== 0) {
        const how = code === null ? `ended by ${signal}` : `exited with ${code}`;
        return reject(new Error(`${config.command} ${how}${said() ? `: ${said()}` : ''}`));
      }
      const text = Buffer.concat(stdout, stdoutBytes).toString('utf8').trim();
      if (!text) return resolve({});
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return reject(failed(`printed no JSON object: ${text.slice(0, 200)}`));
      }
      if (!isPlainObject(value)) reject(failed('printed JSON that is not an object'));
      else if (nestedTooDeep(value)) {
        reject(failed(`printed JSON nested more than ${OUTPUT_MAX_DEPTH} levels deep`));
      } else resolve(value);
    };
  });
}
