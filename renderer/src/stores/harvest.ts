import { create } from 'zustand';
import type { ApiResult, HarvestFileView, HarvestStatus } from '../../../shared/api.js';
import { call, toBridgeError } from '../bridge.js';
import { addSamples, type ProgressSamples } from '../features/harvest/rate.js';
import { readOrder } from '../readOrder.js';

const PAGE = 100;
/** The most files one call returns (shared/api.ts harvest.files). */
const MOST = 1000;

interface HarvestState {
  status: HarvestStatus | null;
  /** The bytes of the transfers under way, as the status reads of the last seconds gave them. */
  progress: ProgressSamples;
  files: HarvestFileView[];
  /** Every failed file (up to MOST), whatever page of the history is loaded. */
  failed: HarvestFileView[];
  /** The status's failures_version that `failed` was read at, or after; null before a read. */
  failuresVersion: string | null;
  /** How many files the list shows: a page, and one more per "Older files". */
  wanted: number;
  /** More (older) files exist than are loaded. */
  more: boolean;
  /** What the list is narrowed to (a name, a path or an ARK); '' for every file. */
  search: string;
  /** A new search is under way: the list is empty until its answer comes. */
  searching: boolean;
  setSearch: (search: string) => Promise<void>;
  /** The file opened, as harvest.file gives it. */
  selected: ApiResult<'harvest.file'> | null;
  /** Why the last read of the status or the list failed; cleared by the next that works. */
  error: string | null;
  /**
   * Why the last action (Older files, a file's details, Retry, Retry all, Look for new files)
   * failed or did nothing; kept until the next action, not wiped by the reads that each
   * harvest event brings (several a second while files arrive).
   */
  actionError: string | null;
  /**
   * What the last action said beside its work (a Retry whose file waits); as actionError, and
   * also gone once the file it speaks of moves on (ActionNote).
   */
  actionNote: ActionNote | null;
  /** Files whose Retry is under way. */
  retrying: ReadonlySet<number>;
  /**
   * The status, the newest files and the file shown; the failure list too where the status
   * says it changed, or `failures` is 'reload' (a Retry made here, another viewer).
   */
  refresh: (options?: { failures?: 'reload' }) => Promise<void>;
  /** The status, and the failure list where it says that changed. */
  refreshStatus: () => Promise<void>;
  loadMore: () => Promise<void>;
  select: (id: number | null) => Promise<void>;
  retry: (id: number) => Promise<void>;
  /** Retry all failed files; true while under way. */
  retryingAll: boolean;
  retryAll: () => Promise<void>;
  rescan: () => Promise<void>;
}

/** What a Retry said of its file, and the file as the Retry left it. */
interface ActionNote {
  text: string;
  fileId: number;
  /** The file's attempts when the Retry answered: one more is another failure. */
  attempts: number;
}

/**
 * Whether a note still speaks of its file, as a new failure list shows it: the file still
 * failed, held for its new bytes, and not failed again since. A list cut at MOST may leave out
 * a file that is failed still.
 */
function noteHolds(note: ActionNote, failed: readonly HarvestFileView[]): boolean {
  const file = failed.find((f) => f.id === note.fileId);
  if (file === undefined) return failed.length >= MOST;
  return file.attempts <= note.attempts;
}

const searchArg = (search: string): { search?: string } => (search ? { search } : {});

/** Refreshes of the list: an answer older than the one shown is dropped. */
const refreshes = readOrder();
/** "Older files" under way. */
let paging = 0;
/** Selections asked for: only the latest one's answer is shown. */
let selections = 0;
/** Status reads asked for, and the latest one shown: an older answer is dropped. */
let statusReads = 0;
let statusShown = 0;
/** The status read whose failure list is shown: a list is newer than the lists read before. */
let failedShown = 0;

interface StatusRead {
  ticket: number;
  status: HarvestStatus;
  /** When its answer came (ms). */
  at: number;
  /** The failure list, read after the status; null where it was not read (unchanged). */
  failed: HarvestFileView[] | null;
}

/**
 * The status, and the failure list where its failures_version differs from `held` (a burst of
 * completions leaves it as it is: up to MOST files not read again at every event).
 */
async function readStatus(held: string | null): Promise<StatusRead> {
  const ticket = (statusReads += 1);
  const status = await call('harvest.status', {});
  const at = Date.now();
  if (status.failures_version === held) return { ticket, status, at, failed: null };
  const { files } = await call('harvest.files', { state: 'failed', limit: MOST });
  return { ticket, status, at, failed: files };
}

/** What a status read changes in the state: nothing where a later one is shown already. */
function shownStatus(
  read: StatusRead,
  { progress, actionNote }: HarvestState,
): Partial<HarvestState> {
  const shown: Partial<HarvestState> = {};
  if (read.ticket >= statusShown) {
    statusShown = read.ticket;
    shown.status = read.status;
    shown.progress = addSamples(progress, read.status.active, read.at);
  }
  // The list was read after the status: it is as new as its version at least. Its own ticket:
  // a read asked for later that read no list (its version unchanged) may land first, and the
  // list read on purpose (a log-off, a Retry) must not go with that read's status.
  if (read.failed !== null && read.ticket > failedShown) {
    failedShown = read.ticket;
    shown.failed = read.failed;
    shown.failuresVersion = read.status.failures_version;
    // Taken (its new bytes stable), or failed again: the note is old news.
    if (actionNote && !noteHolds(actionNote, read.failed)) shown.actionNote = null;
  }
  return shown;
}

export const useHarvestStore = create<HarvestState>()((set, get) => ({
  status: null,
  progress: new Map(),
  files: [],
  failed: [],
  failuresVersion: null,
  wanted: PAGE,
  more: false,
  search: '',
  searching: false,
  selected: null,
  error: null,
  actionError: null,
  actionNote: null,
  retrying: new Set(),
  retryingAll: false,
  async refreshStatus() {
    try {
      const read = await readStatus(get().failuresVersion);
      set(shownStatus(read, get()));
    } catch (error) {
      set({ error: toBridgeError(error).message });
    }
  },
  async refresh(options = {}) {
    const asked = refreshes.ask();
    try {
      // The newest files again, as many as are shown, at most MOST (what one call gives).
      const limit = Math.min(MOST, get().wanted);
      const search = get().search;
      const held = options.failures === 'reload' ? null : get().failuresVersion;
      const [read, { files: newest }] = await Promise.all([
        readStatus(held),
        call('harvest.files', { limit, ...searchArg(search) }),
      ]);
      // A later refresh landed first (answers may cross on the HTTP carrier): it is newer.
      // One asked before the search changed answers for another list.
      if (search !== get().search || !refreshes.take(asked)) return;
      // Older files shown beyond what this call asked for stay: pages past MOST, and a page
      // that "Older files" brings or brought meanwhile. They stay only if they join up with
      // the newest; after more new files than a page, the list starts again from the newest.
      const oldest = newest.at(-1)?.id;
      const shown = get().files;
      const joined = oldest !== undefined && (shown[0]?.id ?? 0) >= oldest;
      const keep = (get().wanted > limit || paging > 0) && joined;
      const beyond = keep ? shown.filter((f) => f.id < oldest) : [];
      const more = keep && get().wanted > limit ? get().more : newest.length >= limit;
      // Started again from the newest: as many are shown as were asked for.
      const wanted = keep ? get().wanted : limit;
      set({
        ...shownStatus(read, get()),
        files: [...newest, ...beyond],
        more,
        wanted,
        searching: false,
        error: null,
      });
      // The file shown is read again, unless someone picks or closes one meanwhile.
      const shownFile = get().selected?.file.id;
      if (shownFile === undefined) return;
      const picks = selections;
      const again = await call('harvest.file', { id: shownFile });
      if (picks === selections && get().selected?.file.id === shownFile) set({ selected: again });
    } catch (error) {
      set({ error: toBridgeError(error).message, searching: false });
    }
  },
  async loadMore() {
    paging += 1;
    set({ actionError: null, actionNote: null });
    try {
      // While this runs, refreshes keep the list's end (above); only one that restarts the
      // list from the newest moves it, and then the page is asked again from the new end.
      const search = get().search;
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const last = get().files.at(-1);
        if (!last) return;
        const { files } = await call('harvest.files', {
          limit: PAGE,
          before_id: last.id,
          ...searchArg(search),
        });
        if (search !== get().search) return;
        if (get().files.at(-1)?.id !== last.id) continue;
        set({
          files: [...get().files, ...files],
          wanted: get().wanted + PAGE,
          more: files.length === PAGE,
        });
        return;
      }
      set({ actionError: 'The list changed while older files were loading. Try again.' });
    } catch (error) {
      set({ actionError: toBridgeError(error).message });
    } finally {
      paging -= 1;
    }
  },
  async setSearch(search) {
    if (search.trim() === get().search) return;
    set({
      search: search.trim(),
      searching: true,
      files: [],
      wanted: PAGE,
      more: false,
      actionError: null,
      actionNote: null,
    });
    await get().refresh();
  },
  async select(id) {
    const asked = (selections += 1);
    set({ actionError: null, actionNote: null });
    if (id === null) return set({ selected: null });
    try {
      const selected = await call('harvest.file', { id });
      // Someone picked another file (or closed this one) meanwhile: theirs stands.
      if (asked === selections) set({ selected });
    } catch (error) {
      set({ actionError: toBridgeError(error).message });
    }
  },
  async rescan() {
    set({ actionError: null, actionNote: null });
    try {
      await call('harvest.rescan', {});
      await get().refresh();
    } catch (error) {
      set({ actionError: toBridgeError(error).message });
    }
  },
  async retryAll() {
    set({ retryingAll: true, actionError: null, actionNote: null });
    try {
      const { count } = await call('harvest.retryAll', {});
      // The list may hold files that this station does not harvest (an instrument turned off).
      if (count === 0) set({ actionError: 'None of these files is harvested here now.' });
      // Read whatever the version says: a file may have failed again already.
      await get().refresh({ failures: 'reload' });
    } catch (error) {
      set({ actionError: toBridgeError(error).message });
    } finally {
      set({ retryingAll: false });
    }
  },
  async retry(id) {
    set({ retrying: new Set([...get().retrying, id]), actionError: null, actionNote: null });
    // Named by its path, as the list shows it (the core's message names its record's id).
    const path = get().failed.find((f) => f.id === id)?.relative_path;
    try {
      const { file, note } = await call('harvest.retry', { file_id: id });
      // Not wiped by another Retry answered after it (each clears the note as it starts).
      if (note !== null) set({ actionNote: { text: note, fileId: id, attempts: file.attempts } });
      // Read whatever the version says: the file may have failed again already.
      await get().refresh({ failures: 'reload' });
    } catch (error) {
      const e = toBridgeError(error);
      set({
        actionError: path === undefined ? e.message : `${path} was not retried: ${e.message}`,
      });
      // The list as it is now (the file may have been retried or completed meanwhile).
      void get().refresh({ failures: 'reload' });
    } finally {
      const retrying = new Set(get().retrying);
      retrying.delete(id);
      set({ retrying });
    }
  },
}));
