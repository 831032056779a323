import { expect, test } from './fixtures.js';
import { enableWith, facility, fillPreUsage, logOff, logOn, TOOL } from './facility.js';

test('staff force-end a usage; its user answers the pending questions at the next log-on', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);

  await logOn(page, 'bob', '2222');
  await enableWith(page, { samples: [{ name: 'B1', mass: '1' }] });
  await logOff(page);

  await logOn(page, 'sam', '9999');
  await expect(page.getByRole('heading', { name: `Disable ${TOOL} for bob` })).toBeVisible();
  // Escape closes the confirmation without ending anything.
  await page.getByRole('button', { name: 'Force end usage' }).click();
  const dialog = page.getByRole('dialog', { name: 'Force end this usage?' });
  await expect(dialog).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId('tool-state')).toHaveText('In use');

  await page.getByRole('button', { name: 'Force end usage' }).click();
  await dialog.getByRole('button', { name: 'Force end' }).click();
  await expect(page.getByTestId('tool-state')).toHaveText('Idle');
  await logOff(page);

  await logOn(page, 'bob', '2222');
  await expect(page.getByRole('heading', { name: 'Post-usage questions pending' })).toBeVisible();
  // A look at another tab loses nothing typed, as in the Enable and Disable forms.
  await page.getByLabel('Notes').fill('Typed before a look at the notebook.');
  await page.getByRole('tab', { name: 'Notebook' }).click();
  await page.getByRole('tab', { name: 'Tool control' }).click();
  await expect(page.getByLabel('Notes')).toHaveValue('Typed before a look at the notebook.');
  await page.getByRole('button', { name: 'Submit answers' }).click();
  await expect(page.getByText('"Condition after use" is required.').first()).toBeVisible();
  await page.getByLabel('Condition after use').selectOption({ label: 'Needs service' });
  await page.getByLabel('Notes').fill('Left in a hurry.');
  await page.getByRole('button', { name: 'Submit answers' }).click();
  await expect(
    page.getByRole('status').filter({ hasText: 'answers for your usage' }),
  ).toBeVisible();
  await expect(page.getByRole('heading', { name: `Enable ${TOOL}` })).toBeVisible();
  await logOff(page);

  // Answered once: not pending again.
  await logOn(page, 'bob', '2222');
  await expect(page.getByRole('heading', { name: `Enable ${TOOL}` })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Post-usage questions pending' })).toHaveCount(0);
});

test('a force-end on a tool without post-usage questions promises no pending answers', async ({
  page,
  startStation,
}) => {
  const bundle = facility();
  bundle.tools = bundle.tools?.map((t) => ({ ...t, post_usage_questions: [] }));
  const station = await startStation(bundle);
  await page.goto(station.url);
  await logOn(page, 'bob', '2222');
  await enableWith(page, { samples: [{ name: 'B1', mass: '1' }] });
  await logOff(page);

  await logOn(page, 'sam', '9999');
  await page.getByRole('button', { name: 'Force end usage' }).click();
  const dialog = page.getByRole('dialog', { name: 'Force end this usage?' });
  await expect(dialog).toContainText('The usage ends now.');
  await expect(dialog).not.toContainText('pending');
  await dialog.getByRole('button', { name: 'Force end' }).click();
  await expect(page.getByTestId('tool-state')).toHaveText('Idle');
  const said = page.getByRole('status').filter({ hasText: `The usage of ${TOOL} was ended.` });
  await expect(said).toBeVisible();
  await expect(said).not.toContainText('post-usage answers');
});

test('staff enable on behalf of a user, with remote work', async ({ page, startStation }) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'sam', '9999');

  await page.getByLabel('Enable for').selectOption({ label: 'Ada Lovelace (ada)' });
  await expect(page.getByLabel('Project').locator('option')).toHaveText([
    'Choose a project…',
    'Engines (ENG-1)',
    'Looms (LOO-2)',
  ]);
  await page.getByLabel('Remote work').check();
  await enableWith(page, { project: 'Engines (ENG-1)', samples: [{ name: 'R1' }] });

  const status = page.getByRole('region', { name: 'Tool status' });
  await expect(status).toContainText('Ada Lovelace');
  await expect(status).toContainText('Operated by');
  await expect(status).toContainText('Sam Staff');
  await expect(status).toContainText('Remote work');
});

test('whom staff enable for, remote work and what they typed stay while they look at another tab', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'sam', '9999');
  await page.getByLabel('Experiment title').fill('typed as myself');
  await page.getByLabel('Enable for').selectOption({ label: 'Ada Lovelace (ada)' });
  await page.getByLabel('Project').selectOption({ label: 'Looms (LOO-2)' });
  await page.getByLabel('Remote work').check();
  await page.getByLabel('Experiment title').fill('typed for ada');
  await page.getByRole('tab', { name: 'Notebook' }).click();
  await page.getByRole('tab', { name: 'Tool control' }).click();
  // It came back as "Myself", with the answers typed before Ada was chosen: Enable billed sam.
  await expect(page.getByLabel('Enable for')).toHaveValue(/\d+/);
  await expect(page.getByLabel('Enable for').locator('option:checked')).toHaveText(
    'Ada Lovelace (ada)',
  );
  await expect(page.getByLabel('Project').locator('option:checked')).toHaveText('Looms (LOO-2)');
  await expect(page.getByLabel('Remote work')).toBeChecked();
  await expect(page.getByLabel('Experiment title')).toHaveValue('typed for ada');
  // Back to themselves: what they typed for themselves, not Ada's.
  await page.getByLabel('Enable for').selectOption({ index: 0 });
  await expect(page.getByLabel('Experiment title')).toHaveValue('typed as myself');
  await page.getByLabel('Enable for').selectOption({ label: 'Ada Lovelace (ada)' });
  await expect(page.getByLabel('Experiment title')).toHaveValue('typed for ada');
  await expect(page.getByLabel('Project').locator('option:checked')).toHaveText('Looms (LOO-2)');
  await enableWith(page, { samples: [{ name: 'R1' }], title: 'typed for ada' });
  const status = page.getByRole('region', { name: 'Tool status' });
  await expect(status).toContainText('Ada Lovelace');
  await expect(status).toContainText('Remote work');
});

test('a problem reported before use that shuts the tool down is said, and nothing starts', async ({
  page,
  startStation,
}) => {
  // The core refuses the Enable (tool_shutdown) after telling every screen the tool changed:
  // the form went with the tool's new state, its error with it, and the person was told nothing.
  const bundle = facility();
  const [tool] = bundle.tools;
  tool.pre_usage_questions = [
    ...(tool.pre_usage_questions ?? []),
    {
      type: 'radio_report_problem',
      name: 'broken_before',
      title: 'Is anything broken already?',
      options: { problem_description: 'Broken at start', force_shutdown: true },
    },
  ];
  const station = await startStation(bundle);
  await page.goto(station.url);
  await logOn(page, 'bob', '2222');
  await fillPreUsage(page, { samples: [{ name: 'S1' }] });
  await page
    .getByRole('radiogroup', { name: 'Is anything broken already?' })
    .getByLabel('Yes', { exact: true })
    .check();
  await page.getByRole('button', { name: 'Enable', exact: true }).click();
  await expect(page.getByTestId('tool-state')).toHaveText('Shut down');
  const said = page.getByRole('status').filter({ hasText: 'was not enabled' });
  await expect(said).toContainText('Problem reported: Broken at start');
  await expect(said).toContainText(`${TOOL} is now shut down and was not enabled`);
  await expect(page.getByRole('heading', { name: `${TOOL} is shut down` })).toBeVisible();
  // Nothing typed is left to lose: logged off without asking.
  await logOff(page);

  // Staff who reported it, and clear the shutdown in the same session, find no report answered
  // in the form again: it was kept, and one more Enable filed the report once more.
  await logOn(page, 'sam', '9999');
  const broken = page.getByRole('radiogroup', { name: 'Is anything broken already?' });
  await page.getByRole('button', { name: 'Clear shutdown' }).click();
  await expect(page.getByTestId('tool-state')).toHaveText('Idle');
  await fillPreUsage(page, { title: 'Checked by staff', samples: [{ name: 'S2' }] });
  await broken.getByLabel('Yes', { exact: true }).check();
  await page.getByRole('button', { name: 'Enable', exact: true }).click();
  await expect(page.getByTestId('tool-state')).toHaveText('Shut down');
  await page.getByRole('button', { name: 'Clear shutdown' }).click();
  await expect(page.getByTestId('tool-state')).toHaveText('Idle');
  await expect(broken.getByLabel('Yes', { exact: true })).not.toBeChecked();
});

test('a reported problem shuts the tool down; staff clear the shutdown', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'bob', '2222');
  await enableWith(page, { samples: [{ name: 'V1' }] });

  await page.getByLabel('Condition after use').selectOption({ label: 'Needs service' });
  await page.getByRole('checkbox', { name: 'Stage' }).check();
  // title_html is shown through the sanitizer: the markup stays, the script does not.
  const notes = page.getByRole('textbox', { name: 'Notes for staff' });
  await expect(page.locator('label em', { hasText: 'for staff' })).toBeVisible();
  await expect(page.locator('label img[onerror]')).toHaveCount(0);
  await notes.fill('Vibrations at high magnification.');
  const problem = page.getByRole('radiogroup', { name: 'Did anything go wrong?' });
  await problem.getByLabel('Yes', { exact: true }).check();
  await expect(problem.getByRole('note')).toContainText('Stage vibration');
  await expect(problem.getByRole('note')).toContainText('shut down');
  await page.getByRole('button', { name: 'Disable', exact: true }).click();
  await expect(page.getByTestId('tool-state')).toHaveText('Shut down');
  await expect(page.getByRole('region', { name: 'Tool status' })).toContainText('Stage vibration');
  await expect(page.getByRole('heading', { name: `${TOOL} is shut down` })).toBeVisible();
  await logOff(page);

  await logOn(page, 'sam', '9999');
  await page.getByRole('button', { name: 'Clear shutdown' }).click();
  await expect(page.getByTestId('tool-state')).toHaveText('Idle');
  await expect(page.getByRole('heading', { name: `Enable ${TOOL}` })).toBeVisible();
});

test('a station started again says why the person was logged off, and keeps what they typed for them only', async ({
  page,
  startStation,
}) => {
  // The page went back to the log-on form without a word, and the same person logging on
  // again found their half-filled Enable form empty.
  const station = await startStation(facility());
  await page.goto(station.url);
  const unreachable = page.getByTestId('station-unreachable');
  const restarted = async (): Promise<void> => {
    await station.stop();
    await expect(unreachable).toContainText('The station is not reachable');
    await station.restart();
    await expect(unreachable).toHaveCount(0);
    await expect(page.getByRole('region', { name: 'Log on' })).toContainText(
      'You were logged off while the station could not be reached',
    );
  };
  await logOn(page, 'bob', '2222');
  await page.getByLabel('Experiment title').fill('Typed before the restart');
  await restarted();
  await logOn(page, 'bob', '2222');
  await expect(page.getByLabel('Experiment title')).toHaveValue('Typed before the restart');

  // Someone else logging on next never sees it.
  await restarted();
  await logOn(page, 'ada', '1234');
  await expect(page.getByLabel('Experiment title')).toHaveValue('');
  await logOff(page);
  await logOn(page, 'bob', '2222');
  await expect(page.getByLabel('Experiment title')).toHaveValue('');
});
