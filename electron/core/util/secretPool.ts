/**
 * argon2id off the thread that asks for it. hash-wasm computes it synchronously: 45 to 110 ms
 * here for a PIN or password (argon2.ts), during which a server answered nothing else, so a
 * burst of log-ins stalled every station's push and every API read, and a station's screen and
 * harvest waited on each log-on. Here the hashes go to workers (at most two; one on a machine
 * with one or two cores, leaving a core to the rest), started on first use and kept for the
 * next, unref'd so that a process still ends when its work does.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { argon2Check, argon2Hash } from './argon2.js';

type Job =
  { op: 'hash'; secret: string; salt: Uint8Array } | { op: 'verify'; secret: string; hash: string };

export type SecretRequest = { id: number } & Job;

export type SecretReply =
  { id: number; ok: true; value: string | boolean } | { id: number; ok: false; message: string };

interface Pending {
  job: Job;
  resolve: (value: string | boolean) => void;
  reject: (error: Error) => void;
}

const WORKER_URL = new URL('./secretWorker.js', import.meta.url);

export class SecretPool {
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, { id: number; pending: Pending }>();
  private readonly waiting: Pending[] = [];
  private workers = 0;
  private nextId = 1;
  /**
   * Run on the calling thread: no worker file (the sources run as they are, in tests), or one
   * that would not start.
   */
  inline: boolean;
  private closed = false;

  constructor(
    private readonly size = Math.max(1, Math.min(2, availableParallelism() - 1)),
    private readonly workerUrl: URL = WORKER_URL,
  ) {
    this.inline = !existsSync(fileURLToPath(workerUrl));
  }

  hash(secret: string, salt: Uint8Array): Promise<string> {
    return this.run({ op: 'hash', secret, salt }) as Promise<string>;
  }

  verify(secret: string, hash: string): Promise<boolean> {
    return this.run({ op: 'verify', secret, hash }) as Promise<boolean>;
  }

  private run(job: Job): Promise<string | boolean> {
    if (this.inline) {
      return job.op === 'hash'
        ? argon2Hash(job.secret, job.salt)
        : argon2Check(job.secret, job.hash);
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({ job, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.waiting.length) {
      const worker = this.idle.pop() ?? this.spawn();
      if (!worker) return;
      const pending = this.waiting.shift() as Pending;
      const id = this.nextId++;
      this.busy.set(worker, { id, pending });
      // Held while at work: a process waiting for a log-in's answer must not end under it.
      worker.ref();
      worker.postMessage({ id, ...pending.job } satisfies SecretRequest);
    }
  }

  private spawn(): Worker | null {
    if (this.workers >= this.size) return null;
    const worker = new Worker(this.workerUrl);
    this.workers++;
    let answered = false;
    worker.on('message', (reply: SecretReply) => {
      answered = true;
      const at = this.busy.get(worker);
      if (!at || at.id !== reply.id) return;
      this.busy.delete(worker);
      worker.unref();
      this.idle.push(worker);
      if (reply.ok) at.pending.resolve(reply.value);
      else at.pending.reject(new Error(`argon2id: ${reply.message}`));
      this.dispatch();
    });
    // A worker that dies fails the job it had; the next job starts another.
    let gone = false;
    const lost = (error: Error): void => {
      if (gone) return;
      gone = true;
      this.workers--;
      const at = this.busy.get(worker);
      this.busy.delete(worker);
      const idle = this.idle.indexOf(worker);
      if (idle >= 0) this.idle.splice(idle, 1);
      if (!answered && !this.closed) {
        // It never started (its file is there but does not load): hashed on this thread from
        // now on, as without a built worker, rather than every log-on failing.
        this.inline = true;
        const again = [...(at ? [at.pending] : []), ...this.waiting.splice(0)];
        for (const pending of again) this.run(pending.job).then(pending.resolve, pending.reject);
        return;
      }
      at?.pending.reject(new Error(`argon2id worker failed: ${error.message}`));
      this.dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`exited with code ${code}`)));
    return worker;
  }

  /** Ends the workers (tests, a bench); jobs still waiting fail. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.idle, ...this.busy.keys()];
    for (const pending of this.waiting.splice(0))
      pending.reject(new Error('the secret pool is closed'));
    await Promise.all(all.map((worker) => worker.terminate()));
  }
}
