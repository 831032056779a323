/** Real folders and a real station data dir for the harvest tests. */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openStationDatabase } from '../../electron/core/station/database.js';
import type { HarvestFileView, HarvestTransferView } from '../../shared/api.js';
import { importBundle, runCli, tempDir, waitFor } from './helpers.js';

export interface HarvestDirs {
  root: string;
  src: string;
  dest: string;
  data: string;
}

export interface SetupOptions {
  stability?: number;
  template?: string;
  hooks?: unknown[];
  schedules?: unknown[];
  users?: unknown[];
  projects?: unknown[];
  preUsage?: unknown[];
  postUsage?: unknown[];
  /** Use this folder as the storage location instead of a fresh one. */
  dest?: string;
  /** The station's data dir, relative to the root (default `data`; `src/…` puts it in the watch). */
  data?: string;
}

let emptyDatabase: string | undefined;

/**
 * The database of a new station data dir, migrated and holding nothing, made once per test
 * file by the code every command opens a data dir with (openStationDatabase). Each setup
 * starts from a copy: making the schema, a commit per migration with synchronous=FULL, is
 * about 1 s of each `labstation import` into an empty folder on the CI box, and
 * harvest.test.ts alone sets up over 60 data dirs. The import into the copy is the real
 * command, as before.
 */
function emptyStationDatabase(): string {
  if (emptyDatabase === undefined) {
    const dir = join(tempDir('labstation-empty-'), 'data');
    openStationDatabase(dir).close();
    emptyDatabase = join(dir, 'labstation.db');
  }
  return emptyDatabase;
}

/** Makes source and destination folders and imports a one-instrument station bundle. */
export async function setupHarvest(options: SetupOptions = {}): Promise<HarvestDirs> {
  const root = tempDir('labstation-harvest-');
  const dirs = {
    root,
    src: join(root, 'src'),
    dest: options.dest ?? join(root, 'dest'),
    data: join(root, options.data ?? 'data'),
  };
  mkdirSync(dirs.src);
  mkdirSync(dirs.dest, { recursive: true });
  const bundle = {
    projects: options.projects ?? [],
    users: options.users ?? [],
    tools: [
      {
        name: 'SEM',
        pre_usage_questions: options.preUsage ?? [],
        post_usage_questions: options.postUsage ?? [],
      },
    ],
    station: { tool: 'SEM' },
    storage_locations: [{ name: 'archive', type: 'local', base_path: dirs.dest }],
    instruments: [
      {
        name: 'sem-1',
        tool: 'SEM',
        watch: [{ path: dirs.src }],
        stability_seconds: options.stability ?? 0.3,
        storage_location: 'archive',
        destination_template: options.template ?? '{instrument}/{relative_path}',
      },
    ],
    hooks: options.hooks ?? [],
    schedules: options.schedules ?? [],
  };
  // A new data dir as the command makes it (owner only), its database the empty one's copy.
  mkdirSync(dirs.data, { recursive: true, mode: 0o700 });
  copyFileSync(emptyStationDatabase(), join(dirs.data, 'labstation.db'));
  const imported = await importBundle(dirs.data, bundle);
  if (imported.code !== 0) throw new Error(`import failed: ${imported.stderr}${imported.stdout}`);
  return dirs;
}

/**
 * A station with two instruments of its tool, sem-1 watching `src` and sem-2 watching `src2`,
 * two storage locations (archive: `dest`, the instruments'; other: `other`), and the bundle's
 * `hooks` and `schedules`.
 */
export async function setupTwoInstruments(
  options: { hooks?: unknown[]; schedules?: unknown[] } = {},
): Promise<HarvestDirs & { src2: string; other: string }> {
  const root = tempDir('labstation-two-instruments-');
  const dirs = {
    root,
    src: join(root, 'src'),
    src2: join(root, 'src2'),
    dest: join(root, 'dest'),
    other: join(root, 'other'),
    data: join(root, 'data'),
  };
  for (const dir of [dirs.src, dirs.src2, dirs.dest, dirs.other]) mkdirSync(dir);
  const instrument = (name: string, path: string): unknown => ({
    name,
    tool: 'SEM',
    watch: [{ path }],
    stability_seconds: 0.3,
    storage_location: 'archive',
    destination_template: '{instrument}/{relative_path}',
  });
  const imported = await importBundle(dirs.data, {
    tools: [{ name: 'SEM' }],
    station: { tool: 'SEM' },
    storage_locations: [
      { name: 'archive', type: 'local', base_path: dirs.dest },
      { name: 'other', type: 'local', base_path: dirs.other },
    ],
    instruments: [instrument('sem-1', dirs.src), instrument('sem-2', dirs.src2)],
    hooks: options.hooks ?? [],
    schedules: options.schedules ?? [],
  });
  if (imported.code !== 0) throw new Error(`import failed: ${imported.stderr}${imported.stdout}`);
  return dirs;
}

/**
 * Sets the station's retry backoff (`base` and `max` seconds) and makes every transfer of
 * run1/img.tif fail: a file stands where its copy needs the instrument's folder (sem-1).
 */
export async function failingTransfer(
  dirs: HarvestDirs,
  retry: { base: number; max: number },
): Promise<void> {
  const tuned = await importBundle(dirs.data, {
    station: { tool: 'SEM', retry_base_seconds: retry.base, retry_max_seconds: retry.max },
  });
  if (tuned.code !== 0) throw new Error(`import failed: ${tuned.stderr}`);
  mkdirSync(join(dirs.src, 'run1'));
  writeFileSync(join(dirs.src, 'run1', 'img.tif'), 'an image');
  writeFileSync(join(dirs.dest, 'sem-1'), 'in the way');
}

export async function filesOf(data: string): Promise<HarvestFileView[]> {
  const out = await runCli(['files', '--data', data, '--json']);
  if (out.code !== 0) throw new Error(out.stderr);
  return JSON.parse(out.stdout) as HarvestFileView[];
}

export async function transfersOf(data: string): Promise<HarvestTransferView[]> {
  const out = await runCli(['transfers', '--data', data, '--json']);
  if (out.code !== 0) throw new Error(out.stderr);
  return JSON.parse(out.stdout) as HarvestTransferView[];
}

/**
 * A hold on the copies of files too big for a batch: each waits after its first span until
 * release() (copy.ts heldForTest), in the processes started with `env`. For tests that act in
 * the middle of a copy: a slowed copy's timer is a race a busy machine can lose.
 */
export function copyHold(): { env: NodeJS.ProcessEnv; release(): void } {
  const gate = join(tempDir('labstation-hold-'), 'release');
  return {
    env: { LABSTATION_HOLD_COPY_UNTIL: gate },
    release: () => writeFileSync(gate, ''),
  };
}

/** Waits until `folder` holds the partial of `name`'s copy: that copy is under way. */
export async function copyUnderWay(folder: string, name: string): Promise<void> {
  await waitFor(
    'the copy under way',
    () =>
      existsSync(folder) && listTree(folder).some((p) => p.startsWith(`.${name}.`))
        ? true
        : undefined,
    30_000,
  );
}

export function harvestOnce(data: string, env: NodeJS.ProcessEnv = {}) {
  return runCli(['harvest', '--data', data, '--once'], env);
}

/** Every file below `dir`, as paths relative to it. */
export function listTree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, prefix: string): void => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path, `${prefix}${name}/`);
      else out.push(`${prefix}${name}`);
    }
  };
  walk(dir, '');
  return out.sort();
}

/** Every folder below `dir`, as paths relative to it ending in `/`. */
export function listFolders(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, prefix: string): void => {
    for (const name of readdirSync(d)) {
      if (!statSync(join(d, name)).isDirectory()) continue;
      out.push(`${prefix}${name}/`);
      walk(join(d, name), `${prefix}${name}/`);
    }
  };
  walk(dir, '');
  return out.sort();
}

/** Runs SQL on a data dir's database (for faults that the CLI refuses to configure). */
export function withDb<T>(data: string, work: (db: Database.Database) => T): T {
  const db = new Database(join(data, 'labstation.db'));
  try {
    return work(db);
  } finally {
    db.close();
  }
}

/** Mounts a small tmpfs when this machine lets us (root in a container usually may). */
export function tryMountTmpfs(dir: string, size: string): boolean {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function unmount(dir: string): void {
  try {
    execFileSync('umount', [dir], { stdio: 'ignore' });
  } catch {
    // Already gone.
  }
}
