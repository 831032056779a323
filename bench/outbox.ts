/**
 * What the status line costs a station whose outbox holds a long backlog (the server away while
 * it harvested): `sync.status`, which the sync badge asks every 5 s while the UI is open, timed
 * over loopback against a real `labstation station`, standalone and with a server configured
 * that cannot be reached. Side by side, in the same run: the data dir as it is (migration 50's
 * indexes on the outbox) and a copy without those two indexes (as before migration 50).
 *
 *   npm run bench:outbox                      (BENCH_OUTBOX_FILES=200000: 600,000 outbox rows)
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { REPO, int, machineLine, median, positiveInt } from './common.js';

const FILES = positiveInt('BENCH_OUTBOX_FILES', 200_000);
const CALLS = 12;
const cli = join(REPO, 'bin', 'labstation.js');
const env = { ...process.env, LABSTATION_LOG_LEVEL: 'warn' };

/** A station data dir whose outbox holds each file's three rows (recorded, done, transfer). */
function makeStation(root: string): string {
  const data = join(root, 'station');
  const bundle = join(root, 'bundle.json');
  writeFileSync(bundle, JSON.stringify({ tools: [{ name: 'BENCH' }], station: { tool: 'BENCH' } }));
  const ran = spawnSync(process.execPath, [cli, 'import', '--data', data, bundle], {
    env,
    stdio: 'ignore',
  }).status;
  if (ran !== 0) throw new Error(`import exited ${ran}`);
  const db = new Database(join(data, 'labstation.db'));
  const insert = db.prepare(
    'INSERT INTO outbox (kind, record_uuid, payload, created_at) VALUES (?, ?, ?, ?)',
  );
  // Payloads of the size the harvest's rows have (about 700 bytes).
  const filler = 'x'.repeat(560);
  db.transaction(() => {
    for (let i = 0; i < FILES; i += 1) {
      const file = randomUUID();
      const at = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
      const payload = JSON.stringify({ uuid: file, state: 'waiting', filler });
      insert.run('harvest_file', file, payload, at);
      insert.run('harvest_transfer', randomUUID(), payload, at);
      insert.run('harvest_file', file, payload.replace('waiting', 'done'), at);
    }
  })();
  db.close();
  return data;
}

/** Medians and largest of CALLS calls of sync.status on a station started on `data`. */
async function timeStatus(data: string, linked: boolean): Promise<{ median: number; max: number }> {
  const link = linked ? ['--server', 'http://127.0.0.1:9', '--key', 'k'.repeat(32)] : [];
  const child = spawn(process.execPath, [cli, 'station', '--data', data, '--port', '0', ...link], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the station did not start')), 60_000);
      createInterface({ input: child.stdout }).on('line', (line) => {
        const found = /(http:\/\/\S+)/.exec(line);
        if (!found) return;
        clearTimeout(timer);
        resolve(found[1]);
      });
    });
    const token = /#token=([^&]+)/.exec(url)?.[1] ?? '';
    const times: number[] = [];
    for (let i = 0; i < CALLS; i += 1) {
      const started = performance.now();
      const res = await fetch(new URL('/rpc/sync.status', url), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{}',
      });
      const body = (await res.json()) as { waiting: number };
      times.push(performance.now() - started);
      if (body.waiting !== FILES * 3) throw new Error(`waiting ${body.waiting}, not ${FILES * 3}`);
    }
    return { median: median(times), max: Math.max(...times) };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

const root = mkdtempSync(join(tmpdir(), 'labstation-bench-outbox-'));
try {
  console.log(machineLine());
  const started = performance.now();
  const data = makeStation(root);
  console.log(
    `outbox: ${int(FILES * 3)} rows (${int(FILES)} files) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  const before = join(root, 'before-50');
  cpSync(data, before, { recursive: true });
  const db = new Database(join(before, 'labstation.db'));
  db.exec('DROP INDEX outbox_record; DROP INDEX outbox_refusal;');
  db.close();
  const rows: string[] = [];
  for (const [name, dir] of [
    ['without the indexes (before migration 50)', before],
    ['as shipped (migration 50)', data],
  ] as const) {
    const alone = await timeStatus(dir, false);
    const linked = await timeStatus(dir, true);
    rows.push(
      `| ${name} | ${alone.median.toFixed(1)} / ${alone.max.toFixed(1)} ms | ` +
        `${linked.median.toFixed(1)} / ${linked.max.toFixed(1)} ms |`,
    );
  }
  console.log(`\n\`sync.status\` over loopback, ${CALLS} calls, median / largest:\n`);
  console.log('| outbox | standalone station | server configured (unreachable) |');
  console.log('| --- | ---: | ---: |');
  for (const row of rows) console.log(row);
} finally {
  rmSync(root, { recursive: true, force: true });
}
