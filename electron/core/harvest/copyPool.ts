/**
 * A fixed number of copy workers (worker threads), each running one job at a time: a job is one
 * file, or one batch of small files (copyBatch.ts), which takes one worker like one file does.
 * One more worker, the service worker, answers the quick requests at once: placing a verified
 * batch (a few links and unlinks), the engine's stability checks, the walk's stat calls and the
 * listing of folders the watcher reports.
 * Where the worker script is not built (tests that import the TypeScript sources), jobs run on
 * the calling thread instead, with the same code.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { errorCode } from '../util/errors.js';
import { copyVerified, hashFile, type CopyJob, type CopyResult } from './copy.js';
import {
  copySmallFiles,
  listFiles,
  placeFiles,
  probeFiles,
  statFiles,
  type FileStat,
  type ListedFile,
  type PlaceJob,
  type Probe,
  type PlaceResult,
  type SmallCopyJob,
  type SmallCopyResult,
} from './copyBatch.js';

export type WorkerRequest =
  | { id: number; type: 'copy'; job: CopyJob }
  | { id: number; type: 'hash'; path: string }
  | { id: number; type: 'copySmall'; jobs: SmallCopyJob[]; ahead: number }
  | { id: number; type: 'place'; jobs: PlaceJob[] }
  | { id: number; type: 'probe'; paths: string[] }
  | { id: number; type: 'stat'; paths: string[] }
  | { id: number; type: 'list'; dirs: string[] };

export type WorkerMessage =
  | { id: number; type: 'progress'; bytes: number }
  | { id: number; type: 'done'; result: unknown }
  | { id: number; type: 'error'; message: string; code: string | null };

/** Errors keep their errno code (ENOSPC, EACCES, ...) across the thread boundary. */
export class CopyError extends Error {
  constructor(
    message: string,
    readonly code: string | null,
  ) {
    super(message);
  }
}

/** A copy under way reports its bytes at least this often (and every 16 MiB). */
export const PROGRESS_EVERY_MS = 250;

/** Runs one request; shared by the worker and the inline fallback. */
export async function runCopyMessage(
  request: WorkerRequest,
  send: (message: WorkerMessage) => void,
): Promise<void> {
  let last = 0;
  let lastAt = performance.now();
  const whole = request.type === 'copy' ? request.job.size : -1;
  const progress = (bytes: number): void => {
    // A message per 16 MiB is plenty for a progress bar on a fast disk, and none for small
    // files; on a slow share, one at least every PROGRESS_EVERY_MS: the Data tab's rate, taken
    // over its last 5 s, moved in steps of 16 MiB would be a multiple of 3.4 MB/s. The last
    // always: the copy is written, and the tab says its copy is being checked (read back).
    const now = performance.now();
    if (
      bytes - last >= 16 * 1024 * 1024 ||
      (bytes > last && (now - lastAt >= PROGRESS_EVERY_MS || bytes === whole))
    ) {
      last = bytes;
      lastAt = now;
      send({ id: request.id, type: 'progress', bytes });
    }
  };
  // A copy says when it starts: until then it waits for a copy slot, and its rate and time
  // left must not count the wait.
  // A hash (an upload's source, read before its first byte goes) says when it starts too.
  if (request.type === 'copy' || request.type === 'hash') {
    send({ id: request.id, type: 'progress', bytes: 0 });
  }
  try {
    const result =
      request.type === 'copy'
        ? await copyVerified(request.job, progress)
        : request.type === 'copySmall'
          ? await copySmallFiles(request.jobs, request.ahead)
          : request.type === 'place'
            ? placeFiles(request.jobs)
            : request.type === 'probe'
              ? probeFiles(request.paths)
              : request.type === 'stat'
                ? await statFiles(request.paths)
                : request.type === 'list'
                  ? listFiles(request.dirs)
                  : await hashFile(request.path);
    send({ id: request.id, type: 'done', result });
  } catch (error) {
    send({
      id: request.id,
      type: 'error',
      message: (error as Error).message,
      code: errorCode(error),
    });
  }
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  progress?: ((bytes: number) => void) | undefined;
}

const WORKER_URL = new URL('./copyWorker.js', import.meta.url);

export class CopyPool {
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly waiting: { request: WorkerRequest; pending: Pending }[] = [];
  private readonly pending = new Map<number, Pending>();
  private readonly busy = new Map<Worker, number>();
  /**
   * The worker that answers placements, stability checks and the walk's stat calls, and never
   * copies: a copy worker reads synchronously (copy.ts), so a request sent beside its copy would
   * wait for the copy to yield, and for ever behind a read from a share that hangs.
   */
  private service: Worker | null = null;
  /** Requests the service worker has not answered yet. */
  private readonly servicePending = new Set<number>();
  private nextId = 1;
  private closed = false;
  readonly inline: boolean;

  constructor(readonly size: number) {
    this.inline = !existsSync(fileURLToPath(WORKER_URL));
  }

  /**
   * Starts the service worker and every copy worker now, side by side: a worker takes about
   * 0.1 s to start here, and started on demand the first check and the first copy each
   * waited for one.
   */
  warm(): void {
    if (this.inline || this.closed) return;
    if (!this.service) this.spawnService();
    for (let worker = this.spawn(); worker; worker = this.spawn()) this.idle.push(worker);
  }

  copy(job: CopyJob, progress?: (bytes: number) => void): Promise<CopyResult> {
    return this.submit({ id: this.nextId++, type: 'copy', job }, progress) as Promise<CopyResult>;
  }

  /** Hashes a file; `started` is called when a worker begins it (it may wait for one). */
  hash(path: string, started?: () => void): Promise<{ hash: string; bytes: number }> {
    const progress = started && ((bytes: number) => bytes === 0 && started());
    return this.submit({ id: this.nextId++, type: 'hash', path }, progress) as Promise<{
      hash: string;
      bytes: number;
    }>;
  }

  /**
   * Copies and verifies a batch of small files as one job (one worker, one slot); `ahead`
   * sources read ahead of the copy (copyBatch.ts copySmallFiles).
   */
  copySmall(jobs: SmallCopyJob[], ahead = 0): Promise<SmallCopyResult[]> {
    return this.submit({ id: this.nextId++, type: 'copySmall', jobs, ahead }) as Promise<
      SmallCopyResult[]
    >;
  }

  /**
   * Places verified copies (copyBatch.ts placeFiles). Sent to the service worker at once, not
   * queued behind the copies: it is a few file-system calls per file, and the copies it waits
   * for are done.
   */
  place(jobs: PlaceJob[]): Promise<PlaceResult[]> {
    return this.sendBeside({ id: this.nextId++, type: 'place', jobs }) as Promise<PlaceResult[]>;
  }

  /** The engine's stability check of many files (copyBatch.ts probeFiles), sent at once. */
  probe(paths: string[]): Promise<Probe[]> {
    return this.sendBeside({ id: this.nextId++, type: 'probe', paths }) as Promise<Probe[]>;
  }

  /** The walk's lstat of many files (copyBatch.ts statFiles), sent at once. */
  stat(paths: string[]): Promise<FileStat[]> {
    return this.sendBeside({ id: this.nextId++, type: 'stat', paths }) as Promise<FileStat[]>;
  }

  /** The regular files of folders the watcher reported (copyBatch.ts listFiles), sent at once. */
  list(dirs: string[]): Promise<ListedFile[][]> {
    return this.sendBeside({ id: this.nextId++, type: 'list', dirs }) as Promise<ListedFile[][]>;
  }

  private sendBeside(request: WorkerRequest): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the copy pool is closed'));
    if (this.inline) return this.submit(request);
    const worker = this.service ?? this.spawnService();
    return new Promise((resolve, reject) => {
      this.pending.set(request.id, { resolve, reject });
      this.servicePending.add(request.id);
      worker.postMessage(request);
    });
  }

  private spawnService(): Worker {
    const worker = new Worker(WORKER_URL, { workerData: { service: true } });
    this.service = worker;
    worker.on('message', (message: WorkerMessage) => {
      const pending = this.pending.get(message.id);
      if (!pending || message.type === 'progress') return;
      this.settle(message, pending);
      this.pending.delete(message.id);
      this.servicePending.delete(message.id);
    });
    // A service worker that dies fails what it was asked; the next request starts another.
    const lost = (error: Error): void => {
      if (this.service !== worker) return;
      this.service = null;
      for (const id of this.servicePending) {
        this.pending.get(id)?.reject(new CopyError(`copy worker failed: ${error.message}`, null));
        this.pending.delete(id);
      }
      this.servicePending.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`exited with code ${code}`)));
    return worker;
  }

  private submit(request: WorkerRequest, progress?: (bytes: number) => void): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the copy pool is closed'));
    return new Promise((resolve, reject) => {
      const pending: Pending = { resolve, reject, progress };
      if (this.inline) {
        void runCopyMessage(request, (message) => this.settle(message, pending));
        return;
      }
      this.waiting.push({ request, pending });
      this.dispatch();
    });
  }

  private settle(message: WorkerMessage, pending: Pending): void {
    if (message.type === 'progress') pending.progress?.(message.bytes);
    else if (message.type === 'done') pending.resolve(message.result);
    else pending.reject(new CopyError(message.message, message.code));
  }

  private dispatch(): void {
    while (this.waiting.length) {
      const worker = this.idle.pop() ?? this.spawn();
      if (!worker) return;
      const next = this.waiting.shift() as { request: WorkerRequest; pending: Pending };
      this.pending.set(next.request.id, next.pending);
      this.busy.set(worker, next.request.id);
      worker.postMessage(next.request);
    }
  }

  private spawn(): Worker | null {
    if (this.workers.length >= this.size) return null;
    const worker = new Worker(WORKER_URL);
    this.workers.push(worker);
    worker.on('message', (message: WorkerMessage) => {
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.settle(message, pending);
      if (message.type !== 'progress') {
        this.pending.delete(message.id);
        this.busy.delete(worker);
        this.idle.push(worker);
        this.dispatch();
      }
    });
    // A worker that dies takes its job with it: fail that job, replace the worker.
    const lost = (error: Error): void => {
      const id = this.busy.get(worker);
      this.busy.delete(worker);
      this.workers.splice(this.workers.indexOf(worker), 1);
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
      if (id !== undefined) {
        this.pending.get(id)?.reject(new CopyError(`copy worker failed: ${error.message}`, null));
        this.pending.delete(id);
      }
      if (!this.closed) this.dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => {
      if (this.workers.includes(worker)) lost(new Error(`exited with code ${code}`));
    });
    return worker;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const { pending } of this.waiting.splice(0)) {
      pending.reject(new Error('the copy pool is closed'));
    }
    const workers = this.workers.splice(0);
    if (this.service) workers.push(this.service);
    this.service = null;
    this.servicePending.clear();
    this.idle.length = 0;
    await Promise.all(workers.map((w) => w.terminate()));
    for (const pending of this.pending.values())
      pending.reject(new Error('the copy pool is closed'));
    this.pending.clear();
  }
}
