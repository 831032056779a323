import {
  aliceEnablesSem,
  expect,
  logIn,
  PEOPLE,
  serverRow,
  serverWrite,
  test,
  type ServerSetup,
} from './serverFixtures.js';
import type { Locator, Page } from '@playwright/test';

interface EventRow {
  end: string | null;
  run_data: string;
  post_usage_pending: number;
  /** The version of what its pending form shows: what a form is answered at. */
  form_version: number;
}

function serverEvent(setup: ServerSetup, uuid: string): EventRow | undefined {
  return serverRow<EventRow>(
    setup,
    'SELECT "end", run_data, post_usage_pending, form_version FROM usage_events WHERE uuid = ?',
    uuid,
  );
}

/** Alice uses the SEM at the station; staff force-ends it, so her post-usage answers are owed. */
async function forceEndedUsage(setup: ServerSetup): Promise<string> {
  const uuid = await aliceEnablesSem(setup);
  await setup.stationRpc('session.logoff', {});
  await setup.stationRpc('session.logon', { login: 'sam', pin: PEOPLE.sam.pin });
  await setup.stationRpc('toolControl.forceEnd', { tool: 'SEM' });
  await setup.stationRpc('session.logoff', {});
  await expect
    .poll(() => serverEvent(setup, uuid)?.post_usage_pending, { timeout: 15_000 })
    .toBe(1);
  return uuid;
}

test('a login the server does not answer keeps the password typed; a refused one clears it', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await page.goto(setup.serverUrl);
  const password = page.getByLabel('Password');
  await page.getByLabel('E-mail').fill(PEOPLE.alice.email);
  await password.fill(PEOPLE.alice.password);
  // The server out of reach: the login's request gets no answer.
  await page.route('**/auth/jwt/login', (route) => route.abort('connectionrefused'));
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByRole('alert')).toHaveText(
    'The server does not answer. Try again in a moment.',
  );
  await expect(password).toHaveValue(PEOPLE.alice.password);
  // Back: the same password logs in.
  await page.unroute('**/auth/jwt/login');
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByTestId('account-name')).toBeVisible();
  await page.getByRole('button', { name: 'Log out' }).click();
  // A wrong password is refused, and goes.
  await page.getByLabel('E-mail').fill(PEOPLE.alice.email);
  await password.fill('not her password');
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByRole('alert')).toHaveText('Wrong e-mail or password.');
  await expect(password).toHaveValue('');
});

test('a force-ended user logs in to the server UI from the e-mail link and completes the pending questions', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  const uuid = await forceEndedUsage(setup);

  // The link of the e-mail: <publicUrl>/#/pending/<usage uuid>; login comes first.
  await page.goto(`${setup.serverUrl}#/pending/${uuid}`);
  await page.getByLabel('E-mail').fill(PEOPLE.alice.email);
  await page.getByLabel('Password').fill('wrong password');
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByRole('alert')).toHaveText('Wrong e-mail or password.');
  await page.getByLabel('Password').fill(PEOPLE.alice.password);
  await page.getByRole('button', { name: 'Log in' }).click();

  const form = page.getByRole('form', { name: 'Post-usage questions: SEM' });
  await expect(form).toBeVisible();
  await expect(page.getByTestId('account-name')).toHaveText('Alice Martin');

  const problem = form.getByRole('radiogroup', { name: 'Problem?' });
  await problem.getByLabel('No', { exact: true }).check();
  await form.getByLabel('notes').fill('Answered on the server');
  await form.getByRole('button', { name: 'Submit answers' }).click();
  await expect(page.getByRole('status')).toHaveText(
    'Thank you: the answers for your usage of SEM are saved.',
  );
  // The form is gone with the button that had the focus: the focus is on what the page says.
  await expect(page.getByRole('status')).toBeFocused();

  const row = serverEvent(setup, uuid)!;
  expect(row.post_usage_pending).toBe(0);
  expect(JSON.parse(row.run_data)).toMatchObject({
    problem: 'No',
    notes: 'Answered on the server',
  });

  // The home page: nothing pending any more, the usage listed; log out ends the login.
  await page.getByRole('link', { name: 'Back to my usage' }).click();
  await expect(
    page.getByText('No post-usage questions are waiting for your answers.'),
  ).toBeVisible();
  await expect(page.getByRole('table').getByRole('row')).toHaveCount(2);
  await expect(page.getByRole('cell', { name: 'Done' })).toBeVisible();
  const jwt = await page.evaluate(() => sessionStorage.getItem('labstation.jwt'));
  expect(jwt).toBeTruthy();
  const me = async (): Promise<number> =>
    (
      await fetch(`${setup.serverUrl}rpc/account.me`, {
        method: 'POST',
        headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
        body: '{}',
      })
    ).status;
  expect(await me()).toBe(200);
  await page.getByRole('button', { name: 'Log out' }).click();
  await expect(page.getByRole('button', { name: 'Log in' })).toBeVisible();
  // Ended on the server too: a copy of the tab's token no longer works.
  await expect.poll(me).toBe(401);
  await page.reload();
  await expect(page.getByRole('button', { name: 'Log in' })).toBeVisible();
});

/** Alice's pending form on the server's home page, logged in, "Problem?" answered No. */
async function alicesPendingForm(page: Page, setup: ServerSetup): Promise<Locator> {
  await forceEndedUsage(setup);
  await logIn(page, setup, PEOPLE.alice);
  const form = page.getByRole('form', { name: 'Post-usage questions: SEM' });
  await form
    .getByRole('radiogroup', { name: 'Problem?' })
    .getByLabel('No', { exact: true })
    .check();
  return form;
}

test('the home page lists the pending form after login; a stale form is refused with a clear message', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  const uuid = await forceEndedUsage(setup);

  await page.goto(setup.serverUrl);
  await page.getByLabel('E-mail').fill(PEOPLE.alice.email);
  await page.getByLabel('Password').fill(PEOPLE.alice.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  const form = page.getByRole('form', { name: 'Post-usage questions: SEM' });
  await expect(form).toBeVisible();
  await expect(page.getByRole('link', { name: 'Questions pending' })).toBeVisible();

  // Meanwhile the form is answered elsewhere (another tab, via the API).
  const login = await fetch(`${setup.serverUrl}auth/jwt/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      username: PEOPLE.sam.email,
      password: PEOPLE.sam.password,
    }).toString(),
  });
  const { access_token: jwt } = (await login.json()) as { access_token: string };
  const version = serverEvent(setup, uuid)!.form_version;
  const done = await fetch(`${setup.serverUrl}rpc/usage.completePendingServer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
    body: JSON.stringify({ usage: uuid, answers: { problem: 'No', notes: 'by staff' }, version }),
  });
  expect(done.status).toBe(200);

  await form
    .getByRole('radiogroup', { name: 'Problem?' })
    .getByLabel('No', { exact: true })
    .check();
  await form.getByRole('button', { name: 'Submit answers' }).click();
  await expect(form.getByRole('alert')).toContainText('changed since this form was loaded');
  expect(JSON.parse(serverEvent(setup, uuid)!.run_data)).toMatchObject({ notes: 'by staff' });
  // By keyboard: the form goes away with Reload, which had the focus; the page says why.
  await form.getByRole('button', { name: 'Reload' }).focus();
  await page.keyboard.press('Enter');
  await expect(
    page.getByText('No post-usage questions are waiting for your answers.'),
  ).toBeVisible();
  const said = page.getByRole('status').filter({ hasText: 'were answered elsewhere' });
  await expect(said).toHaveText(
    'The post-usage questions of your usage of SEM were answered elsewhere meanwhile.',
  );
  await expect(said).toBeFocused();
});

/** Changes the SEM's post-usage questions on the server, as an admin saving them would. */
function changeSemPostQuestions(
  setup: ServerSetup,
  change: (questions: { name: string }[]) => object[],
): void {
  const questions = JSON.parse(
    serverRow<{ q: string }>(
      setup,
      "SELECT post_usage_questions AS q FROM tools WHERE name = 'SEM'",
    )!.q,
  ) as { name: string }[];
  serverWrite(
    setup,
    "UPDATE tools SET post_usage_questions = ? WHERE name = 'SEM'",
    JSON.stringify(change(questions)),
  );
}

test('a pending form whose tool got a new question meanwhile shows it, keeping what was typed', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  const form = await alicesPendingForm(page, setup);
  await form.getByLabel('Notes').fill('typed before the change');
  // An admin adds a required question to the SEM's post-usage form.
  changeSemPostQuestions(setup, (questions) => [
    ...questions,
    { type: 'number', name: 'sample_count', title: 'Samples', required: true },
  ]);
  await form.getByRole('button', { name: 'Submit answers' }).click();
  // It said "Samples" is required, showed no such field, and failed so at every submit.
  await expect(
    form.getByRole('alert').filter({ hasText: 'changed since this form was loaded' }),
  ).toBeVisible();
  await expect(form.getByRole('textbox', { name: 'Samples' })).toBeVisible();
  await expect(form.getByLabel('Notes')).toHaveValue('typed before the change');
  await form.getByRole('textbox', { name: 'Samples' }).fill('3');
  await form.getByRole('button', { name: 'Submit answers' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'are saved' })).toBeVisible();
});

test('a pending form whose question got a new rule meanwhile reads it again, keeping what was typed', async ({
  page,
  startServer,
}) => {
  // Refused for a rule the form did not know (a limit lowered, a choice taken away), the form
  // kept its old definitions: it showed the message beside a field that still allowed the
  // answer, and every submit failed alike until the page was loaded again.
  const setup = await startServer();
  const form = await alicesPendingForm(page, setup);
  await form.getByLabel('Notes').fill('typed before the change');
  changeSemPostQuestions(setup, (questions) =>
    questions.map((q) => (q.name === 'notes' ? { ...q, maxlength: 10 } : q)),
  );
  await form.getByRole('button', { name: 'Submit answers' }).click();
  // The field now knows its limit: the hint counts against it.
  await expect(form.getByText('23 of 10 characters')).toBeVisible();
  await expect(form.getByLabel('Notes')).toHaveValue('typed before the change');
  // The focus stays on the field refused, with its message, not on the form's heading.
  await expect(form.getByLabel('Notes')).toBeFocused();
  await form.getByLabel('Notes').fill('short note');
  await form.getByRole('button', { name: 'Submit answers' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'are saved' })).toBeVisible();
});

test('what was typed in a pending form waits for the same person when their login ends, not for another', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await forceEndedUsage(setup);
  await logIn(page, setup, PEOPLE.alice);
  const form = page.getByRole('form', { name: 'Post-usage questions: SEM' });
  await form.getByLabel('Notes').fill('typed before the login ended');
  // The server ends the login (a password change, its expiry): here, logged out elsewhere.
  const jwt = await page.evaluate(() => sessionStorage.getItem('labstation.jwt'));
  expect(jwt).not.toBeNull();
  await fetch(`${setup.serverUrl}auth/jwt/logout`, {
    method: 'POST',
    headers: { authorization: `Bearer ${jwt}` },
  });
  await form.getByRole('button', { name: 'Submit answers' }).click();
  await expect(page.getByText('Your login has ended. Log in again.')).toBeVisible();
  await page.getByLabel('E-mail').fill(PEOPLE.alice.email);
  await page.getByLabel('Password').fill(PEOPLE.alice.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  // It came back empty.
  await expect(form.getByLabel('Notes')).toHaveValue('typed before the login ended');
  // Logged out by herself: gone.
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByLabel('E-mail').fill(PEOPLE.alice.email);
  await page.getByLabel('Password').fill(PEOPLE.alice.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(form.getByLabel('Notes')).toHaveValue('');
});

test('on the e-mail link’s page, Reload by keyboard keeps the focus: on the new form, or on why it is gone', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  const uuid = await forceEndedUsage(setup);
  await page.goto(`${setup.serverUrl}#/pending/${uuid}`);
  await page.getByLabel('E-mail').fill(PEOPLE.alice.email);
  await page.getByLabel('Password').fill(PEOPLE.alice.password);
  await page.getByLabel('Password').press('Enter');
  const form = page.getByRole('form', { name: 'Post-usage questions: SEM' });
  await expect(form).toBeVisible();
  const problem = form.getByRole('radiogroup', { name: 'Problem?' });
  /** Answers No, and sends the form from its Submit button by keyboard: refused as stale. */
  const sendStale = async (): Promise<void> => {
    await problem.getByLabel('No', { exact: true }).focus();
    await page.keyboard.press('Space');
    await expect(problem.getByLabel('No', { exact: true })).toBeChecked();
    await form.getByRole('button', { name: 'Submit answers' }).focus();
    await page.keyboard.press('Enter');
    await expect(form.getByRole('alert')).toContainText('changed since this form was loaded');
  };

  // Changed elsewhere and still pending: what the form shows moved (the usage's end, as a
  // correction of it would move it). No page or station changes a pending form's usage today
  // (a validation leaves the form as it is), so the test writes the change on the server.
  expect(
    serverWrite(
      setup,
      `UPDATE usage_events SET "end" = strftime('%Y-%m-%dT%H:%M:%fZ', "end", '+1 minute'),
         version = version + 1, form_version = form_version + 1
       WHERE uuid = ? AND post_usage_pending = 1`,
      uuid,
    ),
  ).toBe(1);
  await sendStale();
  // Reload draws the new version anew, Reload with the old one: its heading takes the focus,
  // and Tab goes on into the form.
  await form.getByRole('button', { name: 'Reload' }).focus();
  await page.keyboard.press('Enter');
  await expect(form.getByRole('button', { name: 'Reload' })).toHaveCount(0);
  await expect(form.getByRole('heading', { name: 'Post-usage questions: SEM' })).toBeFocused();
  // What was answered before the refusal is still there, to check and send again.
  await expect(problem.getByLabel('No', { exact: true })).toBeChecked();
  // Tab goes on into the form: to the radio group's checked answer, as a browser does.
  await page.keyboard.press('Tab');
  await expect(problem.getByLabel('No', { exact: true })).toBeFocused();

  // Answered elsewhere meanwhile (staff, through the API): the page says so, and that has it.
  const login = await fetch(`${setup.serverUrl}auth/jwt/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      username: PEOPLE.sam.email,
      password: PEOPLE.sam.password,
    }).toString(),
  });
  const { access_token: jwt } = (await login.json()) as { access_token: string };
  const done = await fetch(`${setup.serverUrl}rpc/usage.completePendingServer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
    body: JSON.stringify({
      usage: uuid,
      answers: { problem: 'No', notes: 'by staff' },
      version: serverEvent(setup, uuid)!.form_version,
    }),
  });
  expect(done.status).toBe(200);
  await sendStale();
  await form.getByRole('button', { name: 'Reload' }).focus();
  await page.keyboard.press('Enter');
  await expect(form).toHaveCount(0);
  const said = page.getByRole('status').filter({ hasText: 'were answered elsewhere' });
  await expect(said).toHaveText(
    'The post-usage questions of your usage of SEM were answered elsewhere meanwhile.',
  );
  await expect(said).toBeFocused();
  await expect(page.getByRole('alert')).toHaveCount(0);
});

test('on the home page, a sent form leaves the focus on the confirmation, by keyboard alone', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  const form = await alicesPendingForm(page, setup);
  await form.getByLabel('notes').fill('Sent from the home page');
  await form.getByRole('button', { name: 'Submit answers' }).focus();
  await page.keyboard.press('Enter');
  const done = page.getByRole('status').filter({ hasText: 'Thank you' });
  await expect(done).toHaveText('Thank you: the answers for your usage of SEM are saved.');
  await expect(form).toHaveCount(0);
  await expect(done).toBeFocused();
});

test('every page of the server fits a narrow window without scrolling sideways', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await page.setViewportSize({ width: 400, height: 800 });
  await logIn(page, setup, PEOPLE.ada);
  const pages = page.getByRole('navigation', { name: 'Pages' });
  for (const name of ['My usage', 'Files', 'Reservations', 'Experiments', 'Administration']) {
    await pages.getByRole('link', { name }).click();
    await expect(pages.getByRole('link', { name })).toHaveAttribute('aria-current', 'page');
    await expect(page.getByRole('heading', { level: 1, name })).toBeVisible();
    await expect(page.getByRole('status').filter({ hasText: /^Loading/ })).toHaveCount(0);
    const wide = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      window: document.documentElement.clientWidth,
    }));
    expect(wide.page, `${name}: the page is wider than the window`).toBeLessThanOrEqual(
      wide.window,
    );
  }
});
