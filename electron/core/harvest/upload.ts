/**
 * The station's half of a transfer into a `server` storage location: the file goes to the
 * server over HTTP (electron/core/sync/uploadProtocol.ts) and counts only when the server
 * answers that its own hash of what it stored matches the source's.
 *
 * The source is hashed first (in a copy worker), so the server knows the hash before any byte
 * arrives: it can answer `skipped` for content it already has, and a retry is matched to its
 * upload by content. The bytes are then read again, in 1 MiB steps, hashed again and streamed;
 * after a cut, the station asks the server how far it got, hashes the prefix it already sent
 * and sends the rest. The last chunk is held back until the whole source hashed as declared and
 * still has the size and mtime it was found stable with: a source that changed never reaches
 * the server's last byte, and goes back to the stability check.
 */
import { constants } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createXXHash128 } from '../util/hasher.js';
import type { Db } from '../db/open.js';
import { getSetting } from '../station/settings.js';
import { KEY_IN_USE, stationHeaders } from '../sync/identity.js';
import {
  DESTINATION_BLOCKED,
  DESTINATION_OF_ANOTHER_INSTRUMENT,
  UPLOAD_OFFSET_HEADER,
  UPLOADS_PATH,
  uploadStateSchema,
  type UploadRequest,
  type UploadState,
} from '../sync/uploadProtocol.js';
import { BadAnswerError, parseAnswer } from '../sync/parseAnswer.js';
import type { Logger } from '../util/log.js';
import type { StorageLocation } from './config.js';
import { sameBytes, type FileRow } from './records.js';
import { pause } from '../util/pause.js';
import { readFull } from '../util/readFull.js';

const CHUNK = 1024 * 1024;
/** Retries within one attempt (cuts, busy or unreachable server); then the attempt fails. */
const MAX_RETRIES = 6;
const RETRY_BASE_MS = 250;
const RETRY_CAP_MS = 4000;
/** No byte in either direction for this long ends a request. */
const IDLE_MS = 60_000;
/** The answer to the last bytes waits for the server to re-read and hash the whole file. */
const FINISH_IDLE_MS = 10 * 60_000;

export interface UploadDeps {
  db: Db;
  log: Logger;
  /**
   * XXH3-128 of a whole file, off the thread that serves the UI (CopyPool.hash); `started` is
   * called when the hash begins.
   */
  hash(path: string, started?: () => void): Promise<{ hash: string; bytes: number }>;
  progress(bytes: number): void;
  /**
   * Aborted when the harvest stops: the request under way is cut, no retry follows, and the
   * upload ends with the signal's reason (thrown). The server keeps what it got, for the next
   * attempt to resume.
   */
  signal?: AbortSignal;
}

export interface UploadJob {
  file: Pick<FileRow, 'uuid' | 'source_path' | 'size' | 'mtime_ms'>;
  location: Pick<StorageLocation, 'uuid' | 'name'>;
  /** Relative to the location's base path on the server (a checked, rendered template). */
  destination: string;
  /**
   * The hash the source must have (a file sent again for its transfer record, uploadAgain.ts):
   * another one is `source_changed`, before anything is sent.
   */
  expectedHash?: string;
}

export type UploadOutcome =
  /** completed or skipped, with the server's hash equal to the source's. */
  | { outcome: 'finished'; state: UploadState; sourceHash: string }
  | { outcome: 'source_changed'; detail: string }
  | { outcome: 'failed'; reason: string; retry: boolean };

/** An HTTP answer other than 2xx. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(`server answered ${status}: ${typeof body.detail === 'string' ? body.detail : ''}`);
  }
}

class SourceChanged extends Error {}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** One request; a Readable body is streamed with backpressure, never held whole. */
function request(
  url: URL,
  options: {
    method: string;
    /** stationHeaders: the key and who sends it. */
    station: Record<string, string>;
    headers?: Record<string, string>;
    body?: Buffer | Readable;
    idleMs: number;
    signal?: AbortSignal;
  },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const { signal } = options;
    if (signal?.aborted) {
      // A source stream never read would hold its file open (its close closes the handle).
      if (options.body instanceof Readable) options.body.destroy();
      reject(signal.reason as Error);
      return;
    }
    const transport = url.protocol === 'https:' ? https : http;
    const body = options.body;
    let settled = false;
    const settle = (error: Error | null, answer?: Answer): void => {
      if (settled) return;
      settled = true;
      if (body instanceof Readable && !body.readableEnded) body.destroy();
      if (error) reject(error);
      else resolve(answer as Answer);
    };
    const req = transport.request(url, {
      method: options.method,
      headers: { ...options.station, accept: 'application/json', ...options.headers },
    });
    req.setTimeout(options.idleMs, () =>
      req.destroy(new Error(`the server sent nothing for ${options.idleMs / 1000} s`)),
    );
    req.on('error', (error) => settle(error));
    const abort = (): void => {
      req.destroy();
      settle(signal?.reason as Error);
    };
    signal?.addEventListener('abort', abort, { once: true });
    req.once('close', () => signal?.removeEventListener('abort', abort));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let length = 0;
      res.on('data', (chunk: Buffer) => {
        length += chunk.length;
        if (length <= 1024 * 1024) chunks.push(chunk);
      });
      res.on('error', (error) => settle(error));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = {};
        try {
          parsed = text ? JSON.parse(text) : {};
        } catch {
          parsed = { detail: text.slice(0, 500) };
        }
        const answer = {
          status: res.statusCode ?? 0,
          body: (parsed ?? {}) as Record<string, unknown>,
        };
        // The server may answer before it read the whole body (a refusal): stop sending.
        if (!req.writableFinished) req.destroy();
        settle(null, answer);
      });
    });
    if (body instanceof Readable) {
      pipeline(body, req).catch((error: Error) => {
        req.destroy();
        settle(error);
      });
    } else {
      req.end(body);
    }
  });
}

class UploadClient {
  constructor(
    private readonly server: string,
    private readonly station: Record<string, string>,
    private readonly signal?: AbortSignal,
  ) {}

  private url(path: string): URL {
    return new URL(path.slice(1), this.server);
  }

  private async call(
    method: string,
    path: string,
    options: { headers?: Record<string, string>; body?: Buffer | Readable; idleMs?: number } = {},
  ): Promise<Answer> {
    const answer = await request(this.url(path), {
      method,
      station: this.station,
      idleMs: options.idleMs ?? IDLE_MS,
      ...(this.signal ? { signal: this.signal } : {}),
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.body ? { body: options.body } : {}),
    });
    if (answer.status < 200 || answer.status >= 300)
      throw new HttpError(answer.status, answer.body);
    return answer;
  }

  async open(body: UploadRequest): Promise<UploadState> {
    const answer = await this.call('POST', UPLOADS_PATH, {
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify(body)),
    });
    return parseAnswer(uploadStateSchema, answer.body, 'upload answer', 'nothing of it used');
  }

  async append(id: string, offset: number, length: number, body: Readable): Promise<UploadState> {
    const answer = await this.call('PATCH', `${UPLOADS_PATH}/${encodeURIComponent(id)}`, {
      headers: {
        'content-type': 'application/octet-stream',
        'content-length': String(length),
        [UPLOAD_OFFSET_HEADER]: String(offset),
      },
      body,
      idleMs: FINISH_IDLE_MS,
    });
    return parseAnswer(uploadStateSchema, answer.body, 'upload answer', 'nothing of it used');
  }

  async drop(id: string): Promise<void> {
    await this.call('DELETE', `${UPLOADS_PATH}/${encodeURIComponent(id)}`);
  }
}

/**
 * The source from `offset` to its end, as a stream, hashing all of it (the prefix too, before
 * the first byte is sent). Stops with SourceChanged, before giving its last chunk, when the
 * whole does not hash to `expected` or the file is no longer as found stable; `changed` keeps
 * that reason, whatever error the request itself ends with.
 */
async function sourceFrom(
  job: UploadJob,
  offset: number,
  expected: string,
  progress: (bytes: number) => void,
  signal?: AbortSignal,
): Promise<{ stream: Readable; changed(): SourceChanged | null }> {
  const { file } = job;
  const handle = await open(file.source_path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  let changed: SourceChanged | null = null;
  const fail = (detail: string): never => {
    changed = new SourceChanged(detail);
    throw changed;
  };
  try {
    const hasher = (await createXXHash128()).init();
    const read = async (position: number, end = file.size): Promise<Buffer> => {
      const buffer = Buffer.allocUnsafe(Math.min(CHUNK, end - position));
      const n = await readFull(handle, buffer, position);
      if (n < buffer.length) fail('the file shrank while it was uploaded');
      hasher.update(buffer);
      return buffer;
    };
    const checkWhole = async (): Promise<void> => {
      const hash = hasher.digest('hex');
      const now = await stat(file.source_path);
      if (!sameBytes(file, now) || hash !== expected) {
        fail('the file changed while it was uploaded');
      }
    };
    // A stop ends the prefix's hash too (gigabytes of it, for a big file resumed late).
    for (let position = 0; position < offset; position += CHUNK) {
      signal?.throwIfAborted();
      await read(position, offset);
    }
    if (offset === file.size) await checkWhole();
    async function* chunks(): AsyncGenerator<Buffer> {
      for (let position = offset; position < file.size;) {
        const buffer = await read(position);
        position += buffer.length;
        if (position === file.size) await checkWhole();
        yield buffer;
        progress(position);
      }
    }
    const stream = Readable.from(chunks(), { objectMode: false, highWaterMark: CHUNK });
    // Closed with the stream, however it ends (a generator never started has no finally).
    stream.once('close', () => void handle.close().catch(() => undefined));
    return { stream, changed: () => changed };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

function retryDelay(retry: number): number {
  return Math.min(RETRY_BASE_MS * 2 ** (retry - 1), RETRY_CAP_MS);
}

function detailOf(error: HttpError): string {
  return typeof error.body.detail === 'string' ? error.body.detail : `HTTP ${error.status}`;
}

/** The server's finished answer, accepted only when its hash is the source's. */
function accepted(state: UploadState, sourceHash: string): UploadOutcome {
  if (state.checksum_verified && state.dest_checksum === sourceHash) {
    return { outcome: 'finished', state, sourceHash };
  }
  return {
    outcome: 'failed',
    reason:
      `checksum mismatch: the source hashed ${sourceHash}, the server's file ` +
      `${state.dest_checksum ?? '(no hash)'}`,
    retry: true,
  };
}

/**
 * Uploads one file. Never throws but when the harvest stops (deps.signal, its reason): every
 * other end is an outcome for transfer.ts to record (failed ones with `retry` false when only a
 * change of configuration can help).
 */
export async function uploadVerified(deps: UploadDeps, job: UploadJob): Promise<UploadOutcome> {
  const server = getSetting(deps.db, 'sync.server');
  const key = getSetting(deps.db, 'sync.key');
  if (server === null || key === null) {
    return {
      outcome: 'failed',
      reason:
        `storage location ${job.location.name} is on the server, but this station has no server ` +
        'and key set (labstation station --server URL --key KEY, or the station settings)',
      retry: true,
    };
  }
  const { file } = job;
  let sourceHash: string;
  try {
    // Under way once its hash starts (it may wait for a copy worker first): the Data tab shows
    // it as a transfer, not as queued, for the minutes a big file's hash takes.
    sourceHash = (await deps.hash(file.source_path, () => deps.progress(0))).hash;
    const now = await stat(file.source_path);
    if (!sameBytes(file, now)) {
      return { outcome: 'source_changed', detail: 'the file changed while it was hashed' };
    }
    if (job.expectedHash !== undefined && sourceHash !== job.expectedHash.toLowerCase()) {
      return {
        outcome: 'source_changed',
        detail: `it hashes ${sourceHash} now, not ${job.expectedHash} as transferred`,
      };
    }
  } catch (error) {
    // The copy workers end with the harvest: that is no failure of the source.
    deps.signal?.throwIfAborted();
    return {
      outcome: 'failed',
      reason: `cannot read the source: ${(error as Error).message}`,
      retry: true,
    };
  }

  const { signal } = deps;
  const client = new UploadClient(server, stationHeaders(deps.db, key), signal);
  const body: UploadRequest = {
    file_uuid: file.uuid,
    storage_location_uuid: job.location.uuid,
    storage_location: job.location.name,
    destination_path: job.destination,
    size: file.size,
    xxhash: sourceHash,
  };
  let retries = 0;
  let uploadId: string | null = null;
  for (;;) {
    signal?.throwIfAborted();
    let source: Awaited<ReturnType<typeof sourceFrom>> | null = null;
    try {
      const opened = await client.open(body);
      uploadId = opened.upload_id;
      if (opened.status !== 'receiving') return accepted(opened, sourceHash);
      try {
        source = await sourceFrom(
          job,
          opened.offset,
          sourceHash,
          (bytes) => deps.progress(bytes),
          signal,
        );
      } catch (error) {
        if (error instanceof SourceChanged) throw error;
        signal?.throwIfAborted();
        const reason = `cannot read the source: ${(error as Error).message}`;
        return { outcome: 'failed', reason, retry: true };
      }
      const answer = await client.append(
        opened.upload_id,
        opened.offset,
        file.size - opened.offset,
        source.stream,
      );
      if (answer.status !== 'receiving') return accepted(answer, sourceHash);
      throw new Error(`the server holds ${answer.offset} of ${answer.size} bytes after the body`);
    } catch (error) {
      // Stopped: nothing more is sent or asked (the server keeps the partial upload), and the
      // source is closed.
      if (signal?.aborted) {
        source?.stream.destroy();
        signal.throwIfAborted();
      }
      const changed = error instanceof SourceChanged ? error : (source?.changed() ?? null);
      if (changed) {
        if (uploadId) await client.drop(uploadId).catch(() => undefined);
        return { outcome: 'source_changed', detail: changed.message };
      }
      // Not a passing fault: the server (or something in its place, a proxy's page) answers
      // what this station cannot read. The attempt fails at once and is tried again after its
      // backoff; a finished upload answers its result again then.
      if (error instanceof BadAnswerError) {
        return { outcome: 'failed', reason: error.message, retry: true };
      }
      if (error instanceof HttpError) {
        if (error.status === 422) {
          return { outcome: 'failed', reason: detailOf(error), retry: true };
        }
        if (error.status === 401 || error.body.code === KEY_IN_USE) {
          return {
            outcome: 'failed',
            reason: `the server does not accept this station's key: ${detailOf(error)}`,
            retry: true,
          };
        }
        if (
          error.body.code === DESTINATION_OF_ANOTHER_INSTRUMENT ||
          error.body.code === DESTINATION_BLOCKED
        ) {
          return {
            outcome: 'failed',
            reason: `the server refused the upload: ${detailOf(error)}`,
            retry: true,
          };
        }
        // A refused POST (unknown or unsuitable location, bad destination) needs a config
        // change. 404 and 409 on a PATCH mean: ask the server where the upload stands.
        const refusedOpen = uploadId === null && error.status >= 400 && error.status < 500;
        if (refusedOpen && error.status !== 408 && error.status !== 429) {
          return {
            outcome: 'failed',
            reason: `the server refused the upload: ${detailOf(error)}`,
            retry: false,
          };
        }
      }
      retries += 1;
      const why = error instanceof HttpError ? error.message : describeNetworkError(error);
      if (retries > MAX_RETRIES) {
        return {
          outcome: 'failed',
          reason: `upload to ${server} failed ${retries} times, last: ${why}`,
          retry: true,
        };
      }
      deps.log.info({ file: file.source_path, retry: retries, why }, 'harvest: upload retried');
      uploadId = null;
      await pause(retryDelay(retries), signal);
    }
  }
}

function describeNetworkError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code ? `${code}: ${message}` : message;
}
