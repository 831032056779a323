/**
 * The server's admin editors with what admins really type: words in a number field, and names
 * as long as the contract allows.
 */
import type { Page } from '@playwright/test';
import { expect, logIn, PEOPLE, test } from './serverFixtures.js';

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

/** How far the page, and each table cell, is wider than the room it has (0: it fits). */
function overflow(page: Page): Promise<{ page: number; cells: number }> {
  return page.evaluate(() => ({
    page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    cells: Array.from(document.querySelectorAll<HTMLElement>('td, th')).filter(
      (cell) => cell.scrollWidth > cell.clientWidth + 1,
    ).length,
  }));
}

test('names of 200 characters wrap: the admin pages keep their width and nothing runs over', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await logIn(page, setup, PEOPLE.ada);
  const project = 'P'.repeat(200);
  const username = 'u'.repeat(200);

  await page.goto(`${setup.serverUrl}#/admin/projects`);
  await page.getByRole('button', { name: 'New project' }).click();
  await page.getByLabel('Name').fill(project);
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status')).toHaveText(`Saved ${project}.`);
  expect(await overflow(page)).toEqual({ page: 0, cells: 0 });

  await page.goto(`${setup.serverUrl}#/admin/users`);
  await page.getByRole('button', { name: 'New person' }).click();
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('First name').fill('F'.repeat(200));
  await page.getByLabel('Last name').fill('L'.repeat(200));
  await page.getByLabel(project).check();
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status')).toHaveText(`Saved ${username}.`);
  await expect(page.getByRole('button', { name: `Edit ${username}` })).toBeVisible();
  expect(await overflow(page)).toEqual({ page: 0, cells: 0 });

  // Each project of the checklist has its own lines: the long one is not drawn over another.
  const boxes = await page
    .getByRole('group', { name: 'Projects' })
    .locator('label.choice')
    .evaluateAll((labels) =>
      labels.map((l) => ({
        top: l.getBoundingClientRect().top,
        bottom: l.getBoundingClientRect().bottom,
      })),
    );
  expect(boxes.length).toBeGreaterThan(1);
  boxes.slice(1).forEach((box, i) => {
    expect(box.top).toBeGreaterThanOrEqual(boxes[i].bottom - 1);
  });
});

test('a new API token without a person, or with a name too long, is told so at the field', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await logIn(page, setup, PEOPLE.ada);
  await page.goto(`${setup.serverUrl}#/admin/tokens`);
  const person = page.getByLabel('For', { exact: true });
  const purpose = page.getByLabel('What it is for');
  await purpose.fill('x'.repeat(201));
  await page.getByRole('button', { name: 'Make token' }).click();
  await expect(person).toHaveAttribute('aria-invalid', 'true');
  await expect(person).toBeFocused();
  await expect(person).toHaveAccessibleDescription('Choose whose token it is.');
  await expect(purpose).toHaveAttribute('aria-invalid', 'true');
  await expect(purpose).toHaveAccessibleDescription('must be at most 200 characters');
  await expect(page.getByRole('alert')).toHaveCount(0);

  await person.selectOption({ label: 'sam@example.org (staff)' });
  await expect(person).not.toHaveAttribute('aria-invalid');
  await purpose.fill('nightly export');
  await page.getByRole('button', { name: 'Make token' }).click();
  await expect(
    page.getByRole('alert').filter({ hasText: 'New API token for sam@example.org' }),
  ).toBeVisible();
});

test('a keyboard user saving a record stays at the Save button, also after creating one', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await logIn(page, setup, PEOPLE.ada);
  await page.goto(`${setup.serverUrl}#/admin/projects`);
  await page.getByRole('button', { name: 'New project' }).click();
  await page.getByLabel('Name').fill('Focus study');
  const save = page.getByRole('button', { name: 'Save', exact: true });
  await save.focus();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('status')).toHaveText('Saved Focus study.');
  await expect(page.getByRole('heading', { name: 'Edit Focus study' })).toBeVisible();
  await expect(save).toBeFocused();

  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Space');
  await expect(page.getByLabel('Active (can be billed)')).not.toBeChecked();
  await page.keyboard.press('Tab');
  await expect(save).toBeFocused();
  await page.keyboard.press('Enter');
  // Its own row says so (the facility has another inactive project, Old).
  await expect(
    page.getByRole('row', { name: /Focus study/ }).getByRole('cell', { name: 'no', exact: true }),
  ).toBeVisible();
  await expect(save).toBeFocused();
});

// Mutations: EditorPanel and ListPanel without their focus effects (an opened editor, drawn
// below the list, left the focus on its button; a closed one dropped it to the page), and
// SecretOnce and TokensAdmin without theirs (a new token, or a revoked one, did the same).
test('an editor opened takes the focus and gives it back when closed; a new token and a revoked one keep it', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await logIn(page, setup, PEOPLE.ada);
  await page.goto(`${setup.serverUrl}#/admin/projects`);
  await page.getByRole('button', { name: 'Edit Cathodes' }).click();
  await expect(page.getByRole('heading', { name: 'Edit Cathodes' })).toBeFocused();
  await page.getByRole('button', { name: 'Close' }).click();
  await expect(page.getByRole('button', { name: 'Edit Cathodes' })).toBeFocused();
  await page.getByRole('button', { name: 'New project' }).click();
  await expect(page.getByRole('heading', { name: 'New project' })).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(page.getByLabel('Name')).toBeFocused();
  await page.getByRole('button', { name: 'Close' }).click();
  await expect(page.getByRole('button', { name: 'New project' })).toBeFocused();

  await page.goto(`${setup.serverUrl}#/admin/tokens`);
  await page.getByLabel('For', { exact: true }).selectOption({ label: 'sam@example.org (staff)' });
  await page.getByLabel('What it is for').fill('nightly export');
  await page.getByRole('button', { name: 'Make token' }).click();
  await expect(page.getByLabel('Secret')).toBeFocused();
  await page.getByRole('button', { name: /^Revoke token .* of sam@example.org$/ }).click();
  await page
    .getByRole('dialog', { name: 'Revoke this token?' })
    .getByRole('button', { name: 'Revoke' })
    .click();
  await expect(page.getByRole('heading', { name: 'API tokens' })).toBeFocused();
});
