import { create } from 'zustand';
import type { ReservationTargets, ReservationView } from '../../../../shared/reservationApi.js';
import { errorText } from '../../format.js';
import { serverCall } from '../serverBridge.js';
import { onLogout, useServerStore } from '../store.js';
import { readOrder } from '../../readOrder.js';
import { addDays, isoWithOffset, weekStartOf } from '../../time.js';

/** A tool or an area, as the page's select writes it: `tool:3`, `area:1`. */
export type TargetKey = `tool:${number}` | `area:${number}`;

export function targetArgs(key: TargetKey): { tool: number } | { area: number } {
  const [kind, id] = key.split(':') as ['tool' | 'area', string];
  return kind === 'tool' ? { tool: Number(id) } : { area: Number(id) };
}

interface ReservationsState {
  targets: ReservationTargets | null;
  /** The caller's upcoming reservations (for them or booked by them). */
  mine: ReservationView[];
  target: TargetKey | null;
  /** Monday 00:00 (local) of the week shown. */
  week: Date;
  calendar: ReservationView[];
  /** Which target and week `calendar` is of; null until loaded. */
  calendarOf: string | null;
  error: string | null;
  /** Whose data this is: a login as someone else starts afresh. */
  accountId: number | null;
  load: (accountId: number) => Promise<void>;
  choose: (target: TargetKey) => void;
  showWeek: (week: Date) => void;
  refreshCalendar: () => Promise<void>;
  refreshMine: () => Promise<void>;
}

const calendarKey = (target: TargetKey, week: Date): string => `${target}@${week.toISOString()}`;

/** Shows an error of any call: a lapsed login goes back to the login screen instead. */
function failure(error: unknown): string | null {
  const err = useServerStore.getState().failed(error);
  return err.code === 'unauthenticated' ? null : errorText(err);
}

/**
 * Reads of the calendar and of the caller's list: each booking or cancelling reads them again,
 * and an answer asked for before one already shown must not put the older list back.
 */
const calendarReads = readOrder();
const mineReads = readOrder();

/** What the page holds before anyone's load, and again after a logout. */
const empty = () =>
  ({
    targets: null,
    mine: [],
    target: null,
    week: weekStartOf(new Date()),
    calendar: [],
    calendarOf: null,
    error: null,
    accountId: null,
  }) satisfies Partial<ReservationsState>;

export const useReservationsStore = create<ReservationsState>((set, get) => ({
  ...empty(),

  async load(accountId) {
    if (get().accountId !== accountId) {
      // What was asked for the account before is not shown to this one.
      calendarReads.forget();
      mineReads.forget();
      set({ accountId, targets: null, mine: [], target: null, calendar: [], calendarOf: null });
    }
    set({ error: null });
    const askedMine = mineReads.ask();
    try {
      const [targets, { reservations }] = await Promise.all([
        serverCall('reservations.targets', {}),
        serverCall('reservations.mine', {}),
      ]);
      const first: TargetKey | null = targets.tools[0]
        ? `tool:${targets.tools[0].id}`
        : targets.areas[0]
          ? `area:${targets.areas[0].id}`
          : null;
      // Logged out meanwhile (or another account's load began): not for whoever is here now.
      if (get().accountId !== accountId) return;
      const kept = get().target;
      const stillThere =
        kept !== null &&
        (targets.tools.some((t) => `tool:${t.id}` === kept) ||
          targets.areas.some((a) => `area:${a.id}` === kept));
      const mine = mineReads.take(askedMine) ? { mine: reservations } : {};
      set({ targets, ...mine, target: stillThere ? kept : first });
      await get().refreshCalendar();
    } catch (error) {
      const shown = failure(error);
      if (get().accountId === accountId) set({ error: shown });
    }
  },

  choose(target) {
    set({ target, calendar: [], calendarOf: null });
    void get().refreshCalendar();
  },

  showWeek(week) {
    set({ week: weekStartOf(week), calendar: [], calendarOf: null });
    void get().refreshCalendar();
  },

  async refreshCalendar() {
    const { target, week } = get();
    if (target === null) return;
    const key = calendarKey(target, week);
    const asked = calendarReads.ask();
    try {
      const { reservations } = await serverCall('reservations.calendar', {
        ...targetArgs(target),
        from: isoWithOffset(week),
        to: isoWithOffset(addDays(week, 7)),
      });
      // A later choice of target or week wins over an answer that arrives late, and so does a
      // later read of the same week (made after a booking).
      const now = get();
      if (now.target !== target || calendarKey(now.target, now.week) !== key) return;
      if (calendarReads.take(asked)) set({ calendar: reservations, calendarOf: key, error: null });
    } catch (error) {
      if (calendarReads.take(asked)) set({ error: failure(error) });
    }
  },

  async refreshMine() {
    const asked = mineReads.ask();
    try {
      const { reservations } = await serverCall('reservations.mine', {});
      if (mineReads.take(asked)) set({ mine: reservations });
    } catch (error) {
      if (mineReads.take(asked)) set({ error: failure(error) });
    }
  },
}));

onLogout(() => {
  calendarReads.forget();
  mineReads.forget();
  useReservationsStore.setState(empty());
});

export const isCalendarOf = (state: ReservationsState): boolean =>
  state.target !== null && state.calendarOf === calendarKey(state.target, state.week);
