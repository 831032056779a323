import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test } from './fixtures.js';
import { TOOL, facility, logOn } from './facility.js';

test('data tab: a failed transfer shows its reason and Retry completes it; ARK and metadata shown', async ({
  page,
  startStation,
  scratchDir,
}) => {
  const src = join(scratchDir, 'acquisition');
  const archive = join(scratchDir, 'archive');
  await mkdir(src);
  await writeFile(join(src, 'spectrum.txt'), 'counts 1 2 3\n');
  const station = await startStation({
    ...facility(),
    // The archive folder does not exist yet: the share is "not mounted".
    storage_locations: [{ name: 'archive', type: 'local', base_path: archive }],
    instruments: [
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
  await page.getByRole('tab', { name: 'Data', exact: true }).click();

  await expect(page.getByRole('note')).toContainText('Test identifiers');
  const failures = page.getByRole('region', { name: 'Failed transfers' });
  await expect(failures).toContainText('spectrum.txt');
  await expect(failures).toContainText('is not reachable');
  await expect(page.getByTestId('today-failed')).toHaveText('1');

  // The share comes back; someone at the station asks for the retry.
  await mkdir(archive);
  await page.getByRole('tab', { name: 'Tool control' }).click();
  await logOn(page, 'ada', '1234');
  await page.getByRole('tab', { name: 'Data', exact: true }).click();
  await page.getByRole('button', { name: 'Retry spectrum.txt' }).click();
  await expect(failures).toHaveCount(0);
  await expect(page.getByTestId('today-completed')).toHaveText('1');
  const files = page.getByRole('region', { name: 'Harvested files' });
  await expect(files.getByRole('row', { name: /spectrum\.txt/ })).toContainText('completed');
  await expect(files.getByRole('row', { name: /spectrum\.txt/ })).toContainText('✓ verified');
  expect(await readFile(join(archive, 'quanta', 'spectrum.txt'), 'utf8')).toBe('counts 1 2 3\n');

  await files.getByRole('button', { name: 'spectrum.txt' }).click();
  const details = page.getByRole('region', { name: 'File spectrum.txt' });
  await expect(details.getByTestId('file-ark')).toHaveText(
    /^ark:99999\/fk4[0-9bcdfghjkmnpqrstvwxz]+$/,
  );
  await expect(details).toContainText('test identifier');
  await expect(details.getByTestId('file-metadata')).toContainText('"mime_type": "text/plain"');
  await expect(details).toContainText('failed');
  await expect(details).toContainText('checksum verified');

  await page.getByRole('button', { name: 'Look for new files now' }).click();
  await expect(page.getByRole('alert')).toHaveCount(0);

  // A new file arrives while the tab is open and shows up by itself.
  await writeFile(join(src, 'image2.txt'), 'second');
  await expect(files.getByRole('row', { name: /image2\.txt/ })).toContainText('completed');
});
