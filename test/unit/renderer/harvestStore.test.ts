/**
 * The Data tab's store against answers that arrive out of order: refreshes, "Older files" and
 * picking a file under way at once must neither drop the loaded page, nor leave a gap between
 * pages, nor let an older answer overwrite a newer one.
 * The core sits behind the preload boundary (heldCore.ts), so a list of file ids stands in for
 * it here: each call is answered from the list as it is when the call is made (as the core
 * would), and the answer is held until the test lets it go (as a busy carrier would).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { core, fileRow, filesFrom, release, resetCore, type Held } from './heldCore.js';

let ids: number[] = [];
/** The failed files, and the version the status gives of them. */
let failedIds: number[] = [];
let failuresVersion = 'v1';
const failureReads = (): number =>
  core.calls.filter((c) => c.name === 'harvest.files' && c.args.state === 'failed').length;

/** What the core answers, from `ids`, `failedIds` and `failuresVersion` as they are now. */
function answerFromFiles(): void {
  core.answers['harvest.status'] = () => ({
    ok: true,
    result: { running: true, instruments: [], active: [], failures_version: failuresVersion },
  });
  core.answers['harvest.retry'] = (args) => ({
    ok: true,
    result: { file: { id: args.id }, note: null },
  });
  // None of the failed files listed is harvested here (its instrument was turned off).
  core.answers['harvest.retryAll'] = () => ({ ok: true, result: { count: 0 } });
  core.answers['harvest.file'] = (args) => ({
    ok: true,
    result: { file: fileRow(args.id as number), transfers: [], usage: null },
  });
  core.answers['harvest.files'] = (args) =>
    args.state === 'failed'
      ? { ok: true, result: { files: failedIds.map((id) => ({ ...fileRow(id), attempts: 0 })) } }
      : filesFrom(ids, args);
}

const { useHarvestStore } = await import('../../../renderer/src/stores/harvest.js');
const store = (): ReturnType<typeof useHarvestStore.getState> => useHarvestStore.getState();

/** Lets go what is held now, in the order it was asked. */
async function releaseAll(): Promise<void> {
  await release(() => true);
}
/**
 * Lets go every answer `pick` matches (all by default), and those of the calls that follow,
 * until `work` is done.
 */
async function settle<T>(work: Promise<T>, pick: (h: Held) => boolean = () => true): Promise<T> {
  let done = false;
  void work.finally(() => (done = true));
  while (!done) await release(pick);
  return await work;
}
/** The calls held now: to let go later, by identity (they stay held). */
const takeHeld = (): Set<Held> => new Set(core.held);
const isPaging = (h: Held): boolean => h.args.before_id !== undefined;
const shown = (): number[] => store().files.map((f) => f.id);
const range = (from: number, to: number): number[] =>
  Array.from({ length: from - to + 1 }, (_, i) => from - i);

async function startWith(count: number): Promise<void> {
  ids = range(count, 1);
  core.held = [];
  failedIds = [];
  useHarvestStore.setState({
    status: null,
    failed: [],
    failuresVersion: null,
    files: [],
    wanted: 100,
    more: false,
    search: '',
    selected: null,
    error: null,
    actionError: null,
    actionNote: null,
  });
  await settle(store().refresh());
  core.calls = [];
}

describe('harvest store', () => {
  beforeEach(async () => {
    resetCore();
    answerFromFiles();
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
    // The answer of Retry all, then the refresh that follows it.
    await settle(store().retryAll());
    expect(store().actionError).toBe('None of these files is harvested here now.');
  });

  // Mutation: every read that works clearing what an action said (one each 200 ms in a burst).
  it("keeps an action's problem through the reads that harvest events bring, until the next action", async () => {
    failedIds = [7];
    await settle(store().refresh({ failures: 'reload' }));
    core.answers['harvest.retry'] = () => ({
      ok: false,
      error: { code: 'conflict', message: 'file 7 has no failed transfer to retry' },
    });
    await settle(store().retry(7));
    const said = `${fileRow(7).relative_path} was not retried: file 7 has no failed transfer to retry`;
    expect(store().actionError).toBe(said);
    for (let i = 0; i < 3; i += 1) await settle(store().refresh());
    expect(store().actionError).toBe(said);
    expect(store().error).toBeNull();
    await settle(store().select(5));
    expect(store().actionError).toBeNull();
    // A new search is a new action too.
    useHarvestStore.setState({ actionError: said });
    await settle(store().setSearch('f1'));
    expect(store().actionError).toBeNull();
  });

  // Mutation: the Retry's note dropped, as it was: a Retry of a file being written again did
  // nothing anyone could see until the new bytes were stable.
  it('shows what a Retry says of a file that waits, until the next action', async () => {
    failedIds = [7];
    await settle(store().refresh({ failures: 'reload' }));
    const note = 'run/7.tif is being written again: it is taken once it stops changing';
    core.answers['harvest.retry'] = (args) => ({
      ok: true,
      result: { file: { id: args.file_id, attempts: 0 }, note },
    });
    await settle(store().retry(7));
    expect(store().actionNote?.text).toBe(note);
    expect(store().actionError).toBeNull();
    for (let i = 0; i < 3; i += 1) await settle(store().refresh());
    expect(store().actionNote?.text).toBe(note);
    await settle(store().select(5));
    expect(store().actionNote).toBeNull();
  });

  // Mutation: noteHolds answering true (the note kept until the next action, as it was): it
  // said the file waits after the file was copied, or had failed again.
  it("drops a Retry's note once its file is taken or fails again, not before", async () => {
    const attempts = new Map<number, number>([[7, 2]]);
    core.answers['harvest.files'] = (args) =>
      args.state === 'failed'
        ? {
            ok: true,
            result: {
              files: failedIds.map((id) => ({ ...fileRow(id), attempts: attempts.get(id) ?? 1 })),
            },
          }
        : filesFrom(ids, args);
    const note = 'run/7.tif is being written again: it is taken once it stops changing';
    core.answers['harvest.retry'] = (args) => ({
      ok: true,
      result: { file: { id: args.file_id, attempts: attempts.get(7) }, note },
    });
    const retried = async (): Promise<void> => {
      failedIds = [7, 8];
      failuresVersion = `v${Math.random()}`;
      await settle(store().refresh({ failures: 'reload' }));
      await settle(store().retry(7));
      expect(store().actionNote?.text).toBe(note);
    };

    // Another file leaves the list, and this one is still held: the note stays.
    await retried();
    failedIds = [7];
    failuresVersion = 'other left';
    await settle(store().refreshStatus());
    expect(store().failed.map((f) => f.id)).toEqual([7]);
    expect(store().actionNote?.text).toBe(note);

    // A list cut at its 1,000 files need not show it: the note stays.
    failedIds = range(1008, 9);
    failuresVersion = 'a thousand more';
    await settle(store().refreshStatus());
    expect(store().failed).toHaveLength(1000);
    expect(store().actionNote?.text).toBe(note);

    // Its new bytes were stable and it was taken: off the list, and the note with it.
    failedIds = [];
    failuresVersion = 'taken';
    await settle(store().refresh());
    expect(store().actionNote).toBeNull();

    // It failed again (one attempt more), still on the list: the note is gone too.
    await retried();
    attempts.set(7, 3);
    failuresVersion = 'failed again';
    await settle(store().refreshStatus());
    expect(store().failed.map((f) => f.id)).toEqual([7, 8]);
    expect(store().actionNote).toBeNull();
  });

  it('reads the failure list again only when the status says it changed', async () => {
    // A burst: an event per batch of completions, and the poll of the progress.
    for (let i = 0; i < 20; i += 1) {
      ids = range(121 + i, 1);
      await settle(store().refresh());
      await settle(store().refreshStatus());
    }
    expect(failureReads()).toBe(0);
    expect(core.calls.filter((c) => c.name === 'harvest.status')).toHaveLength(40);

    // A file fails: the next event, or the next poll, reads the list once.
    failedIds = [7];
    failuresVersion = 'v2';
    await settle(store().refreshStatus());
    expect(store().failed.map((f) => f.id)).toEqual([7]);
    await settle(store().refresh());
    expect(failureReads()).toBe(1);

    // Its Retry succeeds: off the list.
    failedIds = [];
    failuresVersion = 'v3';
    await settle(store().refresh());
    expect(store().failed).toEqual([]);
    expect(failureReads()).toBe(2);
  });

  it('reads the failure list after a Retry made here, whatever the version says', async () => {
    failedIds = [7];
    failuresVersion = 'v4';
    await settle(store().refresh());
    core.calls = [];
    // Failed again at once, and not retried by itself: the version is as it was.
    await settle(store().retry(7));
    expect(failureReads()).toBe(1);
  });

  it('shows the failure list read on purpose though a later read without one landed first', async () => {
    failedIds = [7];
    failuresVersion = 'v7';
    await settle(store().refresh());
    // Read again on purpose (a log-off: what a file's failure shows changes, not its version),
    // while a progress poll, asked later, finds the version unchanged and reads no list.
    failedIds = [7, 9];
    const reload = store().refresh({ failures: 'reload' });
    await settle(store().refreshStatus());
    await settle(reload);
    expect(store().failed.map((f) => f.id)).toEqual([7, 9]);
  });

  it('keeps the failure list of a later status read when an older one lands last', async () => {
    failedIds = [7];
    failuresVersion = 'v5';
    const older = store().refreshStatus();
    // The older read's status lands; the failure list it then reads ([7]) is held.
    await releaseAll();
    const olderCalls = takeHeld();
    expect([...olderCalls].map((h) => h.args.state)).toEqual(['failed']);
    failedIds = [7, 8];
    failuresVersion = 'v6';
    const later = store().refreshStatus();
    await settle(later, (h) => !olderCalls.has(h));
    expect(store().failed.map((f) => f.id)).toEqual([7, 8]);
    // The older list lands last: it is dropped, with its status.
    await settle(older);
    expect(store().failed.map((f) => f.id)).toEqual([7, 8]);
    expect(store().status?.failures_version).toBe('v6');
  });
});
