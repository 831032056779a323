/**
 * A hash lane: a thread beside a copy worker that hashes the chunks of a big file, and reads
 * the copy back and hashes it, while the copy worker reads and writes the next chunks (copy.ts
 * copyVerified). The copy worker's own loop then does only the system calls of a copy: on
 * 2 GiB here, reading, hashing and writing on one thread, then reading back, took 2.2 s plus
 * 0.6 s; cp takes 1.5 s (BENCHMARKS.md).
 *
 * The two threads share a ring of chunk buffers (SharedArrayBuffer) and two counters: the
 * copy worker reads a chunk into the next free buffer, writes it to the copy and publishes its
 * length; the lane hashes the published chunks in order, reads the same span of the copy back
 * through a descriptor of its own and hashes that too, then frees the buffer. A length of END
 * closes a pass: the lane reads the copy on to its end, and sends the pass's two hashes. The
 * bytes hashed as the source's are those the copy read into the buffer and wrote from it, as
 * on one thread; the read-back reads what the copy's file holds once the chunk was written.
 *
 * The copy worker never waits for the lane without a deadline: a lane that died (its thread
 * ended) is found when the copy yields, and fails the copy, which its caller retries.
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  isMainThread,
  MessageChannel,
  receiveMessageOnPort,
  Worker,
  type MessagePort,
} from 'node:worker_threads';
import { errorCode } from '../util/errors.js';
import type { IHasher } from '../util/hasher.js';

/** Buffers in the ring: 1 MiB of 128 KiB chunks, enough to ride out the lane's hiccups. */
export const LANE_SLOTS = 8;
/** The control words: chunks published, chunks hashed, then one length per buffer. */
const PUBLISHED = 0;
const HASHED = 1;
const LENGTHS = 2;
/** The length that ends a pass. */
const END = -1;
/** The length that drops a pass: the copy stopped midway; nothing is sent. */
const DROP = -2;
/** How long the lane waits in one go for the next chunk, so that a terminate is heard. */
const LANE_WAIT_MS = 200;

/** What the copy worker hands its lane: the ring, the control words, the port of passes. */
export interface LaneShared {
  ring: SharedArrayBuffer;
  control: SharedArrayBuffer;
  chunk: number;
  passes: MessagePort;
}

/**
 * Sent (on `passes`) before a pass's first chunk: a descriptor of the copy to read back, if
 * any. The copy worker opens and closes it: a lane ended midway cannot leave it open.
 */
interface PassStart {
  readBackFd: number | null;
}

/** What a pass gives: the hash of its chunks, and of the copy read back. */
export interface PassHashes {
  hash: string;
  readBack: { hash: string; bytes: number } | null;
}

/** What the lane sends at the end of a pass; a read-back that failed sends its error. */
type PassEnd =
  | { hash: string; readBack: { hash: string; bytes: number } | null }
  | { hash: string; failed: { message: string; code: string | null } };

/** A read-back on the lane failed (as reading the copy back on the copy's thread would). */
export class ReadBackError extends Error {
  constructor(
    message: string,
    readonly code: string | null,
  ) {
    super(message);
  }
}

const LANE_URL = new URL('./hashLaneWorker.js', import.meta.url);

/** The lane of this thread (a copy worker): made on the first big copy, kept for the next. */
let current: HashLane | null = null;

/**
 * The lane of this thread, made if need be; null on the main thread (copies run there only in
 * tests, inline), where the lane's script is not built, and while the lane is in use.
 */
export function takeLane(chunk: number): HashLane | null {
  if (isMainThread || !existsSync(fileURLToPath(LANE_URL))) return null;
  if (current?.busy) return null;
  if (current && (current.failed !== null || current.chunk !== chunk)) current = null;
  current ??= new HashLane(chunk);
  current.busy = true;
  return current;
}

/** Whether this thread has a lane (tests: a big copy made one, a failed one was let go). */
export function hasLane(): boolean {
  return current !== null && current.failed === null;
}

export class HashLane {
  busy = false;
  /** Why the lane can no longer be used (its thread ended), once it cannot. */
  failed: Error | null = null;
  private readonly worker: Worker;
  private readonly passes: MessagePort;
  private readonly control: Int32Array;
  private readonly buffers: Buffer[];
  private published = 0;
  /** The ring was found full: claim waits for half of it (see there). */
  private full = false;
  /** Whether a pass has begun and not ended (release drops one left open). */
  private open = false;
  /** The descriptor the lane reads the copy back through, during a pass that does. */
  private readBackFd: number | null = null;
  private readonly ends: { resolve(end: PassEnd): void; reject(error: Error): void }[] = [];

  constructor(readonly chunk: number) {
    const channel = new MessageChannel();
    const shared: LaneShared = {
      ring: new SharedArrayBuffer(chunk * LANE_SLOTS),
      control: new SharedArrayBuffer(4 * (LENGTHS + LANE_SLOTS)),
      chunk,
      passes: channel.port2,
    };
    this.passes = channel.port1;
    this.control = new Int32Array(shared.control);
    this.buffers = Array.from({ length: LANE_SLOTS }, (_, i) =>
      Buffer.from(shared.ring, i * chunk, chunk),
    );
    this.worker = new Worker(LANE_URL, { workerData: shared, transferList: [channel.port2] });
    // The copy worker ends when its pool closes; its lane must not keep it alive meanwhile.
    this.worker.unref();
    this.worker.on('message', (end: PassEnd) => this.ends.shift()?.resolve(end));
    const lost = (error: Error): void => {
      this.failed ??= new Error(`the hashing thread of the copy failed: ${error.message}`);
      for (const waiter of this.ends.splice(0)) waiter.reject(this.failed);
    };
    this.worker.on('error', lost);
    this.worker.on('exit', (code) => lost(new Error(`it exited with code ${code}`)));
  }

  /**
   * Begins a pass; `readBack`: the copy the lane reads back, span by span, once each chunk
   * published was written there (null: the chunks alone are hashed).
   */
  begin(readBack: string | null): void {
    if (this.failed) throw this.failed;
    this.readBackFd = readBack === null ? null : openSync(readBack, 'r');
    const start: PassStart = { readBackFd: this.readBackFd };
    this.passes.postMessage(start);
    this.open = true;
  }

  /**
   * The buffer to read the next chunk into, once the lane is done with what was in it; null
   * when `deadline` (performance.now()) comes first. Throws if the lane is gone.
   */
  claim(deadline: number): Buffer | null {
    if (this.failed) throw this.failed;
    for (;;) {
      const hashed = Atomics.load(this.control, HASHED);
      const inFlight = this.published - hashed;
      // Once the ring is full, the copy waits until the lane has emptied half of it: woken
      // for every buffer freed, the two threads would take turns chunk by chunk.
      if (inFlight < (this.full ? LANE_SLOTS / 2 + 1 : LANE_SLOTS)) {
        this.full = false;
        return this.buffers[this.published % LANE_SLOTS];
      }
      this.full = true;
      const left = deadline - performance.now();
      if (left <= 0) return null;
      Atomics.wait(this.control, HASHED, hashed, Math.min(left, 20));
    }
  }

  /** The buffer claim gave holds `length` bytes of the pass (written, if copied). */
  publish(length: number): void {
    Atomics.store(this.control, LENGTHS + (this.published % LANE_SLOTS), length);
    this.published += 1;
    Atomics.store(this.control, PUBLISHED, this.published);
    Atomics.notify(this.control, PUBLISHED);
  }

  /**
   * Ends the pass: the hash of every chunk published since it began, and of the copy read
   * back. Waits for a free buffer in short turns, letting the thread's events run between
   * them (a lane that died).
   */
  async end(): Promise<PassHashes> {
    for (;;) {
      if (this.claim(performance.now() + 20) !== null) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const ended = new Promise<PassEnd>((resolve, reject) => {
      this.ends.push({ resolve, reject });
    });
    this.publish(END);
    this.open = false;
    const end = await ended;
    if ('failed' in end) throw new ReadBackError(end.failed.message, end.failed.code);
    return end;
  }

  /**
   * The copy is done with the lane. A pass left open (the copy stopped midway: an error, a
   * source that changed) is dropped, so that it does not run into the next copy's; a lane that
   * does not take the drop within a second is ended, and the next big copy makes another.
   * The read-back's descriptor is closed once the lane no longer reads it.
   */
  release(): void {
    this.busy = false;
    const fd = this.readBackFd;
    this.readBackFd = null;
    const close = (): void => {
      if (fd !== null) closeSync(fd);
    };
    if (!this.open) return close();
    this.open = false;
    if (this.failed === null && this.drop(performance.now() + 1000)) return close();
    this.failed ??= new Error('the hashing thread of the copy was left midway');
    // Closed once the thread has stopped: a descriptor number closed while it may still read
    // through it could be another file's by then.
    void this.worker.terminate().finally(close);
  }

  /** Drops the pass under way; whether the lane took the drop before `deadline`. */
  private drop(deadline: number): boolean {
    if (this.claim(deadline) === null) return false;
    this.publish(DROP);
    for (;;) {
      const hashed = Atomics.load(this.control, HASHED);
      if (hashed === this.published) return true;
      const left = deadline - performance.now();
      if (left <= 0) return false;
      Atomics.wait(this.control, HASHED, hashed, Math.min(left, 20));
    }
  }
}

/**
 * The read-back of a pass, on the lane: the copy's descriptor (the copy worker's, which closes
 * it), where it is, its hasher.
 */
class LaneReadBack {
  private fd: number | null;
  private position = 0;
  private failure: { message: string; code: string | null } | null = null;

  constructor(
    fd: number,
    private readonly hasher: IHasher,
    private readonly buffer: Buffer,
  ) {
    this.fd = fd;
    hasher.init();
  }

  /** Reads and hashes the copy's next `length` bytes (fewer where it ends). */
  span(length: number): void {
    const goal = this.position + length;
    while (this.fd !== null && this.position < goal) {
      const n = this.read(Math.min(this.buffer.length, goal - this.position));
      if (n === 0) break;
    }
  }

  /** Reads the copy on to its end: its hash and length. */
  finish(): { hash: string; bytes: number } | { failed: { message: string; code: string | null } } {
    while (this.fd !== null && this.read(this.buffer.length) > 0);
    this.fd = null;
    if (this.failure) return { failed: this.failure };
    return { hash: this.hasher.digest('hex'), bytes: this.position };
  }

  private read(length: number): number {
    try {
      const n = readSync(this.fd as number, this.buffer, 0, length, this.position);
      this.hasher.update(this.buffer.subarray(0, n));
      this.position += n;
      return n;
    } catch (error) {
      this.fail(error);
      return 0;
    }
  }

  private fail(error: unknown): void {
    this.failure ??= { message: (error as Error).message, code: errorCode(error) };
    this.fd = null;
  }
}

/**
 * The lane's side (hashLaneWorker.ts): for each chunk published, in order, hashes it, reads
 * the copy back over the same span and hashes that, then frees its buffer; at each END reads
 * the copy on to its end and sends the pass's hashes. Synchronous: the lane does nothing else,
 * and wakes when a chunk is published.
 */
export function runLane(
  shared: LaneShared,
  hashers: [IHasher, IHasher],
  send: (end: PassEnd) => void,
): never {
  const control = new Int32Array(shared.control);
  const views = Array.from(
    { length: LANE_SLOTS },
    (_, i) => new Uint8Array(shared.ring, i * shared.chunk, shared.chunk),
  );
  const readBuffer = Buffer.allocUnsafe(shared.chunk);
  const [source, copy] = hashers;
  let pass: { readBack: LaneReadBack | null } | null = null;
  let hashed = 0;
  for (;;) {
    if (Atomics.load(control, PUBLISHED) === hashed) {
      Atomics.wait(control, PUBLISHED, hashed, LANE_WAIT_MS);
      continue;
    }
    if (pass === null) {
      // The copy worker posts a pass's start before its first chunk.
      const start = receiveMessageOnPort(shared.passes)?.message as PassStart | undefined;
      source.init();
      const fd = start?.readBackFd ?? null;
      pass = { readBack: fd === null ? null : new LaneReadBack(fd, copy, readBuffer) };
    }
    const slot = hashed % LANE_SLOTS;
    const length = Atomics.load(control, LENGTHS + slot);
    if (length === DROP) {
      pass = null;
    } else if (length === END) {
      const hash = source.digest('hex');
      const readBack = pass.readBack?.finish() ?? null;
      send(
        readBack && 'failed' in readBack ? { hash, failed: readBack.failed } : { hash, readBack },
      );
      pass = null;
    } else {
      source.update(views[slot].subarray(0, length));
      pass.readBack?.span(length);
    }
    hashed += 1;
    Atomics.store(control, HASHED, hashed);
    Atomics.notify(control, HASHED);
  }
}
