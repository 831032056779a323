import { create } from 'zustand';
import type { HarvestFileView, HarvestStatus, HarvestTransferView } from '../../../shared/api.js';
import { call, toBridgeError } from '../bridge.js';

const PAGE = 100;
/** The most files one call returns (shared/api.ts harvest.files). */
const MOST = 1000;

interface HarvestState {
  status: HarvestStatus | null;
  files: HarvestFileView[];
  /** Every failed file (up to MOST), whatever page of the history is loaded. */
  failed: HarvestFileView[];
  /** How many files the list shows: a page, and one more per "Older files". */
  wanted: number;
  /** More (older) files exist than are loaded. */
  more: boolean;
  selected: { file: HarvestFileView; transfers: HarvestTransferView[] } | null;
  error: string | null;
  /** Files whose Retry is under way. */
  retrying: ReadonlySet<number>;
  refresh: () => Promise<void>;
  refreshStatus: () => Promise<void>;
  loadMore: () => Promise<void>;
  select: (id: number | null) => Promise<void>;
  retry: (id: number) => Promise<void>;
  rescan: () => Promise<void>;
}

export const useHarvestStore = create<HarvestState>()((set, get) => ({
  status: null,
  files: [],
  failed: [],
  wanted: PAGE,
  more: false,
  selected: null,
  error: null,
  retrying: new Set(),
  async refreshStatus() {
    try {
      set({ status: await call('harvest.status', {}) });
    } catch (error) {
      set({ error: toBridgeError(error).message });
    }
  },
  async refresh() {
    try {
      // The newest files again, as many as are shown, at most MOST (what one call gives).
      const limit = Math.min(MOST, get().wanted);
      const [status, { files: newest }, { files: failed }] = await Promise.all([
        call('harvest.status', {}),
        call('harvest.files', { limit }),
        call('harvest.files', { state: 'failed', limit: MOST }),
      ]);
      // Older files loaded beyond what this call asked for stay as they are: pages past MOST,
      // and a page that "Older files" brought while this call was under way.
      const oldest = newest.at(-1)?.id;
      const beyond =
        get().wanted > limit && oldest !== undefined
          ? get().files.filter((f) => f.id < oldest)
          : [];
      const more = beyond.length > 0 ? get().more : newest.length >= limit;
      set({ status, files: [...newest, ...beyond], failed, more, error: null });
      const selected = get().selected;
      if (selected) await get().select(selected.file.id);
    } catch (error) {
      set({ error: toBridgeError(error).message });
    }
  },
  async loadMore() {
    try {
      // A refresh that lands meanwhile may move the list's end; then ask again from the new
      // end, so that no file falls between the pages.
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const last = get().files.at(-1);
        if (!last) return;
        const { files } = await call('harvest.files', { limit: PAGE, before_id: last.id });
        if (get().files.at(-1)?.id !== last.id) continue;
        set({
          files: [...get().files, ...files],
          wanted: get().wanted + PAGE,
          more: files.length === PAGE,
        });
        return;
      }
    } catch (error) {
      set({ error: toBridgeError(error).message });
    }
  },
  async select(id) {
    if (id === null) return set({ selected: null });
    try {
      set({ selected: await call('harvest.file', { id }) });
    } catch (error) {
      set({ error: toBridgeError(error).message });
    }
  },
  async rescan() {
    try {
      await call('harvest.rescan', {});
      set({ error: null });
      await get().refresh();
    } catch (error) {
      set({ error: toBridgeError(error).message });
    }
  },
  async retry(id) {
    set({ retrying: new Set([...get().retrying, id]) });
    try {
      await call('harvest.retry', { file_id: id });
      set({ error: null });
      await get().refresh();
    } catch (error) {
      set({ error: toBridgeError(error).message });
    } finally {
      const retrying = new Set(get().retrying);
      retrying.delete(id);
      set({ retrying });
    }
  },
}));
