/**
 * The server's admin editors with what admins really type: words in a number field, and names
 * as long as the contract allows.
 */
import type { Page } from '@playwright/test';
import { expect, PEOPLE, test, type ServerSetup } from './serverFixtures.js';

async function logIn(page: Page, setup: ServerSetup, who: { email: string; password: string }) {
  await page.goto(setup.serverUrl);
  await page.getByLabel('E-mail').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByTestId('account-name')).toBeVisible();
}

test('a number field holding words is told it must be a number, not that it is empty', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await logIn(page, setup, PEOPLE.ada);

  await page.goto(`${setup.serverUrl}#/admin/instruments`);
  await page.getByRole('button', { name: 'New instrument' }).click();
  await page.getByLabel('Name', { exact: true }).fill('SEM detector');
  await page.getByLabel('Tool').selectOption({ label: 'SEM' });
  const stability = page.getByLabel('Stability seconds');
  await stability.fill('ten');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(stability).toHaveAttribute('aria-invalid', 'true');
  await expect(stability).toBeFocused();
  await expect(page.getByText('must be a number', { exact: true })).toBeVisible();
  await expect(page.getByText('must be filled in')).toHaveCount(0);
  await stability.fill('10');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Created SEM detector.' })).toBeVisible();

  await page.goto(`${setup.serverUrl}#/admin/hooks`);
  await page.getByRole('button', { name: 'New hook' }).click();
  await page.getByLabel('Name').fill('info');
  const priority = page.getByLabel('Priority');
  await priority.fill('first');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(priority).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByText('must be a number', { exact: true })).toBeVisible();
  await expect(page.getByText('must be filled in')).toHaveCount(0);
});
