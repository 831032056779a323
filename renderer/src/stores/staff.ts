import { create } from 'zustand';
import type { QualifiedUser } from '../../../shared/api.js';
import { call, toBridgeError } from '../bridge.js';
import { readOrder } from '../readOrder.js';

interface StaffState {
  users: QualifiedUser[];
  error: string | null;
  loadedFor: string | null;
  /** Qualified users of the tool, with their projects; only staff may ask. */
  loadUsers: (tool: string) => Promise<void>;
  reset: () => void;
}

/** Reads of the list: one under way when staff log off is not kept for whoever comes next. */
const reads = readOrder();

export const useStaffStore = create<StaffState>()((set) => ({
  users: [],
  error: null,
  loadedFor: null,
  async loadUsers(tool) {
    const asked = reads.ask();
    try {
      const { users } = await call('users.list', { tool });
      if (reads.take(asked)) set({ users, error: null, loadedFor: tool });
    } catch (error) {
      if (reads.take(asked)) {
        set({ users: [], error: toBridgeError(error).message, loadedFor: null });
      }
    }
  },
  reset() {
    reads.forget();
    set({ users: [], error: null, loadedFor: null });
  },
}));
