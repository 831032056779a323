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

export const core: { held: Held[]; answers: Record<string, Answer> } = { held: [], answers: {} };

/** Forgets what is held and every answer set (before each test). */
export function resetCore(): void {
  core.held = [];
  core.answers = {};
}

function hold<T>(name: string, args: Record<string, unknown>, value: T): Promise<T> {
  return new Promise((resolve) => core.held.push({ name, args, release: () => resolve(value) }));
}

function envelopeOf(name: string, args: Record<string, unknown>): RpcEnvelope {
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
