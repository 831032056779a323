import { create } from 'zustand';
import type { StationInfo, ToolStatus } from '../../../shared/api.js';
import { call, toBridgeError } from '../bridge.js';
import { errorText } from '../format.js';
import { readOrder } from '../readOrder.js';

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
  /** Reads the tool's state again; a failure is shown as the load error. */
  refreshStatus: () => Promise<void>;
  /**
   * Shows the state that `read` answers (a read, or an action that answers with the state),
   * unless a read asked for after it was shown first; its failure is thrown to the caller.
   */
  showStatus: (read: () => Promise<ToolStatus>) => Promise<void>;
}

/**
 * Reads of the tool's state (events, reconnections, the forms after an action): one asked for
 * before an enable must not show the tool idle after the enable's own read has shown it in use.
 */
const statusReads = readOrder();

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
    const asked = statusReads.ask();
    try {
      const status = await call('toolControl.status', { tool });
      if (statusReads.take(asked)) set({ status, loadError: null });
    } catch (error) {
      if (statusReads.take(asked)) set({ loadError: loadErrorText(error) });
    }
  },
  async showStatus(read) {
    const asked = statusReads.ask();
    const status = await read();
    if (statusReads.take(asked)) set({ status });
  },
}));

/** The tool name this station controls, once known. */
export function useToolName(): string | null {
  return useStationStore((s) => s.info?.tool ?? null);
}
