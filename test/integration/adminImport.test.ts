/**
 * A bundle imported into a server's data dir (`labstation import`) and the admin pages' check
 * that a save does not overwrite a record changed since its editor was opened (updated_at).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../electron/core/db/open.js';
import { openServerData } from '../../electron/core/runServer.js';
import { listFacility } from '../../electron/core/server/admin/facility.js';
import { saveTool } from '../../electron/core/server/admin/facilitySaves.js';
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

  it('a re-import of the same bundle changes nothing: no change for stations to pull, no editor made stale; what differs is written', async () => {
    const server = (db = openServerData(tempDir()));
    const bundle = facilityBundle();
    delete bundle.station;
    const users = bundle.users as Record<string, unknown>[];
    users[0] = { ...users[0], email: 'alice@example.org', password: 'alice password 1' };
    await importBundle(server, bundle);
    const changes = (): { entity: string; uuid: string }[] =>
      server
        .prepare('SELECT entity, uuid FROM sync_changes WHERE seq > ? ORDER BY seq')
        .all(mark) as { entity: string; uuid: string }[];
    let mark = server.prepare('SELECT max(seq) FROM sync_changes').pluck().get() as number;
    const before = listFacility(server);
    const hashes = (): unknown =>
      server.prepare('SELECT username, pin_hash, password_hash FROM users ORDER BY id').all();
    const hashesBefore = hashes();

    // The same bundle again, PINs and password as plain text: they still match their hashes.
    await pause(5);
    await importBundle(server, bundle);
    expect(changes()).toEqual([]);
    expect(listFacility(server)).toEqual(before);
    expect(hashes()).toEqual(hashesBefore);

    // What differs is written, and only that: bob's PIN, alice's projects, one project, one tool.
    mark = server.prepare('SELECT max(seq) FROM sync_changes').pluck().get() as number;
    const again = facilityBundle();
    delete again.station;
    const changed = again.users as Record<string, unknown>[];
    changed[0] = { ...users[0], projects: ['Other'] };
    changed[1] = { ...changed[1], pin: '5432' };
    (again.projects as Record<string, unknown>[])[0].active = false;
    (again.tools as Record<string, unknown>[])[0].pre_usage_questions = [];
    await importBundle(server, again);
    const uuidOf = (table: string, column: string, name: string): string =>
      server.prepare(`SELECT uuid FROM ${table} WHERE ${column} = ?`).pluck().get(name) as string;
    const logged = new Set(changes().map((c) => `${c.entity} ${c.uuid}`));
    expect(logged).toEqual(
      new Set([
        `user ${uuidOf('users', 'username', 'alice')}`,
        `user ${uuidOf('users', 'username', 'bob')}`,
        `project ${uuidOf('projects', 'name', (again.projects as { name: string }[])[0].name)}`,
        `tool ${uuidOf('tools', 'name', (again.tools as { name: string }[])[0].name)}`,
      ]),
    );
    const after = hashes() as { username: string; pin_hash: string }[];
    const bob = (list: unknown): string =>
      (list as { username: string; pin_hash: string }[]).find((u) => u.username === 'bob')!
        .pin_hash;
    expect(bob(after)).not.toBe(bob(hashesBefore));
    expect(after.filter((u) => u.username !== 'bob')).toEqual(
      (hashesBefore as { username: string }[]).filter((u) => u.username !== 'bob'),
    );
  });
});
