/**
 * axe-core (the accessibility engine browsers' audit tools use) over each screen of the
 * station and the server as a person reaches it: WCAG 2.1 A and AA and axe's best practices.
 * Every violation is listed with the elements it was found on.
 */
import { createRequire } from 'node:module';
import type { AxeResults, RunOptions } from 'axe-core';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.js';
import { enableWith, facility, logOn } from './facility.js';
import { PEOPLE, test as serverTest } from './serverFixtures.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const RULES: RunOptions = {
  runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
};

/** What axe finds wrong on the page as it is now, one line per rule. */
async function violations(page: Page): Promise<string[]> {
  // The pages' CSP refuses inline scripts; the test's browser context lets axe's in.
  await page.addScriptTag({ path: AXE });
  const results = await page.evaluate(
    (options) =>
      (window as unknown as { axe: { run: (o: RunOptions) => Promise<AxeResults> } }).axe.run(
        options,
      ),
    RULES,
  );
  return results.violations.map(
    (v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join('; ')})`,
  );
}

test.use({ bypassCSP: true });
serverTest.use({ bypassCSP: true });

test('the station’s screens have no accessibility violations', async ({ page, startStation }) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await expect(page.getByRole('heading', { name: 'Log on' })).toBeVisible();
  expect(await violations(page), 'log-on screen').toEqual([]);

  // Log on with nothing typed: the error and the field it is about.
  await page.getByRole('button', { name: 'Log on' }).click();
  await expect(page.getByLabel('Username or badge number')).toBeFocused();
  await expect(page.getByLabel('Username or badge number')).toHaveAttribute('aria-invalid', 'true');
  expect(await violations(page), 'log-on error').toEqual([]);

  await logOn(page, 'ada', '1234');
  expect(await violations(page), 'tool control, idle').toEqual([]);
  // Enable with nothing answered: every problem shown at its field.
  await page.getByRole('button', { name: 'Enable', exact: true }).click();
  await expect(page.getByText('Choose a project.')).toBeVisible();
  expect(await violations(page), 'enable form with problems').toEqual([]);
  await enableWith(page, { project: 'Engines (ENG-1)', samples: [{ name: 'S1' }] });
  expect(await violations(page), 'tool control, in use').toEqual([]);

  for (const tab of ['Usage data history', 'Notebook', 'Data']) {
    await page.getByRole('tab', { name: tab, exact: true }).click();
    await expect(page.getByRole('tabpanel')).toBeVisible();
    expect(await violations(page), tab).toEqual([]);
  }
});

serverTest(
  'the server’s screens have no accessibility violations',
  async ({ page, startServer }) => {
    const setup = await startServer();
    await page.goto(setup.serverUrl);
    await expect(page.getByRole('heading', { name: 'Log in' })).toBeVisible();
    expect(await violations(page), 'log-in screen').toEqual([]);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect(page.getByLabel('E-mail')).toBeFocused();
    expect(await violations(page), 'log-in error').toEqual([]);

    await page.getByLabel('E-mail').fill(PEOPLE.ada.email);
    await page.getByLabel('Password').fill(PEOPLE.ada.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect(page.getByTestId('account-name')).toBeVisible();
    expect(await violations(page), 'my usage').toEqual([]);

    await page.getByRole('link', { name: 'Administration' }).click();
    await expect(page.getByRole('heading', { name: 'Administration' })).toBeVisible();
    expect(await violations(page), 'administration').toEqual([]);
    await page.getByRole('link', { name: 'Tools and forms' }).click();
    await page.getByRole('button', { name: 'Edit SEM' }).click();
    await expect(page.getByRole('region', { name: 'Preview: Post-usage questions' })).toBeVisible();
    expect(await violations(page), 'tool editor').toEqual([]);
  },
);
