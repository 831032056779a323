/**
 * The server's admin lists against answers that arrive out of order (heldCore.ts, as in
 * listReads.test.ts): entering a section reads the lists again, and a save puts its row in
 * them; a read asked for before one already shown, or before a save, must not put older lists
 * back. Each call is answered at once from what the test says the server holds when it is made,
 * and the answer is held until the test lets it go. A logout clears them all, and an answer
 * asked for before it is not shown to whoever logs in next.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { AdminProject } from '../../../shared/adminApi.js';
import type { ScheduleOut } from '../../../shared/harvest/management.js';
import { core, release, resetCore, takeHeld } from './heldCore.js';

const { useAdminStore } = await import('../../../renderer/src/server/admin/store.js');
const { useHarvestAdminStore } = await import('../../../renderer/src/server/harvest/store.js');
const { useReservationAdminStore } =
  await import('../../../renderer/src/server/reservations/adminStore.js');
const { useServerStore } = await import('../../../renderer/src/server/store.js');

beforeEach(resetCore);

const named = (name: string, id: number) => ({ id, name, username: name });
const names = (list: { name: string }[]): string[] => list.map((x) => x.name);

describe('the admin lists (people, projects, tools, tokens, stations)', () => {
  let projects: string[] = [];
  beforeEach(async () => {
    projects = ['Alpha'];
    core.answers['admin.facility'] = () => ({
      ok: true,
      result: { users: [], tools: [], projects: projects.map((p, i) => named(p, i + 1)) },
    });
    core.answers['admin.tokens.list'] = () => ({ ok: true, result: { tokens: [] } });
    core.answers['admin.stations.list'] = () => ({ ok: true, result: { stations: [] } });
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
      core.answers[`admin.${kind}.list`] = () => ({ ok: true, result: { items: [{ id: 1 }] } });
    }
    core.answers['admin.schedules.list'] = () => ({
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
    core.answers['admin.areas.list'] = () => ({
      ok: true,
      result: { areas: areas.map((a, i) => named(a, i + 1)) },
    });
    core.answers['admin.reservationQuestionSets.list'] = () => ({
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

describe('a logout', () => {
  beforeEach(() => {
    core.answers['admin.facility'] = () => ({
      ok: true,
      result: { users: [named('ada', 1)], tools: [named('SEM', 1)], projects: [named('Alpha', 1)] },
    });
    core.answers['admin.tokens.list'] = () => ({ ok: true, result: { tokens: [{ id: 1 }] } });
    core.answers['admin.stations.list'] = () => ({ ok: true, result: { stations: [{ id: 1 }] } });
    for (const kind of [
      'instruments',
      'storageLocations',
      'serviceAccounts',
      'schedules',
      'hooks',
    ]) {
      core.answers[`admin.${kind}.list`] = () => ({ ok: true, result: { items: [{ id: 1 }] } });
    }
    core.answers['admin.areas.list'] = () => ({ ok: true, result: { areas: [named('Lab A', 1)] } });
    core.answers['admin.reservationQuestionSets.list'] = () => ({
      ok: true,
      result: { sets: [{ id: 1 }] },
    });
  });

  /** What the three admin stores hold: every list, and whether they count as loaded. */
  const held = () => {
    const admin = useAdminStore.getState();
    const harvest = useHarvestAdminStore.getState();
    const reservations = useReservationAdminStore.getState();
    return {
      admin: [admin.users, admin.projects, admin.tools, admin.tokens, admin.stations, admin.loaded],
      harvest: [
        harvest.instruments,
        harvest.storageLocations,
        harvest.serviceAccounts,
        harvest.schedules,
        harvest.hooks,
        harvest.loaded,
      ],
      reservations: [reservations.areas, reservations.sets, reservations.loaded],
    };
  };
  const nothing = {
    admin: [[], [], [], [], [], false],
    harvest: [[], [], [], [], [], false],
    reservations: [[], [], false],
  };
  const loadAll = (): Promise<unknown> =>
    Promise.all([
      useAdminStore.getState().load(),
      useHarvestAdminStore.getState().load(),
      useHarvestAdminStore.getState().reloadSchedules(),
      useReservationAdminStore.getState().load(),
    ]);

  it('clears the admin lists read before it', async () => {
    const read = loadAll();
    await release(takeHeld());
    await read;
    expect(held().admin[1]).toEqual([named('Alpha', 1)]);
    expect(held().harvest[3]).toEqual([{ id: 1 }]);
    expect(held().reservations[0]).toEqual([named('Lab A', 1)]);
    useServerStore.getState().logout();
    expect(held()).toEqual(nothing);
  });

  it('drops the answers of reads asked for before it, landing after it', async () => {
    const read = loadAll();
    const before = takeHeld();
    expect(before).toHaveLength(11);
    useServerStore.getState().logout('Your login has ended. Log in again.');
    await release(before);
    await read;
    expect(held()).toEqual(nothing);
  });
});
