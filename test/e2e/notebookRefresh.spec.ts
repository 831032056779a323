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
