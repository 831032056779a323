import { expect, test } from './fixtures.js';
import { createItem, facility, logOn } from './facility.js';
import { holdNextAnswer } from './heldAnswer.js';

// Each change elsewhere reads the list again; two reads can answer out of order. The list read
// before a change must not replace the one read after it (a CI run saw the newest entry vanish).
test('notebook: a list read before a change does not replace one read after it', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await page.getByRole('tab', { name: 'Notebook' }).click();
  const entries = page.getByRole('region', { name: 'Entries' });
  const row = (title: string) => entries.getByRole('button', { name: new RegExp(`^${title}`) });
  await createItem(station.url, 'Holder X');
  await expect(row('Holder X')).toBeVisible();

  // The next read of the whole list gets its answer at once, but the page gets it only later.
  const older = await holdNextAnswer(
    page,
    '**/rpc/notebook.list',
    (body) => (body as { kind?: string }).kind === undefined,
  );
  await createItem(station.url, 'Holder Y');
  await older.asked;
  await createItem(station.url, 'Holder Z');
  await expect(row('Holder Z')).toBeVisible();
  await expect(row('Holder Y')).toBeVisible();

  // The older answer (X and Y) lands now.
  await older.release();
  // What shows now, read once: waiting would let a later refresh put it right again.
  expect(await row('Holder Z').isVisible()).toBe(true);
  expect(await entries.getByRole('button', { name: /^Holder [XYZ]/ }).count()).toBe(3);
});

// The search results on show are read again when entries change (here or elsewhere): they kept
// listing an entry renamed away from the search, and missed one made that matches it.
test('notebook: the search results on show follow changes to the entries', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await page.getByRole('tab', { name: 'Notebook' }).click();
  await createItem(station.url, 'Alpha one');
  await page.getByRole('button', { name: 'Search entries' }).click();
  const search = page.getByRole('region', { name: 'Search entries' });
  await search.getByLabel('Title contains').fill('alpha');
  await search.getByRole('button', { name: 'Search', exact: true }).click();
  const results = search.getByRole('list', { name: 'Search results' });
  await expect(results.getByRole('button')).toHaveText([/^Alpha one/]);

  await createItem(station.url, 'Alpha two');
  await expect(search.getByTestId('search-summary')).toContainText(/^2 entries found/);
  await expect(results.getByRole('button')).toHaveText([/^Alpha two/, /^Alpha one/]);

  // Renamed in the editor, away from the search: gone from its results.
  await results.getByRole('button', { name: /^Alpha one/ }).click();
  await page
    .getByRole('region', { name: 'Entry Alpha one' })
    .getByRole('button', { name: 'Edit' })
    .click();
  const editor = page.getByRole('region', { name: 'Editing entry Alpha one' });
  await editor.getByLabel('Title').fill('Zeta one');
  await editor.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('region', { name: 'Entry Zeta one' })).toBeVisible();
  await expect(search.getByTestId('search-summary')).toContainText(/^1 entry found/);
  await expect(results.getByRole('button')).toHaveText([/^Alpha two/]);
});
