/**
 * The data of `npm run bench:api`: a server data dir holding 1,000,000 usage events (20 tools,
 * 500 users, 50 projects, three years), written straight into SQLite in 50,000-row
 * transactions after the real code made the schema, and the sync payloads a station would push.
 * Everything is drawn from a seeded generator, so every run holds the same data (bar uuids).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { openServerData } from '../electron/core/server/dataDir.js';
import { newUuid } from '../electron/core/util/ids.js';

export const TOOLS = 20;
export const USERS = 500;
export const PROJECTS = 50;
export const EVENTS = 1_000_000;
export const BULK_TRANSACTION = 50_000;

const DAY_MS = 86_400_000;
/** The three years the events cover: 2023-01-01 to 2025-12-31, back to back on every tool. */
export const SPAN_START = Date.UTC(2023, 0, 1);
export const SPAN_MS = 3 * 365 * DAY_MS;

/** mulberry32: a small seeded generator, good enough to spread benchmark data. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const GASES = ['Argon', 'Nitrogen', 'Helium', 'Oxygen', 'Forming gas'];
const MODES = ['TEM', 'STEM', 'SEM', 'EDS map', 'EELS', 'Diffraction'];
const HOLDERS = ['single tilt', 'double tilt', 'cryo', 'heating', 'biasing'];

/** Answers to pre-usage questions as the station stores them (JSON of name -> value). */
export function preRunData(rand: () => number, user: number, project: number): string {
  return JSON.stringify({
    sample_name: `P${project}-U${user}-S${Math.floor(rand() * 100_000)}`,
    sample_description: 'Thin lamella from the FIB, protective Pt cap, about 80 nm thick',
    operating_mode: MODES[Math.floor(rand() * MODES.length)],
    holder: HOLDERS[Math.floor(rand() * HOLDERS.length)],
    accelerating_voltage_kv: [80, 120, 200, 300][Math.floor(rand() * 4)],
    hazardous_sample: rand() < 0.05,
  });
}

/** Answers to post-usage questions: measurements and a repeated group of consumables. */
export function runData(rand: () => number): string {
  const withdrawals = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => ({
    consumable: GASES[Math.floor(rand() * GASES.length)],
    quantity_l: Math.round(rand() * 5000) / 100,
  }));
  return JSON.stringify({
    images_taken: Math.floor(rand() * 400),
    beam_current_na: Math.round(rand() * 10_000) / 1000,
    vacuum_ok: rand() > 0.02,
    consumables: withdrawals,
    comments: rand() < 0.3 ? 'Drift at the start, stable after 20 min; column realigned.' : '',
  });
}

export interface Fixture {
  dataDir: string;
  dbFile: string;
  tools: { id: number; uuid: string; name: string }[];
  users: { id: number; uuid: string }[];
  projects: { id: number; uuid: string }[];
  /** Rows written, seconds taken, rows per second, database size in bytes. */
  insert: { rows: number; seconds: number; rowsPerSecond: number; bytes: number };
}

/**
 * Creates the schema through openServerData (migrations, WAL, synchronous=FULL), then writes
 * tools, users, projects and the usage events directly with better-sqlite3.
 */
export function buildFixture(dataDir: string, events = EVENTS): Fixture {
  const db = openServerData(dataDir);
  const rand = seeded(20261122);
  const created = new Date(SPAN_START - DAY_MS).toISOString();
  try {
    const tools = Array.from({ length: TOOLS }, (_, i) => ({
      id: i + 1,
      uuid: newUuid(),
      name: `Tool ${String(i + 1).padStart(2, '0')}`,
    }));
    const users = Array.from({ length: USERS }, (_, i) => ({ id: i + 1, uuid: newUuid() }));
    const projects = Array.from({ length: PROJECTS }, (_, i) => ({ id: i + 1, uuid: newUuid() }));
    db.transaction(() => {
      const tool = db.prepare(
        'INSERT INTO tools (id, uuid, name, category, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
      );
      for (const t of tools) tool.run(t.id, t.uuid, t.name, 'Microscopy', created, created);
      const user = db.prepare(
        `INSERT INTO users (id, uuid, username, email, first_name, last_name, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      for (const u of users) {
        user.run(
          u.id,
          u.uuid,
          `user${u.id}`,
          `user${u.id}@example.org`,
          'User',
          String(u.id),
          created,
          created,
        );
      }
      const project = db.prepare(
        `INSERT INTO projects (id, uuid, name, application_identifier, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
      );
      for (const p of projects) {
        project.run(p.id, p.uuid, `Project ${p.id}`, `APP-${1000 + p.id}`, created, created);
      }
    })();

    const insert = db.prepare(
      `INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, start, "end",
         validated, validated_by_id, remote_work, pre_run_data, run_data, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    // Every tool runs back to back through the three years; ids follow time, as they do when
    // stations push events as they end.
    const perTool = Math.ceil(events / TOOLS);
    const slot = SPAN_MS / perTool;
    type Row = [
      string,
      number,
      number,
      number,
      number,
      string,
      string,
      number,
      number | null,
      number,
      string,
      string,
      string,
    ];
    const makeChunk = (from: number, to: number): Row[] => {
      const rows: Row[] = [];
      for (let n = from; n < to; n++) {
        const round = Math.floor(n / TOOLS);
        const toolId = (n % TOOLS) + 1;
        const startMs = Math.floor(SPAN_START + round * slot + rand() * slot * 0.3);
        const endMs = Math.floor(startMs + slot * (0.1 + rand() * 0.5));
        const userId = 1 + Math.floor(rand() * USERS);
        const projectId = 1 + Math.floor(rand() * PROJECTS);
        const validated = rand() < 0.4 ? 1 : 0;
        const end = new Date(endMs).toISOString();
        rows.push([
          newUuid(),
          userId,
          rand() < 0.9 ? userId : 1 + Math.floor(rand() * 20),
          projectId,
          toolId,
          new Date(startMs).toISOString(),
          end,
          validated,
          validated ? 1 + Math.floor(rand() * 20) : null,
          rand() < 0.05 ? 1 : 0,
          preRunData(rand, userId, projectId),
          runData(rand),
          end,
        ]);
      }
      return rows;
    };
    const writeChunk = db.transaction((rows: Row[]) => {
      for (const row of rows) insert.run(...row);
    });
    // Only the transactions are timed: the rows of a chunk are generated before it.
    let nanos = 0n;
    for (let from = 0; from < events; from += BULK_TRANSACTION) {
      const rows = makeChunk(from, Math.min(events, from + BULK_TRANSACTION));
      const t0 = process.hrtime.bigint();
      writeChunk(rows);
      nanos += process.hrtime.bigint() - t0;
    }
    const seconds = Number(nanos) / 1e9;
    db.pragma('wal_checkpoint(TRUNCATE)');
    const dbFile = join(dataDir, 'labstation.db');
    return {
      dataDir,
      dbFile,
      tools,
      users,
      projects,
      insert: {
        rows: events,
        seconds,
        rowsPerSecond: events / seconds,
        bytes: statSync(dbFile).size,
      },
    };
  } finally {
    db.close();
  }
}

export interface UsagePayload {
  uuid: string;
  user_uuid: string;
  operator_uuid: string;
  project_uuid: string;
  tool_uuid: string;
  validated_by_uuid: string | null;
  force_ended_by_uuid: string | null;
  start: string;
  end: string | null;
  validated: number;
  remote_work: number;
  pre_run_data: string;
  run_data: string;
  post_usage_pending: number;
  reminder_due: number;
  version: number;
}

/**
 * Finished usage events of one tool after the fixture's three years, shaped exactly as
 * electron/core/station/outbox.ts enqueueUsage writes them into the outbox.
 */
export function stationUsages(fixture: Fixture, toolIndex: number, count: number): UsagePayload[] {
  const rand = seeded(7);
  const tool = fixture.tools[toolIndex];
  const slot = 10 * 60_000;
  const from = SPAN_START + SPAN_MS + DAY_MS;
  return Array.from({ length: count }, (_, i) => {
    const user = fixture.users[Math.floor(rand() * fixture.users.length)];
    const project = fixture.projects[Math.floor(rand() * fixture.projects.length)];
    const startMs = from + i * slot;
    return {
      uuid: newUuid(),
      user_uuid: user.uuid,
      operator_uuid: user.uuid,
      project_uuid: project.uuid,
      tool_uuid: tool.uuid,
      validated_by_uuid: null,
      force_ended_by_uuid: null,
      start: new Date(startMs).toISOString(),
      end: new Date(startMs + Math.floor(slot * (0.2 + rand() * 0.7))).toISOString(),
      validated: 0,
      remote_work: 0,
      pre_run_data: preRunData(rand, user.id, project.id),
      run_data: runData(rand),
      post_usage_pending: 0,
      reminder_due: 0,
      version: 2,
    };
  });
}
