import { create } from 'zustand';
import type { StationInfo, ToolStatus } from '../../../shared/api.js';
import { call, toBridgeError } from '../bridge.js';
import { errorText } from '../format.js';

function loadErrorText(error: unknown): string {
  const e = toBridgeError(error);
  if (e.code === 'unauthenticated') {
    return 'This page needs the link the station printed when it started (it carries an access token). Open that link again.';
  }
  return errorText(e);
}

interface StationState {
  info: StationInfo | null;
  status: ToolStatus | null;
  loadError: string | null;
  /** Reads which tool this station controls, then its state. */
  load: () => Promise<void>;
  refreshStatus: () => Promise<void>;
  setStatus: (status: ToolStatus) => void;
}

export const useStationStore = create<StationState>()((set, get) => ({
  info: null,
  status: null,
  loadError: null,
  async load() {
    try {
      const info = await call('station.info', {});
      set({ info, loadError: null });
      await get().refreshStatus();
    } catch (error) {
      set({ loadError: loadErrorText(error) });
    }
  },
  async refreshStatus() {
    const tool = get().info?.tool;
    if (!tool) return;
    try {
      const status = await call('toolControl.status', { tool });
      set({ status, loadError: null });
    } catch (error) {
      set({ loadError: loadErrorText(error) });
    }
  },
  setStatus(status) {
    set({ status });
  },
}));

/** The tool name this station controls, once known. */
export function useToolName(): string | null {
  return useStationStore((s) => s.info?.tool ?? null);
}
