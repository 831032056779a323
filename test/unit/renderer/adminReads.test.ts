/**
 * The server's admin lists against answers that arrive out of order (as listReads.test.ts, with
 * the server's fetch alone): entering a section reads the lists again, and a save puts its row in
 * them; a read asked for before one already shown, or before a save, must not put older lists
 * back. Each call is answered at once from what the test says the server holds when it is made,
 * and the answer is held until the test lets it go.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { AdminProject } from '../../../shared/adminApi.js';
import type { RpcEnvelope } from '../../../shared/api.js';
import type { ScheduleOut } from '../../../shared/harvest/management.js';

interface Held {
  name: string;
  release: () => void;
}

let held: Held[] = [];
/** What the server answers to each call name when the call is made. */
let answers: Record<string, (args: Record<string, unknown>) => RpcEnvelope> = {};

function serverFetch(path: string, init?: { body?: string }): Promise<Response> {
  const name = decodeURIComponent(path.replace(/^\/rpc\//, ''));
  const args = JSON.parse(init?.body ?? '{}') as Record<string, unknown>;
  const envelope = answers[name]?.(args);
  if (!envelope) throw new Error(`no answer for ${name}`);
  const body = envelope.ok ? envelope.result : envelope.error;
  const response = new Response(JSON.stringify(body), {
    status: envelope.ok ? 200 : 400,
    headers: { 'content-type': 'application/json' },
  });
  return new Promise((resolve) => held.push({ name, release: () => resolve(response) }));
}

const globals = globalThis as unknown as Record<string, unknown>;
globals.window = {};
globals.fetch = serverFetch;
globals.sessionStorage = { getItem: () => 'jwt', setItem: () => undefined, removeItem: () => {} };

const { useAdminStore } = await import('../../../renderer/src/server/admin/store.js');
const { useHarvestAdminStore } = await import('../../../renderer/src/server/harvest/store.js');
const { useReservationAdminStore } =
  await import('../../../renderer/src/server/reservations/adminStore.js');

/** Lets go the held answers taken, in the order given, then lets the stores' awaits run. */
async function release(taken: Held[]): Promise<void> {
  held = held.filter((h) => !taken.includes(h));
  for (const h of taken) {
    h.release();
    // fetch's body is read after the answer: a few turns let each land before the next.
    for (let turn = 0; turn < 5; turn += 1) await new Promise((r) => setTimeout(r, 0));
  }
}
/** The answers held from here on, taken out of `held` (as one read's calls). */
function takeHeld(): Held[] {
  const taken = held;
  held = [];
  return taken;
}

beforeEach(() => {
  held = [];
  answers = {};
});

const named = (name: string, id: number) => ({ id, name, username: name });
const names = (list: { name: string }[]): string[] => list.map((x) => x.name);

describe('the admin lists (people, projects, tools, tokens, stations)', () => {
  let projects: string[] = [];
  beforeEach(async () => {
    projects = ['Alpha'];
    answers['admin.facility'] = () => ({
      ok: true,
      result: { users: [], tools: [], projects: projects.map((p, i) => named(p, i + 1)) },
    });
    answers['admin.tokens.list'] = () => ({ ok: true, result: { tokens: [] } });
    answers['admin.stations.list'] = () => ({ ok: true, result: { stations: [] } });
    const first = useAdminStore.getState().load();
    await release(takeHeld());
    await first;
    expect(names(useAdminStore.getState().projects)).toEqual(['Alpha']);
  });

  it("keeps the newer section's lists when the older read lands last", async () => {
    const older = useAdminStore.getState().load();
    const olderCalls = takeHeld();
    projects = ['Alpha', 'Beta'];
    const newer = useAdminStore.getState().load();
    await release(takeHeld());
    await newer;
    await release(olderCalls);
    await older;
    expect(names(useAdminStore.getState().projects)).toEqual(['Alpha', 'Beta']);
  });

  it('keeps a saved project when a read asked before the save lands after it', async () => {
    const before = useAdminStore.getState().load();
    useAdminStore.getState().putProject(named('Beta', 2) as unknown as AdminProject);
    await release(takeHeld());
    await before;
    expect(names(useAdminStore.getState().projects)).toEqual(['Alpha', 'Beta']);
  });
});

describe('the harvest admin records, and the schedules read again alone', () => {
  let schedules: number[] = [];
  beforeEach(async () => {
    schedules = [1];
    for (const kind of ['instruments', 'storageLocations', 'serviceAccounts', 'hooks']) {
      answers[`admin.${kind}.list`] = () => ({ ok: true, result: { items: [{ id: 1 }] } });
    }
    answers['admin.schedules.list'] = () => ({
      ok: true,
      result: { items: schedules.map((id) => ({ id })) },
    });
    const first = useHarvestAdminStore.getState().load();
    await release(takeHeld());
    await first;
  });
  const shown = (): number[] => useHarvestAdminStore.getState().schedules.map((s) => s.id);

  it('keeps the newer schedules when an older read of them lands last', async () => {
    const older = useHarvestAdminStore.getState().reloadSchedules();
    const olderCall = takeHeld();
    schedules = [1, 2];
    const newer = useHarvestAdminStore.getState().reloadSchedules();
    await release(takeHeld());
    await newer;
    await release(olderCall);
    await older;
    expect(shown()).toEqual([1, 2]);
  });

  it("keeps the schedules read alone after a section's read that lands last", async () => {
    const section = useHarvestAdminStore.getState().load();
    const sectionCalls = takeHeld();
    schedules = [1, 2];
    const timer = useHarvestAdminStore.getState().reloadSchedules();
    await release(takeHeld());
    await timer;
    await release(sectionCalls);
    await section;
    expect(shown()).toEqual([1, 2]);
  });

  it('keeps a saved schedule when a read asked before the save lands after it', async () => {
    const timer = useHarvestAdminStore.getState().reloadSchedules();
    useHarvestAdminStore.getState().put('schedules', { id: 2 } as unknown as ScheduleOut);
    await release(takeHeld());
    await timer;
    expect(shown()).toEqual([1, 2]);
  });
});

describe('the areas and reservation question sets', () => {
  let areas: string[] = [];
  beforeEach(async () => {
    areas = ['Lab A'];
    answers['admin.areas.list'] = () => ({
      ok: true,
      result: { areas: areas.map((a, i) => named(a, i + 1)) },
    });
    answers['admin.reservationQuestionSets.list'] = () => ({
      ok: true,
      result: { sets: [{ id: 1 }] },
    });
    const first = useReservationAdminStore.getState().load();
    await release(takeHeld());
    await first;
  });
  const shown = (): string[] => names(useReservationAdminStore.getState().areas);

  it("keeps the newer section's lists when the older read lands last", async () => {
    const older = useReservationAdminStore.getState().load();
    const olderCalls = takeHeld();
    areas = ['Lab A', 'Lab B'];
    const newer = useReservationAdminStore.getState().load();
    await release(takeHeld());
    await newer;
    await release(olderCalls);
    await older;
    expect(shown()).toEqual(['Lab A', 'Lab B']);
  });

  it('keeps a deleted set out when a read asked before the delete lands after it', async () => {
    const before = useReservationAdminStore.getState().load();
    useReservationAdminStore.getState().dropSet(1);
    await release(takeHeld());
    await before;
    expect(useReservationAdminStore.getState().sets).toEqual([]);
  });
});
