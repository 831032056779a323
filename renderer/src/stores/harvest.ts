import { create } from 'zustand';
import type { HarvestFileView, HarvestStatus, HarvestTransferView } from '../../../shared/api.js';
import { call, toBridgeError } from '../bridge.js';

const PAGE = 100;

interface HarvestState {
  status: HarvestStatus | null;
  files: HarvestFileView[];
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
      const [status, { files }] = await Promise.all([
        call('harvest.status', {}),
        call('harvest.files', { limit: Math.max(PAGE, get().files.length) }),
      ]);
      set({ status, files, more: files.length >= Math.max(PAGE, get().files.length), error: null });
      const selected = get().selected;
      if (selected) await get().select(selected.file.id);
    } catch (error) {
      set({ error: toBridgeError(error).message });
    }
  },
  async loadMore() {
    const last = get().files.at(-1);
    if (!last) return;
    try {
      const { files } = await call('harvest.files', { limit: PAGE, before_id: last.id });
      set({ files: [...get().files, ...files], more: files.length === PAGE });
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
