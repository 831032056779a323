import { expect, PEOPLE, test } from './serverFixtures.js';

test('the API docs list the operations and try one with a token, under the strict CSP', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  // A blocked script, style or request shows as a console error (CSP violations included).
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));

  await page.goto(`${setup.serverUrl}docs`);
  await expect(page.getByRole('heading', { name: /Labstation server API/ })).toBeVisible();
  const listUsers = page.locator('.opblock').filter({
    has: page.locator('.opblock-summary-path', { hasText: /^\/api\/users\/$/ }),
  });
  await expect(listUsers).toBeVisible();
  await expect(page.locator('.opblock-summary-path', { hasText: '/auth/jwt/login' })).toBeVisible();
  await expect(page.locator('.opblock-summary-path', { hasText: '/sync/push' })).toBeVisible();

  const login = await fetch(`${setup.serverUrl}auth/jwt/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: PEOPLE.ada.email, password: PEOPLE.ada.password }),
  });
  const { access_token: token } = (await login.json()) as { access_token: string };

  await page.getByRole('button', { name: 'Authorize' }).first().click();
  const bearer = page.locator('.auth-container').filter({ hasText: 'bearer' });
  await bearer.getByRole('textbox').fill(token);
  // Swagger UI names its Authorize button in the dialog "Apply credentials".
  await bearer.getByRole('button', { name: 'Apply credentials' }).click();
  await expect(bearer.locator('button', { hasText: 'Logout' })).toBeVisible();
  await bearer.getByRole('button', { name: 'Close' }).click();

  await listUsers.locator('.opblock-summary').click();
  await expect(listUsers.getByText('Example Value').first()).toBeVisible();
  await listUsers.getByRole('button', { name: 'Try it out' }).click();
  await listUsers.getByRole('button', { name: 'Execute' }).click();
  const answer = listUsers.locator('.live-responses-table');
  await expect(answer.locator('tr.response .response-col_status')).toHaveText('200');
  await expect(answer.getByText('"username": "alice"')).toBeVisible();

  expect(errors).toEqual([]);
});
