import { execFile } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { appendFile, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import type { Locator, Page } from '@playwright/test';
import { expect, test, type FacilityBundle, type RunningStation } from './fixtures.js';
import { TOOL, enableWith, facility, logOff, logOn } from './facility.js';

/** The facility with one instrument, quanta, harvesting `src` into the folder `archive`. */
function withQuanta(src: string, archive: string, template: string): FacilityBundle {
  return {
    ...facility(),
    storage_locations: [{ name: 'archive', type: 'local', base_path: archive }],
    instruments: [
      {
        name: 'quanta',
        tool: TOOL,
        watch: [{ path: src }],
        stability_seconds: 0.2,
        storage_location: 'archive',
        destination_template: template,
      },
    ],
  };
}

/** The acquisition folder, made, and where the archive goes (made when a test says). */
async function acquisition(scratchDir: string): Promise<{ src: string; archive: string }> {
  const src = join(scratchDir, 'acquisition');
  await mkdir(src);
  return { src, archive: join(scratchDir, 'archive') };
}

/** The station's Data tab, from any of its tabs. */
async function openDataTab(page: Page): Promise<void> {
  await page.getByRole('tab', { name: 'Data', exact: true }).click();
}

/**
 * Ada logged on, on the Data tab of a station harvesting the files `names` (their content is
 * their name) into an archive folder that is not there yet: each transfer fails until the test
 * makes the folder. Returns the folders and the list of failed transfers.
 */
async function failingHarvest(
  page: Page,
  startStation: (bundle: FacilityBundle) => Promise<RunningStation>,
  scratchDir: string,
  names: string[],
  stabilitySeconds = 0.2,
): Promise<{ src: string; archive: string; failures: Locator }> {
  const { src, archive } = await acquisition(scratchDir);
  for (const name of names) await writeFile(join(src, name), name.replace(/\.txt$/, ''));
  const bundle = withQuanta(src, archive, '{relative_path}');
  bundle.instruments![0].stability_seconds = stabilitySeconds;
  const station = await startStation(bundle);
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openDataTab(page);
  return { src, archive, failures: page.getByRole('region', { name: 'Failed transfers' }) };
}

/** `labstation harvest --once` on a data dir before its station starts: exit 1, a file failed, is no error. */
async function harvestOnceBeforeStart(cli: string, dataDir: string): Promise<void> {
  await promisify(execFile)(process.execPath, [cli, 'harvest', '--data', dataDir, '--once']).catch(
    (error: { code?: number }) => {
      if (error.code !== 1) throw error;
    },
  );
}

/** Works on a station's database before the station starts (beforeStart). */
function withStationDb<T>(dataDir: string, work: (db: Database.Database) => T): T {
  const db = new Database(join(dataDir, 'labstation.db'));
  try {
    return work(db);
  } finally {
    db.close();
  }
}

test('data tab: a failed transfer shows its reason and Retry completes it; ARK and metadata shown', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const { src, archive } = await acquisition(scratchDir);
  await writeFile(join(src, 'spectrum.txt'), 'counts 1 2 3\n');
  const camera = join(scratchDir, 'camera');
  await mkdir(camera);
  await mkdir(join(scratchDir, 'frames'));
  const station = await startStation({
    ...facility(),
    // The archive folder does not exist yet: the share is "not mounted".
    storage_locations: [
      { name: 'archive', type: 'local', base_path: archive },
      { name: 'frames', type: 'local', base_path: join(scratchDir, 'frames') },
    ],
    instruments: [
      {
        name: 'camera',
        tool: TOOL,
        watch: [{ path: camera }],
        stability_seconds: 0.2,
        storage_location: 'frames',
        destination_template: '{relative_path}',
      },
      {
        name: 'quanta',
        tool: TOOL,
        watch: [{ path: src }],
        stability_seconds: 0.2,
        storage_location: 'archive',
        destination_template: '{instrument}/{relative_path}',
      },
    ],
    hooks: [{ name: 'info', trigger: 'post_transfer', kind: 'file_info' }],
  });
  await page.goto(station.url);
  await openDataTab(page);

  await expect(page.getByRole('note')).toContainText('Test identifiers');
  const failures = page.getByRole('region', { name: 'Failed transfers' });
  await expect(failures).toContainText('spectrum.txt');
  await expect(failures).toContainText('is not reachable');
  await expect(page.getByTestId('today-failed')).toHaveText('1');
  // A second instrument's 120 files complete after it: more than a page of the history, and
  // the failure stays listed all the same.
  for (let i = 0; i < 120; i += 1) await writeFile(join(camera, `frame-${i}.txt`), `frame ${i}`);
  await expect(page.getByTestId('today-completed')).toHaveText('120');
  await expect(failures).toContainText('spectrum.txt');
  // Nobody is logged on: Retry waits for someone who is.
  await expect(page.getByRole('button', { name: 'Retry spectrum.txt' })).toBeDisabled();
  await expect(failures).toContainText('Log on to retry');

  // The share comes back; someone at the station asks for the retry.
  await mkdir(archive);
  await page.getByRole('tab', { name: 'Tool control' }).click();
  await logOn(page, 'ada', '1234');
  await openDataTab(page);
  await page.getByRole('button', { name: 'Retry spectrum.txt' }).click();
  await expect(failures).toHaveCount(0);
  await expect(page.getByTestId('today-completed')).toHaveText('121');
  await expect(page.getByTestId('today-failed')).toHaveText('0');
  const files = page.getByRole('region', { name: 'Harvested files' });
  // 121 files: the first page shows the newest 100.
  await files.getByRole('button', { name: 'Older files' }).click();
  await expect(files.getByRole('row')).toHaveCount(122);
  await expect(files.getByRole('row', { name: /spectrum\.txt/ })).toContainText('completed');
  await expect(files.getByRole('row', { name: /spectrum\.txt/ })).toContainText('✓ verified');
  expect(await readFile(join(archive, 'quanta', 'spectrum.txt'), 'utf8')).toBe('counts 1 2 3\n');

  await files.getByRole('button', { name: 'spectrum.txt' }).click();
  const details = page.getByRole('region', { name: 'File spectrum.txt' });
  await expect(details.getByTestId('file-ark')).toHaveText(
    /^ark:99999\/fk4[0-9bcdfghjkmnpqrstvwxz]+$/,
  );
  await expect(details).toContainText('test identifier');
  // A triple click on the ARK selects the ARK alone, not its badge with it.
  const shownArk = (await details.getByTestId('file-ark').textContent()) ?? '';
  await details.getByTestId('file-ark').click({ clickCount: 3 });
  expect((await page.evaluate(() => window.getSelection()?.toString()))?.trim()).toBe(shownArk);
  const metadata = details.getByTestId('file-metadata');
  await expect(metadata.locator('dt[title="file_info.mime_type"] + dd')).toHaveText('text/plain');
  await metadata.getByText('As JSON').click();
  await expect(metadata.locator('pre')).toContainText('"mime_type": "text/plain"');
  await expect(details).toContainText('failed');
  await expect(details).toContainText('checksum verified');

  // Found again by its ARK (as a label or a citation gives it), and others by a part of the name.
  const ark = (await details.getByTestId('file-ark').textContent()) ?? '';
  const find = page.getByRole('searchbox', { name: 'Find a file (name, path or ARK)' });
  await find.fill(ark.replace('ark:', 'ark:/'));
  await find.press('Enter');
  await expect(files.getByRole('row')).toHaveCount(2);
  await expect(files.getByRole('row', { name: /spectrum\.txt/ })).toContainText('completed');
  await find.fill('FRAME-11');
  await files.getByRole('button', { name: 'Find' }).click();
  // frame-11 and frame-110 to frame-119, and the header.
  await expect(files.getByRole('row')).toHaveCount(12);
  await find.fill('no such file');
  await find.press('Enter');
  await expect(files).toContainText('No file matches "no such file".');
  await files.getByRole('button', { name: 'Show all files' }).click();
  await expect(files.getByRole('row')).toHaveCount(101);
  await files.getByRole('button', { name: 'Older files' }).click();
  await expect(files.getByRole('row')).toHaveCount(122);

  await page.getByRole('button', { name: 'Look for new files now' }).click();
  await expect(page.getByRole('alert')).toHaveCount(0);

  // The metadata names who made the file: for someone logged on only.
  await page.getByRole('tab', { name: 'Tool control' }).click();
  await logOff(page);
  await openDataTab(page);
  await files.getByRole('button', { name: 'spectrum.txt' }).click();
  await expect(details).toContainText("Log on to see the file's metadata");
  await expect(details.getByTestId('file-metadata')).toHaveCount(0);

  // A new file arrives while the tab is open and shows up by itself.
  await writeFile(join(src, 'image2.txt'), 'second');
  await expect(files.getByRole('row', { name: /image2\.txt/ })).toContainText('completed');
});

test('data tab: an instrument waiting for its history says so, and its failed file offers no Retry', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const { src, archive } = await acquisition(scratchDir);
  await writeFile(join(src, 'spectrum.txt'), 'counts 1 2 3\n');
  const station = await startStation(
    // The archive is not mounted: the first harvest fails.
    withQuanta(src, archive, '{instrument}/{relative_path}'),
    async (dataDir, cli) => {
      await harvestOnceBeforeStart(cli, dataDir);
      // The instrument is handed to this station anew: it waits for the server's records.
      withStationDb(dataDir, (db) => {
        expect(db.prepare('SELECT filename, state FROM harvest_files').all()).toEqual([
          { filename: 'spectrum.txt', state: 'failed' },
        ]);
        db.prepare(
          `INSERT INTO harvest_history_pending (instrument_id, after)
             SELECT id, 0 FROM instruments WHERE name = 'quanta'`,
        ).run();
      });
    },
  );
  await mkdir(archive);
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openDataTab(page);
  await expect(page.getByRole('listitem').filter({ hasText: 'quanta: watches' })).toContainText(
    'waiting for the server to send the records of its files',
  );
  const failures = page.getByRole('region', { name: 'Failed transfers' });
  // ", not before <time>" while its retry time is ahead (30 s by default), without it after.
  await expect(failures).toContainText("next try once quanta's history is here");
  await expect(page.getByRole('button', { name: 'Retry spectrum.txt' })).toBeDisabled();
});

test('data tab: a failed file of an instrument turned off says it is not tried, and offers no Retry', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const { src, archive } = await acquisition(scratchDir);
  await writeFile(join(src, 'spectrum.txt'), 'counts 1 2 3\n');
  const other = join(scratchDir, 'other');
  await mkdir(other);
  const bundle = withQuanta(src, archive, '{relative_path}');
  bundle.instruments = [
    ...(bundle.instruments ?? []),
    { name: 'camera', tool: TOOL, watch: [{ path: other }], storage_location: 'archive' },
  ];
  const station = await startStation(bundle, async (dataDir, cli) => {
    // The archive is not mounted: the first harvest fails; then quanta is turned off.
    await harvestOnceBeforeStart(cli, dataDir);
    withStationDb(dataDir, (db) => {
      db.prepare(`UPDATE instruments SET enabled = 0 WHERE name = 'quanta'`).run();
    });
  });
  await mkdir(archive);
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openDataTab(page);
  const failures = page.getByRole('region', { name: 'Failed transfers' });
  await expect(failures).toContainText('not tried: quanta is not harvested on this station now');
  await expect(page.getByRole('button', { name: 'Retry spectrum.txt' })).toBeDisabled();
});

// Mutation: the tab taking "nothing runs" for "not known" (each failed file promised a next try).
test('data tab: with the only instrument turned off, a failed file says it is not tried', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const { src, archive } = await acquisition(scratchDir);
  await writeFile(join(src, 'spectrum.txt'), 'counts 1 2 3\n');
  const station = await startStation(
    withQuanta(src, archive, '{relative_path}'),
    async (dataDir, cli) => {
      await harvestOnceBeforeStart(cli, dataDir);
      withStationDb(dataDir, (db) => {
        db.prepare(`UPDATE instruments SET enabled = 0 WHERE name = 'quanta'`).run();
      });
    },
  );
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openDataTab(page);
  const failures = page.getByRole('region', { name: 'Failed transfers' });
  await expect(failures).toContainText('not tried: quanta is not harvested on this station now');
  await expect(failures).not.toContainText('next try');
  await expect(page.getByRole('button', { name: 'Retry spectrum.txt' })).toBeDisabled();
});

test('data tab: Retry all takes every failed file again once the share is back', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const { src, archive } = await acquisition(scratchDir);
  // More than the list shows (1,000): the button still takes them all.
  const names = Array.from({ length: 1002 }, (_, i) => `f${String(i).padStart(4, '0')}.txt`);
  for (const name of names) await writeFile(join(src, name), name);
  const station = await startStation(withQuanta(src, archive, '{relative_path}'), (dataDir) =>
    // Failed files are tried again by themselves only in an hour: what completes them here is
    // the button.
    withStationDb(dataDir, (db) => {
      db.prepare(
        `INSERT INTO settings (key, value) VALUES ('harvest.retryBaseSeconds', '3600')`,
      ).run();
    }),
  );
  await page.goto(station.url);
  await openDataTab(page);
  await expect(page.getByTestId('today-failed')).toHaveText('1002');
  await expect(page.getByTestId('failed-shown')).toHaveText(
    'The newest 1,000 of 1,002 failed files.',
  );
  const retryAll = page.getByRole('button', { name: 'Retry all (1002)' });
  await expect(retryAll).toBeDisabled();

  await mkdir(archive);
  await page.getByRole('tab', { name: 'Tool control' }).click();
  await logOn(page, 'ada', '1234');
  await openDataTab(page);
  await retryAll.click();
  await expect(page.getByRole('region', { name: 'Failed transfers' })).toHaveCount(0);
  await expect(page.getByTestId('today-completed')).toHaveText('1002');
  // Those listed and those not: every one.
  expect((await readdir(archive)).sort()).toEqual(names);
  expect(await readFile(join(archive, 'f1001.txt'), 'utf8')).toBe('f1001.txt');
});

test('data tab: a file names the usage it was made during, for its person and staff', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const { src, archive } = await acquisition(scratchDir);
  await mkdir(archive);
  await writeFile(join(src, 'before.txt'), 'made before anyone used the tool');
  const station = await startStation(withQuanta(src, archive, '{relative_path}'));
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await enableWith(page, { project: 'Looms (LOO-2)', samples: [{ name: 'W1' }] });
  await writeFile(join(src, 'during.txt'), 'made while Ada used the tool');

  await openDataTab(page);
  const files = page.getByRole('region', { name: 'Harvested files' });
  await expect(files.getByRole('row', { name: /during\.txt/ })).toContainText('completed');
  await files.getByRole('button', { name: 'during.txt' }).click();
  const usage = page.getByRole('region', { name: 'File during.txt' }).getByTestId('file-usage');
  await expect(usage).toContainText('Ada Lovelace, project Looms:');
  await expect(usage).toContainText('to now (in progress)');
  await files.getByRole('button', { name: 'before.txt' }).click();
  await expect(
    page.getByRole('region', { name: 'File before.txt' }).getByTestId('file-usage'),
  ).toHaveText('none active when the file was first seen');

  // Nobody at the screen: who it was is not shown.
  await page.getByRole('tab', { name: 'Tool control' }).click();
  await logOff(page);
  await openDataTab(page);
  await files.getByRole('button', { name: 'during.txt' }).click();
  await expect(
    page.getByRole('region', { name: 'File during.txt' }).getByTestId('file-usage'),
  ).toHaveText('log on to see');

  // Someone else logged on: Ada's usage and its answers are hers and staff's, not his.
  await page.getByRole('tab', { name: 'Tool control' }).click();
  await logOn(page, 'bob', '2222');
  await openDataTab(page);
  await files.getByRole('button', { name: 'during.txt' }).click();
  const details = page.getByRole('region', { name: 'File during.txt' });
  await expect(details.getByTestId('file-usage')).toHaveText(
    "another person's: for them and for staff to see",
  );
  await expect(details).toContainText("Made during another person's usage");
  await expect(details).not.toContainText('Looms');
  await page.getByRole('tab', { name: 'Tool control' }).click();
  await logOff(page);
  await logOn(page, 'sam', '9999');
  await openDataTab(page);
  await files.getByRole('button', { name: 'during.txt' }).click();
  await expect(
    page.getByRole('region', { name: 'File during.txt' }).getByTestId('file-usage'),
  ).toContainText('Ada Lovelace, project Looms:');
});

test('data tab: a failed file with a long path keeps its Retry and Close buttons whole', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const { src, archive } = await acquisition(scratchDir);
  // As instrument software names a session's folder and its files: long, without spaces.
  const folder = 'session_2026-12-02_sample_ZX-1234_grain_boundaries_overnight_series';
  const name = 'scan_kV15_mag50000_WD10_detector_ETD_dwell_3us_frame_integration_16.tif';
  await mkdir(join(src, folder));
  await writeFile(join(src, folder, name), 'pixels');
  // The archive folder does not exist: the transfer fails.
  const station = await startStation(withQuanta(src, archive, '{instrument}/{relative_path}'));
  await page.goto(station.url);
  await openDataTab(page);
  const retry = page.getByRole('button', { name: `Retry ${folder}/${name}` });
  await expect(retry).toBeVisible();
  const whole = (button: HTMLElement): { content: boolean; inside: boolean } => {
    const box = button.getBoundingClientRect();
    return {
      content: button.scrollWidth <= button.clientWidth,
      inside: box.right <= document.documentElement.clientWidth,
    };
  };
  expect(await retry.evaluate(whole)).toEqual({ content: true, inside: true });
  // Its details too: the name as their heading, and their Close button whole beside it.
  await page
    .getByRole('region', { name: 'Harvested files' })
    .getByRole('button', { name: `${folder}/${name}` })
    .click();
  const close = page.getByRole('region', { name: `File ${name}` }).getByRole('button', {
    name: 'Close',
  });
  expect(await close.evaluate(whole)).toEqual({ content: true, inside: true });
});

test('data tab: a file being written is named with its size so far, before its transfer', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const { src, archive } = await acquisition(scratchDir);
  await mkdir(archive);
  const bundle = withQuanta(src, archive, '{relative_path}');
  // A long window: the file stays settling while the test looks at it.
  bundle.instruments![0].stability_seconds = 60;
  const station = await startStation(bundle);
  await page.goto(station.url);
  await openDataTab(page);
  const written = page.getByRole('list', { name: 'Files being written' });
  await expect(written).toHaveCount(0);
  await mkdir(join(src, 'run-7'));
  const movie = join(src, 'run-7', 'movie.mrc');
  await writeFile(movie, Buffer.alloc(250_000));
  await expect(written.getByRole('listitem')).toHaveText(/^run-7\/movie\.mrc · 250 kB · changed/);
  await writeFile(movie, Buffer.alloc(2_500_000));
  await expect(written.getByRole('listitem')).toHaveText(/^run-7\/movie\.mrc · 2\.5 MB · changed/);
  await expect(page.getByRole('list', { name: 'Transfers under way' })).toHaveCount(0);
});

test('data tab: a file written without a pause shows its size so far growing', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const { src, archive } = await acquisition(scratchDir);
  await mkdir(archive);
  const bundle = withQuanta(src, archive, '{relative_path}');
  bundle.instruments![0].stability_seconds = 60;
  const station = await startStation(bundle);
  await page.goto(station.url);
  await openDataTab(page);
  const written = page.getByRole('list', { name: 'Files being written' });
  // A camera streaming a movie: a write every few milliseconds, never a pause of 0.1 s.
  const movie = join(src, 'movie.mrc');
  const chunk = Buffer.alloc(64 * 1024, 7);
  await writeFile(movie, chunk);
  let writing = true;
  const writer = (async () => {
    while (writing) {
      await appendFile(movie, chunk);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  try {
    await expect(written.getByRole('listitem')).toHaveText(/^movie\.mrc · /);
    // Its size so far, not the size it had when it was first seen.
    await expect(written.getByRole('listitem')).toHaveText(/^movie\.mrc · [\d.]+ MB · changed/, {
      timeout: 5_000,
    });
  } finally {
    writing = false;
    await writer;
  }
});

test('data tab: keyboard use keeps its place: Retry, a file opened and closed', async ({
  page,
  startStation,
  scratchDir,
}) => {
  // The archive folder does not exist yet: both transfers fail.
  const { archive, failures } = await failingHarvest(page, startStation, scratchDir, [
    'a.txt',
    'b.txt',
  ]);
  await expect(failures.getByRole('listitem')).toHaveCount(2);
  await mkdir(archive);
  const focused = page.locator(':focus');

  // Retry by keyboard: once the file is done, the focus is on the next failure's Retry, not
  // lost to the page (a screen reader would start again from its top).
  const first =
    (await page
      .getByRole('button', { name: /^Retry [ab]\.txt$/ })
      .first()
      .getAttribute('aria-label')) ?? '';
  const second = first === 'Retry a.txt' ? 'Retry b.txt' : 'Retry a.txt';
  // By its name (a refresh may reorder the list), once enabled: a status read while the file
  // was still transferring disables it, and a disabled button takes no focus.
  const retryFirst = page.getByRole('button', { name: first, exact: true });
  await expect(retryFirst).toBeEnabled();
  await retryFirst.focus();
  await page.keyboard.press('Enter');
  await expect(failures.getByRole('listitem')).toHaveCount(1);
  await expect(focused).toHaveAccessibleName(second);
  // The last one: the list goes, and the focus goes to the files.
  await page.keyboard.press('Enter');
  await expect(failures).toHaveCount(0);
  await expect(focused).toHaveText('Files');

  // A file opened from the list: the focus goes to its details (after the list, which may be
  // a hundred rows long); Close brings it back to the file in the list.
  const files = page.getByRole('region', { name: 'Harvested files' });
  await files.getByRole('button', { name: 'a.txt', exact: true }).focus();
  await page.keyboard.press('Enter');
  const details = page.getByRole('region', { name: 'File a.txt' });
  await expect(details).toBeFocused();
  // The list says which file is open, to a screen reader too, not by its colour alone.
  const opened = files.locator('tr[aria-current="true"]');
  await expect(opened).toHaveCount(1);
  await expect(opened.getByRole('button', { name: 'a.txt', exact: true })).toBeVisible();
  await page.keyboard.press('Tab');
  await expect(details.getByRole('button', { name: 'Close' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(details).toHaveCount(0);
  await expect(files.getByRole('button', { name: 'a.txt', exact: true })).toBeFocused();
  await expect(opened).toHaveCount(0);
  // The totals are one group a screen reader names.
  await expect(
    page.getByRole('group', { name: 'Totals of today, and files waiting' }),
  ).toBeVisible();
});

test('data tab: a Retry whose file fails again keeps the focus on that Retry', async ({
  page,
  startStation,
  scratchDir,
}) => {
  // The archive folder does not exist, and stays so: every attempt fails.
  const { failures } = await failingHarvest(page, startStation, scratchDir, ['a.txt', 'b.txt']);
  await expect(failures.getByRole('listitem')).toHaveCount(2);
  const focused = page.locator(':focus');
  const first =
    (await page
      .getByRole('button', { name: /^Retry [ab]\.txt$/ })
      .first()
      .getAttribute('aria-label')) ?? '';
  const attempts = failures.getByRole('listitem').filter({ hasText: first.slice('Retry '.length) });
  await expect(attempts).toContainText('1 attempt;');
  const retryFirst = page.getByRole('button', { name: first, exact: true });
  await expect(retryFirst).toBeEnabled();
  await retryFirst.focus();
  await page.keyboard.press('Enter');
  // Failed again (a share still away): the focus is back on its Retry, not on another file's.
  await expect(attempts).toContainText('2 attempts;');
  await expect(focused).toHaveAccessibleName(first);
  await expect(page.getByRole('button', { name: first })).toBeEnabled();
  await expect(focused).toHaveAccessibleName(first);
});

test('data tab: a failure with no storage location reached still names its instrument', async ({
  page,
  startStation,
  scratchDir,
}) => {
  // The archive folder does not exist: the first attempt fails at the storage location.
  const { src, failures } = await failingHarvest(page, startStation, scratchDir, ['a.txt']);
  const failure = failures.getByRole('listitem');
  await expect(failure).toContainText('1 attempt;');
  // The watched folder goes away (a share unmounted): the next attempt fails before any
  // storage location is chosen, and its reason names only the folder.
  await rename(src, `${src}-away`);
  await page.getByRole('button', { name: 'Retry a.txt' }).click();
  await expect(failure).toContainText('2 attempts;');
  await expect(failure).toContainText('not reachable');
  await expect(failure.locator('small')).toHaveText(/^quanta; 2 attempts;/);
});

test('data tab: a failure names where its file was going, so a full disk is found', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const { src, archive } = await acquisition(scratchDir);
  await mkdir(archive);
  await writeFile(join(src, 'spectrum.bin'), 'counts');
  // A disk that is full while this flag exists (no small file system to mount in a test).
  const flag = join(scratchDir, 'disk-full');
  await writeFile(flag, '');
  const before = process.env.LABSTATION_INJECT_ENOSPC_WHILE;
  process.env.LABSTATION_INJECT_ENOSPC_WHILE = flag;
  let station;
  try {
    station = await startStation(withQuanta(src, archive, '{relative_path}'));
  } finally {
    if (before === undefined) delete process.env.LABSTATION_INJECT_ENOSPC_WHILE;
    else process.env.LABSTATION_INJECT_ENOSPC_WHILE = before;
  }
  await page.goto(station.url);
  await openDataTab(page);
  const failure = page
    .getByRole('region', { name: 'Failed transfers' })
    .getByRole('listitem')
    .filter({ hasText: 'spectrum.bin' });
  await expect(failure).toContainText('disk full');
  // The reason says "the storage location": which one, of the station's instruments.
  await expect(failure).toContainText(`quanta → archive (${join(archive, 'spectrum.bin')})`);
});

test('data tab: the failure list follows files failing and retried, and is not read again at every completion', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const { src, archive } = await acquisition(scratchDir);
  await writeFile(join(src, 'a.txt'), 'a');
  // Failed files are tried again by themselves only in an hour: they stay failed meanwhile.
  const station = await startStation(withQuanta(src, archive, '{relative_path}'), (dataDir) =>
    withStationDb(dataDir, (db) => {
      db.prepare(
        `INSERT INTO settings (key, value) VALUES ('harvest.retryBaseSeconds', '3600')`,
      ).run();
    }),
  );
  // The failure list read from the station, as the tab asks for it.
  let failureReads = 0;
  page.on('request', (request) => {
    if (!request.url().endsWith('/rpc/harvest.files')) return;
    if ((request.postDataJSON() as { state?: string }).state === 'failed') failureReads += 1;
  });
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openDataTab(page);
  const failures = page.getByRole('region', { name: 'Failed transfers' });
  await expect(failures.getByRole('listitem')).toHaveCount(1);
  await expect(failures).toContainText('a.txt');

  // The share is back: a burst of 150 files completes, an event and a poll at a time; the
  // failures are as they were, and their list is not read again.
  await mkdir(archive);
  const readsBefore = failureReads;
  for (let i = 0; i < 150; i += 1) await writeFile(join(src, `frame-${i}.txt`), `frame ${i}`);
  await expect(page.getByTestId('today-completed')).toHaveText('150');
  expect(failureReads).toBe(readsBefore);
  await expect(failures.getByRole('listitem')).toHaveCount(1);

  // A file fails while the tab is open: a file stands where its folder would go.
  await writeFile(join(archive, 'run-2'), 'not a folder');
  await mkdir(join(src, 'run-2'));
  await writeFile(join(src, 'run-2', 'b.txt'), 'b');
  await expect(failures.getByRole('listitem')).toHaveCount(2);
  await expect(failures.getByRole('listitem').filter({ hasText: 'run-2/b.txt' })).toBeVisible();

  // A Retry that succeeds takes its file off the list; the other one stays.
  await page.getByRole('button', { name: 'Retry a.txt' }).click();
  await expect(failures.getByRole('listitem')).toHaveCount(1);
  await expect(failures).toContainText('run-2/b.txt');
  await expect(page.getByTestId('today-completed')).toHaveText('151');
  // Once its folder can be made, the last one too: the list goes.
  await rm(join(archive, 'run-2'));
  await page.getByRole('button', { name: 'Retry run-2/b.txt' }).click();
  await expect(failures).toHaveCount(0);
  await expect(page.getByTestId('today-completed')).toHaveText('152');
});

test('data tab: the failure list shows an instrument and a storage location renamed meanwhile', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const { src, archive } = await acquisition(scratchDir);
  await writeFile(join(src, 'a.txt'), 'a');
  // Failed files are tried again by themselves only in an hour: they stay failed meanwhile.
  const station = await startStation(withQuanta(src, archive, '{relative_path}'), (dataDir) =>
    withStationDb(dataDir, (db) => {
      db.prepare(
        `INSERT INTO settings (key, value) VALUES ('harvest.retryBaseSeconds', '3600')`,
      ).run();
    }),
  );
  await page.goto(station.url);
  await openDataTab(page);
  const failure = page.getByRole('region', { name: 'Failed transfers' }).getByRole('listitem');
  await expect(failure.locator('small')).toHaveText(/^quanta → archive \(/);

  // Both renamed (as a sync from the server does), then another file copied: the tab reads
  // the status again, and the failure list with it.
  await mkdir(archive);
  withStationDb(station.dataDir, (db) => {
    db.prepare("UPDATE instruments SET name = 'quanta-north' WHERE name = 'quanta'").run();
    db.prepare("UPDATE storage_locations SET name = 'archive-2' WHERE name = 'archive'").run();
  });
  await writeFile(join(src, 'b.txt'), 'b');
  await expect(page.getByTestId('today-completed')).toHaveText('1');
  await expect(failure.locator('small')).toHaveText(/^quanta-north → archive-2 \(/);
});

test('data tab: a station that stops is said to be not reachable, until it is back', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const { src, archive } = await acquisition(scratchDir);
  await writeFile(join(src, 'a.txt'), 'a');
  const station = await startStation(withQuanta(src, archive, '{relative_path}'));
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openDataTab(page);
  const failures = page.getByRole('region', { name: 'Failed transfers' });
  await expect(failures).toContainText('a.txt');
  const unreachable = page.getByTestId('station-unreachable');
  await expect(unreachable).toHaveCount(0);

  // Its process stops (a service stopped, a crash): the page says so, on every tab.
  await station.stop();
  await expect(unreachable).toContainText('The station is not reachable');
  await expect(unreachable).toHaveRole('alert');
  await page.getByRole('tab', { name: 'Tool control' }).click();
  await expect(unreachable).toBeVisible();
  await openDataTab(page);

  // Meanwhile the share comes back and a file is written; the station starts again.
  await mkdir(archive);
  await writeFile(join(src, 'b.txt'), 'b');
  await station.restart();
  await expect(unreachable).toHaveCount(0);
  // Up to date again: nobody is logged on any more (the log-on form is back), and the Data
  // tab shows the new file harvested.
  await expect(page.getByRole('region', { name: 'Log on' })).toBeVisible();
  await openDataTab(page);
  await expect(
    page.getByRole('region', { name: 'Harvested files' }).getByRole('row', { name: /b\.txt/ }),
  ).toContainText('completed');
  await expect(failures).toContainText('Log on to retry');
});

test('data tab: in a narrow window, the keyboard scrolls the files table to its other columns', async ({
  page,
  startStation,
  scratchDir,
}) => {
  await page.setViewportSize({ width: 360, height: 740 });
  const { archive, failures } = await failingHarvest(page, startStation, scratchDir, ['a.txt']);
  await expect(failures).toContainText('a.txt');
  await mkdir(archive);
  await page.getByRole('button', { name: 'Retry a.txt' }).click();
  await expect(failures).toHaveCount(0);
  const files = page.getByRole('region', { name: 'Harvested files' });
  await files.getByRole('button', { name: 'Find', exact: true }).focus();
  await page.keyboard.press('Tab');
  const table = files.getByRole('region', { name: 'Files table' });
  await expect(table).toBeFocused();
  // The status and the ARK are past the window's edge, to the right.
  const scrolled = (): Promise<number> => table.evaluate((el) => el.scrollLeft);
  expect(await scrolled()).toBe(0);
  await page.keyboard.press('End');
  await page.keyboard.press('ArrowRight');
  await expect.poll(scrolled).toBeGreaterThan(0);
});

test('data tab: Retry all whose files fail again keeps the focus on Retry all', async ({
  page,
  startStation,
  scratchDir,
}) => {
  // The archive folder does not exist, and stays so: every attempt fails.
  const { failures } = await failingHarvest(page, startStation, scratchDir, ['a.txt', 'b.txt']);
  const items = failures.getByRole('listitem');
  await expect(items).toHaveCount(2);
  await expect(items.filter({ hasText: '1 attempt;' })).toHaveCount(2);
  const retryAll = page.getByRole('button', { name: 'Retry all (2)' });
  await retryAll.focus();
  await page.keyboard.press('Enter');
  await expect(items.filter({ hasText: '2 attempts;' })).toHaveCount(2);
  // Where the person was, to press it again once the share is back; not one file's Retry.
  await expect(retryAll).toBeEnabled();
  await expect(retryAll).toBeFocused();
});

test('data tab: the harvest is not read for the Data tab while another tab is on show', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const { src, archive } = await acquisition(scratchDir);
  await mkdir(archive);
  const station = await startStation(withQuanta(src, archive, '{relative_path}'));
  let harvestReads = 0;
  page.on('request', (request) => {
    if (new URL(request.url()).pathname.startsWith('/rpc/harvest.')) harvestReads += 1;
  });
  await page.goto(station.url);
  await openDataTab(page);
  await expect(page.getByTestId('today-completed')).toHaveText('0');
  await page.getByRole('tab', { name: 'Tool control' }).click();
  const readsBefore = harvestReads;

  // A burst of 100 files is harvested while the tool's tab is on show.
  const names = Array.from({ length: 100 }, (_, i) => `frame-${i}.txt`);
  for (const name of names) await writeFile(join(src, name), name);
  await expect.poll(async () => (await readdir(archive)).length, { timeout: 30_000 }).toBe(100);
  expect(harvestReads).toBe(readsBefore);

  // Back on the Data tab, it is up to date.
  await openDataTab(page);
  await expect(page.getByTestId('today-completed')).toHaveText('100');
});

test('data tab: "Show all files" by keyboard leaves the focus in the search field', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const { failures } = await failingHarvest(page, startStation, scratchDir, ['a.txt', 'b.txt']);
  await expect(failures.getByRole('listitem')).toHaveCount(2);
  const files = page.getByRole('region', { name: 'Harvested files' });
  const find = files.getByRole('searchbox', { name: 'Find a file (name, path or ARK)' });
  await find.fill('a.txt');
  await find.press('Enter');
  await expect(files.getByRole('row')).toHaveCount(2);
  const showAll = files.getByRole('button', { name: 'Show all files' });
  await showAll.focus();
  await page.keyboard.press('Enter');
  await expect(files.getByRole('row')).toHaveCount(3);
  // The button is gone with the search: the focus is in the field, empty, to search again.
  await expect(showAll).toHaveCount(0);
  await expect(find).toBeFocused();
  await expect(find).toHaveValue('');
});

test('data tab: "Older files" that brings the last page leaves the focus on its first file', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const { src, archive } = await acquisition(scratchDir);
  await mkdir(archive);
  for (let i = 0; i < 101; i += 1) await writeFile(join(src, `frame-${i}.txt`), `frame ${i}`);
  const station = await startStation(withQuanta(src, archive, '{relative_path}'));
  await page.goto(station.url);
  await openDataTab(page);
  await expect(page.getByTestId('today-completed')).toHaveText('101');
  const files = page.getByRole('region', { name: 'Harvested files' });
  const rows = files.getByRole('row');
  await expect(rows).toHaveCount(101);
  await files.getByRole('button', { name: 'Older files' }).focus();
  await page.keyboard.press('Enter');
  await expect(rows).toHaveCount(102);
  // The button is gone (no older files): the focus is on the file it brought, not the page's.
  await expect(files.getByRole('button', { name: 'Older files' })).toHaveCount(0);
  await expect(rows.nth(101).getByRole('button')).toBeFocused();
});

test('data tab: a Retry of a file being written again says it waits until the file is taken once stable', async ({
  page,
  startStation,
  scratchDir,
}) => {
  // The archive folder does not exist yet: the first try fails. A window of 2 s: the writes
  // below, 100 ms apart, keep the file settling however slow the machine is.
  const { src, archive, failures } = await failingHarvest(
    page,
    startStation,
    scratchDir,
    ['a.txt'],
    2,
  );
  await expect(failures).toContainText('a.txt');
  // The instrument writes the file again, and goes on writing: it is settling anew.
  let line = 0;
  const writer = setInterval(
    () => appendFileSync(join(src, 'a.txt'), `line ${(line += 1)}\n`),
    100,
  );
  try {
    const written = page.getByRole('list', { name: 'Files being written' });
    await expect(written.getByRole('listitem')).toContainText('a.txt');
    await page.getByRole('button', { name: 'Retry a.txt' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'a.txt' })).toHaveText(
      /^a\.txt is being written again: it is taken once it stops changing/,
    );
    await expect(page.getByRole('alert')).toHaveCount(0);
    await mkdir(archive);
  } finally {
    clearInterval(writer);
  }
  // Stable at last: taken, with its last bytes.
  await expect(failures).toHaveCount(0);
  const files = page.getByRole('region', { name: 'Harvested files' });
  await expect(files.getByRole('row', { name: /a\.txt/ })).toContainText('completed');
  expect(await readFile(join(archive, 'a.txt'), 'utf8')).toBe(
    await readFile(join(src, 'a.txt'), 'utf8'),
  );
  // What the Retry said is no longer so.
  await expect(page.getByRole('status').filter({ hasText: 'being written again' })).toHaveCount(0);
});
