import { holdNextAnswer } from './heldAnswer.js';
import { expect, PEOPLE, serverWrite, test, type ServerSetup } from './serverFixtures.js';
import { goodPreAnswers } from '../fixtures/facility.js';
import type { Page } from '@playwright/test';

async function logInAsAdmin(page: Page, setup: ServerSetup): Promise<void> {
  await page.goto(setup.serverUrl);
  await page.getByLabel('E-mail').fill(PEOPLE.ada.email);
  await page.getByLabel('Password').fill(PEOPLE.ada.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('link', { name: 'Administration' }).click();
  await expect(page.getByRole('heading', { name: 'Administration' })).toBeVisible();
}

async function stationPostQuestions(setup: ServerSetup): Promise<string[]> {
  const status = await setup.stationRpc('toolControl.status', { tool: 'SEM' });
  const tool = status.tool as { post_usage_questions: { name: string }[] };
  return tool.post_usage_questions.map((q) => q.name);
}

test('an admin edits a tool’s post-usage questions with the live preview; the station gets them', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await logInAsAdmin(page, setup);
  await page.getByRole('link', { name: 'Tools and forms' }).click();
  await page.getByRole('button', { name: 'Edit SEM' }).click();

  const editor = page.getByLabel('Post-usage questions', { exact: true });
  const preview = page.getByRole('region', { name: 'Preview: Post-usage questions' });
  await expect(preview.getByText('Vacuum fault')).toBeHidden();
  await expect(preview.getByRole('radiogroup', { name: 'Problem?' })).toBeVisible();

  // A broken definition: the problem is named in words and the preview waits for a good list.
  await editor.fill(
    JSON.stringify([{ type: 'radio', name: 'beam', choices: ['on', 'off'], labels: ['On'] }]),
  );
  await expect(page.getByText(/labels/).first()).toBeVisible();
  await expect(preview.getByText('The preview shows once the list has no problems.')).toBeVisible();
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(editor).toBeFocused();
  expect(await stationPostQuestions(setup)).toEqual(['problem', 'notes']);

  // A good list: the preview shows the form as people will see it, rules included.
  const questions = [
    { type: 'textarea', name: 'notes', title: 'Notes' },
    {
      type: 'number_float',
      name: 'beam_current',
      title: 'Beam current',
      suffix: 'nA',
      min: 0,
      precision: 2,
      required: true,
    },
  ];
  await editor.fill(JSON.stringify(questions));
  const current = preview.getByRole('textbox', { name: 'Beam current' });
  await expect(current).toBeVisible();
  // Enter in a preview field checks the answers; it does not submit the editor around it,
  // which saved the tool, half-made list and all, and sent it to the stations.
  const saves: string[] = [];
  page.on('request', (request) => {
    if (request.url().includes('admin.tools.save')) saves.push(request.url());
  });
  await current.fill('-1');
  await current.press('Enter');
  await expect(preview.getByText(/at least 0/).first()).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: 'Saved SEM.' })).toBeHidden();
  expect(saves).toEqual([]);
  await current.fill('1.25');
  await preview.getByRole('button', { name: 'Check answers' }).click();
  await expect(preview.getByText('These answers would be accepted.')).toBeVisible();

  await page.getByRole('button', { name: 'Tidy JSON of the post-usage questions' }).click();
  await expect(editor).toHaveValue(/\n {2}\{\n/);
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved SEM.' })).toBeVisible();

  // The station that runs the SEM pulls the new form within seconds.
  await expect
    .poll(() => stationPostQuestions(setup), { timeout: 15_000 })
    .toEqual(['notes', 'beam_current']);

  // After a reload the stored form is what the editor shows.
  await page.reload();
  await page.getByRole('button', { name: 'Edit SEM' }).click();
  await expect(page.getByLabel('Post-usage questions', { exact: true })).toHaveValue(
    /beam_current/,
  );
});

test('an admin adds a person with a PIN, a project and a qualification; they log on at the station', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await logInAsAdmin(page, setup);
  await page.getByRole('button', { name: 'New person' }).click();
  const editor = page.getByRole('form', { name: 'New person' });
  await editor.getByLabel('Username').fill('carol');
  await editor.getByLabel('E-mail').fill('alice@example.org');
  await editor.getByLabel('PIN (4 to 12 digits)').fill('12');
  await editor.getByRole('button', { name: 'Save' }).click();
  await expect(editor.getByText('must be 4 to 12 digits')).toBeVisible();
  await editor.getByLabel('PIN (4 to 12 digits)').fill('4711');
  await editor.getByLabel('Cathodes').check();
  await editor.getByLabel('SEM').check();
  await editor.getByRole('button', { name: 'Save' }).click();
  // The server refuses the taken e-mail at its field.
  await expect(editor.getByText("alice@example.org is alice's")).toBeVisible();
  await editor.getByLabel('E-mail').fill('carol@example.org');
  await editor.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved carol.' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Edit carol' })).toBeVisible();

  await expect
    .poll(
      async () => {
        try {
          const session = await setup.stationRpc('session.logon', { login: 'carol', pin: '4711' });
          await setup.stationRpc('session.logoff', {});
          return (session as { qualified: boolean }).qualified;
        } catch {
          return false;
        }
      },
      { timeout: 15_000 },
    )
    .toBe(true);

  // The tool shows carol qualified; a qualification given there shows on her person, so a
  // later save of her person keeps it (it was sent back as it stood when the page opened).
  await page.getByRole('link', { name: 'Tools and forms' }).click();
  await page.getByRole('button', { name: 'Edit AFM' }).click();
  const tool = page.getByRole('form', { name: 'Edit AFM' });
  await tool.getByLabel('carol').check();
  await tool.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved AFM' })).toBeVisible();
  await page.getByRole('link', { name: 'People' }).click();
  // The list alone takes the page's width, its columns whole (it kept half beside no editor).
  await page.setViewportSize({ width: 1280, height: 800 });
  const peopleList = page.locator('.admin-layout > :first-child');
  await expect(peopleList).toBeVisible();
  expect((await peopleList.boundingBox())!.width).toBeGreaterThan(1000);
  await page.getByRole('button', { name: 'Edit carol' }).click();
  const person = page.getByRole('form', { name: 'Edit carol' });
  expect((await peopleList.boundingBox())!.width).toBeLessThan(700);
  await expect(person.getByLabel('AFM')).toBeChecked();
  await person.getByLabel('First name').fill('Carol');
  await person.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved carol.' })).toBeVisible();
  await page.getByRole('link', { name: 'Tools and forms' }).click();
  await page.getByRole('button', { name: 'Edit AFM' }).click();
  await expect(page.getByRole('form', { name: 'Edit AFM' }).getByLabel('carol')).toBeChecked();
});

test('two admins edit one person: the later save is refused, says why and keeps what was typed', async ({
  page,
  browser,
  startServer,
}) => {
  const setup = await startServer();
  const other = await (await browser.newContext()).newPage();
  try {
    for (const p of [page, other]) {
      await logInAsAdmin(p, setup);
      await p.getByRole('button', { name: 'Edit bob' }).click();
    }
    const first = other.getByRole('form', { name: 'Edit bob' });
    await first.getByLabel('Last name').fill('First');
    await first.getByRole('button', { name: 'Save' }).click();
    await expect(other.getByRole('status').filter({ hasText: 'Saved bob.' })).toBeVisible();

    const second = page.getByRole('form', { name: 'Edit bob' });
    await second.getByLabel('Badge number').fill('777');
    await second.getByRole('button', { name: 'Save' }).click();
    await expect(second.getByRole('alert')).toContainText(
      /^Bob was changed elsewhere since it was opened here \(saved at .+\); reload the page to see that change, then make yours again\.$/,
    );
    await expect(second.getByLabel('Badge number')).toHaveValue('777');

    // Reloaded, the first admin's change is there, and the second one saves on top of it.
    await page.reload();
    await page.getByRole('link', { name: 'Administration' }).click();
    await page.getByRole('button', { name: 'Edit bob' }).click();
    const fresh = page.getByRole('form', { name: 'Edit bob' });
    await expect(fresh.getByLabel('Last name')).toHaveValue('First');
    await fresh.getByLabel('Badge number').fill('777');
    await fresh.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Saved bob.' })).toBeVisible();
    // Saved twice from the same editor: its own save is no conflict.
    await fresh.getByLabel('First name').fill('Robert');
    await fresh.getByRole('button', { name: 'Save' }).click();
    await expect(fresh.getByRole('alert')).toHaveCount(0);
    await expect(page.getByRole('status').filter({ hasText: 'Saved bob.' })).toBeVisible();
  } finally {
    await other.context().close();
  }
});

test('two admins edit one station: the later save is refused, and does not turn it on again', async ({
  page,
  browser,
  startServer,
}) => {
  // The Stations editor sent no record as loaded: a description saved after another admin had
  // turned the station off turned it on again, and it synced once more.
  const setup = await startServer();
  const other = await (await browser.newContext()).newPage();
  try {
    for (const p of [page, other]) {
      await logInAsAdmin(p, setup);
      await p.getByRole('link', { name: 'Stations' }).click();
      await p.getByRole('button', { name: 'Edit sem' }).click();
    }
    const first = other.getByRole('form', { name: 'Edit sem' });
    await first.getByLabel('Enabled (may sync)').uncheck();
    await first.getByRole('button', { name: 'Save' }).click();
    await expect(other.getByRole('status').filter({ hasText: 'Saved sem.' })).toBeVisible();

    const second = page.getByRole('form', { name: 'Edit sem' });
    await second.getByLabel('Description').fill('Acquisition PC of the SEM');
    await second.getByRole('button', { name: 'Save' }).click();
    await expect(second.getByRole('alert')).toContainText(
      'Station sem was changed elsewhere since it was opened here',
    );
    await expect(second.getByLabel('Description')).toHaveValue('Acquisition PC of the SEM');

    await page.reload();
    await page.getByRole('link', { name: 'Administration' }).click();
    await page.getByRole('link', { name: 'Stations' }).click();
    await page.getByRole('button', { name: 'Edit sem' }).click();
    const fresh = page.getByRole('form', { name: 'Edit sem' });
    await expect(fresh.getByLabel('Enabled (may sync)')).not.toBeChecked();
    await fresh.getByLabel('Description').fill('Acquisition PC of the SEM');
    await fresh.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Saved sem.' })).toBeVisible();
    // Its own save again is no conflict.
    await fresh.getByLabel('Description').fill('The SEM PC');
    await fresh.getByRole('button', { name: 'Save' }).click();
    await expect(fresh.getByRole('alert')).toHaveCount(0);
    await expect(fresh.getByLabel('Enabled (may sync)')).not.toBeChecked();
  } finally {
    await other.context().close();
  }
});

test('an admin sees the notice a person without an e-mail address did not get, and sends it once they have one', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await logInAsAdmin(page, setup);
  // carol has a PIN and no e-mail address (she never logs in to the server).
  await page.getByRole('button', { name: 'New person' }).click();
  const editor = page.getByRole('form', { name: 'New person' });
  await editor.getByLabel('Username').fill('carol');
  await editor.getByLabel('PIN (4 to 12 digits)').fill('4711');
  await editor.getByLabel('Cathodes').check();
  await editor.getByLabel('SEM').check();
  await editor.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved carol.' })).toBeVisible();
  // Her usage is force-ended at the station, once the station has her.
  await expect
    .poll(
      async () => {
        try {
          await setup.stationRpc('session.logon', { login: 'carol', pin: '4711' });
          return true;
        } catch {
          return false;
        }
      },
      { timeout: 15_000 },
    )
    .toBe(true);
  await setup.stationRpc('toolControl.enable', {
    tool: 'SEM',
    project: 'Cathodes',
    answers: goodPreAnswers,
  });
  await setup.stationRpc('session.logoff', {});
  await setup.stationRpc('session.logon', { login: 'sam', pin: PEOPLE.sam.pin });
  await setup.stationRpc('toolControl.forceEnd', { tool: 'SEM' });
  await setup.stationRpc('session.logoff', {});

  await page.getByRole('link', { name: 'E-mail', exact: true }).click();
  const mails = page.getByRole('region', { name: 'E-mail' });
  const show = mails.getByLabel('Show');
  const row = mails.getByRole('row', { name: /Notice \d+/ });
  await expect(async () => {
    await show.selectOption('cancelled');
    await show.selectOption('failed');
    await expect(row).toContainText('the user has no e-mail address', { timeout: 1_000 });
  }).toPass({ timeout: 20_000 });
  await expect(row).toContainText('no address');
  // Retry while she still has none: refused, saying why; the mail stays failed.
  await row.getByRole('button', { name: /Retry mail/ }).click();
  await expect(mails.getByRole('alert')).toContainText('the user has no e-mail address');
  await expect(row).toContainText('failed');

  await page.getByRole('link', { name: 'People' }).click();
  await page.getByRole('button', { name: 'Edit carol' }).click();
  const person = page.getByRole('form', { name: 'Edit carol' });
  await person.getByLabel('E-mail').fill('carol@example.org');
  await person.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved carol.' })).toBeVisible();
  await page.getByRole('link', { name: 'E-mail', exact: true }).click();
  await row.getByRole('button', { name: /Retry mail/ }).click();
  await expect(mails.getByRole('status')).toContainText(
    'queued again, to "carol" <carol@example.org>',
  );
  await expect(mails.getByText('No failed mail.')).toBeVisible();
  // Without SMTP the server writes it as a file: it is sent.
  await expect(async () => {
    await show.selectOption('queued');
    await show.selectOption('sent');
    await expect(row).toContainText('carol@example.org', { timeout: 1_000 });
  }).toPass({ timeout: 20_000 });
  // The failed mails' list answers only after the sent ones, asked for after it, have shown:
  // what was asked for last stays on show.
  const failed = await holdNextAnswer(page, (url) => url.pathname === '/rpc/admin.mail.list');
  await show.selectOption('failed');
  await failed.asked;
  await show.selectOption('sent');
  await expect(row).toContainText('carol@example.org');
  await failed.release();
  expect(await row.count()).toBe(1);
});

test('an admin marks a tool not operational: at its station only staff can start a usage', async ({
  page,
  context,
  startServer,
}) => {
  const setup = await startServer();
  await logInAsAdmin(page, setup);
  await page.getByRole('link', { name: 'Tools and forms' }).click();
  await page.getByRole('button', { name: 'Edit SEM' }).click();
  const tool = page.getByRole('form', { name: 'Edit SEM' });
  await tool.getByLabel('Operational').uncheck();
  await tool.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved SEM.' })).toBeVisible();

  const station = await context.newPage();
  await station.goto(setup.stationUrl);
  await station.getByLabel('Username or badge number').fill('alice');
  await station.getByLabel('PIN', { exact: true }).fill(PEOPLE.alice.pin);
  await station.getByRole('button', { name: 'Log on' }).click();
  // The station pulls the change within seconds; the screen follows without a reload.
  await expect(station.getByRole('heading', { name: 'SEM is not operational' })).toBeVisible({
    timeout: 15_000,
  });
  await expect(station.getByTestId('not-operational')).toBeVisible();
  await expect(station.getByRole('button', { name: 'Enable SEM' })).toHaveCount(0);

  await page.getByRole('button', { name: 'Edit SEM' }).click();
  await tool.getByLabel('Operational').check();
  await tool.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved SEM.' })).toBeVisible();
  await expect(station.getByTestId('not-operational')).toBeHidden({ timeout: 15_000 });
  await expect(station.getByRole('heading', { name: 'Enable SEM' })).toBeVisible();
});

test('an admin made staff meanwhile is shown what staff may do once the server refuses a call', async ({
  page,
  startServer,
}) => {
  // The page kept the Administration link and its sections after the role was taken away:
  // every call failed there, and nothing said why.
  const setup = await startServer();
  await logInAsAdmin(page, setup);
  await page.getByRole('link', { name: 'People' }).click();
  await expect(page.getByRole('link', { name: 'Administration' })).toBeVisible();
  serverWrite(
    setup,
    "UPDATE users SET role = 'staff', is_staff = 1 WHERE email = ?",
    PEOPLE.ada.email,
  );
  // The next admin call is refused (403): the page reads the account again.
  await page.getByRole('link', { name: 'Tools and forms' }).click();
  await expect(page.getByText('Administration is for admins.')).toBeVisible();
  await expect(page.getByRole('link', { name: 'Administration' })).toHaveCount(0);
  // What staff may do stays.
  await expect(page.getByRole('link', { name: 'Experiments' })).toBeVisible();
});

test('an admin who changes their own password is told so, and logs in with the new one', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await logInAsAdmin(page, setup);
  await page.locator('button[aria-label^="Edit ada"]').click();
  const me = page.getByRole('form', { name: /^Edit ada/ });
  await me.getByLabel('New password (empty: keep)').fill('a new admin password');
  await me.getByRole('button', { name: 'Save' }).click();
  // The change ends every login of the account, this one too: the log-in screen says why.
  await expect(
    page.getByText('Saved: your password is changed, which ends your logins.', { exact: false }),
  ).toBeVisible();
  await page.getByLabel('E-mail').fill(PEOPLE.ada.email);
  await page.getByLabel('Password').fill('a new admin password');
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByTestId('account-name')).toBeVisible();
});

test('an admin brings back a tool shut down by a problem report; its station follows', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  // Alice reports a problem that shuts the SEM down, at the station.
  await setup.stationRpc('session.logon', { login: 'alice', pin: PEOPLE.alice.pin });
  await setup.stationRpc('toolControl.enable', {
    tool: 'SEM',
    project: 'Cathodes',
    answers: goodPreAnswers,
  });
  await setup.stationRpc('toolControl.disable', { tool: 'SEM', answers: { problem: 'Yes' } });
  await setup.stationRpc('session.logoff', {});

  await logInAsAdmin(page, setup);
  await page.getByRole('link', { name: 'Tools and forms' }).click();
  const row = page.getByRole('row', { name: /SEM/ });
  await expect(async () => {
    // The report reaches the server within seconds; the list is read again on each visit.
    await page.getByRole('link', { name: 'People' }).click();
    await page.getByRole('link', { name: 'Tools and forms' }).click();
    await expect(row.getByRole('cell', { name: 'shut down' })).toBeVisible({ timeout: 1000 });
  }).toPass({ timeout: 15_000 });
  await page.getByRole('button', { name: 'Edit SEM' }).click();
  const tool = page.getByRole('form', { name: 'Edit SEM' });
  await expect(tool).toContainText('Shut down since');
  await tool.getByRole('button', { name: 'Bring back into service' }).click();
  await expect(tool).not.toContainText('Shut down since');
  await expect(row.getByRole('cell', { name: 'operational', exact: true })).toBeVisible();
  // The station takes it at its next pull.
  await expect
    .poll(
      async () =>
        ((await setup.stationRpc('toolControl.status', { tool: 'SEM' })) as { state: string })
          .state,
      { timeout: 15_000 },
    )
    .toBe('idle');
});
