/**
 * The station's Reservations tab against a real server: alice books the SEM at the station,
 * answering the reservation questions the admin set up on the server; the Tool control tab
 * then offers those answers for the pre-usage questions of the same name; she cancels the
 * reservation from the list.
 */
import { expect, PEOPLE, test } from './serverFixtures.js';

const pad = (n: number): string => String(n).padStart(2, '0');
/** A `datetime-local` value in this machine's time zone (the browser's too). */
function localInput(date: Date): string {
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}`
  );
}

test('books at the station, fills the pre-usage form from the reservation, cancels it', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  const login = await fetch(`${setup.serverUrl}auth/jwt/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      username: PEOPLE.ada.email,
      password: PEOPLE.ada.password,
    }).toString(),
  });
  const { access_token: jwt } = (await login.json()) as { access_token: string };
  const saved = await fetch(`${setup.serverUrl}rpc/admin.reservationQuestionSets.save`, {
    method: 'POST',
    headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      enabled: true,
      name: 'Experiment',
      questions: [
        {
          type: 'radio',
          name: 'data_consent',
          title: 'Data consent',
          choices: ['Agree', 'Disagree'],
          required: true,
        },
        { type: 'textbox', name: 'experiment_title', title: 'Experiment title', required: true },
        { type: 'textbox', name: 'project_id', title: 'Project id', required: true },
      ],
      tool_reservations: true,
      only_for_tools: [],
      area_reservations: false,
      only_for_areas: [],
      only_for_projects: [],
    }),
  });
  expect(saved.status).toBe(200);

  await page.goto(setup.stationUrl);
  await page.getByLabel('Username or badge number').fill('alice');
  await page.getByLabel('PIN', { exact: true }).fill(PEOPLE.alice.pin);
  await page.getByRole('button', { name: 'Log on' }).click();
  await page.getByRole('tab', { name: 'Reservations' }).click();
  await expect(page.getByText('Up to date with the server')).toBeVisible({ timeout: 15_000 });
  await expect(page.getByText('No upcoming reservations.')).toBeVisible();

  // On now: from a minute ago for two hours.
  const booking = page.getByRole('form', { name: 'Booking' });
  await booking.getByLabel('From').fill(localInput(new Date(Date.now() - 60_000)));
  await booking.getByLabel('To').fill(localInput(new Date(Date.now() + 2 * 3600_000)));
  // Book without answers: the required ones are named at their fields.
  await booking.getByRole('button', { name: 'Book' }).click();
  await expect(booking.getByLabel('Experiment title')).toHaveAttribute('aria-invalid', 'true');
  await expect(booking.getByLabel('Agree', { exact: true })).toBeFocused();
  const answer = async (): Promise<void> => {
    await booking
      .getByRole('radiogroup', { name: 'Data consent' })
      .getByLabel('Agree', { exact: true })
      .check();
    await booking.getByLabel('Experiment title').fill('Grain boundaries');
    await booking.getByLabel('Project id').fill('PRJ-1');
  };
  await answer();
  // A look at another tab keeps the times and the answers typed (they were gone).
  const from = await booking.getByLabel('From').inputValue();
  await page.getByRole('tab', { name: 'Tool control' }).click();
  await page.getByRole('tab', { name: 'Reservations' }).click();
  await expect(booking.getByLabel('From')).toHaveValue(from);
  await expect(booking.getByLabel('Experiment title')).toHaveValue('Grain boundaries');
  await booking.getByRole('button', { name: 'Book' }).click();
  await expect(page.getByText(/Reservation \d+ is booked/)).toBeVisible();
  const row = page.getByRole('row', { name: /alice \(you\)/ });
  await expect(row).toContainText('Cathodes');

  // A second booking over the first (same times, another title) is refused in the server's
  // words; the same booking sent again would be answered with the first.
  await answer();
  await booking.getByLabel('Experiment title').fill('Grain boundaries, second look');
  await booking.getByRole('button', { name: 'Book' }).click();
  await expect(page.getByRole('alert')).toContainText('overlaps reservation');
  // The server names the times of the reservation in UTC; the station says them in local time,
  // as the rest of the tab does.
  await expect(page.getByRole('alert')).not.toContainText(/\d{2}:\d{2}:\d{2}(\.\d{3})?Z/);

  // The pre-usage form: data_consent and project_id come from the reservation.
  await page.getByRole('tab', { name: 'Tool control' }).click();
  await expect(
    page.getByText(/its answers are filled in \(data_consent, project_id\)/),
  ).toBeVisible();
  await expect(
    page.getByRole('radiogroup', { name: 'data_consent' }).getByLabel('Agree', { exact: true }),
  ).toBeChecked();
  await expect(page.getByRole('textbox', { name: 'project_id' })).toHaveValue('PRJ-1');

  await page.getByRole('tab', { name: 'Reservations' }).click();
  // Under way (the form above was filled from it), it is ended now, not cancelled: the part gone
  // by stays booked, as a usage during it may rest on its answers.
  await page.getByRole('button', { name: /Cancel reservation \d+/ }).click();
  await expect(page.getByRole('dialog')).toContainText('It is under way: it ends now');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel reservation' }).click();
  await expect(
    page.getByText(/Reservation \d+ ends now; the part gone by stays booked/),
  ).toBeVisible();
  await expect(page.getByText('No upcoming reservations.')).toBeVisible();
});
