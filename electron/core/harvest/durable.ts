/**
 * Durability for many small copies at once. A verified copy must be on disk, data and name,
 * before its transfer is recorded completed. Doing that file by file costs two flushes each
 * (the file, then its folder): for 10,000 files of 100 KiB, the flushes were most of the time
 * (BENCHMARKS.md). Small copies are instead placed unflushed and wait here; one flush of each
 * file system they are on (syncfs, through coreutils `sync -f`) then makes a whole batch
 * durable, data and folder entries, and only then are their transfers recorded.
 *
 * A crash before the flush leaves each file's markers (verified hash, final name) in the
 * database, and recovery re-hashes what is at the name: a copy the crash damaged is deleted
 * and transferred again, never recorded (recovery.ts recoverInterrupted).
 *
 * Where `sync -f` is not available (Windows, macOS), the batch is flushed file by file and each
 * folder once.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { open, statfs } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { dirname } from 'node:path';
import { injected, injectedError } from '../util/failpoint.js';
import { entriesSynced, syncPlacedFolder } from './place.js';

/** Copies smaller than this are made durable in batches; larger ones flush as they go. */
export const BATCH_DURABILITY_BELOW = 4 * 1024 * 1024;

type SyncFs = (folders: string[]) => Promise<void>;

/** `sync -f` of the folders: one syncfs per file system they are on (Linux, coreutils 8.24+). */
export function runSyncF(folders: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    // Only stderr is read (the reason of a failure): each pipe costs the engine's thread.
    const child = spawn('sync', ['-f', ...folders], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 600_000,
    });
    // The error listener comes first: a spawn that fails for want of file descriptors has
    // no stderr pipe, and an 'error' event without a listener would end the process.
    child.on('error', (error) => reject(new Error(`sync -f failed: ${error.message}`)));
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => {
      if (stderr.length < 4096) stderr += text;
    });
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`sync -f failed: ${stderr.trim() || `exit ${code ?? signal}`}`));
    });
  });
}

/**
 * The shell that SyncFsRunner keeps: folder names come in a line each, an empty line ends a
 * request, and the answer is a line: sync's exit status, then what it wrote to stderr.
 */
const SYNC_SHELL = `set --
while IFS= read -r folder; do
  if [ -n "$folder" ]; then set -- "$@" "$folder"; continue; fi
  err=$(sync -f -- "$@" 2>&1 >/dev/null)
  status=$?
  if [ -z "$err" ]; then echo "$status"; else printf '%s %s\\n' "$status" "$(printf '%s' "$err" | tr '\\n' ' ')"; fi
  set --
done`;

type Shell = ChildProcessByStdio<Writable, Readable, null>;

/**
 * runSyncF through one long-lived `sh`. Starting `sync` from this process forks it, page tables
 * and all: about 5 ms of CPU per start once a harvest has 250 MiB mapped, against 1 ms at
 * 50 MiB (BENCHMARKS.md), and a harvest of 10,000 small files starts one per batch. The shell
 * is started once and forks only itself, a few hundred KiB, for each `sync`.
 *
 * Requests run one at a time. An idle shell does not keep the process alive, and it ends when
 * its input does: at close(), or when this process ends. Folder names with a line break, a
 * shell that cannot start and a shell that ends mid-request fall back to runSyncF; a `sync`
 * that fails fails its request with sync's reason, as runSyncF does, and so does one that has
 * not answered after `timeoutMs` (its shell is killed; the next request starts another).
 */
export class SyncFsRunner {
  private shell: Shell | null = null;
  private pending = '';
  private answer: ((line: string | null) => void) | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly timeoutMs = 600_000) {}

  /** The shell's process id while it runs (diagnostics and tests). */
  get shellPid(): number | undefined {
    return this.shell?.pid;
  }

  run(folders: string[]): Promise<void> {
    const done = this.queue.then(() => this.request(folders));
    this.queue = done.catch(() => undefined);
    return done;
  }

  /** Ends the shell once the requests before this call are answered; a later run starts one. */
  close(): Promise<void> {
    const done = this.queue.then(() => {
      const shell = this.shell;
      if (!shell) return;
      const ended = new Promise<void>((resolve) => shell.once('close', () => resolve()));
      // Held until it has ended: whoever awaits close() would otherwise see the process end.
      this.hold(shell, true);
      shell.stdin.end();
      return ended;
    });
    this.queue = done;
    return done;
  }

  private async request(folders: string[]): Promise<void> {
    if (!folders.length) return;
    if (folders.some((f) => f === '' || f.includes('\n'))) return runSyncF(folders);
    const shell = this.shell ?? this.start();
    if (!shell) return runSyncF(folders);
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const line = await new Promise<string | null>((resolve) => {
      this.answer = resolve;
      this.hold(shell, true);
      timer = setTimeout(() => {
        timedOut = true;
        shell.kill('SIGKILL');
      }, this.timeoutMs);
      shell.stdin.write(`${folders.join('\n')}\n\n`);
    });
    clearTimeout(timer);
    this.hold(shell, false);
    if (timedOut) {
      throw new Error(`sync -f failed: no answer in ${this.timeoutMs / 1000} s`);
    }
    // The shell could not start or died (a `sync` it started may still be running): the
    // folders are flushed by a `sync` of their own.
    if (line === null) return runSyncF(folders);
    const space = line.indexOf(' ');
    const status = space < 0 ? line : line.slice(0, space);
    if (status !== '0') {
      const reason = space < 0 ? '' : line.slice(space + 1).trim();
      throw new Error(`sync -f failed: ${reason || `exit ${status}`}`);
    }
  }

  /** null: no shell to be had (no descriptors left for its pipes). */
  private start(): Shell | null {
    const shell = spawn('/bin/sh', ['-c', SYNC_SHELL], { stdio: ['pipe', 'pipe', 'ignore'] });
    // Out of descriptors (EMFILE, ENFILE), Node gives a child without pipes and an 'error' later.
    if (!(shell.stdin as Writable | null) || !(shell.stdout as Readable | null)) {
      shell.on('error', () => undefined);
      return null;
    }
    this.shell = shell;
    this.pending = '';
    const ended = (): void => {
      if (this.shell !== shell) return;
      this.shell = null;
      const answer = this.answer;
      this.answer = null;
      answer?.(null);
    };
    // A shell that failed to start (ENOENT) or died answers null; writing to it fails quietly.
    shell.on('error', ended);
    shell.on('close', ended);
    shell.stdin.on('error', () => undefined);
    shell.stdout.setEncoding('utf8');
    shell.stdout.on('data', (text: string) => {
      if (this.shell !== shell) return;
      this.pending += text;
      for (let end = this.pending.indexOf('\n'); end >= 0; end = this.pending.indexOf('\n')) {
        const line = this.pending.slice(0, end);
        this.pending = this.pending.slice(end + 1);
        const answer = this.answer;
        this.answer = null;
        answer?.(line);
      }
    });
    this.hold(shell, false);
    return shell;
  }

  /** While a request waits, the shell keeps the process alive; idle, it does not. */
  private hold(shell: Shell, on: boolean): void {
    const handles = [shell, shell.stdin, shell.stdout] as unknown as {
      ref(): void;
      unref(): void;
    }[];
    for (const handle of handles) {
      if (on) handle.ref();
      else handle.unref();
    }
  }
}

/** fsync of one file; 'r+': Windows flushes only a handle open for writing. */
export async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * File systems whose syncfs writes every dirty page to the disk and reports failures: local
 * disk file systems. Network and FUSE mounts (NFS, SMB, sshfs, many NAS clients) may answer
 * syncfs without forcing anything to stable storage; their copies are fsynced one by one.
 */
const LOCAL_DISK_TYPES = new Set([
  0xef53, // ext2/3/4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0xf2f52010, // f2fs
  0x2fc12fc1, // zfs
  0x01021994, // tmpfs
  0x794c7630, // overlayfs (syncs its upper, local file system)
]);

const localDisk = new Map<string, Promise<boolean>>();

/** Whether a folder is on a local disk file system (LOCAL_DISK_TYPES); cached per folder. */
export function onLocalDisk(folder: string): Promise<boolean> {
  let known = localDisk.get(folder);
  if (!known) {
    known = statfs(folder).then(
      (s) => LOCAL_DISK_TYPES.has(s.type),
      () => false,
    );
    localDisk.set(folder, known);
    if (localDisk.size > 10_000) localDisk.clear();
  }
  return known;
}

let syncFsSupport: Promise<boolean> | null = null;

/** Whether this machine has `sync -f` (coreutils 8.24+ on Linux): tried once, on a folder. */
function hasSyncFs(probe: string): Promise<boolean> {
  if (process.platform !== 'linux') return Promise.resolve(false);
  syncFsSupport ??= runSyncF([probe]).then(
    () => true,
    () => false,
  );
  return syncFsSupport;
}

interface Waiting {
  path: string;
  resolve(): void;
  reject(error: unknown): void;
}

export interface DurabilityOptions {
  /** Flush when this many files wait (default 1000). */
  maxFiles?: number;
  /**
   * Flush at the latest this long after the first file began to wait (default 200 ms: each
   * flush is a `sync` run).
   */
  maxWaitMs?: number;
  /**
   * How `sync -f` is run once the folders are known to be on local disks: runSyncF by default;
   * the engine passes its SyncFsRunner's.
   */
  runSync?: SyncFs;
}

export class DurabilityBatch {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private readonly maxFiles: number;
  private readonly maxWaitMs: number;

  constructor(private readonly options: DurabilityOptions = {}) {
    this.maxFiles = options.maxFiles ?? 1000;
    this.maxWaitMs = options.maxWaitMs ?? 200;
  }

  /** Resolves once the file at `path` and its folder entry are on disk. */
  settle(path: string): Promise<void> {
    // A disk that fails its flush (EIO) is rare and cannot be made on purpose in a test.
    if (injected('harvest.flush-fails')) {
      return Promise.reject(injectedError('EIO', `the flush of ${path} failed`));
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({ path, resolve, reject });
      if (this.waiting.length >= this.maxFiles) void this.flush();
      else this.timer ??= setTimeout(() => void this.flush(), this.maxWaitMs);
    });
  }

  /** Nothing more is coming soon: flush what waits now. Resolves once it is flushed. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.waiting.splice(0);
    if (batch.length) this.chain = this.chain.then(() => this.flushBatch(batch));
    return this.chain;
  }

  /**
   * One syncfs for the batch when its folders are all on local disks; else, or when that
   * fails, each file and folder on its own, so one unreachable share fails only its own files.
   */
  private async flushBatch(batch: Waiting[]): Promise<void> {
    const folders = [...new Set(batch.map((w) => dirname(w.path)))];
    try {
      const local = (await Promise.all(folders.map((f) => onLocalDisk(f)))).every(Boolean);
      if (local && (await hasSyncFs(folders[0]))) {
        // One syncfs per folder named; after the first, a folder on the same file system has
        // nothing left to write.
        await (this.options.runSync ?? runSyncF)(folders);
        for (const folder of folders) entriesSynced(folder);
        for (const w of batch) w.resolve();
        return;
      }
    } catch {
      // Flushed one by one below: each file then fails or succeeds on its own.
    }
    const synced = new Map<string, Promise<void>>();
    for (const w of batch) {
      try {
        await fsyncPath(w.path);
        const folder = dirname(w.path);
        if (!synced.has(folder)) synced.set(folder, syncPlacedFolder(folder));
        await synced.get(folder);
        w.resolve();
      } catch (error) {
        w.reject(error);
      }
    }
  }
}
