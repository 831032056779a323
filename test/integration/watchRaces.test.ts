/**
 * The watch of each folder (watchers.ts watchEach) where events and its looks at them race: a
 * real watch in a process of its own, its lstat answers delayed at random
 * (test/fixtures/slowLstat.js), or its event loop held while the system's queue of events
 * overflows. Counts the system's watches from /proc (the inotify fd's fdinfo), so Linux only.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

const watchers = pathToFileURL(
  join(import.meta.dirname, '..', '..', 'dist', 'electron', 'core', 'harvest', 'watchers.js'),
).href;
const slowLstat = join(import.meta.dirname, '..', 'fixtures', 'slowLstat.js');

/** Runs `body` in a process watching a fresh folder `root`; returns what it printed as JSON. */
function watching(body: string, slow: boolean): Record<string, unknown> {
  const script = `
    const { watchFolder } = await import(${JSON.stringify(watchers)});
    const { execSync, spawn } = await import('node:child_process');
    const fs = await import('node:fs');
    const root = ${JSON.stringify(tempDir('labstation-watch-race-'))};
    const paths = new Set();
    const folders = new Map();
    let bursts = 0;
    let ready;
    const isReady = new Promise((resolve) => (ready = resolve));
    const watch = watchFolder({ path: root, include: [], exclude: [] },
      { accepts: () => true, skipsDirectory: () => false }, {
        onPath: (p) => paths.add(p),
        onFolder: (p) => folders.set(p, (folders.get(p) ?? 0) + 1),
        onBurst: () => (bursts += 1),
        onError: (e) => { throw e; },
        onReady: () => ready(),
      });
    await isReady;
    const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
    const sh = (command) => execSync(command, { cwd: root, shell: '/bin/sh' });
    // A command run while the watch handles the events it causes, as an instrument's would.
    const shAsync = (command) => new Promise((resolve) =>
      spawn('/bin/sh', ['-c', command], { cwd: root, stdio: 'ignore' }).on('exit', resolve));
    const until = async (check) => {
      for (let i = 0; i < 100 && !check(); i += 1) await sleep(50);
      return check();
    };
    const kernelWatches = () => {
      for (const fd of fs.readdirSync('/proc/self/fd')) {
        let link;
        try { link = fs.readlinkSync('/proc/self/fd/' + fd); } catch { continue; }
        if (link !== 'anon_inode:inotify') continue;
        return fs.readFileSync('/proc/self/fdinfo/' + fd, 'utf8')
          .split('\\n').filter((l) => l.startsWith('inotify')).length;
      }
      return 0;
    };
    const out = {};
    ${body}
    await watch.close();
    await sleep(100);
    out.handlesAfterClose = process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length;
    fs.rmSync(root, { recursive: true, force: true });
    console.log(JSON.stringify(out));
    process.exit(0);`;
  const ran = spawnSync(
    process.execPath,
    [...(slow ? ['--import', slowLstat] : []), '--input-type=module', '-e', script],
    { encoding: 'utf8', env: { ...process.env, LABSTATION_WATCH: 'folders' }, timeout: 120_000 },
  );
  expect(ran.status, ran.stderr).toBe(0);
  return JSON.parse(ran.stdout) as Record<string, unknown>;
}

describe.runIf(process.platform === 'linux')('the watch of each folder, in races', () => {
  it('keeps watching a folder removed and made again at once, whichever look ends last', () => {
    const out = watching(
      `
      sh('mkdir x');
      let missed = 0;
      for (let i = 0; i < 12; i += 1) {
        await shAsync('rmdir x && mkdir x');
        await sleep(300);
        sh('echo hi > x/f' + i);
        if (!(await until(() => paths.has(root + '/x/f' + i)))) missed += 1;
        sh('rm -f x/f' + i);
      }
      out.missed = missed;
      out.watches = kernelWatches();`,
      true,
    );
    expect(out).toEqual({ missed: 0, watches: 2, handlesAfterClose: 0 });
  }, 60_000);

  it('watches each folder of a tree made in haste once, and ends the watches of those moved out', () => {
    const out = watching(
      `
      await shAsync('for k in 1 2 3 4 5; do mkdir t$k; for i in $(seq 1 60); do mkdir t$k/s$i; echo x > t$k/s$i/f; done; done');
      await until(() => kernelWatches() >= 306);
      await sleep(1000);
      out.watches = kernelWatches();
      out.reportedTwice = [...folders.values()].filter((n) => n > 1).length;
      const outside = root + '-outside';
      fs.mkdirSync(outside);
      sh('mv t1 t2 t3 t4 t5 ' + JSON.stringify(outside));
      await until(() => kernelWatches() === 1);
      out.watchesAfterMove = kernelWatches();
      fs.rmSync(outside, { recursive: true });`,
      true,
    );
    expect(out).toEqual({
      watches: 306,
      reportedTwice: 0,
      watchesAfterMove: 1,
      handlesAfterClose: 0,
    });
  }, 60_000);

  it('watches a folder made while the system dropped events, once the burst ends', () => {
    const out = watching(
      `
      // The event loop held: the system's queue of events (16,384) overflows, and the
      // folder made last has no event.
      fs.mkdirSync(root + '/many');
      await until(() => kernelWatches() === 2);
      for (let i = 0; i < 20000; i += 1) fs.writeFileSync(root + '/many/f' + i, 'x');
      fs.mkdirSync(root + '/late');
      await until(() => bursts > 0);
      out.bursts = bursts;
      await until(() => kernelWatches() === 3);
      fs.writeFileSync(root + '/late/after.dat', 'x');
      out.seen = await until(() => paths.has(root + '/late/after.dat'));`,
      false,
    );
    expect(out).toEqual({ bursts: 1, seen: true, handlesAfterClose: 0 });
  }, 60_000);
});
