/** The notebook.* calls of the station's handler map (station.ts), over entries.ts and search.ts. */
import type { ApiName, ApiParsedArgs, ApiResult } from '../../../shared/api.js';
import type { Db } from '../db/open.js';
import type { UserRow } from '../station/records.js';
import {
  attachUsage,
  createEntry,
  deleteEntry,
  duplicateEntry,
  getEntry,
  listEntries,
  tagCounts,
  updateEntry,
} from './entries.js';
import { searchEntries } from './search.js';

type NotebookName = Extract<ApiName, `notebook.${string}`>;

export type NotebookHandlers = {
  [N in NotebookName]: (args: ApiParsedArgs<N>) => ApiResult<N>;
};

export interface NotebookContext {
  db: Db;
  /** The person logged on; throws unauthenticated when nobody is. */
  actor(): UserRow;
  now(): string;
  stationTool(): string | null;
  /** An entry was saved (its uuid): the UI refreshes, the sync client pushes soon. */
  changed(entry: string): void;
}

export function notebookHandlers(ctx: NotebookContext): NotebookHandlers {
  const { db } = ctx;
  const saved = <T extends { entry: { uuid: string } }>(result: T): T => {
    ctx.changed(result.entry.uuid);
    return result;
  };
  return {
    'notebook.list': (args) => ({ entries: listEntries(db, ctx.actor(), args) }),
    'notebook.get': ({ id }) => ({ entry: getEntry(db, ctx.actor(), id) }),
    'notebook.create': (args) => saved({ entry: createEntry(db, ctx.actor(), args, ctx.now()) }),
    'notebook.update': (args) => saved({ entry: updateEntry(db, ctx.actor(), args, ctx.now()) }),
    'notebook.duplicate': ({ id }) =>
      saved({ entry: duplicateEntry(db, ctx.actor(), id, ctx.now()) }),
    'notebook.delete': ({ id, version }) => {
      ctx.changed(deleteEntry(db, ctx.actor(), id, version, ctx.now()));
      return { ok: true as const };
    },
    'notebook.attachUsage': (args) =>
      saved({ entry: attachUsage(db, ctx.actor(), args, ctx.stationTool(), ctx.now()) }),
    'notebook.search': (args) => {
      const actor = ctx.actor();
      const started = performance.now();
      const result = searchEntries(db, actor, args);
      return { ...result, took_ms: Math.round((performance.now() - started) * 100) / 100 };
    },
    'notebook.tags': () => ({ tags: tagCounts(db, ctx.actor()) }),
  };
}
