/**
 * The core behind the UI's stores, for tests of answers that arrive out of order: each call is
 * answered at once from what the test says the core holds when it is made (`core.answers`), and
 * the answer is held (`core.held`) until the test lets it go, as a busy carrier would. Importing
 * this module puts it behind both carriers: the station's preload (`window.labstation`) and the
 * server page's fetch of `POST /rpc/<name>` (with a JWT in sessionStorage). Import it before the
 * stores.
 */
import type { LabstationPreload, RpcEnvelope } from '../../../shared/api.js';

export interface Held {
  name: string;
  args: Record<string, unknown>;
  release: () => void;
}

type Answer = (args: Record<string, unknown>) => RpcEnvelope;

export const core: {
  held: Held[];
  answers: Record<string, Answer>;
  /** Every call made, in order (held or let go). */
  calls: { name: string; args: Record<string, unknown> }[];
} = { held: [], answers: {}, calls: [] };

/** Forgets what is held, every answer set and the calls made (before each test). */
export function resetCore(): void {
  core.held = [];
  core.answers = {};
  core.calls = [];
}

/** A file record as harvest.files lists it: its id, and `f<id>` as its path. */
export const fileRow = (id: number): { id: number; relative_path: string } => ({
  id,
  relative_path: `f${id}`,
});

/**
 * An answer of harvest.files from a list of file ids, as the core pages it: newest (highest id)
 * first, those below `before_id`, whose path (fileRow) holds `search`, at most `limit` (100).
 */
export function filesFrom(ids: readonly number[], args: Record<string, unknown>): RpcEnvelope {
  const {
    before_id: before,
    search,
    limit,
  } = args as {
    before_id?: number;
    search?: string;
    limit?: number;
  };
  const page = [...ids]
    .sort((a, b) => b - a)
    .filter((id) => before === undefined || id < before)
    .filter((id) => search === undefined || fileRow(id).relative_path.includes(search))
    .slice(0, limit ?? 100);
  return { ok: true, result: { files: page.map(fileRow) } };
}

function hold<T>(name: string, args: Record<string, unknown>, value: T): Promise<T> {
  return new Promise((resolve) => core.held.push({ name, args, release: () => resolve(value) }));
}

function envelopeOf(name: string, args: Record<string, unknown>): RpcEnvelope {
  core.calls.push({ name, args });
  const envelope = core.answers[name]?.(args);
  if (!envelope) throw new Error(`no answer for ${name}`);
  return envelope;
}

const preload: LabstationPreload = {
  invoke(name, args) {
    const given = args as Record<string, unknown>;
    return hold(name, given, envelopeOf(name, given));
  },
  subscribe: () => () => undefined,
};

function serverFetch(path: string, init?: { body?: string }): Promise<Response> {
  // A logout ends its JWT on the server too, and does not wait for the answer.
  if (path === '/auth/jwt/logout') return Promise.resolve(new Response(null, { status: 204 }));
  const name = decodeURIComponent(path.replace(/^\/rpc\//, ''));
  const args = JSON.parse(init?.body ?? '{}') as Record<string, unknown>;
  const envelope = envelopeOf(name, args);
  const body = envelope.ok ? envelope.result : envelope.error;
  const response = new Response(JSON.stringify(body), {
    status: envelope.ok ? 200 : 400,
    headers: { 'content-type': 'application/json' },
  });
  return hold(name, args, response);
}

const globals = globalThis as unknown as Record<string, unknown>;
globals.window = { labstation: preload };
globals.fetch = serverFetch;
globals.sessionStorage = { getItem: () => 'jwt', setItem: () => undefined, removeItem: () => {} };

/**
 * Lets go the held answers that `which` names (a test, or a list), in the order held or
 * given, then lets the stores' awaits run.
 */
export async function release(which: ((h: Held) => boolean) | Held[]): Promise<void> {
  const match = Array.isArray(which) ? (h: Held) => which.includes(h) : which;
  const now = Array.isArray(which) ? which : core.held.filter(match);
  core.held = core.held.filter((h) => !match(h));
  for (const h of now) {
    h.release();
    // fetch's body is read after the answer: a few turns let each land before the next.
    for (let turn = 0; turn < 5; turn += 1) await new Promise((r) => setTimeout(r, 0));
  }
}

/** Releases every held call, those made meanwhile too, then waits for `read`. */
export async function settle(read: Promise<unknown>): Promise<void> {
  while (core.held.length > 0) await release(() => true);
  await read;
}

/** The answers held so far, taken out of `core.held` (as one read's calls). */
export function takeHeld(): Held[] {
  const taken = core.held;
  core.held = [];
  return taken;
}

/** Matches the held calls of `name` whose arguments `extra` takes. */
export const isCall =
  (name: string, extra: (args: Record<string, unknown>) => boolean = () => true) =>
  (h: Held): boolean =>
    h.name === name && extra(h.args);
