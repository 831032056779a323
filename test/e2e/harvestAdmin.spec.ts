/**
 * The server's harvest pages: an admin sets up a storage location, a service account (its key
 * shown once), an instrument with a watched folder, grants a user access, schedules it and
 * triggers a run (queued: the station has never connected). The station then pushes a file
 * record with that key, and the user reads it on the Files page.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Page } from '@playwright/test';
import { holdNextAnswer } from './heldAnswer.js';
import {
  expect,
  logIn,
  PEOPLE,
  serverRow,
  serverWrite,
  test,
  type ServerSetup,
} from './serverFixtures.js';

async function openSection(page: Page, name: string): Promise<void> {
  await page
    .getByRole('navigation', { name: 'Administration' })
    .getByRole('link', { name })
    .click();
  await expect(page.getByRole('heading', { name, exact: true })).toBeVisible();
}

function instrumentUuid(setup: ServerSetup, name: string): string {
  const db = new Database(join(setup.serverDir, 'labstation.db'), { readonly: true });
  try {
    return db.prepare('SELECT uuid FROM instruments WHERE name = ?').pluck().get(name) as string;
  } finally {
    db.close();
  }
}

/** What the station would push after harvesting one file: its record and a verified transfer. */
async function pushHarvestedFile(setup: ServerSetup, key: string, instrument: string) {
  const file = crypto.randomUUID();
  const transfer = crypto.randomUUID();
  const res = await fetch(`${setup.serverUrl}sync/push`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Station ${key}` },
    body: JSON.stringify({
      records: [
        {
          id: 1,
          kind: 'harvest_file',
          uuid: file,
          payload: {
            uuid: file,
            instrument_uuid: instrument,
            instrument: 'TEM camera',
            persistent_id: 'ark:99999/fk4d7q2x9m1r',
            persistent_id_type: 'ark',
            watch_path: '/data/tem',
            source_path: '/data/tem/grid3_0001.dm4',
            relative_path: 'grid3_0001.dm4',
            filename: 'grid3_0001.dm4',
            size: 67_108_864,
            mtime_ms: 1,
            xxhash: '6f1ed002ab5595859014ebf0951522d9',
            hash_algorithm: 'xxh3-128',
            first_discovered_at: '2026-11-20T09:15:33.120Z',
            usage_event_uuid: null,
            metadata_: { sample: { name: 'grid 3' } },
            state: 'done',
            updated_at: '2026-11-20T09:15:41.003Z',
          },
        },
        {
          id: 2,
          kind: 'harvest_transfer',
          uuid: transfer,
          payload: {
            uuid: transfer,
            file_uuid: file,
            status: 'completed',
            storage_location: 'archive',
            destination_path: '/mnt/archive/TEM camera/grid3_0001.dm4',
            bytes_transferred: 67_108_864,
            dest_checksum: '6f1ed002ab5595859014ebf0951522d9',
            checksum_verified: true,
            started_at: '2026-11-20T09:15:38.201Z',
            completed_at: '2026-11-20T09:15:41.003Z',
            error: '',
            note: '',
          },
        },
      ],
    }),
  });
  const body = (await res.json()) as { error: unknown };
  expect(res.status).toBe(200);
  expect(body.error).toBeNull();
}

test('an admin sets up harvesting of an instrument; a granted user reads its files', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await logIn(page, setup, PEOPLE.ada);
  await page.getByRole('link', { name: 'Administration' }).click();

  // Storage location: a problem the server finds is shown at its field.
  await openSection(page, 'Storage locations');
  await page.getByRole('button', { name: 'New storage location' }).click();
  await page.getByLabel('Name').fill('archive');
  await page.getByLabel('Base path').fill('relative/path');
  await page.getByRole('button', { name: 'Save' }).click();
  const basePath = page.getByLabel('Base path');
  await expect(basePath).toHaveAttribute('aria-invalid', 'true');
  await expect(basePath).toBeFocused();
  await expect(page.getByText('must be an absolute path on the station')).toBeVisible();
  await basePath.fill('/mnt/archive');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Created archive.' })).toBeVisible();

  // Service account: its key is shown once.
  await openSection(page, 'Service accounts');
  await page.getByRole('button', { name: 'New service account' }).click();
  await page.getByLabel('Name').fill('tem-pc');
  await page.getByRole('button', { name: 'Create and show its key' }).click();
  const secret = page.getByRole('alert').filter({ hasText: 'Key of service account tem-pc' });
  await expect(secret).toBeVisible();
  const key = await secret.getByLabel('Secret').inputValue();
  expect(key).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  // Reached over plain http at a LAN address, a page has no clipboard API: Copy still copies
  // (the field's text selected, the browser's copy), or says to press Ctrl+C; never nothing.
  await page.evaluate(() =>
    Object.defineProperty(navigator, 'clipboard', { value: undefined, configurable: true }),
  );
  await secret.getByRole('button', { name: 'Copy', exact: true }).click();
  await expect(
    secret
      .getByRole('button', { name: 'Copied', exact: true })
      .or(secret.getByText('press Ctrl+C')),
  ).toBeVisible();
  await expect(secret.getByLabel('Secret')).toBeFocused();
  await secret.getByRole('button', { name: 'I have copied it' }).click();
  await expect(page.getByText(key)).toHaveCount(0);
  await expect(page.getByLabel('Secret')).toHaveCount(0);

  // Instrument with a watched folder; a bad glob is named at its line, a bad template at once.
  await openSection(page, 'Instruments');
  await page.getByRole('button', { name: 'New instrument' }).click();
  await page.getByLabel('Name', { exact: true }).fill('TEM camera');
  await page.getByLabel('Tool').selectOption({ label: 'AFM' });
  await page.getByLabel('Service account').selectOption({ label: 'tem-pc' });
  await page.getByLabel('Storage location').selectOption({ label: 'archive' });
  await page.getByRole('button', { name: 'Add a watched folder' }).click();
  const folder = page.getByRole('group', { name: 'Watched folder 1' });
  await folder.getByLabel('Folder path').fill('/data/tem');
  await folder.getByLabel('Include globs').fill('[abc');
  const template = page.getByLabel('Destination template');
  await expect(template).toHaveValue('{instrument}/{yyyy}/{mm}/{dd}/{relative_path}');
  await template.fill('{instrument}/{colour}/{filename}');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(template).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByText(/unknown field \{colour\}/)).toBeVisible();
  await template.fill('{instrument}/{yyyy}/{relative_path}');
  await page.getByRole('button', { name: 'Save' }).click();
  const include = folder.getByLabel('Include globs');
  await expect(include).toHaveAttribute('aria-invalid', 'true');
  await expect(folder.getByText(/^line 1: /)).toBeVisible();
  await include.fill('*.dm4');
  // The access list's first read answers only after the grant's own read has shown.
  const firstAccess = await holdNextAnswer(
    page,
    (url) => url.pathname === '/rpc/admin.access.list',
  );
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Created TEM camera.' })).toBeVisible();

  // Access: Alice may read its files.
  const access = page.getByRole('region', { name: 'Access to TEM camera' });
  await firstAccess.asked;
  await access
    .getByLabel('Person to grant')
    .selectOption({ label: 'Alice Martin (alice@example.org)' });
  await access.getByRole('button', { name: 'Grant access' }).click();
  await expect(access.getByRole('status').filter({ hasText: 'may now read' })).toHaveText(
    'Alice Martin (alice@example.org) may now read the files of TEM camera.',
  );
  const revokeAlice = access.getByRole('button', {
    name: 'Revoke access of Alice Martin (alice@example.org)',
  });
  await expect(revokeAlice).toBeVisible();
  await firstAccess.release();
  expect(await revokeAlice.count()).toBe(1);

  // Schedule and a manual run: the station has never connected, so the run waits for it.
  await openSection(page, 'Schedules');
  await page.getByRole('button', { name: 'New schedule' }).click();
  await page.getByLabel('Instrument').selectOption({ label: 'TEM camera' });
  await page.getByLabel('Cron').fill('61 * * * *');
  await page.getByLabel('Time zone').fill('Europe/Zurich');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByLabel('Cron')).toHaveAttribute('aria-invalid', 'true');
  await page.getByLabel('Cron').fill('0 3 * * *');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Created;' })).toBeVisible();
  const runs = page.getByRole('region', { name: 'Deployment and runs' });
  await expect(runs.getByText('tem-pc')).toBeVisible();
  await expect(runs.getByTestId('deployment-state')).toHaveText(/^pending/);
  // By keyboard: the focus stays on the button (it was dropped to the page while busy).
  const triggerNow = runs.getByRole('button', { name: 'Trigger now' });
  await triggerNow.focus();
  await page.keyboard.press('Enter');
  await expect(runs.getByRole('status')).toHaveText(
    /^Queued for an offline station: station tem-pc is offline .*queued/,
  );
  await expect(triggerNow).toBeFocused();
  const lastRuns = runs.getByRole('table', { name: 'Last runs' });
  await expect(lastRuns.getByRole('row')).toHaveCount(2);
  await expect(lastRuns.getByRole('cell', { name: 'queued', exact: true })).toBeVisible();
  await expect(lastRuns.getByRole('cell', { name: 'triggered', exact: true })).toBeVisible();
  // Another schedule shows its own runs, not the answer of the one triggered.
  await page.getByRole('button', { name: 'New schedule' }).click();
  const second = page.getByRole('form', { name: 'New schedule' });
  await second.getByLabel('Instrument').selectOption({ label: 'TEM camera' });
  await second.getByLabel('Cron').fill('0 4 * * *');
  await second.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('heading', { name: 'Edit schedule #2' })).toBeVisible();
  await expect(runs.getByText('No runs yet.')).toBeVisible();
  await expect(runs.getByText(/Queued for an offline station/)).toHaveCount(0);
  // Another admin deletes schedule #1 while it is open here with a change typed: its editor
  // stays, with what was typed, and says so (it turned into an empty "New schedule").
  await page.locator('button[data-row="1"]').click();
  const scheduleOne = page.getByRole('form', { name: 'Edit schedule #1' });
  // One editor, of the schedule chosen (with a key its runs panel shared, they piled up).
  await expect(page.getByRole('form', { name: /^(Edit|New) schedule/ })).toHaveCount(1);
  await scheduleOne.getByLabel('Cron', { exact: true }).fill('15 3 * * *');
  serverWrite(setup, 'DELETE FROM harvest_schedules WHERE id = 1');
  // Its runs panel reads the schedules again while its run is queued (every few seconds).
  await expect(scheduleOne.getByText(/^Deleted elsewhere meanwhile/)).toBeVisible({
    timeout: 15_000,
  });
  await expect(scheduleOne.getByLabel('Cron', { exact: true })).toHaveValue('15 3 * * *');
  await expect(page.getByRole('form', { name: 'New schedule' })).toHaveCount(0);

  // The station harvests a file and pushes its records with its key.
  await pushHarvestedFile(setup, key, instrumentUuid(setup, 'TEM camera'));

  // Alice reads it on the Files page.
  await page.getByRole('button', { name: 'Log out' }).click();
  await logIn(page, setup, PEOPLE.alice);
  // The page's first read (every file) answers only after a search made meanwhile has shown:
  // what was asked for last stays on show.
  const first = await holdNextAnswer(page, '**/rpc/files.list');
  await page.getByRole('link', { name: 'Files' }).click();
  await expect(page.getByRole('heading', { name: 'Files', level: 1 })).toBeVisible();
  await first.asked;
  await page.getByLabel('ARK').fill('ark:/99999/fk4nothere');
  await page.getByRole('button', { name: 'Search' }).click();
  await expect(page.getByTestId('files-count')).toHaveText('0 files · page 1 of 1');
  await first.release();
  expect(await page.getByTestId('files-count').textContent()).toBe('0 files · page 1 of 1');
  await page.getByLabel('ARK').fill('ark:/99999/fk4d7q2x9m1r');
  await page.getByLabel('Instrument').selectOption({ label: 'TEM camera' });
  await page.getByLabel('Metadata value').fill('grid 3');
  await page.getByRole('button', { name: 'Search' }).click();
  await expect(page.getByLabel('Metadata key')).toHaveAttribute('aria-invalid', 'true');
  // Said in the words of the form, not by the API's parameter name.
  await expect(page.getByText('is needed to search by a metadata value')).toBeVisible();
  await expect(page.getByText('metadata_value')).toHaveCount(0);
  await expect(page.getByLabel('Metadata key')).toBeFocused();
  await page.getByLabel('Metadata key').fill('sample.name');
  await page.getByRole('button', { name: 'Search' }).click();
  await expect(page.getByTestId('files-count')).toHaveText('1 file · page 1 of 1');
  await page.getByRole('button', { name: 'Details of grid3_0001.dm4' }).click();

  const details = page.getByRole('region', { name: 'grid3_0001.dm4' });
  await expect(details.getByTestId('file-ark')).toHaveText('ark:99999/fk4d7q2x9m1r');
  await expect(details.getByText('test identifier')).toBeVisible();
  await expect(details.getByTestId('file-checksum')).toHaveText('6f1ed002ab5595859014ebf0951522d9');
  await expect(details.getByText('(xxh3-128)')).toBeVisible();
  await expect(details.getByText('/data/tem/grid3_0001.dm4')).toBeVisible();
  await expect(
    details.getByTestId('file-metadata').locator('dt[title="sample.name"] + dd'),
  ).toHaveText('grid 3');
  const history = details.getByRole('table', { name: 'Transfer history' });
  await expect(history.getByRole('cell', { name: 'completed', exact: true })).toBeVisible();
  await expect(history.getByText('/mnt/archive/TEM camera/grid3_0001.dm4')).toBeVisible();
  await expect(history.getByRole('cell', { name: 'yes', exact: true })).toBeVisible();

  // Administration stays closed to her.
  await page.goto(`${setup.serverUrl}#/admin/instruments`);
  await expect(page.getByText('Administration is for admins.')).toBeVisible();
});

test('an admin is told why a delete is refused, and sets up a hook from its kind’s example', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await logIn(page, setup, PEOPLE.ada);
  await page.goto(`${setup.serverUrl}#/admin/storage-locations`);
  await page.getByRole('button', { name: 'New storage location' }).click();
  await page.getByLabel('Name').fill('archive');
  await page.getByLabel('Base path').fill('/mnt/archive');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Created archive.' })).toBeVisible();

  await openSection(page, 'Instruments');
  await page.getByRole('button', { name: 'New instrument' }).click();
  await page.getByRole('button', { name: 'Save' }).click();
  // What the form can tell before sending: the name and the tool are needed.
  await expect(page.getByLabel('Name', { exact: true })).toBeFocused();
  await expect(page.getByLabel('Tool')).toHaveAttribute('aria-invalid', 'true');
  await page.getByLabel('Name', { exact: true }).fill('SEM detector');
  await page.getByLabel('Tool').selectOption({ label: 'SEM' });
  await page.getByLabel('Storage location').selectOption({ label: 'archive' });
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Created SEM detector.' })).toBeVisible();

  // The location is in use: the server's 409 is shown, and nothing is deleted.
  await openSection(page, 'Storage locations');
  await page.getByRole('button', { name: 'Edit archive' }).click();
  await page.getByRole('button', { name: 'Delete storage location archive…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete storage location archive?' });
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toHaveCount(0);
  await page.getByRole('button', { name: 'Delete storage location archive…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await expect(page.getByRole('alert')).toHaveText(/is used by instrument SEM detector/);
  await expect(page.getByRole('button', { name: 'Edit archive' })).toBeVisible();

  // A hook: the kind sets when it runs; a config problem is shown at the config.
  await openSection(page, 'Hooks');
  await page.getByRole('button', { name: 'New hook' }).click();
  await page.getByLabel('Name').fill('sidecars');
  await page.getByLabel('Kind').selectOption('sidecar_json');
  await expect(page.getByLabel('Runs')).toHaveValue('post_transfer');
  await page.getByLabel('Instrument').selectOption({ label: 'SEM detector' });
  const config = page.getByLabel('Config (JSON)');
  await config.fill('{"suffixes": []}');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(config).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByText(/^suffixes: /)).toBeVisible();
  await config.fill('{"suffixes": ');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByText(/is not valid JSON/)).toBeVisible();
  await page.getByRole('button', { name: 'Use the example config' }).click();
  await expect(config).toHaveValue(/"\.json"/);
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Created sidecars.' })).toBeVisible();
  await expect(
    page.getByRole('row', { name: /sidecars sidecar_json after 100 SEM detector yes/ }),
  ).toBeVisible();

  await page.getByRole('button', { name: 'Delete hook sidecars…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await expect(page.getByRole('status')).toHaveText('Deleted hook sidecars.');
  await expect(page.getByRole('button', { name: 'Edit sidecars' })).toHaveCount(0);

  // Another admin moves the location while this editor is open: its save is refused, saying
  // so, and what was typed stays; the other admin's change stands.
  await openSection(page, 'Storage locations');
  await page.getByRole('button', { name: 'Edit archive' }).click();
  await page.getByLabel('Name').fill('archive 2');
  expect(
    serverWrite(
      setup,
      "UPDATE storage_locations SET base_path = '/mnt/elsewhere' WHERE name = 'archive'",
    ),
  ).toBe(1);
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('alert')).toContainText(
    'Storage location archive was changed elsewhere since it was opened here',
  );
  await expect(page.getByLabel('Name')).toHaveValue('archive 2');
  expect(
    serverRow<{ name: string; base_path: string }>(
      setup,
      "SELECT name, base_path FROM storage_locations WHERE base_path = '/mnt/elsewhere'",
    ),
  ).toEqual({ name: 'archive', base_path: '/mnt/elsewhere' });
});
