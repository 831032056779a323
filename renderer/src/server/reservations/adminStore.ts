import { create } from 'zustand';
import type { AreaView, ReservationQuestionSet } from '../../../../shared/reservationApi.js';
import { errorText } from '../../format.js';
import { readOrder } from '../../readOrder.js';
import { serverCall } from '../serverBridge.js';
import { onLogout, useServerStore } from '../store.js';

interface ReservationAdminState {
  areas: AreaView[];
  sets: ReservationQuestionSet[];
  loaded: boolean;
  error: string | null;
  /** Loads the areas and the reservation question sets (tens of each). */
  load: () => Promise<void>;
  putArea: (area: AreaView) => void;
  putSet: (set: ReservationQuestionSet) => void;
  dropSet: (id: number) => void;
}

/**
 * Reads of the areas and sets (each section opened): an answer asked for before one already
 * shown holds older lists. A saved or deleted record is newer than any read under way (its
 * answer may have been made before), so a save drops those: the next section reads them again.
 */
const reads = readOrder();

const empty = {
  areas: [],
  sets: [],
  loaded: false,
  error: null,
} satisfies Partial<ReservationAdminState>;

export const useReservationAdminStore = create<ReservationAdminState>((set) => ({
  ...empty,

  async load() {
    const asked = reads.ask();
    set({ error: null });
    try {
      const [{ areas }, { sets }] = await Promise.all([
        serverCall('admin.areas.list', {}),
        serverCall('admin.reservationQuestionSets.list', {}),
      ]);
      if (reads.take(asked)) set({ areas, sets, loaded: true });
    } catch (error) {
      const err = useServerStore.getState().failed(error);
      if (reads.take(asked)) set({ error: err.code === 'unauthenticated' ? null : errorText(err) });
    }
  },

  putArea: (area) => {
    reads.forget();
    set((s) => ({
      areas: [...s.areas.filter((a) => a.id !== area.id), area].sort((a, b) =>
        a.name.localeCompare(b.name),
      ),
    }));
  },
  // Sets apply in id order (their questions merge in that order), so the list keeps it.
  putSet: (record) => {
    reads.forget();
    set((s) => ({
      sets: [...s.sets.filter((x) => x.id !== record.id), record].sort((a, b) => a.id - b.id),
    }));
  },
  dropSet: (id) => {
    reads.forget();
    set((s) => ({ sets: s.sets.filter((x) => x.id !== id) }));
  },
}));

onLogout(() => {
  reads.forget();
  useReservationAdminStore.setState(empty);
});
