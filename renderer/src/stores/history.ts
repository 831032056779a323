import { create } from 'zustand';
import type { ToolInfo, UsageEventView } from '../../../shared/api.js';
import { call, toBridgeError } from '../bridge.js';

export interface HistoryFilters {
  /** Username; empty for everyone. */
  user: string;
  /** YYYY-MM-DD, inclusive; empty for no bound. */
  from: string;
  to: string;
}

interface HistoryState {
  filters: HistoryFilters;
  tool: ToolInfo | null;
  events: UsageEventView[];
  loading: boolean;
  error: string | null;
  setFilters: (filters: Partial<HistoryFilters>) => void;
  load: (tool: string) => Promise<void>;
  replaceEvent: (event: UsageEventView) => void;
  clear: () => void;
}

const noFilters: HistoryFilters = { user: '', from: '', to: '' };

export const useHistoryStore = create<HistoryState>()((set, get) => ({
  filters: noFilters,
  tool: null,
  events: [],
  loading: false,
  error: null,
  setFilters(filters) {
    set({ filters: { ...get().filters, ...filters } });
  },
  async load(tool) {
    const { user, from, to } = get().filters;
    set({ loading: true });
    try {
      const result = await call('usage.history', {
        tool,
        ...(user.trim() ? { user: user.trim() } : {}),
        ...(from ? { from } : {}),
        ...(to ? { to } : {}),
      });
      set({ tool: result.tool, events: result.events, loading: false, error: null });
    } catch (error) {
      // The table said what the filters asked for: none of it now (nor its CSV export).
      set({ loading: false, events: [], error: toBridgeError(error).message });
    }
  },
  replaceEvent(event) {
    set({ events: get().events.map((e) => (e.id === event.id ? event : e)) });
  },
  clear() {
    set({ filters: noFilters, tool: null, events: [], error: null });
  },
}));
