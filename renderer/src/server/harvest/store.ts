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
import { serverCall } from '../serverBridge.js';
import { useServerStore } from '../store.js';

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

export const useHarvestAdminStore = create<HarvestAdminState>((set) => ({
  instruments: [],
  storageLocations: [],
  serviceAccounts: [],
  schedules: [],
  hooks: [],
  loaded: false,
  error: null,

  async load() {
    set({ error: null });
    try {
      const [instruments, storageLocations, serviceAccounts, schedules, hooks] = await Promise.all([
        serverCall('admin.instruments.list', all),
        serverCall('admin.storageLocations.list', all),
        serverCall('admin.serviceAccounts.list', all),
        serverCall('admin.schedules.list', all),
        serverCall('admin.hooks.list', all),
      ]);
      set({
        instruments: instruments.items,
        storageLocations: storageLocations.items,
        serviceAccounts: serviceAccounts.items,
        schedules: schedules.items,
        hooks: hooks.items,
        loaded: true,
      });
    } catch (error) {
      const err = useServerStore.getState().failed(error);
      set({ error: err.code === 'unauthenticated' ? null : errorText(err) });
    }
  },

  async reloadSchedules() {
    try {
      set({ schedules: (await serverCall('admin.schedules.list', all)).items });
    } catch (error) {
      useServerStore.getState().failed(error);
    }
  },

  put: (kind, record) => set((s) => ({ [kind]: upsert(s[kind] as { id: number }[], record) })),
  drop: (kind, id) => set((s) => ({ [kind]: s[kind].filter((x) => x.id !== id) })),
}));
