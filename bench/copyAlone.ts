/**
 * The byte-moving half of a Labstation transfer on its own: no station, no database, no
 * records. bench:transfer runs it beside the real harvest, so that its tables split the
 * harvest's time between moving and verifying the bytes and keeping the records.
 *
 *   node dist/bench/copyAlone.js SOURCE DEST [THREADS]
 *
 * Walks SOURCE first (synchronously, making DEST's folders), then THREADS worker threads
 * (default 2, the default of harvest.concurrency) take the files in turns, with the harvest's
 * own functions: files below BATCH_DURABILITY_BELOW go in batches of at most BATCH_MAX_FILES
 * files and BATCH_MAX_BYTES bytes, as the engine makes them, through copyBatch.ts
 * copySmallFiles (sources read ahead, each copied while hashed, read back and hashed again)
 * and placeFiles (linked to their names); a bigger file goes through copy.ts copyVerified
 * (fsynced while read back) and is placed the same way. Then one `sync -f` of DEST (durable.ts
 * runSyncF) makes the small copies durable, as the harvest's durability batches do. Prints the
 * number of files and bytes copied; exits 1 when any copy is not verified and placed.
 */
import { lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { copyVerified } from '../electron/core/harvest/copy.js';
import { READ_AHEAD, copySmallFiles, placeFiles } from '../electron/core/harvest/copyBatch.js';
import { BATCH_DURABILITY_BELOW, runSyncF } from '../electron/core/harvest/durable.js';
import { partialPathFor } from '../electron/core/harvest/place.js';

interface Job {
  source: string;
  destination: string;
  size: number;
  mtimeMs: number;
}

/** What one worker did: files and bytes verified and placed, and what went wrong. */
interface Done {
  files: number;
  bytes: number;
  problems: string[];
}

/** Every regular file under `source`, with DEST's folders made on the way. */
function walk(source: string, dest: string): Job[] {
  const jobs: Job[] = [];
  const pending = [''];
  while (pending.length) {
    const rel = pending.pop() as string;
    mkdirSync(join(dest, rel), { recursive: true });
    for (const entry of readdirSync(join(source, rel), { withFileTypes: true })) {
      const path = join(rel, entry.name);
      if (entry.isDirectory()) {
        pending.push(path);
      } else if (entry.isFile()) {
        const s = lstatSync(join(source, path));
        jobs.push({
          source: join(source, path),
          destination: join(dest, path),
          size: s.size,
          mtimeMs: s.mtimeMs,
        });
      }
    }
  }
  return jobs;
}

/** The units of work, as the harvest makes them: batches of small files, big files alone. */
function units(jobs: Job[], maxFiles: number, maxBytes: number): Job[][] {
  const out: Job[][] = [];
  let batch: Job[] = [];
  let batchBytes = 0;
  for (const job of jobs) {
    if (job.size >= BATCH_DURABILITY_BELOW) {
      out.push([job]);
      continue;
    }
    batch.push(job);
    batchBytes += job.size;
    if (batch.length >= maxFiles || batchBytes >= maxBytes) {
      out.push(batch);
      batch = [];
      batchBytes = 0;
    }
  }
  if (batch.length) out.push(batch);
  return out;
}

async function copyUnit(unit: Job[], done: Done): Promise<void> {
  const partials = unit.map((job) => partialPathFor(job.destination));
  if (unit.length === 1 && unit[0].size >= BATCH_DURABILITY_BELOW) {
    const job = unit[0];
    const result = await copyVerified({ ...job, partial: partials[0] });
    if (result.outcome !== 'copied' || result.sourceHash !== result.destHash) {
      done.problems.push(`${job.source}: ${JSON.stringify(result)}`);
      return;
    }
  } else {
    const results = await copySmallFiles(
      unit.map((job, i) => ({ ...job, partial: partials[i] })),
      READ_AHEAD,
    );
    const bad = results.findIndex((r) => r.outcome !== 'copied' || r.sourceHash !== r.destHash);
    if (bad >= 0) {
      done.problems.push(`${unit[bad].source}: ${JSON.stringify(results[bad])}`);
      return;
    }
  }
  const placed = placeFiles(
    unit.map((job, i) => ({ partial: partials[i], destination: job.destination })),
  );
  placed.forEach((result, i) => {
    if (result.outcome !== 'placed' || result.partialLeft) {
      done.problems.push(`${unit[i].destination}: ${JSON.stringify(result)}`);
    } else {
      done.files += 1;
      done.bytes += unit[i].size;
    }
  });
}

async function work(unitsOfThisWorker: Job[][]): Promise<Done> {
  const done: Done = { files: 0, bytes: 0, problems: [] };
  for (const unit of unitsOfThisWorker) await copyUnit(unit, done);
  return done;
}

function inWorker(unitsOfThisWorker: Job[][]): Promise<Done> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: unitsOfThisWorker });
    worker.once('message', (done: Done) => resolve(done));
    worker.once('error', reject);
    // After its message, a worker's exit changes nothing: the promise is settled.
    worker.once('exit', (code) =>
      reject(new Error(`copy worker exited ${code} without an answer`)),
    );
  });
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

async function main(): Promise<number> {
  const [source, dest, threadsArg] = process.argv.slice(2);
  const threads = Number(threadsArg ?? 2);
  if (!source || !dest || !Number.isInteger(threads) || threads < 1) {
    process.stderr.write('usage: copyAlone.js SOURCE DEST [THREADS]\n');
    return 2;
  }
  if (!isFolder(source)) {
    process.stderr.write(`copyAlone.js: SOURCE must be a folder: ${source}\n`);
    return 2;
  }
  // Imported here, not at the top: the workers load only what the harvest's copy workers do.
  const { BATCH_MAX_BYTES, BATCH_MAX_FILES } = await import('../electron/core/harvest/batch.js');
  const all = units(walk(source, dest), BATCH_MAX_FILES, BATCH_MAX_BYTES);
  const shares = Array.from({ length: threads }, (_, t) => all.filter((_, i) => i % threads === t));
  const results = await Promise.all(shares.map((share) => inWorker(share)));
  await runSyncF([dest]);
  const files = results.reduce((n, r) => n + r.files, 0);
  const bytes = results.reduce((n, r) => n + r.bytes, 0);
  const problems = results.flatMap((r) => r.problems);
  for (const problem of problems.slice(0, 10)) process.stderr.write(`not verified: ${problem}\n`);
  process.stdout.write(`copyAlone: ${files} files, ${bytes} bytes verified and placed\n`);
  return problems.length ? 1 : 0;
}

if (isMainThread) {
  process.exitCode = await main();
} else {
  const done = await work(workerData as Job[][]);
  parentPort?.postMessage(done);
}
