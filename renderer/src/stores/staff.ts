import { create } from 'zustand';
import type { QualifiedUser } from '../../../shared/api.js';
import { call, toBridgeError } from '../bridge.js';

interface StaffState {
  users: QualifiedUser[];
  error: string | null;
  loadedFor: string | null;
  /** Qualified users of the tool, with their projects; only staff may ask. */
  loadUsers: (tool: string) => Promise<void>;
  reset: () => void;
}

export const useStaffStore = create<StaffState>()((set) => ({
  users: [],
  error: null,
  loadedFor: null,
  async loadUsers(tool) {
    try {
      const { users } = await call('users.list', { tool });
      set({ users, error: null, loadedFor: tool });
    } catch (error) {
      set({ users: [], error: toBridgeError(error).message, loadedFor: null });
    }
  },
  reset() {
    set({ users: [], error: null, loadedFor: null });
  },
}));
