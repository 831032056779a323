import { create } from 'zustand';
import type { ToolInfo, UsageEventView } from '../../../shared/api.js';
import { call, toBridgeError } from '../bridge.js';
import { readOrder } from '../readOrder.js';

export interface HistoryFilters {
  /** Username; empty for everyone (staff) or oneself (anyone else, who has no other). */
  user: string;
  /** YYYY-MM-DD, inclusive; empty for no bound. */
  from: string;
  to: string;
}

/** Whether two sets of filters ask for the same table (`ownOnly`: the user filter is not used). */
export function sameFilters(a: HistoryFilters, b: HistoryFilters, ownOnly: boolean): boolean {
  return (ownOnly || a.user.trim() === b.user.trim()) && a.from === b.from && a.to === b.to;
}

/**
 * Whether the table on show is of the filters on show, so that its CSV export is what they
 * say: none typed and not applied, and no read of newly applied ones under way (the table is
 * still of those before until it lands).
 */
export function tableMatchesFilters(
  state: Pick<HistoryState, 'filters' | 'applied' | 'loading'>,
  ownOnly: boolean,
): boolean {
  return !state.loading && sameFilters(state.filters, state.applied, ownOnly);
}

interface HistoryState {
  /** The filters as typed. */
  filters: HistoryFilters;
  /** The filters of the table shown (and of its CSV export): those last applied. */
  applied: HistoryFilters;
  tool: ToolInfo | null;
  events: UsageEventView[];
  loading: boolean;
  error: string | null;
  setFilters: (filters: Partial<HistoryFilters>) => void;
  /**
   * Reads the table of the filters as typed, which are applied from then on; `again`: of the
   * filters applied before (the tab shown anew), leaving what is typed as it is. `ownOnly`
   * (someone who is not staff): their own events, whatever the user filter holds, as the core
   * answers them no more than those.
   */
  load: (tool: string, options?: { ownOnly?: boolean; again?: boolean }) => Promise<void>;
  /**
   * The filters were refused before any read (HistoryFilters says why): the table shows none of
   * what it held, which matched other filters or none, so nothing passes for their result.
   */
  refuse: () => void;
  replaceEvent: (event: UsageEventView) => void;
  clear: () => void;
}

const noFilters: HistoryFilters = { user: '', from: '', to: '' };

/** Reads of the table: one asked for before the filters changed must not show over theirs. */
const reads = readOrder();

/** What the tab holds before any read, and after a log-off. */
const blank = {
  filters: noFilters,
  applied: noFilters,
  tool: null,
  events: [],
  loading: false,
  error: null,
} as const satisfies Partial<HistoryState>;

export const useHistoryStore = create<HistoryState>()((set, get) => ({
  ...blank,
  setFilters(filters) {
    set({ filters: { ...get().filters, ...filters } });
  },
  async load(tool, { ownOnly = false, again = false } = {}) {
    const applied = again ? get().applied : get().filters;
    const { from, to } = applied;
    const user = ownOnly ? '' : applied.user;
    const asked = reads.ask();
    set({ loading: true, applied });
    try {
      const result = await call('usage.history', {
        tool,
        ...(user.trim() ? { user: user.trim() } : {}),
        ...(from ? { from } : {}),
        ...(to ? { to } : {}),
      });
      if (!reads.take(asked)) return;
      set({
        tool: result.tool,
        events: result.events,
        loading: !reads.isLatest(asked),
        error: null,
      });
    } catch (error) {
      if (!reads.take(asked)) return;
      // The table said what the filters asked for: none of it now (nor its CSV export).
      set({ loading: !reads.isLatest(asked), events: [], error: toBridgeError(error).message });
    }
  },
  refuse() {
    // A read asked for before is of other filters: not shown when it lands.
    reads.forget();
    set({ events: [], loading: false, error: null, applied: get().filters });
  },
  replaceEvent(event) {
    set({ events: get().events.map((e) => (e.id === event.id ? event : e)) });
  },
  clear() {
    // A table asked for before (the person who logged off) is not shown when it lands.
    reads.forget();
    set(blank);
  },
}));
