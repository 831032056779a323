/**
 * A data dir written by an older Labstation, with that version's station or server still
 * running on it (holding `<data>/running.lock`), opened by this version's one-shot commands:
 * they refuse to upgrade it under that process and change nothing. The older database is
 * made by this build's own first migrations (openDatabase with a prefix of the list); the
 * running process is this test, holding the lock as a station does.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../electron/core/db/open.js';
import { LATEST_VERSION, migrations } from '../../electron/core/db/migrations.js';
import { takeDataDirLock, upgradeOnlyIfIdle } from '../../electron/core/harvest/lock.js';
import { runCli, tempDir } from './helpers.js';

const OLD = 40;

function olderDataDir(): string {
  const dir = tempDir();
  openDatabase(
    join(dir, 'labstation.db'),
    migrations.filter((m) => m.version <= OLD),
  ).close();
  return dir;
}

const schemaOf = (dir: string): number => {
  const db = new Database(join(dir, 'labstation.db'), { readonly: true });
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
};

describe('a one-shot command on an older data dir that a station or server runs on', () => {
  // Mutation: openStationData and openServerDataDir without beforeUpgrade: the commands
  // upgraded the database under the running process, which then could not start again.
  it('refuses to upgrade it, naming why, and changes nothing; once it stops, upgrades it', async () => {
    const station = olderDataDir();
    const server = olderDataDir();
    const held = [takeDataDirLock(station), takeDataDirLock(server)];
    const refusal = (dir: string): string =>
      `${dir} was written by an older Labstation (schema ${OLD}; this one upgrades it to ` +
      `${LATEST_VERSION}), and a station or server runs on it: nothing was changed. Stop it, ` +
      'then start this version on the data dir (or run this command again) to upgrade it\n';
    for (const [args, dir] of [
      [['usage', '--data', station, '--json'], station],
      [['files', '--data', station, '--json'], station],
      [['harvest', '--data', station, '--once'], station],
      [['unlock', '--data', station], station],
      [['mail', 'list', '--data', server], server],
      [['admin', 'station', 'create', '--data', server, '--name', 'pc', '--tool', 'SEM'], server],
    ] as const) {
      const run = await runCli([...args]);
      expect(run.stderr, args.join(' ')).toBe(refusal(dir));
      expect(run.code, args.join(' ')).toBe(1);
    }
    expect([schemaOf(station), schemaOf(server)]).toEqual([OLD, OLD]);

    for (const lock of held) lock.release();
    const usage = await runCli(['usage', '--data', station, '--json']);
    expect(usage.code, usage.stderr).toBe(0);
    expect(JSON.parse(usage.stdout)).toEqual([]);
    expect((await runCli(['mail', 'list', '--data', server])).code).toBe(0);
    expect([schemaOf(station), schemaOf(server)]).toEqual([LATEST_VERSION, LATEST_VERSION]);
  });

  // Mutation: upgradeOnlyIfIdle without upgrade.lock: a start during a one-shot command's
  // upgrade (14 s for a station of 1,000,000 files) was told that a station runs there.
  it('tells a start or a command beside an upgrade under way that it is one, not a station', async () => {
    const dir = olderDataDir();
    const upgrade = upgradeOnlyIfIdle(dir)(OLD, LATEST_VERSION);
    try {
      const start = await runCli(['station', '--data', dir, '--port', '0']);
      expect(start.stderr).toBe(
        `a Labstation command is upgrading the database of ${dir} to this ` +
          'version; start again when it has finished\n',
      );
      expect(start.code).toBe(1);
      const usage = await runCli(['usage', '--data', dir, '--json']);
      expect(usage.stderr).toBe(
        `${dir} was written by an older Labstation (schema ${OLD}), and another command is ` +
          `upgrading it to ${LATEST_VERSION} now: nothing was changed. Run this command again ` +
          'when it has finished\n',
      );
      expect(usage.code).toBe(1);
    } finally {
      upgrade();
    }
    expect(schemaOf(dir)).toBe(OLD);
    // Done (here: given up), a station is told of no upgrade, a running one is named as before.
    const held = takeDataDirLock(dir);
    try {
      const start = await runCli(['station', '--data', dir, '--port', '0']);
      expect(start.stderr).toMatch(/another Labstation station or server runs on/);
    } finally {
      held.release();
    }
  });
});
