import type { Request } from '@playwright/test';
import { expect, test } from './fixtures.js';
import { createItem, facility, logOn } from './facility.js';

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
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let markHeld = (_request: Request): void => undefined;
  const held = new Promise<Request>((resolve) => (markHeld = resolve));
  let holding = true;
  await page.route('**/rpc/notebook.list', async (route) => {
    const args = route.request().postDataJSON() as { kind?: string };
    if (!holding || args.kind !== undefined) return route.continue();
    holding = false;
    const response = await route.fetch();
    markHeld(route.request());
    await released;
    await route.fulfill({ response });
  });

  await createItem(station.url, 'Holder Y');
  const older = await held;
  await createItem(station.url, 'Holder Z');
  await expect(row('Holder Z')).toBeVisible();
  await expect(row('Holder Y')).toBeVisible();

  // The older answer (X and Y) lands now; the page has had it once two frames have passed.
  release();
  const answer = await older.response();
  await answer?.finished();
  await page.evaluate(
    () =>
      new Promise<void>((resolve) =>
        requestAnimationFrame(() => requestAnimationFrame(() => resolve())),
      ),
  );
  // What shows now, read once: waiting would let a later refresh put it right again.
  expect(await row('Holder Z').isVisible()).toBe(true);
  expect(await entries.getByRole('button', { name: /^Holder [XYZ]/ }).count()).toBe(3);
});
