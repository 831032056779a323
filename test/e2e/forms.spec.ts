import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from './fixtures.js';
import { callStation, facility, logOff, logOn, PRE_QUESTIONS, TOOL } from './facility.js';

/** The demo facility, its tool asking `questions` before usage. */
function facilityAsking(questions: unknown[]): ReturnType<typeof facility> {
  const bundle = facility();
  const tool = bundle.tools[0];
  if (!tool) throw new Error('the facility has a tool');
  tool.pre_usage_questions = questions;
  return bundle;
}

test('shows a broken pattern and a missing required answer in a group repetition at their fields', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');

  const code = page.getByLabel('Sample code');
  await code.fill('ab-12');
  await code.blur();
  await expect(code).toHaveAttribute('aria-invalid', 'true');
  await expect(code).toHaveAccessibleDescription(/does not have the expected format/);
  await code.fill('AB-123');
  await expect(code).not.toHaveAttribute('aria-invalid', 'true');

  await page.getByLabel('Project').selectOption({ label: 'Engines (ENG-1)' });
  // The limit counts characters as the check does: an emoji is one, not two UTF-16 units.
  const title = page.getByLabel('Experiment title');
  await title.fill('😀'.repeat(90));
  await expect(title).toHaveValue('😀'.repeat(80));
  await expect(page.getByText('80 of 80 characters')).toBeVisible();
  // Characters past the limit are dropped as typed: the count is read out with the field.
  await expect(title).toHaveAccessibleDescription('80 of 80 characters');
  await page.getByLabel('Experiment title').fill('Grain boundaries');
  await page
    .getByRole('radiogroup', { name: 'Data consent' })
    .getByLabel('Agree', { exact: true })
    .check();
  await page
    .getByRole('group', { name: 'Sample 1', exact: true })
    .getByLabel('Sample name')
    .fill('S1');
  await page.getByRole('button', { name: 'Add another Sample' }).click();
  const second = page.getByRole('group', { name: 'Sample 2', exact: true });
  await expect(second).toBeVisible();

  // A look at another tab loses nothing typed: project, answers, repetitions.
  await page.getByRole('tab', { name: 'Notebook' }).click();
  await page.getByRole('tab', { name: 'Tool control' }).click();
  await expect(page.getByLabel('Project')).toHaveValue(/.+/);
  await expect(page.getByLabel('Project').locator('option:checked')).toHaveText('Engines (ENG-1)');
  await expect(page.getByLabel('Experiment title')).toHaveValue('Grain boundaries');
  await expect(code).toHaveValue('AB-123');
  await expect(second).toBeVisible();
  await expect(
    page.getByRole('group', { name: 'Sample 1', exact: true }).getByLabel('Sample name'),
  ).toHaveValue('S1');
  // Removing a repetition moves focus to Add, not onto the next repetition's Remove.
  await page.getByRole('button', { name: 'Remove Sample 2' }).click();
  await expect(page.getByRole('button', { name: 'Add another Sample' })).toBeFocused();
  // The last entry stays: the group has a required field (NEMO always shows the first).
  await expect(page.getByRole('button', { name: 'Remove Sample 1' })).toHaveCount(0);
  await page.keyboard.press('Enter');
  await expect(second).toBeVisible();

  // Not touched yet: no message until Enable is pressed.
  await expect(second.getByText('is required')).toHaveCount(0);
  await page.getByRole('button', { name: 'Enable', exact: true }).click();
  await expect(second.getByText('"Sample name" in entry 2 of "Sample" is required.')).toBeVisible();
  await expect(second.getByLabel('Sample name')).toBeFocused();
  await expect(page.getByRole('alert').filter({ hasText: 'needs attention' })).toBeVisible();
  await expect(page.getByTestId('tool-state')).toHaveText('Idle');

  await second.getByLabel('Sample name').fill('S2');
  await expect(second.getByText('is required')).toHaveCount(0);
  await page.getByRole('button', { name: 'Enable', exact: true }).click();
  await expect(page.getByTestId('tool-state')).toHaveText('In use');
});

test('answers a repeated group with a live formula, enables, and disables with post-usage answers', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');

  await page.getByLabel('Project').selectOption({ label: 'Looms (LOO-2)' });
  await page.getByLabel('Experiment title').fill('Weave density');
  await page
    .getByRole('radiogroup', { name: 'Data consent' })
    .getByLabel('Agree', { exact: true })
    .check();
  const total = page.getByLabel('Total mass');
  await expect(total).toHaveAttribute('readonly', '');

  const first = page.getByRole('group', { name: 'Sample 1', exact: true });
  await first.getByLabel('Sample name').fill('Warp');
  await first.getByLabel('Mass', { exact: true }).fill('1.5');
  await expect(total).toHaveValue('1.50');

  await page.getByRole('button', { name: 'Add another Sample' }).click();
  const second = page.getByRole('group', { name: 'Sample 2', exact: true });
  await second.getByLabel('Sample name').fill('Weft');
  // The keypad of a number field types into it.
  await second.getByRole('button', { name: 'Keypad for Mass' }).click();
  const keypad = second.getByRole('group', { name: 'Keypad for Mass' });
  for (const key of ['2', 'Decimal point', '2', '5']) {
    await keypad.getByRole('button', { name: key, exact: true }).click();
  }
  await expect(second.getByLabel('Mass', { exact: true })).toHaveValue('2.25');
  await expect(total).toHaveValue('3.75');

  // The last repetition max_number allows takes Add away: focus goes to its first field, not
  // to the page (a keyboard user would go on from below the group, past the new fields).
  await page.getByRole('button', { name: 'Add another Sample' }).press('Enter');
  const third = page.getByRole('group', { name: 'Sample 3', exact: true });
  await expect(third.getByLabel('Sample name')).toBeFocused();
  await page.keyboard.type('Selvedge');
  await expect(third.getByLabel('Sample name')).toHaveValue('Selvedge');
  await third.getByLabel('Mass', { exact: true }).fill('0.25');
  await expect(total).toHaveValue('4.00');
  // max_number is 3.
  await expect(page.getByRole('button', { name: 'Add another Sample' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Remove Sample 3' }).click();
  await expect(total).toHaveValue('3.75');

  await page.getByRole('button', { name: 'Enable', exact: true }).click();
  await expect(page.getByTestId('tool-state')).toHaveText('In use');
  const status = page.getByRole('region', { name: 'Tool status' });
  await expect(status).toContainText('Ada Lovelace');
  await expect(status).toContainText('Looms');

  // Disable: the post-usage form will not submit until its required answer is there.
  await expect(page.getByRole('heading', { name: `Disable ${TOOL}` })).toBeVisible();
  await page.getByRole('button', { name: 'Disable', exact: true }).click();
  await expect(page.getByText('"Condition after use" is required.').first()).toBeVisible();
  await page.getByLabel('Condition after use').selectOption({ label: 'Good' });
  await page.getByLabel('Notes').fill('Stage cleaned.');
  await page.getByRole('button', { name: 'Disable', exact: true }).click();
  await expect(page.getByTestId('tool-state')).toHaveText('Idle');
  await expect(page.getByRole('status').filter({ hasText: 'the usage has ended' })).toBeVisible();
});

test('works by keyboard alone: Tab between fields, Space picks, Enter submits', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await page.getByLabel('Username or badge number').focus();
  await page.keyboard.type('bob');
  await page.keyboard.press('Tab');
  // As a person types it: faster, it would be taken for a badge swiped (LogonPanel.tsx).
  await page.keyboard.type('2222', { delay: 80 });
  await page.keyboard.press('Enter');
  await expect(page.getByText('Logged on as')).toContainText('Bob Babbage');
  // The log-on panel went; its focus goes to the person's forms, not to the page (mutation:
  // ToolControlTab without its focus effects), and Tab goes on into them.
  await expect(page.getByRole('region', { name: 'Your forms' })).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(page.getByLabel('Project')).toBeFocused();

  await page.getByLabel('Experiment title').focus();
  await page.keyboard.type('Keyboard only');
  await page.keyboard.press('Tab'); // Sample code, optional
  await page.keyboard.press('Tab'); // Data consent
  await page.keyboard.press('Space');
  await expect(page.getByRole('radio', { name: 'Agree', exact: true })).toBeChecked();
  await page.keyboard.press('Tab');
  await expect(page.getByLabel('Sample name')).toBeFocused();
  await page.keyboard.type('K1');
  await page.keyboard.press('Tab');
  await page.keyboard.type('3');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('tool-state')).toHaveText('In use');
  // The Enable form went; the message saying so has the focus.
  await expect(page.getByRole('status').filter({ hasText: 'is enabled' })).toBeFocused();

  await page.getByLabel('Condition after use').focus();
  await page.keyboard.press('ArrowDown');
  await expect(page.getByLabel('Condition after use')).toHaveValue('good');
  await page.keyboard.press('Tab');
  await expect(page.getByRole('checkbox', { name: 'Stage' })).toBeFocused();
  await page.keyboard.press('Space');
  await expect(page.getByRole('checkbox', { name: 'Stage' })).toBeChecked();
  await page.keyboard.press('Tab'); // Sample holder
  await page.keyboard.press('Tab');
  await expect(page.getByRole('textbox', { name: 'Notes for staff' })).toBeFocused();
  await page.keyboard.type('All fine.');
  await page.keyboard.press('Tab'); // "Did anything go wrong?": arrows pick within the group
  await page.keyboard.press('ArrowRight');
  await expect(page.getByRole('radio', { name: 'No', exact: true })).toBeChecked();
  await page.keyboard.press('Tab');
  await expect(page.getByRole('button', { name: 'Disable', exact: true })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('tool-state')).toHaveText('Idle');
  await expect(page.getByRole('status').filter({ hasText: 'is disabled' })).toBeFocused();
});

test('a number_float without precision takes any decimals from the keypad and the arrow keys', async ({
  page,
  startStation,
}) => {
  const bundle = facilityAsking([
    ...PRE_QUESTIONS,
    { type: 'number_float', name: 'dose', title: 'Dose', min: 0 },
  ]);
  const station = await startStation(bundle);
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');

  const dose = page.getByLabel('Dose', { exact: true });
  // The keypad of a float field has a decimal point whatever its precision.
  await page.getByRole('button', { name: 'Keypad for Dose' }).click();
  const keypad = page.getByRole('group', { name: 'Keypad for Dose' });
  for (const key of ['2', 'Decimal point', '5']) {
    await keypad.getByRole('button', { name: key, exact: true }).click();
  }
  await expect(dose).toHaveValue('2.5');
  await expect(dose).toHaveAttribute('inputmode', 'decimal');
  // The arrow keys step by one and keep the decimals typed: 2.5 -> 3.5, not 4.
  await dose.press('ArrowUp');
  await expect(dose).toHaveValue('3.5');
  await dose.fill('0.25');
  await dose.press('ArrowDown');
  await expect(dose).toHaveValue('0'); // min is 0
  await dose.fill('1.25');
  await dose.press('ArrowDown');
  await expect(dose).toHaveValue('0.25');
});

test('a formula and a number with a long precision show the value the core stores, not binary noise', async ({
  page,
  startStation,
}) => {
  const bundle = facilityAsking([
    ...PRE_QUESTIONS,
    { type: 'number_float', name: 'dose', title: 'Dose', precision: 20 },
    { type: 'formula', name: 'third', title: 'A third', formula: 'dose / 3', precision: 16 },
    { type: 'number_float', name: 'count', title: 'Count', precision: 3 },
  ]);
  const station = await startStation(bundle);
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  const dose = page.getByLabel('Dose', { exact: true });
  await dose.fill('4');
  // toFixed(16) of 4 / 3 wrote 1.3333333333333299; the core stores 1.33333333333333.
  await expect(page.getByLabel('A third')).toHaveValue('1.3333333333333300');
  // A step at 20 places: 0.1 is not 0.10000000000000000555.
  await dose.fill('0.1');
  await dose.press('ArrowUp');
  await dose.press('ArrowDown');
  await expect(dose).toHaveValue('0.10000000000000000000');
  // Every digit of a long number typed stays through a step (not cut to 15).
  const count = page.getByLabel('Count', { exact: true });
  await count.fill('1234567890123.456');
  await count.press('ArrowDown');
  await expect(count).toHaveValue('1234567890123.455');
});

test('a required checkbox group and a required group say so to a screen reader, and read out their problems', async ({
  page,
  startStation,
}) => {
  const bundle = facilityAsking([
    { type: 'checkbox', name: 'ppe', title: 'Protection', choices: ['glasses'], required: true },
    {
      type: 'group',
      name: 'holders',
      title: 'Holders',
      required: true,
      max_number: 2,
      questions: [{ type: 'textbox', name: 'holder', title: 'Holder' }],
    },
  ]);
  const station = await startStation(bundle);
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  // The visible * is hidden from screen readers; neither fieldset had a role to carry
  // aria-required, so nothing said these were required.
  await expect(page.getByRole('group', { name: 'Protection (required)' })).toBeVisible();
  const holders = page.getByRole('group', { name: 'Holders (required)' });
  await expect(holders).toBeVisible();
  await page.getByLabel('Project').selectOption({ label: 'Engines (ENG-1)' });
  await page.getByRole('button', { name: 'Enable', exact: true }).click();
  await expect(
    page.getByRole('group', { name: 'Protection (required)' }),
  ).toHaveAccessibleDescription('"Protection" needs at least one choice.');
  // The group's own problem is read out with it (it was not linked).
  await expect(holders).toHaveAccessibleDescription(/Holders/);
});

// Mutation: group_add_button_name ignored (the button said "Add another Gases"), or step kept
// but not checked (an off-step answer was stored).
test("a question list written for NEMO: its group's own Add button, and a number's step", async ({
  page,
  startStation,
}) => {
  const bundle = facilityAsking([
    { type: 'number', name: 'stubs', title: 'Stubs', min: 1, step: 2, form_row: 0 },
    {
      type: 'group',
      name: 'gases',
      title: 'Gases',
      max_number: 2,
      group_add_button_name: 'Add gas',
      questions: [{ type: 'textbox', name: 'gas', title: 'Gas', row_cell: 0 }],
    },
  ]);
  const station = await startStation(bundle);
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await page.getByRole('button', { name: 'Add gas', exact: true }).click();
  await expect(page.getByRole('group', { name: 'Gases 2', exact: true })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Add gas', exact: true })).toHaveCount(0);
  const stubs = page.getByRole('textbox', { name: 'Stubs' });
  await expect(stubs).toHaveAccessibleDescription('At least 1, in steps of 2, whole number');
  // The arrow keys go by the step.
  await stubs.press('ArrowUp');
  await expect(stubs).toHaveValue('1');
  await stubs.press('ArrowUp');
  await expect(stubs).toHaveValue('3');
  await page.getByRole('textbox', { name: 'Stubs' }).fill('4');
  await page.getByLabel('Project').selectOption({ label: 'Engines (ENG-1)' });
  await page.getByRole('button', { name: 'Enable', exact: true }).click();
  await expect(stubs).toHaveAccessibleDescription(
    'At least 1, in steps of 2, whole number "Stubs" goes in steps of 2 from 1; 4 is not one of them.',
  );
  await page.getByRole('textbox', { name: 'Stubs' }).fill('5');
  await page.getByRole('button', { name: 'Enable', exact: true }).click();
  await expect(page.getByRole('button', { name: 'Disable', exact: true })).toBeVisible();
});

// Mutations: drafts.ts kept in memory only (the reload emptied every field); SessionBar logging
// off at once with answers typed (they went without a word).
test('typed answers outlast a reload of the page; log-off asks before it forgets them', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await page.getByLabel('Project').selectOption({ label: 'Looms (LOO-2)' });
  await page.getByLabel('Experiment title').fill('Weave density');

  await page.reload();
  await expect(page.getByRole('button', { name: 'Log off' })).toBeVisible();
  await expect(page.getByLabel('Experiment title')).toHaveValue('Weave density');
  await expect(page.getByLabel('Project').locator('option:checked')).toHaveText('Looms (LOO-2)');

  // Log off asks; Cancel keeps the session and the answers.
  await page.getByRole('button', { name: 'Log off' }).click();
  const asking = page.getByRole('dialog', { name: 'Log off without sending your answers?' });
  await expect(asking).toBeVisible();
  await asking.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByLabel('Experiment title')).toHaveValue('Weave density');

  // The session ended while the question was open (another screen logged off): the next
  // person does not find it asked of them (mutation: SessionBar keeping `asking`).
  await page.getByRole('button', { name: 'Log off' }).click();
  await expect(asking).toBeVisible();
  await callStation(station.url, 'session.logoff', {});
  await expect(page.getByRole('heading', { name: 'Log on' })).toBeVisible();
  await logOn(page, 'bob', '2222');
  await expect(asking).toBeHidden();
  await expect(page.getByLabel('Experiment title')).toHaveValue('');
  await logOff(page);

  // Logged off, the answers are gone, for the same person too.
  await logOn(page, 'ada', '1234');
  await page.getByLabel('Experiment title').fill('Weave density');
  await page.getByRole('button', { name: 'Log off' }).click();
  await asking.getByRole('button', { name: 'Log off' }).click();
  await expect(page.getByRole('heading', { name: 'Log on' })).toBeVisible();
  await logOn(page, 'ada', '1234');
  await expect(page.getByLabel('Experiment title')).toHaveValue('');
  // With nothing typed, log-off does not ask.
  await page.getByRole('button', { name: 'Log off' }).click();
  await expect(page.getByRole('heading', { name: 'Log on' })).toBeVisible();
  await page.reload();
  await logOn(page, 'ada', '1234');
  await expect(page.getByLabel('Experiment title')).toHaveValue('');
});

test('an Enable form open while a bundle is imported into the running station shows the new questions', async ({
  page,
  startStation,
}) => {
  // The import told no screen: the form kept the old questions, and Enable was refused for one
  // it did not show ("Operator badge is required") until the page was loaded again.
  let cli = '';
  const bundle = facility();
  const station = await startStation(bundle, (_dataDir, path) => {
    cli = path;
  });
  await page.goto(station.url);
  await logOn(page, 'bob', '2222');
  await expect(page.getByLabel('Experiment title')).toBeVisible();
  await expect(page.getByLabel('Operator badge')).toHaveCount(0);

  const [tool] = bundle.tools;
  if (!tool) throw new Error('the facility has a tool');
  tool.pre_usage_questions = [
    ...(tool.pre_usage_questions ?? []),
    { type: 'textbox', name: 'operator_badge', title: 'Operator badge', required: true },
  ];
  const file = join(station.dataDir, 'changed.json');
  await writeFile(file, JSON.stringify({ tools: [tool] }));
  await promisify(execFile)(process.execPath, [cli, 'import', '--data', station.dataDir, file]);
  await expect(page.getByLabel('Operator badge')).toBeVisible();
});

test('one click on Enable after typing a wrong answer submits: every problem is named', async ({
  page,
  startStation,
}) => {
  // Leaving the field for the button showed its message above the button between the press
  // and the release: the button moved from under the pointer, and the click was lost.
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'bob', '2222');
  const sample = page.getByRole('group', { name: 'Sample 1', exact: true });
  await sample.getByLabel('Mass', { exact: true }).fill('1.234');
  await page.getByRole('button', { name: 'Enable', exact: true }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'need attention' })).toBeVisible();
  await expect(page.getByRole('radiogroup', { name: 'Data consent' })).toHaveAttribute(
    'aria-invalid',
    'true',
  );
});

test('one tap on Enable after typing a wrong answer submits too (a touch screen)', async ({
  browser,
  startStation,
}) => {
  // A touch moves the focus only after the finger is lifted: the press had been forgotten by
  // then, the field's message showed, and the tap was lost as the click was.
  const station = await startStation(facility());
  const context = await browser.newContext({ hasTouch: true });
  const page = await context.newPage();
  try {
    await page.goto(station.url);
    await logOn(page, 'bob', '2222');
    const sample = page.getByRole('group', { name: 'Sample 1', exact: true });
    await sample.getByLabel('Mass', { exact: true }).fill('1.234');
    await page.getByRole('button', { name: 'Enable', exact: true }).tap();
    await expect(page.getByRole('alert').filter({ hasText: 'need attention' })).toBeVisible();
  } finally {
    await context.close();
  }
});
