/**
 * The desktop window's page as app://labstation serves it (electron/core/desktop/appScheme.ts),
 * run by Chromium. Electron cannot run here, and a plain Chromium has no app:// scheme, so the
 * page is opened at https://labstation.test/ and each of its requests is answered by
 * serveAppRequest for the same path of app://labstation/: its Content-Types, CSP header and
 * nosniff are what Chromium gets. Calls to the core (over IPC in Electron) go, as in browser
 * mode, to a real station.
 */
import { fileURLToPath } from 'node:url';
import type { Page } from '@playwright/test';
import { APP_ORIGIN, serveAppRequest } from '../../electron/core/desktop/appScheme.js';
import { expect, test } from './fixtures.js';
import { facility, logOn, TOOL } from './facility.js';

const RENDERER_DIR = fileURLToPath(new URL('../../dist/renderer', import.meta.url));
const PAGE_ORIGIN = 'https://labstation.test';
const CORE_PATH = /^\/(rpc\/|health$)/;

async function serveAsAppScheme(page: Page, stationUrl: string): Promise<void> {
  const station = new URL(stationUrl).origin;
  await page.route(`${PAGE_ORIGIN}/**`, async (route) => {
    const request = route.request();
    const url = new URL(request.url());
    if (CORE_PATH.test(url.pathname)) {
      const headers = { ...request.headers() };
      delete headers.host;
      delete headers.origin;
      const response = await route.fetch({ url: `${station}${url.pathname}`, headers });
      return await route.fulfill({ response });
    }
    // The event stream never ends (route.fetch would wait for it): refused; the page retries.
    if (url.pathname === '/events') return await route.fulfill({ status: 503 });
    const response = await serveAppRequest(
      { url: `${APP_ORIGIN}${url.pathname}${url.search}`, method: request.method() },
      RENDERER_DIR,
    );
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => (headers[name] = value));
    await route.fulfill({
      status: response.status,
      headers,
      body: Buffer.from(await response.arrayBuffer()),
    });
  });
}

test('the page runs as app://labstation serves it: its scripts, styles and the code editor load under its CSP', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await serveAsAppScheme(page, station.url);
  const refused: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|MIME type|Refused to/i.test(message.text())) {
      refused.push(message.text());
    }
  });
  page.on('pageerror', (error) => refused.push(error.message));

  const token = new URL(station.url).hash;
  const answer = await page.goto(`${PAGE_ORIGIN}/index.html${token}`);
  expect(answer?.headers()['content-security-policy']).toContain("default-src 'self'");
  expect(answer?.headers()['x-content-type-options']).toBe('nosniff');
  await expect(page.getByRole('heading', { name: TOOL })).toBeVisible();
  await expect(page.getByTestId('tool-state')).toHaveText('Idle');

  // The notebook's code editor is a chunk loaded on demand, relative to the script.
  await logOn(page, 'ada', '1234');
  await page.getByRole('tab', { name: 'Notebook' }).click();
  const form = page.getByRole('form', { name: 'New entry' });
  await form.getByLabel('Title').fill('Scheme check');
  await form.getByRole('button', { name: 'Create' }).click();
  const entry = page.getByRole('region', { name: 'Entry Scheme check' });
  await entry.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('region', { name: 'Editing entry Scheme check' });
  await edit.getByRole('button', { name: 'Code (JSON)' }).click();
  await expect(page.locator('.cm-editor')).toHaveCSS('display', 'flex');

  // The page's own request for a file out of the build gets a 404, never the file.
  const escape = await page.evaluate(async () => {
    const response = await fetch('/..%2f..%2fpackage.json');
    return { status: response.status, text: await response.text() };
  });
  expect(escape).toEqual({ status: 404, text: 'Not found\n' });
  expect(refused).toEqual([]);
});
