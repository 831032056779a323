import { create } from 'zustand';
import {
  MAX_PAGE_SIZE,
  type HookOut,
  type InstrumentOut,
  type ScheduleOut,
  type ServiceAccountOut,
  type StorageLocationOut,
} from '../../../../shared/harvest/management.js';
import { errorText } from '../../format.js';
import { readOrder } from '../../readOrder.js';
import { serverCall } from '../serverBridge.js';
import { onLogout, useServerStore } from '../store.js';

export interface HarvestRecords {
  instruments: InstrumentOut[];
  storageLocations: StorageLocationOut[];
  serviceAccounts: ServiceAccountOut[];
  schedules: ScheduleOut[];
  hooks: HookOut[];
}
export type HarvestKind = keyof HarvestRecords;

interface HarvestAdminState extends HarvestRecords {
  loaded: boolean;
  error: string | null;
  /** Loads the five resources (a facility has tens of each; one page holds them all). */
  load: () => Promise<void>;
  /** Reads the schedules again (their deployments and runs change on the stations). */
  reloadSchedules: () => Promise<void>;
  put: <K extends HarvestKind>(kind: K, record: HarvestRecords[K][number]) => void;
  drop: (kind: HarvestKind, id: number) => void;
}

const all = { size: MAX_PAGE_SIZE } as const;

/** Replaces the record with the same id, or adds it; keeps id order (the API's). */
function upsert<T extends { id: number }>(list: T[], record: T): T[] {
  return [...list.filter((x) => x.id !== record.id), record].sort((a, b) => a.id - b.id);
}

/**
 * Reads of the five lists (each section opened), and of the schedules alone (a timer, a run
 * started): an answer asked for before one already shown holds older records. A record saved or
 * deleted is newer than any read of its list under way (its answer may have been made before),
 * so a save drops those: the next section opened reads them again.
 */
const reads = readOrder();
const scheduleReads = readOrder();
function forgetReads(kind: HarvestKind): void {
  reads.forget();
  if (kind === 'schedules') scheduleReads.forget();
}

const empty = {
  instruments: [],
  storageLocations: [],
  serviceAccounts: [],
  schedules: [],
  hooks: [],
  loaded: false,
  error: null,
} satisfies Partial<HarvestAdminState>;

export const useHarvestAdminStore = create<HarvestAdminState>((set) => ({
  ...empty,

  async load() {
    const asked = reads.ask();
    const askedSchedules = scheduleReads.ask();
    set({ error: null });
    try {
      const [instruments, storageLocations, serviceAccounts, schedules, hooks] = await Promise.all([
        serverCall('admin.instruments.list', all),
        serverCall('admin.storageLocations.list', all),
        serverCall('admin.serviceAccounts.list', all),
        serverCall('admin.schedules.list', all),
        serverCall('admin.hooks.list', all),
      ]);
      if (!reads.take(asked)) return;
      // Schedules read again alone since this read was asked for are newer than these.
      const newer = scheduleReads.take(askedSchedules) ? { schedules: schedules.items } : {};
      set({
        instruments: instruments.items,
        storageLocations: storageLocations.items,
        serviceAccounts: serviceAccounts.items,
        ...newer,
        hooks: hooks.items,
        loaded: true,
      });
    } catch (error) {
      const err = useServerStore.getState().failed(error);
      if (reads.take(asked)) set({ error: err.code === 'unauthenticated' ? null : errorText(err) });
    }
  },

  async reloadSchedules() {
    const asked = scheduleReads.ask();
    try {
      const { items } = await serverCall('admin.schedules.list', all);
      if (scheduleReads.take(asked)) set({ schedules: items });
    } catch (error) {
      useServerStore.getState().failed(error);
    }
  },

  put: (kind, record) => {
    forgetReads(kind);
    set((s) => ({ [kind]: upsert(s[kind] as { id: number }[], record) }));
  },
  drop: (kind, id) => {
    forgetReads(kind);
    set((s) => ({ [kind]: s[kind].filter((x) => x.id !== id) }));
  },
}));

onLogout(() => {
  reads.forget();
  scheduleReads.forget();
  useHarvestAdminStore.setState(empty);
});
