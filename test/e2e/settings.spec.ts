import { expect, PEOPLE, serverWrite, test } from './serverFixtures.js';

test('staff disconnect the station from its server and connect it again from the settings tab', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await page.goto(setup.stationUrl);
  await expect(page.getByRole('status', { name: 'Sync' })).toHaveText(/^Online/);

  // Only staff see the settings.
  await page.getByLabel('Username or badge number').fill('alice');
  await page.getByLabel('PIN', { exact: true }).fill(PEOPLE.alice.pin);
  await page.getByRole('button', { name: 'Log on' }).click();
  await expect(page.getByRole('tab', { name: 'Usage data history' })).toBeVisible();
  await expect(page.getByRole('tab', { name: 'Settings' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Log off' }).click();

  await page.getByLabel('Username or badge number').fill('sam');
  await page.getByLabel('PIN', { exact: true }).fill(PEOPLE.sam.pin);
  await page.getByRole('button', { name: 'Log on' }).click();
  await page.getByRole('tab', { name: 'Settings' }).click();
  await expect(page.getByText(`This station syncs with ${setup.serverUrl}.`)).toBeVisible();

  await page.getByRole('button', { name: 'Disconnect' }).click();
  await expect(page.getByText('Saved: this station now runs on its own.')).toBeVisible();
  await expect(page.getByRole('status', { name: 'Sync' })).toHaveText(/^Standalone station/);

  // A wrong key is refused at its field; the right one connects.
  await page.getByLabel('Server address').fill(setup.serverUrl);
  await page.getByLabel('Station key').fill('not-the-key');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByText('the server does not accept this key')).toBeVisible();
  await expect(page.getByLabel('Station key')).toBeFocused();
  await page.getByLabel('Station key').fill(setup.stationKey);
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByText(/^Saved\. /)).toBeVisible();
  await expect(page.getByRole('status', { name: 'Sync' })).toHaveText(/^Online/, {
    timeout: 15_000,
  });
  // The notice follows the link it started: online, not "Not reached yet" for good.
  await expect(page.getByText(/^Saved\. Online, last sync /)).toBeVisible({ timeout: 15_000 });
  // The browser station has no desktop shell: no switch to server mode here.
  await expect(page.getByRole('heading', { name: 'This PC as the facility server' })).toHaveCount(
    0,
  );
});

test('a station whose key the server refuses says why in its status line, not only "Offline"', async ({
  page,
  startServer,
}) => {
  // The reason was in a tooltip only, which a touch screen at an instrument cannot show: the
  // line read "Offline" while the server answered, and records waited without a word.
  const setup = await startServer();
  await page.goto(setup.stationUrl);
  const badge = page.getByRole('status', { name: 'Sync' });
  await expect(badge).toHaveText(/^Online/);
  serverWrite(setup, "UPDATE stations SET enabled = 0 WHERE name = 'sem'");
  await expect(badge).toHaveText(/^Not syncing: This station is disabled\. · last sync /, {
    timeout: 60_000,
  });
});
