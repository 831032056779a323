/**
 * A sidecar written after its file was harvested: the `sidecar_json` hook reads `<name>.json`
 * (or the stem's) when the file's transfer ends, and instrument software often writes it
 * later. Once the sidecar is harvested as a file of its own, its keys are merged into the
 * record of the file it describes, which goes to the server again. The real `labstation`
 * command and station process, on real folders.
 */
import { chmodSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HarvestFileView } from '../../shared/api.js';
import { startStation, tempDir, waitFor, type StationProcess } from './helpers.js';
import {
  filesOf,
  harvestOnce,
  setupHarvest,
  transfersOf,
  withDb,
  type HarvestDirs,
} from './harvestSetup.js';

const SIDECAR = { name: 'sidecar', trigger: 'post_transfer', kind: 'sidecar_json', priority: 1 };

let station: StationProcess | null = null;
afterEach(async () => {
  await station?.stop();
  station = null;
});

async function fileNamed(data: string, name: string): Promise<HarvestFileView> {
  const file = (await filesOf(data)).find((f) => f.filename === name);
  if (!file) throw new Error(`no record of ${name}`);
  return file;
}

/** The payloads queued for the server of a file's record, oldest first. */
function queued(dirs: HarvestDirs, uuid: string): Record<string, unknown>[] {
  return withDb(dirs.data, (db) =>
    (
      db
        .prepare(
          `SELECT payload FROM outbox WHERE kind = 'harvest_file' AND record_uuid = ? ORDER BY id`,
        )
        .pluck()
        .all(uuid) as string[]
    ).map((p) => JSON.parse(p) as Record<string, unknown>),
  );
}

function noted(dirs: HarvestDirs): number {
  return withDb(
    dirs.data,
    (db) => db.prepare('SELECT count(*) FROM harvest_late_sidecars').pluck().get() as number,
  );
}

describe('a sidecar harvested after its file', () => {
  it("is merged into the file's record, which goes to the server again; a new version of it too", async () => {
    const dirs = await setupHarvest({ hooks: [SIDECAR] });
    writeFileSync(join(dirs.src, 'a.tif'), 'image');
    writeFileSync(join(dirs.src, 'b.dat'), 'data');
    writeFileSync(join(dirs.src, 'c.tif'), 'other');
    expect((await harvestOnce(dirs.data)).stdout).toContain('harvest: 3 completed');
    const before = await fileNamed(dirs.data, 'a.tif');
    expect(before.metadata_).not.toHaveProperty('stage');
    const sentBefore = queued(dirs, before.uuid).length;

    // The stem's sidecar, the name's sidecar, and one that is not JSON.
    writeFileSync(join(dirs.src, 'a.json'), '{"stage": "cryo", "sample": "S-1"}');
    writeFileSync(join(dirs.src, 'b.dat.json'), '{"stage": "room"}');
    writeFileSync(join(dirs.src, 'c.json'), '{stage: cryo');
    const second = await harvestOnce(dirs.data);
    expect(second.stdout).toContain('harvest: 3 completed, 0 skipped, 0 failed');
    const a = await fileNamed(dirs.data, 'a.tif');
    expect(a.metadata_).toMatchObject({ stage: 'cryo', sample: 'S-1' });
    expect(a.metadata_.hook_errors).toBeUndefined();
    expect(a.persistent_id).toBe(before.persistent_id);
    expect((await fileNamed(dirs.data, 'b.dat')).metadata_).toMatchObject({ stage: 'room' });
    const c = await fileNamed(dirs.data, 'c.tif');
    const errors = c.metadata_.hook_errors as { hook: string; kind: string; error: string }[];
    expect(errors.map((e) => [e.hook, e.kind])).toEqual([['sidecar', 'sidecar_json']]);
    expect(errors[0].error).toMatch(/^c\.json is not JSON: /);
    // The record goes to the server again, holding the sidecar's keys; its transfer stands.
    const sent = queued(dirs, a.uuid);
    expect(sent).toHaveLength(sentBefore + 1);
    expect(sent.at(-1)?.metadata_).toMatchObject({ stage: 'cryo', sample: 'S-1' });
    const transfers = (await transfersOf(dirs.data)).filter((t) => t.file_id === a.id);
    expect(transfers.map((t) => t.status)).toEqual(['completed']);
    expect(noted(dirs)).toBe(0);

    // A new version of the sidecar is merged over the old; a sidecar put right clears the error.
    writeFileSync(join(dirs.src, 'a.json'), '{"stage": "warm"}');
    writeFileSync(join(dirs.src, 'c.json'), '{"stage": "cryo"}');
    expect((await harvestOnce(dirs.data)).stdout).toContain('harvest: 2 completed');
    expect((await fileNamed(dirs.data, 'a.tif')).metadata_).toMatchObject({
      stage: 'warm',
      sample: 'S-1',
    });
    const fixed = await fileNamed(dirs.data, 'c.tif');
    expect(fixed.metadata_).toMatchObject({ stage: 'cryo' });
    expect(fixed.metadata_.hook_errors).toBeUndefined();

    // Nothing new: nothing merged, nothing sent again.
    const sentNow = queued(dirs, a.uuid).length;
    expect((await harvestOnce(dirs.data)).code).toBe(0);
    expect(queued(dirs, a.uuid)).toHaveLength(sentNow);
  });

  it('changes nothing where no sidecar hook runs, and nothing of a file the sidecar does not name', async () => {
    const dirs = await setupHarvest();
    writeFileSync(join(dirs.src, 'a.tif'), 'image');
    writeFileSync(join(dirs.src, 'ab.tif'), 'image 2');
    expect((await harvestOnce(dirs.data)).code).toBe(0);
    writeFileSync(join(dirs.src, 'a.json'), '{"stage": "cryo"}');
    expect((await harvestOnce(dirs.data)).stdout).toContain('harvest: 1 completed');
    expect((await fileNamed(dirs.data, 'a.tif')).metadata_).not.toHaveProperty('stage');
    expect(noted(dirs)).toBe(0);

    const hooked = await setupHarvest({ hooks: [SIDECAR] });
    writeFileSync(join(hooked.src, 'a.b.tif'), 'image');
    writeFileSync(join(hooked.src, 'ab.tif'), 'image 2');
    expect((await harvestOnce(hooked.data)).code).toBe(0);
    // `a.json` names neither `a.b.tif` (stem `a.b`) nor `ab.tif`.
    writeFileSync(join(hooked.src, 'a.json'), '{"stage": "cryo"}');
    expect((await harvestOnce(hooked.data)).stdout).toContain('harvest: 1 completed');
    for (const name of ['a.b.tif', 'ab.tif']) {
      expect((await fileNamed(hooked.data, name)).metadata_).not.toHaveProperty('stage');
    }
  });

  it('is not merged into a file a skip hook kept out, as a sidecar harvested with it is not', async () => {
    const dirs = await setupHarvest({
      hooks: [
        SIDECAR,
        {
          name: 'no raw',
          trigger: 'pre_transfer',
          kind: 'skip',
          priority: 0,
          config: { glob: '*.raw' },
        },
      ],
    });
    writeFileSync(join(dirs.src, 'a.raw'), 'raw a');
    writeFileSync(join(dirs.src, 'b.raw'), 'raw b');
    writeFileSync(join(dirs.src, 'b.raw.json'), '{"stage": "together"}');
    expect((await harvestOnce(dirs.data)).stdout).toContain('harvest: 1 completed, 2 skipped');
    const a = await fileNamed(dirs.data, 'a.raw');
    const sentBefore = queued(dirs, a.uuid).length;
    writeFileSync(join(dirs.src, 'a.raw.json'), '{"stage": "late"}');
    expect((await harvestOnce(dirs.data)).stdout).toContain('harvest: 1 completed');
    for (const name of ['a.raw', 'b.raw']) {
      expect((await fileNamed(dirs.data, name)).metadata_, name).toEqual({});
    }
    expect(queued(dirs, a.uuid)).toHaveLength(sentBefore);
    expect(noted(dirs)).toBe(0);
  });

  it("keeps the hooks' order and the other hooks' errors; a new version of the file is not the old one's", async () => {
    const dirs = await setupHarvest({
      hooks: [
        SIDECAR,
        {
          name: 'fails',
          trigger: 'post_transfer',
          kind: 'command',
          priority: 2,
          config: { command: '/bin/false' },
        },
      ],
    });
    const image = join(dirs.src, 'a.tif');
    writeFileSync(image, 'image-1');
    expect((await harvestOnce(dirs.data)).code).toBe(0);
    const erred = async (): Promise<string[]> =>
      ((await fileNamed(dirs.data, 'a.tif')).metadata_.hook_errors as { hook: string }[]).map(
        (e) => e.hook,
      );
    expect(await erred()).toEqual(['fails']);
    writeFileSync(join(dirs.src, 'a.json'), '{"stage": ');
    expect((await harvestOnce(dirs.data)).code).toBe(0);
    expect(await erred()).toEqual(['sidecar', 'fails']);
    writeFileSync(join(dirs.src, 'a.json'), '{"stage": "one"}');
    expect((await harvestOnce(dirs.data)).code).toBe(0);
    expect(await erred()).toEqual(['fails']);
    expect((await fileNamed(dirs.data, 'a.tif')).metadata_).toMatchObject({ stage: 'one' });

    // Written again, the file (the same size, other bytes: compared with its record before it
    // is a new version) and its sidecar: the sidecar describes the new version, not the old.
    writeFileSync(image, 'image-2');
    const later = new Date(Date.now() + 10_000);
    utimesSync(image, later, later);
    writeFileSync(join(dirs.src, 'a.json'), '{"stage": "two!"}');
    expect((await harvestOnce(dirs.data)).code).toBe(0);
    const versions = (await filesOf(dirs.data))
      .filter((f) => f.filename === 'a.tif')
      .sort((x, y) => x.id - y.id);
    expect(versions.map((f) => f.metadata_.stage)).toEqual(['one', 'two!']);
  });

  it('merges what a crash left noted at the next start', async () => {
    const dirs = await setupHarvest({ hooks: [SIDECAR] });
    writeFileSync(join(dirs.src, 'a.tif'), 'image');
    expect((await harvestOnce(dirs.data)).code).toBe(0);
    // As a crash after the sidecar's record and before the merge leaves it (the sidecar is
    // recorded and done, and is not taken again).
    writeFileSync(join(dirs.src, 'a.json'), '{"stage": "cryo"}');
    const a = await fileNamed(dirs.data, 'a.tif');
    withDb(dirs.data, (db) =>
      db
        .prepare('INSERT INTO harvest_late_sidecars (file_id, noted_at) VALUES (?, ?)')
        .run(a.id, new Date().toISOString()),
    );
    expect((await harvestOnce(dirs.data)).code).toBe(0);
    expect((await fileNamed(dirs.data, 'a.tif')).metadata_).toMatchObject({ stage: 'cryo' });
    expect(noted(dirs)).toBe(0);
  });

  it('written while its file is still in its hooks, after the sidecar hook looked: merged once that transfer ends', async () => {
    // A command hook after the sidecar hook writes the sidecar, then runs on for 2 s: the
    // station records the sidecar while the file's transfer is under way.
    const script = join(tempDir('labstation-hook-'), 'late.sh');
    writeFileSync(
      script,
      [
        '#!/bin/sh',
        'case "$LABSTATION_SOURCE_PATH" in',
        `  *.dat) printf '{"stage": "cryo"}' > "$LABSTATION_SOURCE_PATH.json"; sleep 2 ;;`,
        'esac',
        "echo '{}'",
        '',
      ].join('\n'),
    );
    chmodSync(script, 0o755);
    const dirs = await setupHarvest({
      hooks: [
        SIDECAR,
        {
          name: 'late',
          trigger: 'post_transfer',
          kind: 'command',
          priority: 2,
          config: { command: script },
        },
      ],
    });
    station = await startStation(dirs.data);
    writeFileSync(join(dirs.src, 'a.dat'), 'data');
    // Read from the database: the station's own calls show a file's metadata only to whoever
    // is logged on.
    const records = (): { filename: string; state: string; metadata_: string }[] =>
      withDb(dirs.data, (db) =>
        db.prepare('SELECT filename, state, metadata_ FROM harvest_files ORDER BY id').all(),
      ) as { filename: string; state: string; metadata_: string }[];
    const merged = await waitFor(
      'a.dat with its sidecar merged',
      () => {
        const rows = records();
        const a = rows.find((f) => f.filename === 'a.dat');
        const sidecar = rows.find((f) => f.filename === 'a.dat.json');
        const metadata = a ? (JSON.parse(a.metadata_) as Record<string, unknown>) : {};
        return metadata.stage === 'cryo' && sidecar?.state === 'done' ? metadata : undefined;
      },
      30_000,
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}: ${JSON.stringify(records())}`);
    });
    expect(merged.hook_errors).toBeUndefined();
    expect(noted(dirs)).toBe(0);
  }, 60_000);
});
