/**
 * npm run bench:delta — what checking a full facility delta costs the station
 * (sync/deltaSchema.ts parseFacilityDelta), beside what it does anyway with the same answer:
 * axios's JSON.parse of the body, and applyDelta into an empty station. The delta is a real
 * one: facilityDelta() on a server database holding BENCH_DELTA_USERS people (5,000), each in
 * 3 of 300 projects and qualified for 5 of 60 tools whose forms are about 2 kB of JSON text,
 * and 500 reservations of the station's tool. BENCH_RUNS (30) timed runs after 5 unmeasured.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../electron/core/db/open.js';
import { createStationAccount } from '../electron/core/server/accounts.js';
import { facilityDelta, type StationAccount } from '../electron/core/server/sync/export.js';
import { applyDelta } from '../electron/core/sync/apply.js';
import { parseFacilityDelta } from '../electron/core/sync/deltaSchema.js';
import { newUuid } from '../electron/core/util/ids.js';
import { median, positiveInt } from './common.js';

const USERS = positiveInt('BENCH_DELTA_USERS', 5_000);
const RUNS = positiveInt('BENCH_RUNS', 30);
const PROJECTS = 300;
const TOOLS = 60;

const QUESTIONS = JSON.stringify(
  Array.from({ length: 12 }, (_, i) => ({
    type: i % 3 === 0 ? 'radio' : 'textbox',
    name: `question_${i}`,
    title: `Question ${i} about the sample and the session`,
    required: i % 2 === 0,
    ...(i % 3 === 0 ? { choices: ['Yes', 'No', 'Not sure'] } : { maxlength: 200 }),
  })),
);

function p95(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)] ?? NaN;
}

function timed(runs: number, run: () => void): number[] {
  for (let i = 0; i < 5; i++) run();
  return Array.from({ length: runs }, () => {
    const t0 = performance.now();
    run();
    return performance.now() - t0;
  });
}

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'labstation-bench-delta-'));
  try {
    const db = openDatabase(join(dir, 'server.db'));
    const now = new Date().toISOString();
    db.transaction(() => {
      db.prepare(`INSERT INTO settings (key, value) VALUES ('mode', '"server"')`).run();
      const project = db.prepare(
        `INSERT INTO projects (id, uuid, name, application_identifier, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
      );
      for (let p = 1; p <= PROJECTS; p++) {
        project.run(p, newUuid(), `Project ${p}`, `PRJ-${p}`, now, now);
      }
      const tool = db.prepare(
        `INSERT INTO tools (id, uuid, name, pre_usage_questions, post_usage_questions, category,
           created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'Microscopy', ?, ?)`,
      );
      for (let t = 1; t <= TOOLS; t++)
        tool.run(t, newUuid(), `Tool ${t}`, QUESTIONS, '[]', now, now);
      const user = db.prepare(
        `INSERT INTO users (id, uuid, username, email, first_name, last_name, badge_number,
           pin_hash, is_staff, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
      );
      const member = db.prepare('INSERT INTO user_projects (user_id, project_id) VALUES (?, ?)');
      const qualified = db.prepare('INSERT INTO qualifications (user_id, tool_id) VALUES (?, ?)');
      for (let u = 1; u <= USERS; u++) {
        user.run(
          u,
          newUuid(),
          `user${u}`,
          `user${u}@lab.example.org`,
          `First${u}`,
          `Last${u}`,
          u % 4 === 0 ? null : String(100_000 + u),
          '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaA',
          now,
          now,
        );
        for (let k = 0; k < 3; k++) member.run(u, ((u * 7 + k * 101) % PROJECTS) + 1);
        for (let k = 0; k < 5; k++) qualified.run(u, ((u * 3 + k * 11) % TOOLS) + 1);
      }
      const booking = db.prepare(
        `INSERT INTO reservations (uuid, user_id, creator_id, project_id, tool_id, start, "end",
           question_data, created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?, '{}', ?, ?)`,
      );
      for (let r = 0; r < 500; r++) {
        const start = new Date(Date.now() + (r + 1) * 3_600_000);
        const end = new Date(start.getTime() + 1_800_000);
        booking.run(
          newUuid(),
          (r % USERS) + 1,
          1,
          1,
          start.toISOString(),
          end.toISOString(),
          now,
          now,
        );
      }
    })();
    const account = createStationAccount(db, { name: 'bench-pc', tool: 1 });
    const station = db
      .prepare('SELECT id, uuid, name, tool_id FROM stations WHERE id = ?')
      .get(account.id) as StationAccount;
    const body = JSON.stringify(facilityDelta(db, station, 0));
    db.close();

    const jsonTimes = timed(RUNS, () => void JSON.parse(body));
    const answers = Array.from({ length: RUNS + 5 }, () => JSON.parse(body) as unknown);
    let next = 0;
    const parseTimes = timed(RUNS, () => void parseFacilityDelta(answers[next++]));
    const delta = parseFacilityDelta(JSON.parse(body));
    const applyTimes = Array.from({ length: 3 }, (_, i) => {
      const stationDb = openDatabase(join(dir, `station-${i}.db`));
      const t0 = performance.now();
      applyDelta(stationDb, delta);
      const elapsed = performance.now() - t0;
      stationDb.close();
      return elapsed;
    });

    const ms = (v: number): string => (v < 10 ? v.toFixed(2) : v.toFixed(1));
    const row = (what: string, times: number[]): string =>
      `| ${what} | ${ms(median(times))} | ${ms(p95(times))} | ${times.length} |`;
    const lines = [
      `A full delta of ${USERS.toLocaleString('en-US')} people, ${PROJECTS} projects, ${TOOLS} tools, ` +
        `${delta.reservations?.length ?? 0} reservations: ${(body.length / 2 ** 20).toFixed(1)} MiB of JSON; ` +
        `${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), Node ${process.version}.`,
      '',
      '| what | median ms | p95 ms | runs |',
      '|---|---:|---:|---:|',
      row('reference: `JSON.parse` of the body (axios does it anyway)', jsonTimes),
      row('`parseFacilityDelta` of the parsed answer (the check)', parseTimes),
      row('reference: `applyDelta` into an empty station database', applyTimes),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
