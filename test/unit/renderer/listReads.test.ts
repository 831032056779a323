/**
 * Screens that read a list again (new filters, a timer, an event, a booking) against answers
 * that arrive out of order: an answer asked for before one already shown holds older data and
 * must not replace it, and an answer asked for before a logoff is not shown to whoever is next.
 * The core sits behind the preload boundary (the station) or behind fetch (the server's page);
 * here each call is answered at once from what the test says the core holds when it is made,
 * and the answer is held until the test lets it go, as a busy carrier would.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { RpcEnvelope } from '../../../shared/api.js';
import { readOrder } from '../../../renderer/src/readOrder.js';
import { core, isCall, release, resetCore, settle, type Held } from './heldCore.js';

const { useHistoryStore } = await import('../../../renderer/src/stores/history.js');
const { useStationStore } = await import('../../../renderer/src/stores/station.js');
const { useSessionStore } = await import('../../../renderer/src/stores/session.js');
const { useStaffStore } = await import('../../../renderer/src/stores/staff.js');
const { useNotebookStore } = await import('../../../renderer/src/stores/notebook.js');
const { useReservationsStore: useUpcomingStore } =
  await import('../../../renderer/src/stores/reservations.js');
const { RECENT_KEPT_MAX, useServerStore } = await import('../../../renderer/src/server/store.js');
const { useReservationsStore: useServerReservations } =
  await import('../../../renderer/src/server/reservations/store.js');

beforeEach(resetCore);

describe('readOrder', () => {
  it('takes answers in any order but never one asked before one shown', () => {
    const reads = readOrder();
    const first = reads.ask();
    const second = reads.ask();
    const third = reads.ask();
    expect(reads.isLatest(second)).toBe(false);
    expect(reads.take(second)).toBe(true);
    expect(reads.take(first)).toBe(false);
    expect(reads.isLatest(third)).toBe(true);
    expect(reads.take(third)).toBe(true);
  });

  it('drops every answer under way once it forgets, and takes those asked after', () => {
    const reads = readOrder();
    const before = reads.ask();
    reads.forget();
    const after = reads.ask();
    expect(reads.take(before)).toBe(false);
    expect(reads.take(after)).toBe(true);
  });
});

const tool = { name: 'SEM', id: 1 };
const event = (id: number, user: string) => ({ id, user: { username: user } });

describe('usage data history', () => {
  beforeEach(() => {
    useHistoryStore.getState().clear();
    // The core answers with the events of the user asked for (everyone when none).
    const all = [event(1, 'ada'), event(2, 'bob'), event(3, 'ada')];
    core.answers['usage.history'] = (args) => ({
      ok: true,
      result: {
        tool,
        events: all.filter((e) => args.user === undefined || e.user.username === args.user),
      },
    });
  });
  const shownIds = (): number[] => useHistoryStore.getState().events.map((e) => e.id);

  it("keeps the table of the newest filters when an older one's answer lands last", async () => {
    const everyone = useHistoryStore.getState().load('SEM');
    useHistoryStore.getState().setFilters({ user: 'bob' });
    const bob = useHistoryStore.getState().load('SEM');
    await release(isCall('usage.history', (a) => a.user === 'bob'));
    await bob;
    expect(shownIds()).toEqual([2]);
    expect(useHistoryStore.getState().loading).toBe(false);

    await release(isCall('usage.history'));
    await everyone;
    expect(shownIds()).toEqual([2]);
  });

  it('shows an older answer that lands first, still loading until the newest lands', async () => {
    const everyone = useHistoryStore.getState().load('SEM');
    useHistoryStore.getState().setFilters({ user: 'bob' });
    const bob = useHistoryStore.getState().load('SEM');
    await release(isCall('usage.history', (a) => a.user === undefined));
    await everyone;
    expect(shownIds()).toEqual([1, 2, 3]);
    expect(useHistoryStore.getState().loading).toBe(true);
    await release(isCall('usage.history'));
    await bob;
    expect(shownIds()).toEqual([2]);
    expect(useHistoryStore.getState().loading).toBe(false);
  });

  it('says the table is of the filters on show only once their read lands, and not while typed', async () => {
    const { tableMatchesFilters } = await import('../../../renderer/src/stores/history.js');
    const matches = (): boolean => tableMatchesFilters(useHistoryStore.getState(), false);
    const everyone = useHistoryStore.getState().load('SEM');
    await release(isCall('usage.history'));
    await everyone;
    expect(matches()).toBe(true);
    // Typed, not applied: the table is everyone's still.
    useHistoryStore.getState().setFilters({ user: 'bob ' });
    expect(matches()).toBe(false);
    // Applied, its read under way: the table on show is still everyone's.
    const bob = useHistoryStore.getState().load('SEM');
    expect(shownIds()).toEqual([1, 2, 3]);
    expect(matches()).toBe(false);
    await release(isCall('usage.history'));
    await bob;
    expect(shownIds()).toEqual([2]);
    expect(matches()).toBe(true);
    // Shown anew, the tab reads the applied filters and keeps what is typed.
    useHistoryStore.getState().setFilters({ user: 'ada' });
    const again = useHistoryStore.getState().load('SEM', { again: true });
    await release(isCall('usage.history', (a) => a.user === 'bob'));
    await again;
    expect(shownIds()).toEqual([2]);
    expect(useHistoryStore.getState().filters.user).toBe('ada');
    expect(matches()).toBe(false);
  });

  it('keeps the newest table when an older read fails last', async () => {
    core.answers['usage.history'] = (args) =>
      args.user === 'nobody'
        ? { ok: false, error: { code: 'not_found', message: 'No user nobody.' } }
        : { ok: true, result: { tool, events: [event(2, 'bob')] } };
    useHistoryStore.getState().setFilters({ user: 'nobody' });
    const failing = useHistoryStore.getState().load('SEM');
    useHistoryStore.getState().setFilters({ user: 'bob' });
    const bob = useHistoryStore.getState().load('SEM');
    await release(isCall('usage.history', (a) => a.user === 'bob'));
    await release(isCall('usage.history'));
    await Promise.all([failing, bob]);
    expect(shownIds()).toEqual([2]);
    expect(useHistoryStore.getState().error).toBeNull();
  });

  it('shows the next person nothing of a table asked for before the logoff', async () => {
    const before = useHistoryStore.getState().load('SEM');
    useHistoryStore.getState().clear();
    await release(isCall('usage.history'));
    await before;
    expect(shownIds()).toEqual([]);
    expect(useHistoryStore.getState().tool).toBeNull();
    expect(useHistoryStore.getState().loading).toBe(false);
  });
});

describe("the tool's state", () => {
  let state = 'idle';
  beforeEach(() => {
    state = 'idle';
    useStationStore.setState({ info: { tool: 'SEM' } as never, status: null, loadError: null });
    core.answers['toolControl.status'] = () => ({ ok: true, result: { state } });
  });
  const shownState = (): string | undefined => useStationStore.getState().status?.state;

  it("stays in use when a read asked before the enable lands after the enable's read", async () => {
    const event = useStationStore.getState().refreshStatus();
    state = 'in_use';
    const { call } = await import('../../../renderer/src/bridge.js');
    const enabled = useStationStore
      .getState()
      .showStatus(() => call('toolControl.status', { tool: 'SEM' }));
    const [older, newer] = core.held;
    core.held = [];
    newer?.release();
    await enabled;
    expect(shownState()).toBe('in_use');
    older?.release();
    await event;
    expect(shownState()).toBe('in_use');
  });

  it("gives the action's failure to its caller", async () => {
    const refused = useStationStore
      .getState()
      .showStatus(() => Promise.reject(new Error('The tool is shut down.')));
    await expect(refused).rejects.toThrow('The tool is shut down.');
    expect(useStationStore.getState().status).toBeNull();
  });
});

describe('the pending forms of the person logged on', () => {
  const person = (id: number, pending: number[]) =>
    ({
      user: { id, username: `u${id}` },
      started_at: `2026-12-03T10:0${id}:00Z`,
      pending: pending.map((usage) => ({ usage: { id: usage } })),
    }) as never;
  let pendingNow: number[] = [];
  beforeEach(() => {
    pendingNow = [5, 6];
    useSessionStore.setState({ session: person(1, [5]), notice: null });
    core.answers['usage.pending'] = () => ({
      ok: true,
      result: { pending: pendingNow.map((usage) => ({ usage: { id: usage } })) },
    });
  });
  const session = () => useSessionStore.getState().session;
  const pendingIds = (): number[] => (session()?.pending ?? []).map((p) => p.usage.id);

  it('takes the list read for the person on', async () => {
    const reading = useSessionStore.getState().refreshPending();
    await release(isCall('usage.pending'));
    await reading;
    expect(pendingIds()).toEqual([5, 6]);
  });

  it('does not bring back the person who logged off while it was read', async () => {
    const reading = useSessionStore.getState().refreshPending();
    useSessionStore.getState().ended('Logged off after 10 idle minutes.');
    await release(isCall('usage.pending'));
    await reading;
    expect(session()).toBeNull();
  });

  it('does not put the person before back over the one who logged on since', async () => {
    const reading = useSessionStore.getState().refreshPending();
    useSessionStore.setState({ session: person(2, []) });
    await release(isCall('usage.pending'));
    await reading;
    expect(session()?.user.id).toBe(2);
    expect(pendingIds()).toEqual([]);
  });

  it('does not bring back a form completed while the list was read', async () => {
    const reading = useSessionStore.getState().refreshPending();
    pendingNow = [6];
    useSessionStore.getState().dropPending(5);
    await release(isCall('usage.pending'));
    await reading;
    expect(pendingIds()).toEqual([]);
  });
});

describe('the qualified users staff enable for', () => {
  it('keeps nothing of a list read for staff who logged off meanwhile', async () => {
    core.answers['users.list'] = () => ({ ok: true, result: { users: [{ id: 1, projects: [] }] } });
    const reading = useStaffStore.getState().loadUsers('SEM');
    useStaffStore.getState().reset();
    await release(isCall('users.list'));
    await reading;
    expect(useStaffStore.getState().users).toEqual([]);
    expect(useStaffStore.getState().loadedFor).toBeNull();
  });
});

describe('the notebook entry on show, and searches', () => {
  beforeEach(() => {
    useNotebookStore.getState().clear();
    core.answers['notebook.get'] = (args) => ({
      ok: true,
      result: { entry: { id: args.id, uuid: `u${String(args.id)}`, title: `E${String(args.id)}` } },
    });
    core.answers['notebook.search'] = (args) => ({
      ok: true,
      result: {
        total: 3,
        entries: [{ id: args.query === 'old' ? 1 : 2 + Number(args.offset ?? 0) }],
      },
    });
  });
  const openId = (): number | undefined => useNotebookStore.getState().open?.id;
  const found = (): number[] =>
    (useNotebookStore.getState().search?.entries ?? []).map((entry) => entry.id);
  const openEntry = (id: number | null) => useNotebookStore.getState().openEntry(id);

  it('opens the entry chosen last when the one chosen before answers last', async () => {
    const first = openEntry(1);
    const second = openEntry(2);
    await release(isCall('notebook.get', (a) => a.id === 2));
    await release(isCall('notebook.get'));
    await Promise.all([first, second]);
    expect(openId()).toBe(2);
  });

  it('stays closed, and shows the next person nothing, when an open lands after', async () => {
    const closed = openEntry(1);
    void openEntry(null);
    await release(isCall('notebook.get'));
    await closed;
    expect(openId()).toBeUndefined();

    const loggedOff = openEntry(1);
    useNotebookStore.getState().clear();
    await release(isCall('notebook.get'));
    await loggedOff;
    expect(openId()).toBeUndefined();
  });

  it('shows a new entry, or a copy, only once the list read after it holds its row', async () => {
    // Close focuses the open entry's row: shown before the list had it, a quick Close found none.
    let stored = [1];
    core.answers['notebook.list'] = (args) => ({
      ok: true,
      result: { entries: args.kind === undefined ? stored.map((id) => ({ id })) : [] },
    });
    const rows = (): number[] => useNotebookStore.getState().entries.map((entry) => entry.id);
    core.answers['notebook.create'] = () => {
      stored = [2, ...stored];
      return { ok: true, result: { entry: { id: 2, uuid: 'u2', title: 'E2' } } };
    };
    const made = useNotebookStore.getState().create({ kind: 'item', title: 'E2' } as never);
    await release(isCall('notebook.create'));
    expect(openId()).toBeUndefined();
    await settle(made);
    expect(rows()).toEqual([2, 1]);
    expect(openId()).toBe(2);
    expect(useNotebookStore.getState().copyShown).toBeNull();

    core.answers['notebook.duplicate'] = () => {
      stored = [3, ...stored];
      return { ok: true, result: { entry: { id: 3, uuid: 'u3', title: 'E2 (copy)' } } };
    };
    const copied = useNotebookStore.getState().duplicate(2);
    await release(isCall('notebook.duplicate'));
    expect(openId()).toBe(2);
    await settle(copied);
    expect(rows()).toEqual([3, 2, 1]);
    expect(openId()).toBe(3);
    // Its panel takes the focus to its title once drawn (EntryPanel); a new entry's does not.
    expect(useNotebookStore.getState().copyShown).toBe(3);
    // Its panel never drawn (the tab left), another entry chosen: it takes no focus later.
    await openEntry(null);
    expect(useNotebookStore.getState().copyShown).toBeNull();
  });

  it("keeps the later search's results, and adds no page of an earlier search", async () => {
    const run = (query: string) => useNotebookStore.getState().runSearch({ query } as never);
    const older = run('old');
    const newer = run('new');
    await release(isCall('notebook.search', (a) => a.query === 'new'));
    await release(isCall('notebook.search'));
    await Promise.all([older, newer]);
    expect(found()).toEqual([2]);

    const more = useNotebookStore.getState().searchMore();
    const again = run('old');
    await release(isCall('notebook.search', (a) => a.offset === undefined));
    await again;
    await release(isCall('notebook.search'));
    await more;
    expect(found()).toEqual([1]);
  });

  it('does not bring an earlier search back over a new one when entries change meanwhile', async () => {
    const run = (query: string) => useNotebookStore.getState().runSearch({ query } as never);
    const first = run('old');
    await release(isCall('notebook.search'));
    await first;
    expect(found()).toEqual([1]);
    // A new search is under way when a change asks for the one on show again.
    const newer = run('new');
    const refreshed = useNotebookStore.getState().refreshSearch();
    for (const held of [...core.held]) held.release();
    await Promise.all([newer, refreshed]);
    for (const held of [...core.held]) held.release();
    expect(found()).toEqual([2]);
    // With none under way, a change reads the one on show again.
    const again = useNotebookStore.getState().refreshSearch();
    await release(isCall('notebook.search', (a) => a.query === 'new'));
    await again;
    expect(found()).toEqual([2]);
  });
});

describe("the station's upcoming reservations", () => {
  let booked: number[] = [];
  beforeEach(() => {
    useUpcomingStore.getState().clear();
    booked = [1];
    core.answers['reservations.upcoming'] = () => ({
      ok: true,
      result: { reservations: booked.map((id) => ({ id })) },
    });
  });
  const shownIds = (): number[] =>
    (useUpcomingStore.getState().upcoming?.reservations ?? []).map((r) => r.id);

  it('keeps the newer list when the older one lands last', async () => {
    const older = useUpcomingStore.getState().load();
    booked = [1, 2];
    const newer = useUpcomingStore.getState().load();
    const [first, second] = core.held;
    core.held = [];
    second?.release();
    await newer;
    expect(shownIds()).toEqual([1, 2]);
    first?.release();
    await older;
    expect(shownIds()).toEqual([1, 2]);
  });

  it('shows the next person nothing of a list read for the person before', async () => {
    const before = useUpcomingStore.getState().load();
    useUpcomingStore.getState().clear();
    await release(isCall('reservations.upcoming'));
    await before;
    expect(useUpcomingStore.getState().upcoming).toBeNull();
  });
});

describe("the server's reservations page", () => {
  let mine: number[] = [];
  let week: number[] = [];
  beforeEach(async () => {
    mine = [1];
    week = [1];
    core.answers['reservations.targets'] = () => ({
      ok: true,
      result: { tools: [{ id: 7, name: 'SEM' }], areas: [] },
    });
    core.answers['reservations.mine'] = () => ({
      ok: true,
      result: { reservations: mine.map((id) => ({ id })) },
    });
    core.answers['reservations.calendar'] = () => ({
      ok: true,
      result: { reservations: week.map((id) => ({ id })) },
    });
    const loading = useServerReservations.getState().load(1);
    while (core.held.length > 0) await release(() => true);
    await loading;
    expect(useServerReservations.getState().calendar.map((r) => r.id)).toEqual([1]);
  });
  const ids = (list: { id: number }[]): number[] => list.map((r) => r.id);

  it('keeps the calendar and list read after a booking when older reads land last', async () => {
    const olderCalendar = useServerReservations.getState().refreshCalendar();
    const olderMine = useServerReservations.getState().refreshMine();
    mine = [1, 2];
    week = [1, 2];
    const newerCalendar = useServerReservations.getState().refreshCalendar();
    const newerMine = useServerReservations.getState().refreshMine();
    const [oldCalendar, oldMine, ...newer] = core.held;
    core.held = [oldCalendar, oldMine].filter((h): h is Held => h !== undefined);
    core.held.push(...newer);
    await release((h) => newer.includes(h));
    await Promise.all([newerCalendar, newerMine]);
    expect(ids(useServerReservations.getState().calendar)).toEqual([1, 2]);
    expect(ids(useServerReservations.getState().mine)).toEqual([1, 2]);

    await release(() => true);
    await Promise.all([olderCalendar, olderMine]);
    expect(ids(useServerReservations.getState().calendar)).toEqual([1, 2]);
    expect(ids(useServerReservations.getState().mine)).toEqual([1, 2]);
  });

  it('shows another account nothing read for the account before', async () => {
    const before = useServerReservations.getState().refreshMine();
    mine = [];
    const other = useServerReservations.getState().load(2);
    const [oldMine, ...rest] = core.held;
    core.held = [oldMine].filter((h): h is Held => h !== undefined);
    core.held.push(...rest);
    while (core.held.some((h) => h !== oldMine)) await release((h) => h !== oldMine);
    await other;
    expect(ids(useServerReservations.getState().mine)).toEqual([]);
    await release(() => true);
    await before;
    expect(ids(useServerReservations.getState().mine)).toEqual([]);
  });

  it('keeps nothing after a logout, not even what a load asked for before it brings', async () => {
    useServerStore.getState().logout();
    const state = useServerReservations.getState();
    expect([state.targets, state.mine, state.calendar, state.accountId]).toEqual([
      null,
      [],
      [],
      null,
    ]);
    const before = useServerReservations.getState().load(1);
    const calls = core.held.splice(0);
    useServerStore.getState().logout();
    await release(calls);
    while (core.held.length > 0) await release(() => true);
    await before;
    const after = useServerReservations.getState();
    expect([after.targets, after.mine, after.calendar, after.accountId]).toEqual([
      null,
      [],
      [],
      null,
    ]);
  });
});

/** A fresh page, with Sam (staff) logged in. */
function samLoggedIn(): void {
  useServerStore.getState().logout();
  useServerStore.setState({
    account: {
      id: 3,
      uuid: 'u-sam',
      email: 'sam@example.org',
      username: 'sam',
      first_name: 'Sam',
      last_name: 'Staff',
      role: 'staff',
    },
  });
}

describe("the server's page of the person's usage", () => {
  it('shows the next person nothing read for the one before a logout', async () => {
    let whose = 'ada';
    core.answers['usage.pendingMine'] = () => ({ ok: true, result: { pending: [] } });
    core.answers['usage.mine'] = () => ({ ok: true, result: { events: [event(1, whose)] } });
    const before = useServerStore.getState().refresh();
    useServerStore.getState().logout('Your login has expired.');
    whose = 'bob';
    const next = useServerStore.getState().refresh();
    const older = core.held.slice(0, 2);
    await release((h) => !older.includes(h));
    await next;
    await release(() => true);
    await before;
    expect(useServerStore.getState().events).toEqual([event(1, 'bob')]);
    expect(useServerStore.getState().loading).toBe(false);
  });

  it('keeps the staff list and its choice as they were when the read of those left to validate fails', async () => {
    samLoggedIn();
    let recent: () => RpcEnvelope = () => ({
      ok: true,
      result: { events: [event(1, 'ada'), event(2, 'bob')] },
    });
    core.answers['usage.pendingMine'] = () => ({ ok: true, result: { pending: [] } });
    core.answers['usage.mine'] = () => ({ ok: true, result: { events: [] } });
    core.answers['usage.recent'] = () => recent();
    core.answers['usage.tools'] = () => ({ ok: true, result: { tools: [] } });
    await settle(useServerStore.getState().refresh());
    expect(useServerStore.getState().recent).toHaveLength(2);

    // The server fails (not a refusal): no empty list saying nothing is left to validate.
    recent = () => ({ ok: false, error: { code: 'internal', message: 'database is locked' } });
    await settle(useServerStore.getState().showToValidate(true));
    let state = useServerStore.getState();
    expect([state.recentToValidate, state.recent.length]).toEqual([false, 2]);
    expect(state.error).toMatch(/database is locked/i);
    expect(core.calls.filter((c) => c.name === 'usage.recent').at(-1)?.args).toEqual({
      to_validate: true,
      limit: 50,
    });

    // Answered: the choice and its list together. A refusal (role taken away) empties it.
    recent = () => ({ ok: true, result: { events: [event(2, 'bob')] } });
    await settle(useServerStore.getState().showToValidate(true));
    state = useServerStore.getState();
    expect([state.recentToValidate, state.recent.length, state.error]).toEqual([true, 1, null]);
    recent = () => ({ ok: false, error: { code: 'forbidden', message: 'for staff only' } });
    await settle(useServerStore.getState().refresh());
    state = useServerStore.getState();
    expect([state.recentToValidate, state.recent.length, state.error]).toEqual([true, 0, null]);
    useServerStore.getState().logout();
    expect(useServerStore.getState().recentToValidate).toBe(false);
  });

  it('narrows the staff list to a tool, and keeps the tool it lists when that read fails', async () => {
    samLoggedIn();
    const tools = [
      { id: 1, name: 'AFM' },
      { id: 2, name: 'SEM' },
    ];
    let recent: (args: Record<string, unknown>) => RpcEnvelope = (args) => ({
      ok: true,
      result: {
        events: args.tool_id === 2 ? [event(2, 'bob')] : [event(1, 'ada'), event(2, 'bob')],
      },
    });
    core.answers['usage.pendingMine'] = () => ({ ok: true, result: { pending: [] } });
    core.answers['usage.mine'] = () => ({ ok: true, result: { events: [] } });
    core.answers['usage.recent'] = (args) => recent(args);
    core.answers['usage.tools'] = () => ({ ok: true, result: { tools } });
    const lastRecentArgs = (): unknown =>
      core.calls.filter((c) => c.name === 'usage.recent').at(-1)?.args;
    await settle(useServerStore.getState().refresh());
    let state = useServerStore.getState();
    expect([state.tools, state.recentToolId, state.recent.length]).toEqual([tools, null, 2]);
    expect(lastRecentArgs()).toEqual({ to_validate: false, limit: 50 });

    // Chosen: shown at once, then read with it; the other choice goes along.
    const chosen = useServerStore.getState().showTool(2);
    expect(useServerStore.getState().recentToolId).toBe(2);
    await settle(chosen);
    state = useServerStore.getState();
    expect([state.recentToolId, state.recent.length]).toEqual([2, 1]);
    await settle(useServerStore.getState().showToValidate(true));
    expect(lastRecentArgs()).toEqual({ to_validate: true, tool_id: 2, limit: 50 });

    // A failed read of another tool's list: the choice goes back to the tool the list holds.
    recent = () => ({
      ok: false,
      error: { code: 'not_found', message: 'tool_id: tool 1 does not exist' },
    });
    await settle(useServerStore.getState().showTool(1));
    state = useServerStore.getState();
    expect([state.recentToolId, state.recent.length]).toEqual([2, 1]);
    expect(state.error).toMatch(/tool_id: tool 1 does not exist/i);
    // Every tool again.
    recent = () => ({ ok: true, result: { events: [event(1, 'ada'), event(2, 'bob')] } });
    await settle(useServerStore.getState().showTool(null));
    expect(lastRecentArgs()).toEqual({ to_validate: true, limit: 50 });
    expect(useServerStore.getState().recentToolId).toBeNull();
    await settle(useServerStore.getState().showTool(2));
    useServerStore.getState().logout();
    state = useServerStore.getState();
    expect([state.recentToolId, state.tools]).toEqual([null, []]);
  });

  it('adds older pages of the staff list onto the list they go on from, and no other', async () => {
    samLoggedIn();
    // 120 events, newest (highest id) first; a tool's are the even ones.
    const ids = Array.from({ length: 120 }, (_, i) => 120 - i);
    core.answers['usage.pendingMine'] = () => ({ ok: true, result: { pending: [] } });
    core.answers['usage.mine'] = () => ({ ok: true, result: { events: [] } });
    core.answers['usage.tools'] = () => ({ ok: true, result: { tools: [{ id: 2, name: 'SEM' }] } });
    core.answers['usage.recent'] = (args) => {
      const { before_id: before, tool_id: tool, limit } = args as Record<string, number>;
      const page = ids
        .filter((id) => before === undefined || id < before)
        .filter((id) => tool === undefined || id % 2 === 0)
        .slice(0, limit);
      return { ok: true, result: { events: page.map((id) => event(id, 'ada')) } };
    };
    const shown = (): number[] => useServerStore.getState().recent.map((e) => e.id);
    await settle(useServerStore.getState().refresh());
    expect([shown().length, useServerStore.getState().recentMore]).toEqual([50, true]);
    await settle(useServerStore.getState().showOlder());
    expect(core.calls.at(-1)).toEqual({
      name: 'usage.recent',
      args: { to_validate: false, limit: 50, before_id: 71 },
    });
    expect([shown().length, useServerStore.getState().recentMore]).toEqual([100, true]);
    await settle(useServerStore.getState().showOlder());
    expect(shown()).toEqual(ids);
    expect(useServerStore.getState().recentMore).toBe(false);
    const calls = core.calls.length;
    await settle(useServerStore.getState().showOlder());
    expect(core.calls.length).toBe(calls);

    // A refresh under the same choices (after a form is answered, say) keeps the older pages
    // shown: it reads as many pages at once.
    await settle(useServerStore.getState().refresh());
    expect(core.calls.filter((c) => c.name === 'usage.recent').at(-1)?.args).toEqual({
      to_validate: false,
      limit: 150,
    });
    expect([shown(), useServerStore.getState().recentMore]).toEqual([ids, false]);
    // Another choice starts at one page again, and so does going back to this one.
    await settle(useServerStore.getState().showTool(2));
    await settle(useServerStore.getState().showTool(null));
    expect([shown(), useServerStore.getState().recentMore]).toEqual([ids.slice(0, 50), true]);

    // An older page asked for, then another tool chosen before it came: it is not added to
    // that tool's list.
    const older = useServerStore.getState().showOlder();
    const held = core.held.splice(0);
    await settle(useServerStore.getState().showTool(2));
    await release(held);
    await older;
    expect(shown()).toEqual(ids.filter((id) => id % 2 === 0).slice(0, 50));
    // That tool's older page goes on from its own list.
    await settle(useServerStore.getState().showOlder());
    expect(shown()).toEqual(ids.filter((id) => id % 2 === 0));
    expect(useServerStore.getState().recentMore).toBe(false);

    // Read again under the same choices while an older page was on its way: the list it went on
    // from is gone, though the new one ends with the same event; nothing is added twice.
    await settle(useServerStore.getState().showTool(null));
    const again = useServerStore.getState().showOlder();
    const heldAgain = core.held.splice(0);
    await settle(useServerStore.getState().refresh());
    await release(heldAgain);
    await again;
    expect(shown()).toEqual(ids.slice(0, 50));

    // A logout while it is on its way: the next person sees neither the page nor its failure.
    const failing = (): RpcEnvelope => ({
      ok: false,
      error: { code: 'internal', message: 'database is locked' },
    });
    core.answers['usage.recent'] = failing;
    const cut = useServerStore.getState().showOlder();
    const heldCut = core.held.splice(0);
    samLoggedIn();
    await release(heldCut);
    await cut;
    expect([useServerStore.getState().recent, useServerStore.getState().error]).toEqual([[], null]);
  });

  it('keeps at most RECENT_KEPT_MAX events of the staff list at a refresh, the newest', async () => {
    samLoggedIn();
    const ids = Array.from({ length: 700 }, (_, i) => 700 - i);
    core.answers['usage.pendingMine'] = () => ({ ok: true, result: { pending: [] } });
    core.answers['usage.mine'] = () => ({ ok: true, result: { events: [] } });
    core.answers['usage.tools'] = () => ({ ok: true, result: { tools: [] } });
    core.answers['usage.recent'] = (args) => {
      const { before_id: before, limit } = args as Record<string, number>;
      const page = ids.filter((id) => before === undefined || id < before).slice(0, limit);
      return { ok: true, result: { events: page.map((id) => event(id, 'ada')) } };
    };
    await settle(useServerStore.getState().refresh());
    for (let page = 1; page < 11; page++) await settle(useServerStore.getState().showOlder());
    expect(useServerStore.getState().recent).toHaveLength(550);
    await settle(useServerStore.getState().refresh());
    expect(RECENT_KEPT_MAX).toBe(500);
    const state = useServerStore.getState();
    expect([state.recent.map((e) => e.id), state.recentMore]).toEqual([ids.slice(0, 500), true]);
    await settle(useServerStore.getState().showOlder());
    expect(useServerStore.getState().recent.map((e) => e.id)).toEqual(ids.slice(0, 550));
  });

  it('says why an older page of the staff list could not be read, and keeps the list', async () => {
    samLoggedIn();
    const ids = Array.from({ length: 60 }, (_, i) => 60 - i);
    core.answers['usage.pendingMine'] = () => ({ ok: true, result: { pending: [] } });
    core.answers['usage.mine'] = () => ({ ok: true, result: { events: [] } });
    core.answers['usage.tools'] = () => ({ ok: true, result: { tools: [] } });
    core.answers['usage.recent'] = (args) =>
      args.before_id === undefined
        ? { ok: true, result: { events: ids.slice(0, 50).map((id) => event(id, 'ada')) } }
        : { ok: false, error: { code: 'internal', message: 'database is locked' } };
    await settle(useServerStore.getState().refresh());
    await settle(useServerStore.getState().showOlder());
    const state = useServerStore.getState();
    expect([state.recent.length, state.recentMore]).toEqual([50, true]);
    expect(state.error).toMatch(/database is locked/i);
  });
});
