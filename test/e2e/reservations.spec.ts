/**
 * Reservations on the server's web UI: an admin makes an area and a reservation question set
 * (a second set asking the same question is refused, naming both) and previews the merged
 * form; a user books the SEM in its week calendar answering the question, an overlapping
 * booking is refused naming the first, and cancelling frees the time while the API keeps the
 * record marked cancelled.
 */
import type { Locator } from '@playwright/test';
import { expect, logIn, PEOPLE, test } from './serverFixtures.js';

// Times are typed and shown in the browser's zone; one with an offset proves they are sent so.
test.use({ timezoneId: 'Europe/Berlin' });

/** A `datetime-local` value `days` from now at `hour`:`minute` (wall time). */
function localInput(days: number, hour: number, minute = 0): string {
  const at = new Date();
  at.setDate(at.getDate() + days);
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(hour)}:${pad(minute)}`;
}

test('an admin sets up reservation questions; a user books, is refused an overlap, and cancels', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();

  // The admin: an area holding the SEM.
  await logIn(page, setup, PEOPLE.ada);
  await page.getByRole('link', { name: 'Administration' }).click();
  await page.getByRole('link', { name: 'Areas' }).click();
  await page.getByRole('button', { name: 'New area' }).click();
  await page.getByLabel('Name').fill('Clean room');
  await page
    .getByRole('group', { name: 'Tools in this area' })
    .getByRole('checkbox', { name: 'SEM' })
    .check();
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved Clean room.' })).toBeVisible();
  await expect(page.getByRole('row', { name: /Clean room SEM/ })).toBeVisible();
  // Saved again from the same editor: its own last save is not someone else's change.
  await page.getByLabel('Name').fill('Clean room 2');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved Clean room 2.' })).toBeVisible();
  await page.getByLabel('Name').fill('Clean room 3');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved Clean room 3.' })).toBeVisible();
  await expect(page.getByRole('row', { name: /Clean room 3 SEM/ })).toBeVisible();

  // A question set with a required question, for every tool.
  await page.getByRole('link', { name: 'Reservation questions' }).click();
  await page.getByRole('button', { name: 'New question set' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Safety');
  const purpose = [
    { type: 'textbox', name: 'purpose', title: 'Purpose of the session', required: true },
  ];
  await page.getByLabel('Questions', { exact: true }).fill(JSON.stringify(purpose));
  await expect(page.getByLabel('Asked when booking a tool')).toBeChecked();
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved Safety.' })).toBeVisible();

  // A second set that would ask "purpose" in the same form is refused, naming both sets.
  await page.getByRole('button', { name: 'New question set' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Billing');
  await page.getByLabel('Questions', { exact: true }).fill(JSON.stringify(purpose));
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByText(/"purpose" is used by both "Billing" and "Safety"/)).toBeVisible();
  await expect(page.getByLabel('Questions', { exact: true })).toBeFocused();
  await page.getByRole('button', { name: 'Close' }).click();
  await expect(page.getByRole('row', { name: /Billing/ })).toHaveCount(0);

  // The preview of the merged form for the SEM and a project.
  const preview = page.getByRole('region', { name: 'Preview of the booking form' });
  await preview.getByLabel('Tool or area').selectOption({ label: 'SEM' });
  await preview.getByLabel('Project').selectOption({ label: 'Cathodes' });
  await expect(preview.getByText('Question sets that apply: Safety.')).toBeVisible();
  await expect(preview.getByRole('textbox', { name: /Purpose of the session/ })).toBeVisible();
  await page.getByRole('button', { name: 'Log out' }).click();

  // Alice books the SEM, answering the question.
  await logIn(page, setup, PEOPLE.alice);
  await page.getByRole('link', { name: 'Reservations' }).click();
  await expect(page.getByRole('heading', { name: 'Reservations', level: 1 })).toBeVisible();
  const target = page.getByLabel('Tool or area');
  await target.selectOption({ label: 'SEM' });
  const booking = page.getByRole('region', { name: 'Book SEM' });
  await booking.getByLabel('Project').selectOption({ label: 'Cathodes' });
  await booking.getByLabel('Start').fill(localInput(2, 10));
  await booking.getByLabel('End').fill(localInput(2, 11));
  await booking.getByRole('button', { name: 'Book' }).click();
  const answer = booking.getByRole('textbox', { name: /Purpose of the session/ });
  await expect(answer).toBeFocused();
  await expect(booking.getByRole('alert').first()).toContainText('needs attention');
  await answer.fill('EDS maps');
  await booking.getByRole('button', { name: 'Book' }).click();
  await expect(page.getByRole('status').filter({ hasText: /^Booked SEM from/ })).toBeVisible();
  const calendar = page.locator('.week');
  const mine = calendar.getByRole('listitem').filter({ hasText: 'alice (yours)' });
  await expect(mine).toHaveCount(1);
  await expect(page.getByText('1 reservation this week.')).toBeVisible();
  const upcoming = page.getByRole('region', { name: 'My upcoming reservations' });
  await expect(upcoming.getByRole('row', { name: /SEM/ })).toHaveCount(1);

  // An overlapping booking is refused, naming the reservation it overlaps.
  await booking.getByLabel('Start').fill(localInput(2, 10, 30));
  await booking.getByLabel('End').fill(localInput(2, 11, 30));
  await answer.fill('more maps');
  await booking.getByRole('button', { name: 'Book' }).click();
  await expect(booking.getByRole('alert')).toContainText(
    /overlaps reservation \d+ of the tool SEM/,
  );
  await expect(mine).toHaveCount(1);
  // What the page said of the first booking does not stand beside the refusal of this one.
  await expect(page.getByRole('status').filter({ hasText: /^Booked SEM from/ })).toHaveCount(0);

  // Cancelling asks first, then frees the time; Escape leaves the question, and the focus goes
  // back to the button that asked it.
  const cancel = upcoming.getByRole('button', { name: /^Cancel the reservation of SEM/ });
  await cancel.focus();
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'Cancel the reservation of SEM?' });
  await expect(dialog).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(cancel).toBeFocused();
  await cancel.click();
  await dialog.getByRole('button', { name: 'Cancel reservation' }).click();
  await expect(
    page.getByRole('status').filter({ hasText: /^Cancelled the reservation/ }),
  ).toBeVisible();
  await expect(mine).toHaveCount(0);
  await expect(page.getByText('No reservations this week.')).toBeVisible();
  await expect(upcoming.getByText('You have no upcoming reservations.')).toBeVisible();

  // The record stays, marked cancelled.
  const login = await fetch(`${setup.serverUrl}auth/jwt/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: PEOPLE.ada.email, password: PEOPLE.ada.password }),
  });
  const { access_token: jwt } = (await login.json()) as { access_token: string };
  const listed = await fetch(`${setup.serverUrl}api/reservations/?cancelled=true`, {
    headers: { authorization: `Bearer ${jwt}` },
  });
  expect(listed.status).toBe(200);
  const body = (await listed.json()) as {
    results: { cancelled: boolean; question_data: string }[];
  };
  expect(body.results).toHaveLength(1);
  expect(body.results[0]?.cancelled).toBe(true);
  expect(JSON.parse(body.results[0]?.question_data ?? '{}')).toEqual({ purpose: 'EDS maps' });
});

test('a one-hour reservation says "(yours)" in full in the week calendar at 1024 px', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await page.setViewportSize({ width: 1024, height: 768 });
  await logIn(page, setup, PEOPLE.alice);
  await page.getByRole('link', { name: 'Reservations' }).click();
  await page.getByLabel('Tool or area').selectOption({ label: 'SEM' });
  const booking = page.getByRole('region', { name: 'Book SEM' });
  await booking.getByLabel('Project').selectOption({ label: 'Cathodes' });
  await booking.getByLabel('Start').fill(localInput(2, 10));
  await booking.getByLabel('End').fill(localInput(2, 11));
  await booking.getByRole('button', { name: 'Book' }).click();
  await expect(page.getByRole('status').filter({ hasText: /^Booked SEM from/ })).toBeVisible();
  const mine = page.locator('.week').getByRole('listitem').filter({ hasText: 'alice (yours)' });
  await expect(mine).toHaveCount(1);
  // Nothing of the text is cut off: it fits the block, which stays inside its day.
  const fit = await mine.evaluate((el) => ({
    overflowY: el.scrollHeight - el.clientHeight,
    overflowX: el.scrollWidth - el.clientWidth,
  }));
  expect(fit).toEqual({ overflowY: 0, overflowX: 0 });
  const yours = await mine.evaluate((el) => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = node.textContent?.indexOf('(yours)') ?? -1;
      if (at === -1) continue;
      range.setStart(node, at);
      range.setEnd(node, at + '(yours)'.length);
      const text = range.getBoundingClientRect();
      const box = el.getBoundingClientRect();
      return text.bottom <= box.bottom && text.right <= box.right;
    }
    return false;
  });
  expect(yours).toBe(true);
});

test('answers typed into a booking form and left are not shown to the next person who logs in', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  const login = await fetch(`${setup.serverUrl}auth/jwt/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: PEOPLE.ada.email, password: PEOPLE.ada.password }),
  });
  const { access_token: jwt } = (await login.json()) as { access_token: string };
  const saved = await fetch(`${setup.serverUrl}rpc/admin.reservationQuestionSets.save`, {
    method: 'POST',
    headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      enabled: true,
      name: 'Session',
      questions: [{ type: 'textbox', name: 'aim', title: 'Aim of the session' }],
      tool_reservations: true,
      only_for_tools: [],
      area_reservations: false,
      only_for_areas: [],
      only_for_projects: [],
    }),
  });
  expect(saved.status).toBe(200);

  const openBooking = async (): Promise<Locator> => {
    await page.getByRole('link', { name: 'Reservations' }).click();
    await page.getByLabel('Tool or area').selectOption({ label: 'SEM' });
    const aim = page
      .getByRole('region', { name: 'Book SEM' })
      .getByRole('textbox', { name: /Aim of the session/ });
    await expect(aim).toBeVisible();
    return aim;
  };

  // Alice types an answer, looks at another page (it waits for her), and logs out unsent.
  await logIn(page, setup, PEOPLE.alice);
  const aim = await openBooking();
  await aim.fill('Imaging the sealed samples of project X');
  await page.getByRole('link', { name: 'My usage' }).click();
  await expect(await openBooking()).toHaveValue('Imaging the sealed samples of project X');
  await page.getByRole('button', { name: 'Log out' }).click();

  // Sam logs in in the same tab: the form is his, empty.
  await page.getByLabel('E-mail').fill(PEOPLE.sam.email);
  await page.getByLabel('Password').fill(PEOPLE.sam.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByTestId('account-name')).toBeVisible();
  await expect(await openBooking()).toHaveValue('');
});
