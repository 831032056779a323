import { join } from 'node:path';
import type { Locator, Page } from '@playwright/test';
import Database from 'better-sqlite3';
import { expect, test } from './fixtures.js';
import { callStation, createItem, enableWith, facility, logOff, logOn } from './facility.js';

interface BuilderField {
  type: string;
  name: string;
  options?: string;
  units?: string;
  unit?: string;
  value?: string;
  group?: string;
  position?: string;
  flags?: string[];
}

async function openNotebook(page: Page): Promise<void> {
  await page.getByRole('tab', { name: 'Notebook' }).click();
  await expect(page.getByRole('region', { name: 'Entries' })).toBeVisible();
}

async function createEntry(
  page: Page,
  kind: string,
  title: string,
  template?: string,
): Promise<Locator> {
  const form = page.getByRole('form', { name: 'New entry' });
  await form.getByLabel('Kind').selectOption({ label: kind });
  if (template) await form.getByLabel('Start from').selectOption({ label: template });
  await form.getByLabel('Title').fill(title);
  await form.getByRole('button', { name: 'Create' }).click();
  const entry = page.getByRole('region', { name: `Entry ${title}` });
  await expect(entry.getByRole('heading', { name: title })).toBeVisible();
  return entry;
}

async function addField(page: Page, field: BuilderField): Promise<void> {
  await page.getByRole('button', { name: 'Add field', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Add field' });
  await expect(dialog).toBeVisible();
  await dialog.getByLabel('Field type').selectOption(field.type);
  await dialog.getByLabel('Field name').fill(field.name);
  if (field.options !== undefined) {
    await dialog.getByLabel('Options (one per line, at least 2)').fill(field.options);
  }
  if (field.units !== undefined) await dialog.getByLabel('Units (one per line)').fill(field.units);
  if (field.unit !== undefined) await dialog.getByLabel('Default unit').selectOption(field.unit);
  if (field.value !== undefined) await dialog.getByLabel('Default value').fill(field.value);
  if (field.group !== undefined) {
    await dialog.getByLabel('Group').selectOption({ label: field.group });
  }
  if (field.position !== undefined) await dialog.getByLabel('Position').fill(field.position);
  for (const flag of field.flags ?? []) await dialog.getByLabel(flag).check();
  await dialog.getByRole('button', { name: 'Add field' }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByRole('button', { name: `Remove field ${field.name}` })).toBeVisible();
}

/** CodeMirror's own search panel (Ctrl+F): replaces every `find` with `replace`. */
async function replaceInCode(page: Page, find: string, replace: string): Promise<void> {
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+f');
  const findInput = page.locator('.cm-search input[name="search"]');
  await findInput.fill(find);
  await findInput.press('End');
  const replaceInput = page.locator('.cm-search input[name="replace"]');
  await replaceInput.fill(replace);
  await replaceInput.press('End');
  await page.locator('.cm-search button[name="replaceAll"]').click();
  await page.locator('.cm-search button[name="close"]').click();
}

function fieldValue(entry: Locator, name: string): Locator {
  return entry.locator(`[data-field="${name}"] dd`);
}

test('notebook: template with every field type, entry from it, code mode, duplicate, search, keyboard', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  const cspViolations: string[] = [];
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) cspViolations.push(message.text());
  });
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);

  // ---- an experiment template built in the builder ----
  const template = await createEntry(page, 'Experiment template', 'SEM sample template');
  await template.getByRole('button', { name: 'Edit' }).click();
  const editor = page.getByRole('region', { name: 'Editing entry SEM sample template' });
  await editor.getByLabel('New group name').fill('Sample');
  await editor.getByRole('button', { name: 'Add group' }).click();
  await editor.getByLabel('New group name').fill('Measurement');
  await editor.getByRole('button', { name: 'Add group' }).click();
  await expect(editor.getByLabel('Name of group Measurement')).toBeVisible();
  // A look at another tab loses nothing of the draft: still editing, the groups still there.
  await page.getByRole('tab', { name: 'Tool control' }).click();
  await page.getByRole('tab', { name: 'Notebook' }).click();
  await expect(editor.getByLabel('Name of group Measurement')).toBeVisible();
  await expect(editor.getByLabel('Name of group Sample')).toBeVisible();

  // The builder refuses a choice field with fewer than 2 options, and says why.
  await page.getByRole('button', { name: 'Add field', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Add field' });
  await dialog.getByLabel('Field type').selectOption('radio');
  await expect(dialog.getByLabel('Units (one per line)')).toHaveCount(0);
  await expect(dialog.getByLabel('Open in the current tab')).toHaveCount(0);
  await dialog.getByLabel('Field name').fill('Atmosphere');
  await dialog.getByLabel('Options (one per line, at least 2)').fill('air');
  await dialog.getByRole('button', { name: 'Add field' }).click();
  await expect(dialog.getByRole('alert')).toContainText('at least 2 different options');
  // The control at fault is marked, described by the problem, and takes the focus.
  const options = dialog.getByLabel('Options (one per line, at least 2)');
  await expect(options).toHaveAttribute('aria-invalid', 'true');
  await expect(options).toHaveAccessibleDescription(/at least 2 different options/);
  await expect(options).toBeFocused();
  await options.fill('air\nvacuum');
  await dialog.getByRole('button', { name: 'Add field' }).click();
  await expect(dialog).toBeHidden();

  await addField(page, {
    type: 'number',
    name: 'Mass',
    units: 'mg\ng',
    unit: 'mg',
    group: 'Sample',
    position: '1',
    flags: ['Blank value on duplicate'],
  });
  await addField(page, { type: 'date', name: 'Prepared on', group: 'Sample', position: '2' });
  await addField(page, { type: 'checkbox', name: 'Coated', group: 'Sample' });
  await addField(page, {
    type: 'select',
    name: 'Detector',
    options: 'SE\nBSE\nEDS',
    group: 'Measurement',
    flags: ['Allow several values'],
  });
  await addField(page, { type: 'datetime-local', name: 'Measured at', group: 'Measurement' });
  await addField(page, { type: 'time', name: 'Start time', group: 'Measurement' });
  await addField(page, { type: 'email', name: 'Contact' });
  await addField(page, { type: 'text', name: 'Operator note', flags: ['Required'] });
  await addField(page, { type: 'url', name: 'Protocol' });
  await editor.getByRole('button', { name: 'Save' }).click();

  const savedTemplate = page.getByRole('region', { name: 'Entry SEM sample template' });
  const sections = savedTemplate.locator('.field-section h3');
  await expect(sections).toHaveText(['Sample', 'Measurement']);
  await expect(
    savedTemplate.getByRole('region', { name: 'Sample', exact: true }).locator('dt'),
  ).toHaveText(['Mass', 'Prepared on', 'Coated']);

  // ---- an experiment from the template, filled in ----
  const entry = await createEntry(page, 'Experiment', 'Run 42', 'SEM sample template');
  await expect(fieldValue(entry, 'Mass')).toBeAttached();
  await entry.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('region', { name: 'Editing entry Run 42' });
  await edit.getByLabel('Mass', { exact: true }).fill('12.5');
  await edit.getByLabel('Unit of Mass').selectOption('mg');
  await edit.getByLabel('Prepared on', { exact: true }).fill('2024-05-01');
  await edit.getByLabel('Coated', { exact: true }).check();
  await edit.getByLabel('Detector', { exact: true }).selectOption(['SE', 'EDS']);
  await edit.getByLabel('Measured at', { exact: true }).fill('2024-05-02T10:30');
  await edit.getByLabel('Start time', { exact: true }).fill('09:15');
  await edit.getByRole('radiogroup', { name: 'Atmosphere' }).getByLabel('vacuum').check();
  await expect(edit.getByText('is empty; the field is marked required')).toBeVisible();
  await edit.getByLabel('Operator note', { exact: true }).fill('Note one');
  await expect(edit.getByText('is empty; the field is marked required')).toHaveCount(0);
  // Live validation at the field.
  await edit.getByLabel('Contact', { exact: true }).fill('not-an-email');
  await expect(edit.getByText('is not a valid e-mail address')).toBeVisible();
  await expect(edit.getByLabel('Contact', { exact: true })).toHaveAttribute('aria-invalid', 'true');
  await edit.getByLabel('Contact', { exact: true }).fill('ada@example.org');
  await expect(edit.getByText('is not a valid e-mail address')).toHaveCount(0);
  await edit.getByLabel('Protocol', { exact: true }).fill('https://example.org/protocol');

  // ---- code mode: edit the JSON, come back, nothing lost ----
  await edit.getByRole('button', { name: 'Code (JSON)' }).click();
  await expect(page.locator('.cm-content')).toContainText('"extra_fields"');
  // CodeMirror's styles apply under the page's CSP (no inline <style> needed).
  await expect(page.locator('.cm-editor')).toHaveCSS('display', 'flex');
  // (CodeMirror renders only the lines in view, so the result is checked back in the builder.)
  await replaceInCode(page, '"Note one"', '"Note two"');
  // Invalid JSON blocks the way back, keeps the text and says where.
  await replaceInCode(page, '"extra_fields": {', '"extra_fields": {{');
  await edit.getByRole('button', { name: 'Builder' }).click();
  await expect(edit.getByTestId('code-blocked')).toContainText('not valid JSON');
  await expect(edit.getByRole('button', { name: 'Code (JSON)' })).toHaveAttribute(
    'aria-pressed',
    'true',
  );
  await expect(edit.getByRole('region', { name: 'Problems in the JSON' })).toContainText('Line 2');
  await expect(page.locator('.cm-lint-marker-error').first()).toBeVisible();
  await expect(page.locator('.cm-content')).toContainText('"extra_fields": {{');
  await replaceInCode(page, '{{', '{');
  await edit.getByRole('button', { name: 'Builder' }).click();
  await expect(edit.getByRole('button', { name: 'Builder' })).toHaveAttribute(
    'aria-pressed',
    'true',
  );
  await expect(edit.getByLabel('Operator note', { exact: true })).toHaveValue('Note two');
  await expect(edit.getByLabel('Mass', { exact: true })).toHaveValue('12.5');
  await edit.getByRole('button', { name: 'Save' }).click();

  // ---- view mode ----
  const saved = page.getByRole('region', { name: 'Entry Run 42' });
  await expect(fieldValue(saved, 'Operator note')).toHaveText('Note two');
  await expect(fieldValue(saved, 'Mass')).toHaveText('12.5 mg');
  await expect(fieldValue(saved, 'Coated').getByRole('img', { name: 'Checked' })).toHaveText('✓');
  await expect(fieldValue(saved, 'Detector')).toHaveText('SE, EDS');
  // Dates and wall times as the station shows its other times, the value kept in the element.
  const local = await page.evaluate(() => ({
    day: new Intl.DateTimeFormat(undefined, {
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    }).format(new Date(2024, 4, 1)),
    at: new Intl.DateTimeFormat(undefined, {
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    }).format(new Date(2024, 4, 2, 10, 30)),
  }));
  await expect(fieldValue(saved, 'Prepared on')).toHaveText(local.day);
  await expect(fieldValue(saved, 'Prepared on').locator('time')).toHaveAttribute(
    'datetime',
    '2024-05-01',
  );
  await expect(fieldValue(saved, 'Measured at')).toHaveText(local.at);
  const link = fieldValue(saved, 'Protocol').getByRole('link');
  await expect(link).toHaveAttribute('href', 'https://example.org/protocol');
  await expect(link).toHaveAttribute('target', '_blank');
  await expect(link).toHaveAttribute('rel', 'noopener noreferrer');

  // ---- duplicate: blank_value_on_duplicate clears Mass, the rest stays ----
  // A double click makes one copy.
  await saved.getByRole('button', { name: 'Duplicate' }).dblclick();
  const copy = page.getByRole('region', { name: /^Entry Run 42 .*copy/ });
  await expect(fieldValue(copy, 'Mass')).toHaveText('—');
  await expect(
    page.getByRole('region', { name: 'Entries' }).getByText('Run 42 (copy)', { exact: true }),
  ).toHaveCount(1);
  await expect(fieldValue(copy, 'Operator note')).toHaveText('Note two');

  // ---- search by a number range and a date range ----
  await page.getByRole('button', { name: 'Search entries' }).click();
  const search = page.getByRole('region', { name: 'Search entries' });
  await search.getByLabel('Kind').selectOption({ label: 'Experiments' });
  await search.getByRole('button', { name: 'Add metadata condition' }).click();
  const first = search.getByRole('group', { name: 'Condition 1' });
  await first.getByLabel('Condition', { exact: true }).selectOption({ label: 'Number between' });
  await first.getByLabel('Field name').fill('Mass');
  await first.getByLabel('From (minimum)').fill('10');
  await first.getByLabel('To (maximum)').fill('20');
  await first.getByLabel('Unit (optional)').fill('mg');
  await search.getByRole('button', { name: 'Add metadata condition' }).click();
  const second = search.getByRole('group', { name: 'Condition 2' });
  await second.getByLabel('Condition', { exact: true }).selectOption({ label: 'Date between' });
  await second.getByLabel('Field name').fill('Prepared on');
  await second.getByLabel('From', { exact: true }).fill('2024-04-30');
  await second.getByLabel('To', { exact: true }).fill('2024-05-01');
  await search.getByRole('button', { name: 'Search', exact: true }).click();
  await expect(search.getByTestId('search-summary')).toContainText(/^1 entry found in [\d.]+ ms$/);
  const results = search.getByRole('list', { name: 'Search results' });
  await expect(results.getByRole('button')).toHaveCount(1);
  await expect(results.getByRole('button')).toContainText('Run 42');
  // Outside the range: nothing.
  await first.getByLabel('From (minimum)').fill('13');
  await search.getByRole('button', { name: 'Search', exact: true }).click();
  await expect(search.getByTestId('search-summary')).toContainText(/^0 entries found/);

  // ---- more matches than a page: Show more brings the rest ----
  const token = /#token=([^&]+)/.exec(station.url)?.[1] ?? '';
  for (let i = 0; i < 105; i++) {
    const res = await fetch(new URL('/rpc/notebook.create', station.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'item', title: `Bulk ${i}`, tags: ['bulk'] }),
    });
    expect(res.status).toBe(200);
  }
  await search.getByRole('button', { name: 'Remove condition 2' }).click();
  await search.getByRole('button', { name: 'Remove condition 1' }).click();
  await search.getByLabel('Kind').selectOption({ label: 'Items' });
  await search.getByLabel('Tags (all of, separated by commas)').fill('bulk');
  await search.getByRole('button', { name: 'Search', exact: true }).click();
  await expect(search.getByTestId('search-summary')).toContainText(/^105 entries found/);
  await expect(results.getByRole('button')).toHaveCount(100);
  await search.getByRole('button', { name: 'Show more (5 not shown)' }).click();
  await expect(results.getByRole('button')).toHaveCount(105);
  await expect(results.getByRole('button').last()).toContainText('Bulk 0');
  await expect(search.getByRole('button', { name: /^Show more/ })).toHaveCount(0);
  expect(cspViolations).toEqual([]);
});

test('notebook: keyboard-only builder, Escape closes it, touch-sized controls', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);

  // Create an item by keyboard alone.
  const form = page.getByRole('form', { name: 'New entry' });
  await form.getByLabel('Kind').focus();
  await form.getByLabel('Kind').selectOption('item');
  await page.keyboard.press('Tab');
  await expect(form.getByLabel('Start from')).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(form.getByLabel('Title')).toBeFocused();
  await page.keyboard.type('Sample holder');
  await page.keyboard.press('Enter');
  const entry = page.getByRole('region', { name: 'Entry Sample holder' });
  await expect(entry.getByRole('heading', { name: 'Sample holder' })).toBeVisible();

  const edit = entry.getByRole('button', { name: 'Edit' });
  await edit.focus();
  await page.keyboard.press('Enter');
  const editor = page.getByRole('region', { name: 'Editing entry Sample holder' });

  // The builder opens with Enter, takes the name, adds with Enter; Escape closes it.
  const addButton = editor.getByRole('button', { name: 'Add field', exact: true });
  await addButton.focus();
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'Add field' });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByLabel('Field name')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(addButton).toBeFocused();

  await page.keyboard.press('Space');
  await expect(dialog).toBeVisible();
  await page.keyboard.type('Slot count');
  await page.keyboard.press('Shift+Tab');
  await expect(dialog.getByLabel('Field type')).toBeFocused();
  await dialog.getByLabel('Field type').selectOption('number');
  await dialog.getByLabel('Field name').focus();
  await page.keyboard.press('Enter');
  await expect(dialog).toBeHidden();
  const slots = editor.getByLabel('Slot count', { exact: true });
  await expect(slots).toBeVisible();
  await slots.focus();
  await page.keyboard.type('6');
  await expect(slots).toHaveValue('6');

  // Focus is visible (the station's focus ring), and controls are touch-sized.
  const outline = await slots.evaluate((el) => getComputedStyle(el).outlineStyle);
  expect(outline).toBe('solid');
  for (const control of [
    slots,
    addButton,
    editor.getByRole('button', { name: 'Save' }),
    editor.getByRole('button', { name: 'Remove field Slot count' }),
    editor.getByLabel('Title', { exact: true }),
  ]) {
    const box = await control.boundingBox();
    expect(box?.height ?? 0).toBeGreaterThanOrEqual(44);
  }

  // Save from the keyboard.
  await editor.getByRole('button', { name: 'Save' }).focus();
  await page.keyboard.press('Enter');
  await expect(
    page
      .getByRole('region', { name: 'Entry Sample holder' })
      .locator('[data-field="Slot count"] dd'),
  ).toHaveText('6');
});

test('notebook: one click, one entry; an entry open on a second screen shows a change made on the first', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  const form = page.getByRole('form', { name: 'New entry' });
  await form.getByLabel('Kind').selectOption('item');
  await form.getByLabel('Title').fill('Holder A');
  await form.getByRole('button', { name: 'Create' }).dblclick();
  const entries = page.getByRole('region', { name: 'Entries' });
  const entryRow = entries.getByRole('button', { name: /^Holder A/ });
  await expect(entryRow).toHaveCount(1);
  await expect(page.getByRole('region', { name: 'Entry Holder A' })).toBeVisible();

  // The same station on a second screen (the same person is logged on there), the entry open.
  const second = await page.context().newPage();
  await second.goto(station.url);
  await openNotebook(second);
  await second
    .getByRole('region', { name: 'Entries' })
    .getByRole('button', { name: /^Holder A/ })
    .click();
  await expect(second.getByRole('region', { name: 'Entry Holder A' })).toBeVisible();

  const first = page.getByRole('region', { name: 'Entry Holder A' });
  await first.getByRole('button', { name: 'Edit' }).click();
  await page.locator('#entry-title-input').fill('Holder B');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('region', { name: 'Entry Holder B' })).toBeVisible();
  await expect(second.getByRole('region', { name: 'Entry Holder B' })).toBeVisible();
  await second.close();
});

test('notebook: a save refused earlier leaves no stale message when the next one is blocked by the JSON', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  const entry = await createEntry(page, 'Item', 'Holder C');
  await entry.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('region', { name: 'Editing entry Holder C' });
  await edit.getByLabel('Title', { exact: true }).fill('');
  await edit.getByRole('button', { name: 'Save' }).click();
  await expect(edit.getByText('Title: must not be empty', { exact: true })).toBeVisible();
  // The title is put right; the next save is stopped by the JSON, and only that is said.
  await edit.getByLabel('Title', { exact: true }).fill('Holder C');
  await edit.getByRole('button', { name: 'Code (JSON)' }).click();
  await replaceInCode(page, '"extra_fields": {', '"extra_fields": {{');
  await edit.getByRole('button', { name: 'Save' }).click();
  await expect(edit.getByTestId('code-blocked')).toContainText('not valid JSON');
  await expect(edit.getByTestId('save-error')).toHaveCount(0);
  await expect(edit.getByText('Title: must not be empty', { exact: true })).toHaveCount(0);
});

test('notebook: each group is renamed by a button that names it, or by Enter in its name', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  const entry = await createEntry(page, 'Item template', 'Holder template');
  await entry.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('region', { name: 'Editing entry Holder template' });
  for (const name of ['Sample', 'Measurement']) {
    await edit.getByLabel('New group name').fill(name);
    await edit.getByLabel('New group name').press('Enter');
  }
  await expect(edit.getByRole('button', { name: 'Rename group Sample' })).toBeDisabled();
  await edit.getByLabel('Name of group Measurement').fill('Imaging');
  await edit.getByRole('button', { name: 'Rename group Measurement' }).click();
  await expect(edit.getByLabel('Name of group Imaging')).toBeVisible();
  await edit.getByLabel('Name of group Sample').fill('Specimen');
  await edit.getByLabel('Name of group Sample').press('Enter');
  await expect(edit.getByLabel('Name of group Specimen')).toBeVisible();
  await edit.getByRole('button', { name: 'Save' }).click();
  const saved = page.getByRole('region', { name: 'Entry Holder template' });
  await expect(saved.locator('.field-section h3')).toHaveText(['Specimen', 'Imaging']);
});

/** An item made through the station's contract with this metadata; the notebook then opens it. */
async function itemWithMetadata(
  page: Page,
  url: string,
  title: string,
  metadata: unknown,
): Promise<Locator> {
  await createItem(url, title, metadata);
  await page
    .getByRole('region', { name: 'Entries' })
    .getByRole('button', { name: new RegExp(`^${title}`) })
    .click();
  const entry = page.getByRole('region', { name: `Entry ${title}` });
  await expect(entry.getByRole('heading', { name: title })).toBeVisible();
  return entry;
}

test('notebook: view mode marks an e-mail or a link that breaks its rule, in words too', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  const entry = await itemWithMetadata(page, station.url, 'Contacts', {
    extra_fields: {
      Contact: { type: 'email', value: 'ada at example' },
      Backup: { type: 'email', value: 'ada@example.org' },
      Protocol: { type: 'url', value: 'example.org/protocol' },
    },
  });
  const contact = fieldValue(entry, 'Contact');
  await expect(contact).toContainText('ada at example');
  await expect(contact).toContainText('not a valid e-mail address');
  const shown = contact.getByText('ada at example', { exact: true });
  await expect(shown).toHaveAttribute('aria-invalid', 'true');
  await expect(shown).toHaveAccessibleDescription(/not a valid e-mail address/);
  // Marked in colour and shape as well as in words.
  expect(await shown.evaluate((el) => getComputedStyle(el).textDecorationLine)).not.toBe('none');
  await expect(fieldValue(entry, 'Backup')).toHaveText('ada@example.org');
  await expect(fieldValue(entry, 'Backup').locator('[aria-invalid]')).toHaveCount(0);
  const protocol = fieldValue(entry, 'Protocol');
  await expect(protocol).toContainText('not a valid link');
  await expect(protocol.getByText('example.org/protocol', { exact: true })).toHaveAttribute(
    'aria-invalid',
    'true',
  );
});

/** The extra fields of the entry with this title as stored. */
async function storedFields(url: string, title: string): Promise<Record<string, unknown>> {
  const { entries } = (await callStation(url, 'notebook.list', {})) as {
    entries: { id: number; title: string }[];
  };
  const id = entries.find((e) => e.title === title)?.id;
  const { entry } = (await callStation(url, 'notebook.get', { id })) as {
    entry: { metadata: { extra_fields: Record<string, unknown> } };
  };
  return entry.metadata.extra_fields;
}

test('notebook: a unit stored in the other Unicode form than its units is shown chosen and kept as written', async ({
  page,
  startStation,
}) => {
  const MICRO = '\u00b5'; // MICRO SIGN, as most keyboards type "µ"
  const MU = '\u03bc'; // GREEK SMALL LETTER MU
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  const entry = await itemWithMetadata(page, station.url, 'Grid', {
    extra_fields: {
      Length: { type: 'number', value: 3, units: ['nm', `${MU}m`], unit: `${MICRO}m` },
      Dose: { type: 'number', value: 4, units: ['mg', 'g'], unit: 'mg ' },
      Width: { type: 'number', value: 1, units: [`${MICRO}m`, `${MU}m`], unit: `${MU}m` },
    },
  });
  await entry.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('region', { name: 'Editing entry Grid' });
  // The listed unit is the one chosen, not "(no unit)".
  await expect(edit.getByLabel('Unit of Length')).toHaveValue(`${MU}m`);
  await expect(edit.getByLabel('Unit of Dose')).toHaveValue('mg');
  await expect(edit.getByLabel('Unit of Width')).toHaveValue(`${MU}m`);
  // One unit in two forms is listed twice, as a repeated option is.
  await expect(
    edit.locator('.notebook-field', { has: page.getByLabel('Unit of Width') }),
  ).toContainText(`"${MU}m" is listed twice (also as "${MICRO}m", the same unit)`);
  await expect(edit).not.toContainText('is not one of units');
  // Saving another change leaves the units as they were written.
  await edit.getByLabel('Length', { exact: true }).fill('5');
  await edit.getByRole('button', { name: 'Save' }).click();
  await expect(edit).toBeHidden();
  await expect(fieldValue(entry, 'Length')).toContainText('5');
  const saved = await storedFields(station.url, 'Grid');
  expect(saved['Length']).toMatchObject({ value: '5', unit: `${MICRO}m` });
  expect(saved['Dose']).toMatchObject({ unit: 'mg ' });
  expect(saved['Width']).toMatchObject({ unit: `${MU}m` });
  // Choosing another unit changes it.
  await entry.getByRole('button', { name: 'Edit' }).click();
  await edit.getByLabel('Unit of Length').selectOption('nm');
  await edit.getByRole('button', { name: 'Save' }).click();
  await expect(edit).toBeHidden();
  expect((await storedFields(station.url, 'Grid'))['Length']).toMatchObject({ unit: 'nm' });
});

test('notebook: a field named "" has a name to be read by', async ({ page, startStation }) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  const entry = await itemWithMetadata(page, station.url, 'Nameless', {
    extra_fields: { '': { type: 'text', value: 'kept' }, Count: { type: 'number', value: 3 } },
  });
  await expect(entry.locator('[data-field=""] dt')).toHaveText('(unnamed field)');
  await entry.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('region', { name: 'Editing entry Nameless' });
  await expect(edit.getByRole('textbox', { name: '(unnamed field)' })).toHaveValue('kept');
  await expect(
    edit.getByRole('button', { name: 'Remove field (unnamed field)', exact: true }),
  ).toBeVisible();
});

/** Ada edits an item holding the text fields First, Second and Third, in that order. */
async function editThreeFields(
  page: Page,
  url: string,
  title: string,
): Promise<{ input: (name: string) => Locator; trash: (name: string) => Locator; edit: Locator }> {
  await page.goto(url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  const entry = await itemWithMetadata(page, url, title, {
    extra_fields: {
      First: { type: 'text', value: 'a', position: 1 },
      Second: { type: 'text', value: 'b', position: 2 },
      Third: { type: 'text', value: 'c', position: 3 },
    },
  });
  await entry.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('region', { name: `Editing entry ${title}` });
  return {
    edit,
    input: (name) => edit.getByLabel(name, { exact: true }),
    trash: (name) => edit.getByRole('button', { name: `Remove field ${name}`, exact: true }),
  };
}

test('notebook: Tab reaches a field’s trash control after its input', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  const { input, trash } = await editThreeFields(page, station.url, 'Holder D');
  await input('First').focus();
  await page.keyboard.press('Tab');
  await expect(trash('First')).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(input('Second')).toBeFocused();
  await page.keyboard.press('Shift+Tab');
  await expect(trash('First')).toBeFocused();
});

test('notebook: the trash control is an icon the page draws, not an emoji, named and 44 x 44 px', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  const { edit, trash } = await editThreeFields(page, station.url, 'Holder T');
  // An emoji needs an emoji font, which a station may lack (an empty box then): no text, an
  // SVG hidden from assistive technology, the control named by its label.
  const control = trash('First');
  await expect(control).toHaveText('');
  await expect(control).toHaveAccessibleName('Remove field First');
  const icon = control.locator('svg');
  await expect(icon).toBeVisible();
  await expect(icon).toHaveAttribute('aria-hidden', 'true');
  const drawn = await icon.boundingBox();
  expect(drawn?.width ?? 0).toBeGreaterThanOrEqual(16);
  const box = await control.boundingBox();
  expect(box?.width ?? 0).toBeGreaterThanOrEqual(44);
  expect(box?.height ?? 0).toBeGreaterThanOrEqual(44);
  // Nor any other emoji in the entry being edited.
  await expect(edit).not.toContainText(/\p{Extended_Pictographic}/u);
});

test('notebook: a removed field leaves the focus on the next field, the one before, or Add field', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  const { edit, input, trash } = await editThreeFields(page, station.url, 'Holder E');
  // The next field's input...
  await trash('Second').focus();
  await page.keyboard.press('Enter');
  await expect(input('Second')).toHaveCount(0);
  await expect(input('Third')).toBeFocused();
  // ... or the one before when the last one goes ...
  await trash('Third').focus();
  await page.keyboard.press('Enter');
  await expect(input('Third')).toHaveCount(0);
  await expect(input('First')).toBeFocused();
  // ... or Add field when none is left.
  await trash('First').focus();
  await page.keyboard.press('Enter');
  await expect(input('First')).toHaveCount(0);
  await expect(edit.getByRole('button', { name: 'Add field', exact: true })).toBeFocused();
});

test('notebook: Edit, Cancel and Save by keyboard keep the focus in the entry', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  const entry = await createEntry(page, 'Item', 'Holder F');
  const editButton = entry.getByRole('button', { name: 'Edit' });
  // Edit goes away with the view: the focus goes to the editor's first field.
  await editButton.focus();
  await page.keyboard.press('Enter');
  const editor = page.getByRole('region', { name: 'Editing entry Holder F' });
  await expect(editor.getByLabel('Title', { exact: true })).toBeFocused();
  // Cancel and Save go away with the editor: the focus comes back to Edit.
  await editor.getByRole('button', { name: 'Cancel' }).focus();
  await page.keyboard.press('Enter');
  await expect(editButton).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(editor.getByLabel('Title', { exact: true })).toBeFocused();
  await page.keyboard.press('End');
  await page.keyboard.type(' 2');
  await editor.getByRole('button', { name: 'Save' }).focus();
  await page.keyboard.press('Enter');
  const saved = page.getByRole('region', { name: 'Entry Holder F 2' });
  await expect(saved.getByRole('heading', { name: 'Holder F 2' })).toBeVisible();
  await expect(saved.getByRole('button', { name: 'Edit' })).toBeFocused();
});

test('notebook: renaming or removing a group by keyboard leaves the focus among the groups', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  const entry = await createEntry(page, 'Item template', 'Holder G');
  await entry.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('region', { name: 'Editing entry Holder G' });
  for (const name of ['Sample', 'Measurement', 'Notes']) {
    await edit.getByLabel('New group name').fill(name);
    await edit.getByLabel('New group name').press('Enter');
  }
  // Enter in a group's name renames it; the focus stays in that name.
  await edit.getByLabel('Name of group Sample').fill('Specimen');
  await edit.getByLabel('Name of group Sample').press('Enter');
  await expect(edit.getByLabel('Name of group Specimen')).toBeFocused();
  // A removed group's place goes to the next group, else the one before, else New group name.
  await edit.getByRole('button', { name: 'Remove group Measurement' }).focus();
  await page.keyboard.press('Enter');
  await expect(edit.getByLabel('Name of group Notes')).toBeFocused();
  await edit.getByRole('button', { name: 'Remove group Notes' }).focus();
  await page.keyboard.press('Enter');
  await expect(edit.getByLabel('Name of group Specimen')).toBeFocused();
  await edit.getByRole('button', { name: 'Remove group Specimen' }).focus();
  await page.keyboard.press('Enter');
  await expect(edit.getByLabel('New group name')).toBeFocused();
});

test('notebook search: an added condition takes the focus, a removed one leaves it nearby', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  await page.getByRole('button', { name: 'Search entries' }).click();
  const search = page.getByRole('region', { name: 'Search entries' });
  const add = search.getByRole('button', { name: 'Add metadata condition' });
  const kindOf = (n: number): Locator =>
    search.getByRole('group', { name: `Condition ${n}` }).getByLabel('Condition', { exact: true });
  for (const n of [1, 2, 3]) {
    await add.focus();
    await page.keyboard.press('Enter');
    await expect(kindOf(n)).toBeFocused();
  }
  await search.getByRole('button', { name: 'Remove condition 2' }).focus();
  await page.keyboard.press('Enter');
  await expect(search.getByRole('group', { name: /^Condition/ })).toHaveCount(2);
  // The condition after it, now number 2.
  await expect(kindOf(2)).toBeFocused();
  await search.getByRole('button', { name: 'Remove condition 2' }).focus();
  await page.keyboard.press('Enter');
  await expect(kindOf(1)).toBeFocused();
  await search.getByRole('button', { name: 'Remove condition 1' }).focus();
  await page.keyboard.press('Enter');
  await expect(add).toBeFocused();
});

test('notebook: Close by keyboard leaves the focus on the entry in the list', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  const entry = await createEntry(page, 'Item', 'Holder H');
  await entry.getByRole('button', { name: 'Close' }).focus();
  await page.keyboard.press('Enter');
  await expect(entry).toHaveCount(0);
  const row = page.getByRole('list', { name: 'Entry list' }).getByRole('button', {
    name: /^Holder H/,
  });
  await expect(row).toBeFocused();
  // Enter opens it again from there.
  await page.keyboard.press('Enter');
  await expect(entry.getByRole('heading', { name: 'Holder H' })).toBeVisible();
});

test('notebook: a field added in the builder takes the focus in its input', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  const { edit, input } = await editThreeFields(page, station.url, 'Holder I');
  await edit.getByRole('button', { name: 'Add field', exact: true }).focus();
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'Add field' });
  await expect(dialog.getByLabel('Field name')).toBeFocused();
  await page.keyboard.type('Fourth');
  await page.keyboard.press('Enter');
  await expect(dialog).toBeHidden();
  await expect(input('Fourth')).toBeFocused();
});

test('notebook: Duplicate by keyboard leaves the focus on the copy’s title', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  const entry = await createEntry(page, 'Item', 'Holder J');
  // Disabled until Create is done (its last step, after the entry is shown): a disabled button
  // takes no focus, and Enter would go nowhere.
  const duplicate = entry.getByRole('button', { name: 'Duplicate' });
  await expect(duplicate).toBeEnabled();
  await duplicate.focus();
  await page.keyboard.press('Enter');
  const copy = page.getByRole('region', { name: 'Entry Holder J (copy)' });
  await expect(copy.getByRole('heading', { name: 'Holder J (copy)' })).toBeFocused();
});

test('notebook search: a refused condition’s problem describes its inputs and takes the focus', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  await page.getByRole('button', { name: 'Search entries' }).click();
  const search = page.getByRole('region', { name: 'Search entries' });
  const add = search.getByRole('button', { name: 'Add metadata condition' });
  await add.click();
  await add.click();
  const first = search.getByRole('group', { name: 'Condition 1' });
  await first.getByLabel('Field name').fill('Mass');
  await first.getByLabel('Value').fill('3');
  const second = search.getByRole('group', { name: 'Condition 2' });
  await second.getByLabel('Value').fill('4');
  await search.getByRole('button', { name: 'Search' }).focus();
  await page.keyboard.press('Enter');
  // The problem names the control by the label it shows.
  const named = 'Field name: give the name of a field';
  await expect(second.getByText(named)).toBeVisible();
  await expect(second.getByLabel('Field name')).toBeFocused();
  await expect(second.getByLabel('Field name')).toHaveAccessibleDescription(named);
  await expect(second.getByLabel('Value')).toHaveAccessibleDescription(named);
  await expect(first.getByLabel('Value')).toHaveAccessibleDescription('');
  // Once named, the problem goes with the refusal, and the search runs.
  await second.getByLabel('Field name').fill('Count');
  await search.getByRole('button', { name: 'Search' }).click();
  await expect(search.getByTestId('search-summary')).toBeVisible();
  await expect(second.getByText(named)).toHaveCount(0);
  await expect(second.getByLabel('Field name')).toHaveAccessibleDescription('');
  // A number range the wrong way round: the problem names both bounds by their labels.
  await first.getByLabel('Condition', { exact: true }).selectOption({ label: 'Number between' });
  await first.getByLabel('From (minimum)').fill('5');
  await first.getByLabel('To (maximum)').fill('2');
  await search.getByRole('button', { name: 'Search' }).click();
  const reversed = 'From (minimum) must not be above To (maximum)';
  await expect(first.getByText(reversed)).toBeVisible();
  // The results of the search before are not left under it, to be read as its own.
  await expect(search.getByTestId('search-summary')).toHaveCount(0);
  await expect(first.getByLabel('From (minimum)')).toHaveAccessibleDescription(reversed);
  await expect(first.getByLabel('To (maximum)')).toHaveAccessibleDescription(reversed);
  // A bound that is no number ("2,5" with a decimal comma) is not searched for as another
  // number: the problem names the bound, which keeps what was typed and takes the focus.
  const from = first.getByLabel('From (minimum)');
  await from.clear();
  await from.pressSequentially('2,5');
  await search.getByRole('button', { name: 'Search' }).click();
  const notANumber = 'From (minimum): "2,5" is not a number';
  await expect(first.getByText(notANumber)).toBeVisible();
  await expect(from).toBeFocused();
  await expect(from).toHaveValue('2,5');
  await expect(from).toHaveAccessibleDescription(notANumber);
});

test('notebook: stored metadata that no longer reads is shown as JSON to repair and kept by a save that leaves it', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  await createItem(station.url, 'Old holder', { extra_fields: { Grid: { value: 'G-1' } } });
  // As an older version could have saved it: the core keeps it as it is.
  const stored = (): { title: string; metadata: string } => {
    const db = new Database(join(station.dataDir, 'labstation.db'));
    try {
      db.pragma('busy_timeout = 5000');
      return db
        .prepare("SELECT title, metadata FROM notebook_entries WHERE title LIKE 'Old holder%'")
        .get() as { title: string; metadata: string };
    } finally {
      db.close();
    }
  };
  const db = new Database(join(station.dataDir, 'labstation.db'));
  db.pragma('busy_timeout = 5000');
  db.prepare('UPDATE notebook_entries SET metadata = ? WHERE title = ?').run(
    '{"extra_fields": 5}',
    'Old holder',
  );
  db.close();
  await page
    .getByRole('region', { name: 'Entries' })
    .getByRole('button', { name: /^Old holder/ })
    .click();
  const entry = page.getByRole('region', { name: 'Entry Old holder' });
  await expect(entry.getByTestId('metadata-unreadable')).toContainText('no longer reads');
  await entry.getByRole('button', { name: 'Edit' }).click();
  const editor = page.getByRole('region', { name: 'Editing entry Old holder' });
  // Opened as the JSON stored, not as an empty document (whose save replaced the fields).
  await expect(editor.getByRole('button', { name: 'Code (JSON)' })).toHaveAttribute(
    'aria-pressed',
    'true',
  );
  await expect(editor.getByRole('textbox', { name: 'Metadata JSON' })).toContainText(
    '"extra_fields": 5',
  );
  await editor.getByLabel('Title', { exact: true }).fill('Old holder 2');
  await editor.getByRole('button', { name: 'Save' }).click();
  await expect(
    page.getByRole('region', { name: 'Entry Old holder 2' }).getByRole('heading', {
      name: 'Old holder 2',
    }),
  ).toBeVisible();
  expect(stored()).toEqual({ title: 'Old holder 2', metadata: '{"extra_fields": 5}' });
});

test('notebook: a number is kept as typed; one that is no number is said naming its field and not saved', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  const entry = await itemWithMetadata(page, station.url, 'Probe V', {
    extra_fields: { Voltage: { type: 'number', value: 3 } },
  });
  const storedVoltage = (): unknown => {
    const db = new Database(join(station.dataDir, 'labstation.db'), { readonly: true });
    try {
      const row = db
        .prepare("SELECT metadata FROM notebook_entries WHERE title = 'Probe V'")
        .get() as { metadata: string };
      return (JSON.parse(row.metadata) as { extra_fields: { Voltage: { value: unknown } } })
        .extra_fields.Voltage.value;
    } finally {
      db.close();
    }
  };
  await entry.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('region', { name: 'Editing entry Probe V' });
  const voltage = edit.getByLabel('Voltage', { exact: true });
  const save = edit.getByRole('button', { name: 'Save' });

  // A decimal comma, as a person used to it types it: kept as typed, said, not saved.
  for (const typed of ['2,75', '1e']) {
    await voltage.clear();
    await voltage.pressSequentially(typed);
    await save.click();
    await expect(edit.getByTestId('save-error')).toHaveText(`Voltage: "${typed}" is not a number`);
    await expect(voltage).toBeFocused();
    await expect(voltage).toHaveValue(typed);
    await expect(voltage).toHaveAttribute('aria-invalid', 'true');
    expect(storedVoltage()).toBe(3);
  }

  // Mended, it is saved: as the text typed, as before.
  await voltage.fill('2.75');
  await expect(voltage).not.toHaveAttribute('aria-invalid');
  await save.click();
  const saved = page.getByRole('region', { name: 'Entry Probe V' });
  await expect(saved.getByRole('button', { name: 'Edit' })).toBeVisible();
  await expect(fieldValue(saved, 'Voltage')).toHaveText('2.75');
  expect(storedVoltage()).toBe('2.75');
});

test('notebook: an empty title is said at the Title field, which takes the focus, and not saved', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  const entry = await createEntry(page, 'Item', 'Holder T');
  await entry.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('region', { name: 'Editing entry Holder T' });
  const title = edit.getByLabel('Title', { exact: true });
  await title.fill(' ');
  await edit.getByRole('button', { name: 'Save' }).click();
  await expect(edit.getByText('Title: must not be empty', { exact: true })).toBeVisible();
  await expect(title).toBeFocused();
  await expect(title).toHaveAttribute('aria-invalid', 'true');
  await expect(title).toHaveAccessibleDescription('Title: must not be empty');
  await expect(edit.getByTestId('save-error')).toHaveCount(0);
  // Mended as it is typed, and saved.
  await title.fill('Holder T2');
  await expect(title).not.toHaveAttribute('aria-invalid');
  await edit.getByRole('button', { name: 'Save' }).click();
  await expect(
    page
      .getByRole('region', { name: 'Entry Holder T2' })
      .getByRole('heading', { name: 'Holder T2' }),
  ).toBeVisible();
});

test("notebook: an experiment is offered a link to the usage in progress only when it is its owner's", async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'bob', '2222');
  await enableWith(page, { samples: [{ name: 'B1' }] });
  await logOff(page);
  // Bob's usage: ada's experiment cannot be linked to it, and the button says why.
  await logOn(page, 'ada', '1234');
  await openNotebook(page);
  const entry = await createEntry(page, 'Experiment', 'Ada run');
  const link = entry.getByRole('button', { name: 'Link to the current usage' });
  await expect(link).toBeDisabled();
  await expect(link).toHaveAttribute('title', /^The usage in progress is not ada's/);
  await logOff(page);
  await logOn(page, 'bob', '2222');
  await page.getByLabel('Condition after use').selectOption({ label: 'Good' });
  await page.getByRole('button', { name: 'Disable', exact: true }).click();
  await expect(page.getByTestId('tool-state')).toHaveText('Idle');
  await logOff(page);
  // Her own: linked.
  await logOn(page, 'ada', '1234');
  await enableWith(page, { project: 'Engines (ENG-1)', samples: [{ name: 'A1' }] });
  await openNotebook(page);
  await page.getByRole('region', { name: 'Entries' }).getByText('Ada run').click();
  await expect(link).toBeEnabled();
  await link.click();
  await expect(entry.getByTestId('entry-usage')).toContainText('Linked to the usage of');
});
