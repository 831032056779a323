import { create } from 'zustand';
import type {
  EntryKind,
  NotebookEntrySummary,
  NotebookEntryView,
} from '../../../shared/notebookApi.js';
import type { ApiArgs } from '../../../shared/api.js';
import { call, toBridgeError } from '../bridge.js';
import { errorText } from '../format.js';
import { readOrder } from '../readOrder.js';

export interface SearchOutcome {
  entries: NotebookEntrySummary[];
  total: number;
  took_ms: number;
}

interface NotebookState {
  /** The list's kind filter; null lists every kind. */
  kind: EntryKind | null;
  entries: NotebookEntrySummary[];
  /** The last page of the list was full: older entries may follow (loadMore). */
  more: boolean;
  /** Templates of both kinds, for "New from template". */
  templates: NotebookEntrySummary[];
  /** The entry open on the right, as last read from or written to the core. */
  open: NotebookEntryView | null;
  error: string | null;
  /** A create or duplicate is under way: a second click (a double click) makes no second entry. */
  making: boolean;
  /**
   * The copy Duplicate made and opened, until its panel has taken the focus to its title
   * (EntryPanel): the Duplicate button went away with the panel it was in.
   */
  copyShown: number | null;
  search: SearchOutcome | null;
  searchError: string | null;
  setKind: (kind: EntryKind | null) => Promise<void>;
  refresh: () => Promise<void>;
  /** The next page of older entries, appended to the list. */
  loadMore: () => Promise<void>;
  openEntry: (id: number | null) => Promise<void>;
  /**
   * Reads the open entry again if it is `uuid` (changed elsewhere: another screen, a sync),
   * unless it is being edited (`editing`): a draft keeps its version, and a stale save is a
   * conflict. One deleted meanwhile is closed.
   */
  reloadOpen: (uuid: string, editing: (id: number) => boolean) => Promise<void>;
  create: (args: ApiArgs<'notebook.create'>) => Promise<NotebookEntryView | null>;
  /** Saves; throws the BridgeError (a conflict included) so the editor keeps its draft. */
  update: (args: ApiArgs<'notebook.update'>) => Promise<NotebookEntryView>;
  duplicate: (id: number) => Promise<void>;
  attachUsage: (id: number) => Promise<void>;
  runSearch: (args: ApiArgs<'notebook.search'>) => Promise<void>;
  /** The next page of the last search's matches, appended to its results. */
  searchMore: () => Promise<void>;
  /**
   * The search on show asked again, as many matches as it shows (entries changed: here,
   * elsewhere, by a sync); nothing when none is on show.
   */
  refreshSearch: () => Promise<void>;
  /**
   * No search on show: one refused before it ran (its conditions named a problem) has no
   * results, and the last search's would read as its own.
   */
  clearSearch: () => void;
  clear: () => void;
}

/** Entries per page of the list. */
const PAGE = 100;

/**
 * Refreshes of the list: an answer asked for before one already shown is dropped (a refresh
 * started by an event can land before one started earlier, whose list is older).
 */
const refreshes = readOrder();
/**
 * Reads and actions that answer with the open entry: one asked for before the person chose
 * another (or closed it, or logged off) is not opened over their choice when it lands.
 */
const opens = readOrder();
/** Searches: the results of an earlier search are not shown over a later one's. */
const searches = readOrder();

/** The arguments of the search on show, for its next page (searchMore). */
let lastSearch: ApiArgs<'notebook.search'> | null = null;
/** Searches asked for and not answered yet: no refresh of the one on show meanwhile. */
let searchesUnderWay = 0;

function message(error: unknown): string {
  return errorText(toBridgeError(error));
}

export const useNotebookStore = create<NotebookState>()((set, get) => ({
  kind: null,
  entries: [],
  more: false,
  templates: [],
  open: null,
  error: null,
  making: false,
  copyShown: null,
  search: null,
  searchError: null,
  async setKind(kind) {
    set({ kind });
    await get().refresh();
  },
  async refresh() {
    const kind = get().kind;
    const asked = refreshes.ask();
    try {
      const [list, experimentTemplates, itemTemplates] = await Promise.all([
        call('notebook.list', { ...(kind ? { kind } : {}), limit: PAGE }),
        // Templates to start from: as many as one call gives.
        call('notebook.list', { kind: 'experiment_template', limit: 500 }),
        call('notebook.list', { kind: 'item_template', limit: 500 }),
      ]);
      if (!refreshes.take(asked)) return;
      set({
        entries: list.entries,
        more: list.entries.length === PAGE,
        templates: [...experimentTemplates.entries, ...itemTemplates.entries],
        error: null,
      });
    } catch (error) {
      if (!refreshes.take(asked)) return;
      set({ error: message(error) });
    }
  },
  async loadMore() {
    const { kind, entries } = get();
    const last = entries[entries.length - 1];
    if (!last) return;
    try {
      const page = await call('notebook.list', {
        ...(kind ? { kind } : {}),
        limit: PAGE,
        before_id: last.id,
      });
      const known = new Set(get().entries.map((entry) => entry.id));
      set({
        entries: [...get().entries, ...page.entries.filter((entry) => !known.has(entry.id))],
        more: page.entries.length === PAGE,
        error: null,
      });
    } catch (error) {
      set({ error: message(error) });
    }
  },
  async openEntry(id) {
    // Another entry chosen: a copy whose panel was never drawn (its tab left) takes no focus later.
    set({ copyShown: null });
    if (id === null) {
      opens.forget();
      return set({ open: null });
    }
    const asked = opens.ask();
    try {
      const { entry } = await call('notebook.get', { id });
      if (opens.take(asked)) set({ open: entry, error: null });
    } catch (error) {
      if (opens.take(asked)) set({ error: message(error) });
    }
  },
  async reloadOpen(uuid, editing) {
    const open = get().open;
    if (!open || open.uuid !== uuid || editing(open.id)) return;
    const asked = opens.ask();
    try {
      const { entry } = await call('notebook.get', { id: open.id });
      if (get().open?.id === open.id && !editing(open.id) && opens.take(asked)) {
        set({ open: entry });
      }
    } catch (error) {
      if (toBridgeError(error).code === 'not_found' && get().open?.id === open.id) {
        set({ open: null });
      }
    }
  },
  async create(args) {
    if (get().making) return null;
    set({ making: true });
    const asked = opens.ask();
    try {
      const { entry } = await call('notebook.create', args);
      set({ error: null });
      // The list is read before the entry is shown, so its row is there for Close to focus.
      await get().refresh();
      if (opens.take(asked)) set({ open: entry });
      return entry;
    } catch (error) {
      set({ error: message(error) });
      return null;
    } finally {
      set({ making: false });
    }
  },
  async update(args) {
    const asked = opens.ask();
    const { entry } = await call('notebook.update', args);
    if (opens.take(asked)) set({ open: entry, error: null });
    await get().refresh();
    return entry;
  },
  async duplicate(id) {
    if (get().making) return;
    set({ making: true });
    const asked = opens.ask();
    try {
      const { entry } = await call('notebook.duplicate', { id });
      set({ error: null });
      // As create: the copy's row is in the list before the copy is shown.
      await get().refresh();
      if (opens.take(asked)) set({ open: entry, copyShown: entry.id });
    } catch (error) {
      set({ error: message(error) });
    } finally {
      set({ making: false });
    }
  },
  async attachUsage(id) {
    const asked = opens.ask();
    try {
      const { entry } = await call('notebook.attachUsage', { id });
      if (opens.take(asked)) set({ open: entry, error: null });
    } catch (error) {
      set({ error: message(error) });
    }
  },
  async runSearch(args) {
    const asked = searches.ask();
    searchesUnderWay += 1;
    try {
      const search = await call('notebook.search', args);
      if (!searches.take(asked)) return;
      set({ search, searchError: null });
      lastSearch = args;
    } catch (error) {
      // Refused: the results of the search before are not this one's.
      if (searches.take(asked)) {
        lastSearch = null;
        set({ search: null, searchError: message(error) });
      }
    } finally {
      searchesUnderWay -= 1;
    }
  },
  clearSearch() {
    // A search asked for before is not shown when it lands.
    searches.forget();
    lastSearch = null;
    set({ search: null, searchError: null });
  },
  async searchMore() {
    const shown = get().search;
    if (!shown || !lastSearch || shown.entries.length >= shown.total) return;
    try {
      const next = await call('notebook.search', { ...lastSearch, offset: shown.entries.length });
      // Another search shown meanwhile (or none, after a logoff) is not added to.
      if (get().search !== shown) return;
      // Entries changed meanwhile may come again: each is listed once.
      const seen = new Set(shown.entries.map((entry) => entry.id));
      set({
        search: {
          ...next,
          entries: [...shown.entries, ...next.entries.filter((entry) => !seen.has(entry.id))],
        },
        searchError: null,
      });
    } catch (error) {
      set({ searchError: message(error) });
    }
  },
  async refreshSearch() {
    const shown = get().search;
    const args = lastSearch;
    // A new search under way shows fresh results: the old one asked again would come later
    // than it was asked, and be shown over it.
    if (!shown || !args || searchesUnderWay > 0) return;
    const asked = searches.ask();
    try {
      const search = await call('notebook.search', {
        ...args,
        ...(shown.entries.length > PAGE ? { limit: Math.min(shown.entries.length, 500) } : {}),
      });
      // Not over a search asked for meanwhile, nor after a logoff (clear).
      if (searches.take(asked) && get().search !== null) set({ search, searchError: null });
    } catch (error) {
      if (searches.take(asked)) set({ searchError: message(error) });
    }
  },
  clear() {
    // A list asked for before (the person who logged off) is not shown when it lands.
    refreshes.forget();
    opens.forget();
    searches.forget();
    set({
      kind: null,
      entries: [],
      more: false,
      templates: [],
      open: null,
      error: null,
      copyShown: null,
      search: null,
    });
  },
}));
