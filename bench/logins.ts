/**
 * npm run bench:logins — what a burst of log-ins costs the thread that serves requests. Each
 * log-in checks a password or PIN with argon2id (OWASP's 19 MiB, 2-pass profile, argon2.ts),
 * about 50 ms of WebAssembly. BENCH_LOGINS (20) checks are asked for at once, BENCH_RUNS (5)
 * times, side by side in one run:
 *   - on the calling thread, as pin.ts did before secretPool.ts (argon2Check directly);
 *   - through the secret pool's worker threads, as `labstation serve` and `station` do now.
 * Meanwhile a 1 ms timer stands for the requests the thread would answer: how late it fires
 * (the wait a /health, a sync push or an API read would have had) and the burst's wall time.
 */
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { argon2Check, argon2Hash } from '../electron/core/util/argon2.js';
import { SecretPool } from '../electron/core/util/secretPool.js';
import { median, positiveInt } from './common.js';

const LOGINS = positiveInt('BENCH_LOGINS', 20);
const RUNS = positiveInt('BENCH_RUNS', 5);

interface Burst {
  wall: number;
  maxLate: number;
  p99Late: number;
}

/** Runs `check` LOGINS times at once while a 1 ms timer notes how late it fires. */
async function burst(check: (i: number) => Promise<boolean>): Promise<Burst> {
  const late: number[] = [];
  let expected = performance.now() + 1;
  const timer = setInterval(() => {
    const now = performance.now();
    late.push(Math.max(0, now - expected));
    expected = now + 1;
  }, 1);
  await new Promise((resolve) => setTimeout(resolve, 20));
  late.length = 0;
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: LOGINS }, (_, i) => check(i)));
  const wall = performance.now() - t0;
  // A last tick, so a thread that was blocked to the end counts that wait too.
  await new Promise((resolve) => setTimeout(resolve, 2));
  clearInterval(timer);
  if (!results.every(Boolean)) throw new Error('a check failed');
  const sorted = [...late].sort((a, b) => a - b);
  return {
    wall,
    maxLate: sorted[sorted.length - 1] ?? 0,
    p99Late: sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)] ?? 0,
  };
}

async function main(): Promise<void> {
  const hash = await argon2Hash('correct horse', new Uint8Array(16).fill(1));
  const pool = new SecretPool();
  if (pool.inline) throw new Error('no built worker: run `npm run build:core` first');
  await pool.verify('warm', hash);
  await argon2Check('warm', hash);
  const rows: Record<string, Burst[]> = { 'calling thread (before)': [], 'secret pool (now)': [] };
  for (let run = 0; run < RUNS; run++) {
    rows['calling thread (before)'].push(await burst(() => argon2Check('correct horse', hash)));
    rows['secret pool (now)'].push(await burst(() => pool.verify('correct horse', hash)));
  }
  await pool.close();
  const ms = (value: number): string => `${value.toFixed(1)} ms`;
  console.log(
    `${LOGINS} log-ins at once, ${RUNS} runs each in turn, medians; ${cpus().length} x ` +
      `${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`,
  );
  console.log('');
  console.log('| argon2id checks run on | burst wall time | timer late, p99 | timer late, max |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const [name, bursts] of Object.entries(rows)) {
    console.log(
      `| ${name} | ${ms(median(bursts.map((b) => b.wall)))} | ` +
        `${ms(median(bursts.map((b) => b.p99Late)))} | ${ms(median(bursts.map((b) => b.maxLate)))} |`,
    );
  }
}

await main();
