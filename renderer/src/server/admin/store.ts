import { create } from 'zustand';
import type {
  AdminProject,
  AdminStation,
  AdminTool,
  AdminToken,
  AdminUser,
} from '../../../../shared/adminApi.js';
import { errorText } from '../../format.js';
import { readOrder } from '../../readOrder.js';
import { serverCall } from '../serverBridge.js';
import { onLogout, useServerStore } from '../store.js';

interface AdminState {
  users: AdminUser[];
  projects: AdminProject[];
  tools: AdminTool[];
  tokens: AdminToken[];
  stations: AdminStation[];
  loaded: boolean;
  error: string | null;
  /** Loads everything the admin screens show (a facility is hundreds of rows, not millions). */
  load: () => Promise<void>;
  putUser: (user: AdminUser) => void;
  putProject: (project: AdminProject) => void;
  putTool: (tool: AdminTool) => void;
  putStation: (station: AdminStation) => void;
  setTokens: (tokens: AdminToken[]) => void;
}

/** Replaces the row with the same id, or adds it; keeps the list sorted by `key`. */
function upsert<T extends { id: number }>(list: T[], row: T, key: (x: T) => string): T[] {
  const rest = list.filter((x) => x.id !== row.id);
  return [...rest, row].sort((a, b) => key(a).localeCompare(key(b)));
}

/**
 * Reads of the lists: entering a section and saving a person or a tool each read them all again,
 * and an answer asked for before one already shown holds older lists. A saved row is newer than
 * any read under way (its answer may have been made before the save), so a save drops those:
 * the next section entered reads the lists again.
 */
const reads = readOrder();

const empty = {
  users: [],
  projects: [],
  tools: [],
  tokens: [],
  stations: [],
  loaded: false,
  error: null,
} satisfies Partial<AdminState>;

export const useAdminStore = create<AdminState>((set, get) => ({
  ...empty,

  async load() {
    const asked = reads.ask();
    set({ error: null });
    try {
      const [facility, { tokens }, { stations }] = await Promise.all([
        serverCall('admin.facility', {}),
        serverCall('admin.tokens.list', {}),
        serverCall('admin.stations.list', {}),
      ]);
      if (reads.take(asked)) set({ ...facility, tokens, stations, loaded: true });
    } catch (error) {
      const err = useServerStore.getState().failed(error);
      if (reads.take(asked)) set({ error: err.code === 'unauthenticated' ? null : errorText(err) });
    }
  },

  // A person's qualifications are also their tools' qualified people, and the other way round:
  // after either save the other list is read again.
  putUser: (user) => {
    reads.forget();
    set((s) => ({ users: upsert(s.users, user, (u) => u.username) }));
    void get().load();
  },
  putProject: (project) => {
    reads.forget();
    set((s) => ({ projects: upsert(s.projects, project, (p) => p.name) }));
  },
  putTool: (tool) => {
    reads.forget();
    set((s) => ({ tools: upsert(s.tools, tool, (t) => t.name) }));
    void get().load();
  },
  putStation: (station) => {
    reads.forget();
    set((s) => ({ stations: upsert(s.stations, station, (t) => t.name) }));
  },
  setTokens: (tokens) => {
    reads.forget();
    set({ tokens });
  },
}));

onLogout(() => {
  reads.forget();
  useAdminStore.setState(empty);
});
