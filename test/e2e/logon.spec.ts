import { expect, test } from './fixtures.js';
import type { Page } from '@playwright/test';
import { facility, TOOL } from './facility.js';

/**
 * Types `badge` and Enter as a badge reader does, 5 ms apart by the events' own times (the
 * browser's, given over CDP): Playwright's typing is paced by the load of the machine.
 */
async function swipeBadge(page: Page, badge: string): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  const start = Date.now() / 1000;
  const keys = [...badge].map((key) => ({ key, text: key })).concat({ key: 'Enter', text: '\r' });
  for (const [i, { key, text }] of keys.entries()) {
    const timestamp = start + i * 0.005;
    const code = key === 'Enter' ? 'Enter' : `Digit${key}`;
    const windowsVirtualKeyCode = key === 'Enter' ? 13 : key.charCodeAt(0);
    await cdp.send('Input.dispatchKeyEvent', {
      type: 'keyDown',
      key,
      code,
      text,
      windowsVirtualKeyCode,
      timestamp,
    });
    await cdp.send('Input.dispatchKeyEvent', {
      type: 'keyUp',
      key,
      code,
      windowsVirtualKeyCode,
      timestamp,
    });
  }
  await cdp.detach();
}

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
  // The PIN refused goes.
  await expect(page.getByLabel('PIN', { exact: true })).toHaveValue('');

  // The on-screen keypad types the PIN.
  const keypad = page.getByRole('group', { name: 'Keypad for PIN' });
  for (const digit of '1234')
    await keypad.getByRole('button', { name: digit, exact: true }).click();
  await expect(page.getByLabel('PIN', { exact: true })).toHaveValue('1234');
  await page.getByRole('button', { name: 'Log on' }).click();
  await expect(page.getByText('Logged on as')).toContainText('Ada Lovelace');
  await expect(page.getByRole('heading', { name: `Enable ${TOOL}` })).toBeVisible();
});

test('a link whose token is spoiled asks for the station link, and takes the good one after', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  // A `%` that starts no escape (the link copied in part): the page was left blank before.
  await page.goto(`${station.url}%`);
  await expect(page.getByText('This page needs the link the station printed')).toBeVisible();
  expect(new URL(page.url()).hash).toBe('');
  await page.goto(station.url);
  await expect(page.getByTestId('tool-state')).toHaveText('Idle');
});

test('a log-on the station does not answer keeps the PIN typed, to try again', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await expect(page.getByTestId('tool-state')).toHaveText('Idle');
  await page.getByLabel('Username or badge number').fill('ada');
  const pin = page.getByLabel('PIN', { exact: true });
  await pin.fill('1234');
  await station.stop();
  await page.getByRole('button', { name: 'Log on' }).click();
  const logon = page.getByRole('region', { name: 'Log on' });
  await expect(logon.getByRole('alert')).toContainText('The station does not answer');
  await expect(pin).toHaveValue('1234');
  await expect(pin).toBeFocused();
});

test('a badge reader types the badge and Enter: the PIN follows, Enter logs on', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await expect(page.getByRole('heading', { name: 'Log on' })).toBeVisible();
  await expect(page.locator('input:focus')).toHaveCount(0);

  // With no field focused, a person's keys go to the login too, and Enter moves on to the PIN.
  await page.keyboard.type('bob', { delay: 80 });
  await page.keyboard.press('Enter');
  await expect(page.getByLabel('Username or badge number')).toHaveValue('bob');
  await expect(page.getByLabel('PIN', { exact: true })).toBeFocused();
  await page.getByRole('heading', { name: 'Log on' }).click();
  await page.getByLabel('Username or badge number').fill('');
  await page.getByRole('heading', { name: 'Log on' }).click();
  await expect(page.locator('input:focus')).toHaveCount(0);

  // The reader, by the events' own times (Playwright's typing is paced by the machine's load:
  // a first key's render once split one swipe into '1' and a badge '00234').
  await swipeBadge(page, '100234');
  await expect(page.getByLabel('Username or badge number')).toHaveValue('100234');
  await expect(page.getByLabel('PIN', { exact: true })).toBeFocused();
  // Typed by a person: slower than a badge reader types (useBadgeReader.ts badgeBurst).
  await page.keyboard.type('1234', { delay: 80 });
  await page.keyboard.press('Enter');
  await expect(page.getByText('Logged on as')).toContainText('Ada Lovelace');
});

test("a badge swiped after a wrong PIN is a login, not the last person's next PIN", async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await page.getByLabel('Username or badge number').fill('bob');
  const pin = page.getByLabel('PIN', { exact: true });
  await pin.fill('9876');
  await pin.press('Enter');
  await expect(page.getByRole('alert')).toContainText('(4 tries left before a lock)');
  await expect(pin).toBeFocused();
  // Ada's badge, swiped: it went in as bob's PIN and used up one of his tries.
  await swipeBadge(page, '100234');
  await expect(page.getByLabel('Username or badge number')).toHaveValue('100234');
  await expect(pin).toHaveValue('');
  await expect(pin).toBeFocused();
  await expect(page.getByRole('alert')).toHaveCount(0);
  await page.keyboard.type('1234', { delay: 80 });
  await page.keyboard.press('Enter');
  await expect(page.getByText('Logged on as')).toContainText('Ada Lovelace');
  await page.getByRole('button', { name: 'Log off' }).click();
  // Bob still has his four tries: a wrong PIN now says 3 are left, not 2.
  await page.getByLabel('Username or badge number').fill('bob');
  await pin.fill('9876');
  await pin.press('Enter');
  await expect(page.getByRole('alert')).toContainText('(3 tries left before a lock)');
});

test('a badge swiped into a login someone began and left is that badge, in the field or with no field focused', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  const login = page.getByLabel('Username or badge number');
  const pin = page.getByLabel('PIN', { exact: true });
  // Typed by a person into the login field, then left there; the badge reader types on.
  await login.click();
  await page.keyboard.type('bo', { delay: 80 });
  await swipeBadge(page, '100234');
  await expect(login).toHaveValue('100234');
  await expect(pin).toBeFocused();
  await page.keyboard.type('1234', { delay: 80 });
  await page.keyboard.press('Enter');
  await expect(page.getByText('Logged on as')).toContainText('Ada Lovelace');
  await page.getByRole('button', { name: 'Log off' }).click();

  // With no field focused, the reader's keys go to the login: the same.
  await login.fill('bo');
  await page.getByRole('heading', { name: 'Log on' }).click();
  await expect(page.locator('input:focus')).toHaveCount(0);
  await swipeBadge(page, '100234');
  await expect(login).toHaveValue('100234');
  await expect(pin).toBeFocused();
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

test('wrong PINs across logins lock log-on at the station, and say so', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  // One PIN tried on thirty logins, none of them locked by its own count: the first 29 as a
  // program would send them (the station's contract, the page's token), the last at the screen.
  const token = /#token=([^&]+)/.exec(station.url)?.[1] ?? '';
  for (let i = 0; i < 29; i++) {
    const res = await fetch(new URL('/rpc/session.logon', station.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ login: `guess${i}`, pin: '1234' }),
    });
    expect(((await res.json()) as { code: string }).code).toBe('unauthenticated');
  }
  const login = page.getByLabel('Username or badge number');
  const pin = page.getByLabel('PIN', { exact: true });
  const alert = page.getByRole('alert');
  await login.fill('guess29');
  await pin.fill('1234');
  await pin.press('Enter');
  await expect(alert).toContainText('Log-on at this station is locked after too many wrong PINs');
  expect(station.output()).toContain(
    'log-on: the station locked after wrong PINs for different logins',
  );
  // A right PIN waits too, and is told why: not its own login's lock.
  await login.fill('bob');
  await pin.fill('2222');
  const answered = page.waitForResponse((res) => res.url().endsWith('/rpc/session.logon'));
  await pin.press('Enter');
  expect(((await (await answered).json()) as { code?: string }).code).toBe('locked');
  await expect(alert).toContainText('Log-on at this station is locked after too many wrong PINs');
  await expect(alert).not.toContainText('This login');
  await expect(page.getByRole('heading', { name: 'Log on' })).toBeVisible();
});
