/**
 * A fixed number of copy workers (worker threads), each running one job at a time. Where the
 * worker script is not built (tests that import the TypeScript sources), jobs run on the calling
 * thread instead, with the same code.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { copyVerified, hashFile, type CopyJob, type CopyResult } from './copy.js';

export type WorkerRequest =
  { id: number; type: 'copy'; job: CopyJob } | { id: number; type: 'hash'; path: string };

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

/** Runs one request; shared by the worker and the inline fallback. */
export async function runCopyMessage(
  request: WorkerRequest,
  send: (message: WorkerMessage) => void,
): Promise<void> {
  let last = 0;
  const progress = (bytes: number): void => {
    // A message per 16 MiB is plenty for a progress bar, and none for small files.
    if (bytes - last >= 16 * 1024 * 1024) {
      last = bytes;
      send({ id: request.id, type: 'progress', bytes });
    }
  };
  try {
    const result =
      request.type === 'copy'
        ? await copyVerified(request.job, progress)
        : await hashFile(request.path);
    send({ id: request.id, type: 'done', result });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    send({
      id: request.id,
      type: 'error',
      message: (error as Error).message,
      code: typeof code === 'string' ? code : null,
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
  private nextId = 1;
  private closed = false;
  readonly inline: boolean;

  constructor(readonly size: number) {
    this.inline = !existsSync(fileURLToPath(WORKER_URL));
  }

  copy(job: CopyJob, progress?: (bytes: number) => void): Promise<CopyResult> {
    return this.submit({ id: this.nextId++, type: 'copy', job }, progress) as Promise<CopyResult>;
  }

  hash(path: string): Promise<{ hash: string; bytes: number }> {
    return this.submit({ id: this.nextId++, type: 'hash', path }) as Promise<{
      hash: string;
      bytes: number;
    }>;
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
    this.idle.length = 0;
    await Promise.all(workers.map((w) => w.terminate()));
    for (const pending of this.pending.values())
      pending.reject(new Error('the copy pool is closed'));
    this.pending.clear();
  }
}
