/**
 * The post-transfer hooks that find a file's metadata in this process: file_info,
 * usage_context and sidecar_json (the `command` kind runs a program: commandHook.ts). Also how
 * deep what a hook gives may nest, a sidecar's or a command's.
 */
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { sniffMime } from '../../../shared/harvest/mime.js';
import { MAX_DEPTH, nestedDeeperThan } from '../../../shared/metadata/json.js';
import { isPlainObject } from '../../../shared/questions/json.js';
import type { Db } from '../db/open.js';
import type { HookConfig } from './config.js';
import { sameBytes, type FileRow } from './records.js';
import { storedUsageContext, usageContextOf } from './usageContext.js';

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
    return sameBytes(ctx.file, stats) && stats.birthtimeMs > 0
      ? new Date(stats.birthtimeMs).toISOString()
      : null;
  } catch {
    return null;
  }
}

/** Whether the file's source is there with other bytes than its record's (a new version). */
async function writtenAgain(ctx: PostTransferContext): Promise<boolean> {
  const stats = await lstat(ctx.sourcePath).catch(() => null);
  return stats !== null && !sameBytes(ctx.file, stats);
}

export async function fileInfo(ctx: PostTransferContext): Promise<Record<string, unknown>> {
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

export function usageContext(ctx: PostTransferContext): Record<string, unknown> {
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
export const OUTPUT_MAX_DEPTH = MAX_DEPTH;

/** Whether `value` holds objects or lists nested more than OUTPUT_MAX_DEPTH levels deep. */
export function nestedTooDeep(value: unknown): boolean {
  return nestedDeeperThan(value, OUTPUT_MAX_DEPTH);
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
    return sidecarText(buffer.subarray(0, length));
  } finally {
    await handle.close();
  }
}

/**
 * A sidecar's bytes as text: UTF-8, or UTF-16 where a byte-order mark says so (what Windows
 * PowerShell 5.1's `ConvertTo-Json | Out-File` writes on an instrument PC); the mark dropped.
 */
function sidecarText(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe)
    return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff)
    return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

export async function sidecarJson(
  ctx: PostTransferContext,
  config: HookConfig<'sidecar_json'>,
): Promise<Record<string, unknown>> {
  const dir = dirname(ctx.sourcePath);
  const name = basename(ctx.sourcePath);
  const stem = name.slice(0, name.length - extname(name).length);
  const candidates = (config.suffixes ?? ['.json']).flatMap((s) => [`${name}${s}`, `${stem}${s}`]);
  for (const candidate of [...new Set(candidates)]) {
    if (candidate === name) continue;
    // On a file system that ignores case (Windows, macOS), `data.json` is `data.JSON` itself:
    // a file is never its own sidecar.
    if (candidate.toLowerCase() === name.toLowerCase()) {
      const [self, found] = await Promise.all(
        [ctx.sourcePath, join(dir, candidate)].map((p) => lstat(p).catch(() => null)),
      );
      if (self && found && self.dev === found.dev && self.ino === found.ino) continue;
    }
    const text = await readSidecar(join(dir, candidate), candidate);
    if (text === null) continue;
    // Read while the source is still the version recorded: once it was written again (during
    // these hooks, or before a recovery ran them), what is beside it describes that version,
    // whose own record reads it (lateSidecars.ts merge does the same).
    if (await writtenAgain(ctx)) {
      throw new Error(
        `${name} was written again after its copy: ${candidate} is left to the record of that version`,
      );
    }
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
