/**
 * The Data tab's store against answers that arrive out of order: a refresh and "Older files"
 * under way at once must neither drop the loaded page nor leave a gap between pages.
 * The core sits behind the preload boundary, so a list of file ids stands in for it here,
 * with each answer held until the test lets it go.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { LabstationPreload, RpcEnvelope } from '../../../shared/api.js';

interface Held {
  name: string;
  args: { limit?: number; before_id?: number; state?: string };
  release: () => void;
}

let ids: number[] = [];
let held: Held[] = [];

function answer(name: string, args: Held['args']): RpcEnvelope {
  if (name === 'harvest.status') return { ok: true, result: { running: true, instruments: [] } };
  if (args.state === 'failed') return { ok: true, result: { files: [] } };
  const newestFirst = [...ids].sort((a, b) => b - a);
  const page = newestFirst
    .filter((id) => args.before_id === undefined || id < args.before_id)
    .slice(0, args.limit ?? 100);
  return { ok: true, result: { files: page.map((id) => ({ id, relative_path: `f${id}` })) } };
}

const preload: LabstationPreload = {
  invoke(name, args) {
    return new Promise((resolve) => {
      // The answer reflects the core's state when it is let go, as a real call would.
      held.push({
        name,
        args: args as Held['args'],
        release: () => resolve(answer(name, args as Held['args'])),
      });
    });
  },
  subscribe: () => () => undefined,
};
(globalThis as unknown as { window: { labstation: LabstationPreload } }).window = {
  labstation: preload,
};
const { useHarvestStore } = await import('../../../renderer/src/stores/harvest.js');

/** Lets go every held answer whose call matches, then lets the store's awaits run. */
async function release(match: (h: Held) => boolean): Promise<void> {
  const now = held.filter(match);
  held = held.filter((h) => !match(h));
  for (const h of now) h.release();
  for (let i = 0; i < 10; i += 1) await Promise.resolve();
  await new Promise((r) => setTimeout(r, 0));
}
const all = (): boolean => true;
const isPaging = (h: Held): boolean => h.args.before_id !== undefined;
const shown = (): number[] => useHarvestStore.getState().files.map((f) => f.id);
const range = (from: number, to: number): number[] =>
  Array.from({ length: from - to + 1 }, (_, i) => from - i);

describe('harvest store', () => {
  beforeEach(async () => {
    ids = range(121, 1);
    held = [];
    useHarvestStore.setState({ files: [], wanted: 100, more: false, selected: null });
    const first = useHarvestStore.getState().refresh();
    await release(all);
    await first;
    expect(shown()).toEqual(range(121, 22));
    expect(useHarvestStore.getState().more).toBe(true);
  });

  it('keeps the older page that arrives while a refresh is under way', async () => {
    const refreshing = useHarvestStore.getState().refresh();
    const paging = useHarvestStore.getState().loadMore();
    await release(isPaging);
    await paging;
    expect(shown()).toEqual(range(121, 1));
    await release(all);
    await refreshing;
    expect(shown()).toEqual(range(121, 1));
    expect(useHarvestStore.getState().more).toBe(false);
  });

  it('asks again from the new end when a refresh moves it under "Older files"', async () => {
    const paging = useHarvestStore.getState().loadMore();
    // Five new files arrive; a refresh shows the newest 100, so the list now ends at 27.
    ids = range(126, 1);
    const refreshing = useHarvestStore.getState().refresh();
    await release((h) => !isPaging(h));
    await refreshing;
    expect(shown()).toEqual(range(126, 27));
    await release(isPaging);
    await release(isPaging);
    await paging;
    expect(shown()).toEqual(range(126, 1));
  });
});
