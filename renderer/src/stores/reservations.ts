import { create } from 'zustand';
import type { ApiResult } from '../../../shared/api.js';
import { call, toBridgeError } from '../bridge.js';
import { readOrder } from '../readOrder.js';

type Upcoming = ApiResult<'reservations.upcoming'>;

interface ReservationsState {
  upcoming: Upcoming | null;
  error: string | null;
  /** Reads the station's synced copy (works offline). */
  load: () => Promise<void>;
  clear: () => void;
}

/** Reads of the list (a timer, events): an older answer must not show over a newer one. */
const reads = readOrder();

export const useReservationsStore = create<ReservationsState>()((set) => ({
  upcoming: null,
  error: null,
  async load() {
    const asked = reads.ask();
    try {
      const upcoming = await call('reservations.upcoming', {});
      if (reads.take(asked)) set({ upcoming, error: null });
    } catch (error) {
      if (reads.take(asked)) set({ error: toBridgeError(error).message });
    }
  },
  clear() {
    // The list marks the person's own: one read for the person before is not shown when it lands.
    reads.forget();
    set({ upcoming: null, error: null });
  },
}));
