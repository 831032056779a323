import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.js';
import { enableWith, facility, logOn } from './facility.js';

/** Visible controls smaller than 44 x 44 px (radio and checkbox count by their label). */
async function smallTargets(page: Page): Promise<string[]> {
  return await page.evaluate(() => {
    const selector = [
      'button',
      'select',
      'textarea',
      'input:not([type=radio]):not([type=checkbox])',
      'label.choice',
      '[role=tab]',
    ].join(',');
    const small: string[] = [];
    for (const el of Array.from(document.querySelectorAll<HTMLElement>(selector))) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;
      if (box.width < 44 || box.height < 44) {
        const name = el.getAttribute('aria-label') ?? el.textContent ?? el.id;
        small.push(
          `${el.tagName} "${name.trim()}" ${Math.round(box.width)}x${Math.round(box.height)}`,
        );
      }
    }
    return small;
  });
}

test('every touch target is at least 44 x 44 px at 1024 x 768', async ({ page, startStation }) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await expect(page.getByRole('heading', { name: 'Log on' })).toBeVisible();
  expect(await smallTargets(page)).toEqual([]);

  await logOn(page, 'sam', '9999');
  await page.getByRole('button', { name: 'Keypad for Mass' }).click();
  await expect(page.getByRole('group', { name: 'Keypad for Mass' })).toBeVisible();
  expect(await smallTargets(page)).toEqual([]);
  // Nothing scrolls sideways at the smallest supported size.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1024);

  await page.getByRole('tab', { name: 'Usage data history' }).click();
  await expect(page.getByRole('button', { name: 'Export CSV' })).toBeVisible();
  expect(await smallTargets(page)).toEqual([]);
});

test('the idle rule logs the screen off, and the log-on screen says why', async ({
  page,
  startStation,
}) => {
  const bundle = facility();
  bundle.station.idle_logoff_minutes = 0.02;
  const station = await startStation(bundle);
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  // The core checks the idle rule every 15 s and pushes session.changed over /events.
  await expect(page.getByRole('heading', { name: 'Log on' })).toBeVisible({ timeout: 40_000 });
  await expect(page.getByRole('status').filter({ hasText: 'without activity' })).toContainText(
    'You were logged off after 1 second without activity.',
  );
});

test('a usage the idle rule ends while its person is logged on asks for its post-usage answers at once, keeping what was typed', async ({
  page,
  startStation,
}) => {
  const bundle = facility();
  // 6 s: long enough that the notes are typed into the Disable form before the usage can end,
  // short enough for the core's 15 s idle check to end it within about 20 s.
  bundle.station.idle_force_end_minutes = 0.1;
  const station = await startStation(bundle);
  await page.goto(station.url);
  await logOn(page, 'ada', '1234');
  await enableWith(page, { project: 'Engines (ENG-1)', samples: [{ name: 'S1' }] });
  await page.getByLabel('Notes').fill('typed before the idle rule ended it');
  await expect(page.getByTestId('tool-state')).toHaveText('In use');
  // The core checks the idle rule every 15 s: the usage ends, ada stays logged on (log-off
  // after 10 minutes), and the screen asks for the answers of the usage it ended.
  await expect(page.getByRole('heading', { name: /Post-usage questions pending/ })).toBeVisible({
    timeout: 40_000,
  });
  await expect(page.getByTestId('tool-state')).toHaveText('Idle');
  await expect(page.getByLabel('Notes')).toHaveValue('typed before the idle rule ended it');
});

test('in a half-screen window (640 px) the tabs keep their names whole, none over another', async ({
  page,
  startStation,
}) => {
  // The desktop window is at least 1024 px wide; the browser mode's window may be any width.
  await page.setViewportSize({ width: 640, height: 800 });
  const station = await startStation(facility());
  await page.goto(station.url);
  await logOn(page, 'sam', '9999');
  await expect(page.getByRole('tab', { name: 'Data', exact: true })).toBeVisible();
  const tabs = await page.getByRole('tab').evaluateAll((elements) =>
    elements.map((el) => {
      const box = el.getBoundingClientRect();
      return {
        name: el.textContent ?? '',
        left: box.left,
        right: box.right,
        top: box.top,
        whole: el.scrollWidth <= el.clientWidth,
      };
    }),
  );
  expect(tabs.filter((t) => !t.whole).map((t) => t.name)).toEqual([]);
  const overlapping = tabs.flatMap((a, i) =>
    tabs
      .slice(i + 1)
      .filter((b) => a.top === b.top && a.right > b.left && b.right > a.left)
      .map((b) => `${a.name} / ${b.name}`),
  );
  expect(overlapping).toEqual([]);
  expect(Math.max(...tabs.map((t) => t.right))).toBeLessThanOrEqual(640);
});
