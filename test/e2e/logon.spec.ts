import { expect, test } from './fixtures.js';
import { facility, TOOL } from './facility.js';

test('logs on with username and PIN, and says so in words when the PIN is wrong', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await expect(page.getByRole('heading', { name: TOOL })).toBeVisible();
  await expect(page.getByTestId('tool-state')).toHaveText('Idle');
  // The token left the address bar.
  expect(new URL(page.url()).hash).toBe('');

  await page.getByLabel('Username or badge number').fill('ada');
  await page.getByLabel('PIN', { exact: true }).fill('0000');
  await page.getByRole('button', { name: 'Log on' }).click();
  await expect(page.getByRole('alert')).toContainText('Wrong username, badge or PIN');

  // The on-screen keypad types the PIN.
  const keypad = page.getByRole('group', { name: 'Keypad for PIN' });
  for (const digit of '1234')
    await keypad.getByRole('button', { name: digit, exact: true }).click();
  await expect(page.getByLabel('PIN', { exact: true })).toHaveValue('1234');
  await page.getByRole('button', { name: 'Log on' }).click();
  await expect(page.getByText('Logged on as')).toContainText('Ada Lovelace');
  await expect(page.getByRole('heading', { name: `Enable ${TOOL}` })).toBeVisible();
});

test('a badge reader types the badge and Enter: the PIN follows, Enter logs on', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await expect(page.getByRole('heading', { name: 'Log on' })).toBeVisible();
  await expect(page.locator('input:focus')).toHaveCount(0);

  await page.keyboard.type('100234');
  await page.keyboard.press('Enter');
  await expect(page.getByLabel('Username or badge number')).toHaveValue('100234');
  await expect(page.getByLabel('PIN', { exact: true })).toBeFocused();
  await page.keyboard.type('1234');
  await page.keyboard.press('Enter');
  await expect(page.getByText('Logged on as')).toContainText('Ada Lovelace');
});

test('five wrong PINs lock the login', async ({ page, startStation }) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  const pin = page.getByLabel('PIN', { exact: true });
  await page.getByLabel('Username or badge number').fill('bob');
  for (let i = 0; i < 4; i++) {
    await pin.fill('9876');
    await pin.press('Enter');
    const left = 4 - i;
    await expect(page.getByRole('alert')).toContainText(
      `(${left} ${left === 1 ? 'try' : 'tries'} left before a lock)`,
    );
  }
  await pin.fill('9876');
  await pin.press('Enter');
  await expect(page.getByRole('alert')).toContainText('locked after five wrong PINs');
  await pin.fill('2222');
  await pin.press('Enter');
  await expect(page.getByRole('alert')).toContainText('locked');
});
