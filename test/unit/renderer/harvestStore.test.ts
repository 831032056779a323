/**
 * The Data tab's store against answers that arrive out of order: refreshes, "Older files" and
 * picking a file under way at once must neither drop the loaded page, nor leave a gap between
 * pages, nor let an older answer overwrite a newer one.
 * The core sits behind the preload boundary, so a list of file ids stands in for it here: each
 * call is answered from the list as it is when the call is made (as the core would), and the
 * answer is held until the test lets it go (as a busy carrier would).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { LabstationPreload, RpcEnvelope } from '../../../shared/api.js';

interface Args {
  search?: string;
  limit?: number;
  before_id?: number;
  state?: string;
  id?: number;
}

interface Held {
  name: string;
  args: Args;
  release: () => void;
}

let ids: number[] = [];
let held: Held[] = [];

function answer(name: string, args: Args): RpcEnvelope {
  if (name === 'harvest.status') return { ok: true, result: { running: true, instruments: [] } };
  // None of the failed files listed is harvested here (its instrument was turned off).
  if (name === 'harvest.retryAll') return { ok: true, result: { count: 0 } };
  if (name === 'harvest.file') {
    return {
      ok: true,
      result: { file: { id: args.id, relative_path: `f${args.id}` }, transfers: [], usage: null },
    };
  }
  if (args.state === 'failed') return { ok: true, result: { files: [] } };
  const page = [...ids]
    .sort((a, b) => b - a)
    .filter((id) => args.before_id === undefined || id < args.before_id)
    .filter((id) => args.search === undefined || `f${id}`.includes(args.search))
    .slice(0, args.limit ?? 100);
  return { ok: true, result: { files: page.map((id) => ({ id, relative_path: `f${id}` })) } };
}

const preload: LabstationPreload = {
  invoke(name, args) {
    const result = answer(name, args as Args);
    return new Promise((resolve) => {
      held.push({ name, args: args as Args, release: () => resolve(result) });
    });
  },
  subscribe: () => () => undefined,
};
(globalThis as unknown as { window: { labstation: LabstationPreload } }).window = {
  labstation: preload,
};
const { useHarvestStore } = await import('../../../renderer/src/stores/harvest.js');
const store = (): ReturnType<typeof useHarvestStore.getState> => useHarvestStore.getState();

/** Lets go every held answer whose call matches, then lets the store's awaits run. */
async function release(match: (h: Held) => boolean): Promise<void> {
  const now = held.filter(match);
  held = held.filter((h) => !match(h));
  for (const h of now) h.release();
  await new Promise((r) => setTimeout(r, 0));
}
/** Lets go what is held now, in the order it was asked. */
async function releaseAll(): Promise<void> {
  await release(() => true);
}
/** The calls held now: to let go later, by identity. */
const takeHeld = (): Set<Held> => new Set(held);
const isPaging = (h: Held): boolean => h.args.before_id !== undefined;
const shown = (): number[] => store().files.map((f) => f.id);
const range = (from: number, to: number): number[] =>
  Array.from({ length: from - to + 1 }, (_, i) => from - i);

async function startWith(count: number): Promise<void> {
  ids = range(count, 1);
  held = [];
  useHarvestStore.setState({
    files: [],
    wanted: 100,
    more: false,
    search: '',
    selected: null,
    error: null,
  });
  const first = store().refresh();
  await releaseAll();
  await first;
}

describe('harvest store', () => {
  beforeEach(async () => {
    await startWith(121);
    expect(shown()).toEqual(range(121, 22));
    expect(store().more).toBe(true);
  });

  it('keeps the older page that arrives while a refresh is under way', async () => {
    const refreshing = store().refresh();
    const paging = store().loadMore();
    await release(isPaging);
    await paging;
    expect(shown()).toEqual(range(121, 1));
    await releaseAll();
    await refreshing;
    expect(shown()).toEqual(range(121, 1));
    expect(store().more).toBe(false);
  });

  it('keeps the end of the list while "Older files" is under way', async () => {
    const paging = store().loadMore();
    // Five new files arrive; a refresh lands first and keeps the rows past its 100.
    ids = range(126, 1);
    const refreshing = store().refresh();
    await release((h) => !isPaging(h));
    await refreshing;
    expect(shown()).toEqual(range(126, 22));
    await release(isPaging);
    await paging;
    expect(shown()).toEqual(range(126, 1));
    expect(store().more).toBe(false);
  });

  it('starts again from the newest after more new files than a page, without a gap', async () => {
    const paging = store().loadMore();
    ids = range(271, 1);
    const refreshing = store().refresh();
    // The older page lands first, then the refresh: 271..172 and 121..1 do not join up.
    await release(isPaging);
    await paging;
    expect(shown()).toEqual(range(121, 1));
    await releaseAll();
    await refreshing;
    expect(shown()).toEqual(range(271, 172));
    expect(store().more).toBe(true);

    // "Older files" whose end moves under it asks again from the new end.
    const again = store().loadMore();
    ids = range(400, 1);
    const newer = store().refresh();
    await release((h) => !isPaging(h));
    await newer;
    expect(shown()).toEqual(range(400, 301));
    await release(isPaging);
    await release(isPaging);
    await again;
    expect(shown()).toEqual(range(400, 201));
  });

  it('drops the answer of a refresh that a later one overtook', async () => {
    const older = store().refresh();
    const olderCalls = takeHeld();
    ids = range(126, 1);
    const later = store().refresh();
    await release((h) => !olderCalls.has(h));
    await later;
    expect(shown()).toEqual(range(126, 27));
    await releaseAll();
    await older;
    expect(shown()).toEqual(range(126, 27));
  });

  it('does not offer "Older files" again after the last page came back empty', async () => {
    await startWith(100);
    expect(store().more).toBe(true);
    const refreshing = store().refresh();
    const paging = store().loadMore();
    await release(isPaging);
    await paging;
    expect(store().more).toBe(false);
    await releaseAll();
    await refreshing;
    expect(shown()).toEqual(range(100, 1));
    expect(store().more).toBe(false);
  });

  it('drops answers asked for before the search changed', async () => {
    const unsearched = store().refresh();
    const paging = store().loadMore();
    const before = takeHeld();
    const searching = store().setSearch(' f12 ');
    expect(store().search).toBe('f12');
    await release((h) => before.has(h));
    await Promise.all([unsearched, paging]);
    expect(shown()).toEqual([]);
    await releaseAll();
    await searching;
    expect(shown()).toEqual([121, 120, 12]);
    expect(store().more).toBe(false);
    const cleared = store().setSearch('');
    await releaseAll();
    await cleared;
    expect(shown()).toEqual(range(121, 22));
  });

  it('drops an older page of the last search that lands after the new search', async () => {
    const paging = store().loadMore();
    const page = takeHeld();
    const searching = store().setSearch('f12');
    expect(shown()).toEqual([]);
    expect(store().searching).toBe(true);
    await release((h) => !page.has(h));
    await searching;
    expect(shown()).toEqual([121, 120, 12]);
    expect(store().searching).toBe(false);
    await releaseAll();
    await paging;
    await releaseAll();
    expect(shown()).toEqual([121, 120, 12]);
  });

  it('shows the file picked last, whatever a refresh reads meanwhile', async () => {
    const first = store().select(5);
    await releaseAll();
    await first;
    expect(store().selected?.file.id).toBe(5);
    const refreshing = store().refresh();
    await releaseAll();
    // The refresh now reads file 5 again; someone picks file 7 before that answer is back.
    const rereading = takeHeld();
    const picking = store().select(7);
    await release((h) => !rereading.has(h));
    await picking;
    expect(store().selected?.file.id).toBe(7);
    await releaseAll();
    await refreshing;
    expect(store().selected?.file.id).toBe(7);
  });

  it('says so when Retry all took no file, after the list is read again', async () => {
    const retrying = store().retryAll();
    // The answer of Retry all, then the refresh that follows it.
    await releaseAll();
    await releaseAll();
    await retrying;
    expect(store().error).toBe('None of these files is harvested here now.');
  });
});
