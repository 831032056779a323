import { create } from 'zustand';
import type { ApiResult } from '../../../shared/api.js';
import { call, toBridgeError } from '../bridge.js';

type Upcoming = ApiResult<'reservations.upcoming'>;

interface ReservationsState {
  upcoming: Upcoming | null;
  error: string | null;
  /** Reads the station's synced copy (works offline). */
  load: () => Promise<void>;
  clear: () => void;
}

export const useReservationsStore = create<ReservationsState>()((set) => ({
  upcoming: null,
  error: null,
  async load() {
    try {
      set({ upcoming: await call('reservations.upcoming', {}), error: null });
    } catch (error) {
      set({ error: toBridgeError(error).message });
    }
  },
  clear() {
    set({ upcoming: null, error: null });
  },
}));
