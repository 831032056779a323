/**
 * A bundle imported into a server's data dir (`labstation import`) and the admin pages' check
 * that a save does not overwrite a record changed since its editor was opened (updated_at).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../electron/core/db/open.js';
import { openServerData } from '../../electron/core/runServer.js';
import { listFacility, saveTool } from '../../electron/core/server/admin/facility.js';
import { importBundle } from '../../electron/core/station/facility.js';
import { AppError } from '../../electron/core/util/errors.js';
import { facilityBundle } from '../fixtures/facility.js';
import { tempDir } from './helpers.js';

let db: Db | undefined;
afterEach(() => db?.close());

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('a bundle import seen by the admin pages', () => {
  it("stamps the tools whose qualified people it changed, so an editor opened before can't save the old list back", async () => {
    const server = (db = openServerData(tempDir()));
    const bundle = facilityBundle();
    delete bundle.station; // a server runs no tool
    await importBundle(server, bundle);
    const opened = listFacility(server).tools.find((t) => t.name === 'AFM')!;
    const sem = listFacility(server).tools.find((t) => t.name === 'SEM')!;
    expect(opened.qualified_users).toEqual([]);

    // The same people again: no tool's list changes, no tool counts as changed.
    await pause(5);
    await importBundle(server, { users: facilityBundle().users });
    expect(listFacility(server).tools.find((t) => t.name === 'AFM')!.updated_at).toBe(
      opened.updated_at,
    );

    // Bob qualified for the AFM by a bundle that does not list the AFM itself.
    await pause(5);
    await importBundle(server, {
      users: [{ username: 'bob', projects: ['Other'], qualified_tools: ['AFM'] }],
    });
    const now = listFacility(server);
    const bob = now.users.find((u) => u.username === 'bob')!;
    expect(now.tools.find((t) => t.name === 'AFM')!.qualified_users).toEqual([bob.id]);
    expect(now.tools.find((t) => t.name === 'SEM')!.updated_at).toBe(sem.updated_at);

    // The AFM's editor, opened before the import, saves its old list: refused, bob stays.
    const { id, name, category, operational, visible, qualified_users, updated_at } = opened;
    const stale = { id, name, category, operational, visible, qualified_users, updated_at };
    const questions = {
      pre_usage_questions: opened.pre_usage_questions,
      post_usage_questions: opened.post_usage_questions,
    };
    let refused: unknown;
    try {
      saveTool(server, { ...stale, ...questions, category: 'Changed' });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('conflict');
    expect((refused as AppError).message).toMatch(/^AFM was changed elsewhere since it was opened/);
    expect(listFacility(server).tools.find((t) => t.name === 'AFM')!.qualified_users).toEqual([
      bob.id,
    ]);

    // Taking the qualification away by a bundle counts the same way.
    const afterGiven = listFacility(server).tools.find((t) => t.name === 'AFM')!;
    await pause(5);
    await importBundle(server, {
      users: [{ username: 'bob', projects: ['Other'], qualified_tools: [] }],
    });
    const afterTaken = listFacility(server).tools.find((t) => t.name === 'AFM')!;
    expect(afterTaken.qualified_users).toEqual([]);
    expect(afterTaken.updated_at).not.toBe(afterGiven.updated_at);
  });
});
