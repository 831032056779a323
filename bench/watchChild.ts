/**
 * One contender of bench/watch.ts, in a process of its own: watches ROOT the way MODE says,
 * prints `ready <ms> <cpu µs>` once the watch is up, notes when each path named `new-*` is first
 * reported, and on `report` (stdin) prints what it saw as JSON and exits.
 *
 *   node dist/bench/watchChild.js labstation|chokidar ROOT
 *
 * A watch's errors are reported with what it saw. `labstation` is the harvest's own watch (watchers.ts watchFolder; LABSTATION_WATCH chooses
 * how). `chokidar` is chokidar 5 set up as the harvest set it up before 2026-12-07: folders
 * watched, files ignored, each event of a folder taken from its `raw` event.
 */
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { watch as chokidarWatch } from 'chokidar';
import { folderFilter, relativeTo } from '../electron/core/harvest/discover.js';
import { watchFolder } from '../electron/core/harvest/watchers.js';

const [mode, root] = process.argv.slice(2);
const started = performance.now();
const seen = new Map<string, number>();
let events = 0;
/** The watch's errors (a system's limit of watches): said in the report, the run goes on. */
const errors: string[] = [];
const note = (path: string): void => {
  events += 1;
  const name = basename(path);
  if (name.startsWith('new-') && !seen.has(name)) seen.set(name, Date.now());
};
const cpu = (): number => {
  const used = process.cpuUsage();
  return used.user + used.system;
};
let readyCpu = 0;
const ready = (): void => {
  readyCpu = cpu();
  process.stdout.write(`ready ${(performance.now() - started).toFixed(0)} ${readyCpu}\n`);
};

let close: () => Promise<void>;
if (mode === 'labstation') {
  const folder = { path: root, include: [], exclude: [] };
  const watch = watchFolder(folder, folderFilter(folder), {
    onPath: note,
    onFolder: () => undefined,
    onBurst: () => undefined,
    onError: (error) => errors.push(error.message),
    onReady: ready,
  });
  close = () => watch.close();
} else if (mode === 'chokidar') {
  const watcher = chokidarWatch(root, {
    ignoreInitial: true,
    followSymlinks: false,
    ignored: (path, stats) => {
      if (path === root || !stats) return false;
      return !stats.isDirectory() || relativeTo(root, path).startsWith('../');
    },
  });
  watcher.on('raw', (_event, name: string | null, details) => {
    const dir = (details as { watchedPath?: string } | undefined)?.watchedPath;
    if (dir && name) note(join(dir, name));
  });
  watcher.on('error', (error) => errors.push((error as Error).message));
  watcher.on('ready', ready);
  close = () => watcher.close();
} else {
  throw new Error(`unknown mode ${mode}`);
}

const peakRssKiB = (): number =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line !== 'report') return;
  const report = {
    cpuAfterReadyUs: cpu() - readyCpu,
    events,
    seen: Object.fromEntries(seen),
    peakRssKiB: peakRssKiB(),
    errors,
  };
  void close().then(() => {
    process.stdout.write(`${JSON.stringify(report)}\n`);
    process.exit(0);
  });
});
