import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.js';
import { facility, enableWith, logOff, logOn } from './facility.js';

async function useAndEnd(page: Page, login: string, pin: string, samples: string[]): Promise<void> {
  await logOn(page, login, pin);
  await enableWith(page, {
    project: login === 'ada' ? 'Engines (ENG-1)' : undefined,
    samples: samples.map((name, i) => ({ name, mass: String(i + 1) })),
  });
  await page.getByLabel('Condition after use').selectOption({ label: 'Good' });
  await page.getByRole('button', { name: 'Disable', exact: true }).click();
  await expect(page.getByTestId('tool-state')).toHaveText('Idle');
  await logOff(page);
}

function localDate(offsetDays: number): string {
  const d = new Date();
  d.setDate(d.getDate() + offsetDays);
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

test('history: one row per group repetition, filters, CSV export, staff validation', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await useAndEnd(page, 'ada', '1234', ['A1', 'A2', 'A3']);
  await useAndEnd(page, 'bob', '2222', ['B1']);

  await logOn(page, 'sam', '9999');
  await page.getByRole('tab', { name: 'Usage data history' }).click();
  const table = page.getByRole('region', { name: 'History table' });
  const bodyRows = table.locator('tbody tr');
  await expect(page.getByText('2 usage events, 4 rows')).toBeVisible();
  await expect(bodyRows).toHaveCount(4);
  await expect(
    table.getByRole('columnheader', { name: 'pre:sample_group.sample_name' }),
  ).toBeVisible();
  for (const name of ['A1', 'A2', 'A3', 'B1']) {
    await expect(table.getByRole('cell', { name, exact: true })).toBeVisible();
  }

  // Filter by user. Typed and not applied, it says so, and nothing is exported of it: the table
  // is still everyone's. Shown again, the tab keeps what is typed, still not applied.
  const notApplied = page.getByText('The filters above are not applied yet');
  const exportCsv = page.getByRole('button', { name: 'Export CSV' });
  await page.getByLabel('User', { exact: true }).fill('ada');
  await expect(notApplied).toBeVisible();
  await expect(exportCsv).toBeDisabled();
  await page.getByRole('tab', { name: 'Notebook' }).click();
  await page.getByRole('tab', { name: 'Usage data history' }).click();
  await expect(page.getByLabel('User', { exact: true })).toHaveValue('ada');
  await expect(notApplied).toBeVisible();
  await expect(page.getByText('2 usage events, 4 rows')).toBeVisible();
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page.getByText('1 usage event, 3 rows')).toBeVisible();
  await expect(bodyRows).toHaveCount(3);
  await expect(notApplied).toHaveCount(0);

  // CSV of what is shown.
  const downloading = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export CSV' }).click();
  const download = await downloading;
  // Named by the day where the station is, as its table shows days.
  expect(download.suggestedFilename()).toBe(`usage-history-SEM_Quanta-${localDate(0)}.csv`);
  const csv = (await readFile(await download.path(), 'utf8')).replace(/^\uFEFF/, '');
  const lines = csv.split('\r\n');
  expect(lines.at(-1)).toBe('');
  expect(lines[0]).toBe(
    'event id,user,operator,project,start,end,remote work,validated,pre:experiment_title,' +
      'pre:sample_code,pre:data_consent,pre:sample_group.sample_name,pre:sample_group.sample_mass,' +
      'pre:total_mass,post:condition,post:cleaned,post:notes,post:problem',
  );
  const records = lines.slice(1, -1).map((line) => line.split(','));
  expect(records.map((r) => [r[1], r[3], r[11], r[12], r[14]])).toEqual([
    ['Ada Lovelace', 'Engines', 'A1', '1', 'good'],
    ['Ada Lovelace', 'Engines', 'A2', '2', 'good'],
    ['Ada Lovelace', 'Engines', 'A3', '3', 'good'],
  ]);
  expect(new Set(records.map((r) => r[13]))).toEqual(new Set(['6']));

  // A date range without usage, then today again.
  await page.getByLabel('User', { exact: true }).fill('');
  await page.getByLabel('From', { exact: true }).fill(localDate(-3));
  await page.getByLabel('To', { exact: true }).fill(localDate(-2));
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page.getByText('0 usage events, 0 rows')).toBeVisible();
  await page.getByLabel('To', { exact: true }).fill(localDate(0));
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page.getByText('2 usage events, 4 rows')).toBeVisible();
  // A filter refused empties the table: nothing on screen or in a CSV claims to match it.
  await page.getByLabel('User', { exact: true }).fill('zzz');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page.getByText('user "zzz" does not exist')).toBeVisible();
  await expect(page.getByText('0 usage events, 0 rows')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Export CSV' })).toBeDisabled();
  await page.getByLabel('User', { exact: true }).fill('');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page.getByText('2 usage events, 4 rows')).toBeVisible();
  // A range the wrong way round is said at To, on the page, which takes the focus; the table
  // no longer shows (nor exports) rows that the range did not filter.
  const from = page.getByLabel('From', { exact: true });
  const to = page.getByLabel('To', { exact: true });
  await from.fill(localDate(0));
  await to.fill(localDate(-1));
  await page.getByRole('button', { name: 'Apply filters' }).click();
  const reversed = 'To: must not be before From';
  await expect(page.getByText(reversed)).toBeVisible();
  await expect(to).toBeFocused();
  await expect(to).toHaveAttribute('aria-invalid', 'true');
  await expect(to).toHaveAccessibleDescription(reversed);
  await expect(page.getByText('0 usage events, 0 rows')).toBeVisible();
  await expect(bodyRows).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Export CSV' })).toBeDisabled();
  await to.fill(localDate(0));
  await expect(page.getByText(reversed)).toHaveCount(0);
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page.getByText('2 usage events, 4 rows')).toBeVisible();
  // A date typed in part is not taken for no bound.
  await from.fill('');
  await from.pressSequentially('12');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page.getByText('From: give the whole date')).toBeVisible();
  await expect(from).toBeFocused();
  await expect(page.getByText('0 usage events, 0 rows')).toBeVisible();
  await from.fill(localDate(0));
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page.getByText('2 usage events, 4 rows')).toBeVisible();

  // Staff validate an event.
  await page.getByRole('button', { name: 'Validate usage event 1' }).click();
  await expect(table.getByText('Validated by')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Validate usage event 1' })).toHaveCount(0);
});

test('history: a person who is not staff sees and exports only their own usage', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility());
  await page.goto(station.url);
  await useAndEnd(page, 'ada', '1234', ['A1', 'A2', 'A3']);
  await useAndEnd(page, 'bob', '2222', ['B1']);

  await logOn(page, 'ada', '1234');
  await page.getByRole('tab', { name: 'Usage data history' }).click();
  const table = page.getByRole('region', { name: 'History table' });
  await expect(page.getByText('1 usage event, 3 rows')).toBeVisible();
  await expect(table.locator('tbody tr')).toHaveCount(3);
  await expect(table.getByRole('cell', { name: 'B1', exact: true })).toHaveCount(0);
  await expect(table.getByRole('cell', { name: 'Bob Babbage', exact: true })).toHaveCount(0);
  // No one else to pick: the form says whose usage it is.
  await expect(page.getByLabel('User', { exact: true })).toHaveCount(0);
  await expect(page.getByText("Your own usage; staff see everyone's.")).toBeVisible();
  // Dates still filter her own usage.
  await page.getByLabel('From', { exact: true }).fill(localDate(-3));
  await page.getByLabel('To', { exact: true }).fill(localDate(-2));
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page.getByText('0 usage events, 0 rows')).toBeVisible();
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await expect(page.getByText('1 usage event, 3 rows')).toBeVisible();

  // The CSV export holds what she may see, her own rows only.
  const downloading = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export CSV' }).click();
  const csv = (await readFile(await (await downloading).path(), 'utf8')).replace(/^\uFEFF/, '');
  const records = csv
    .split('\r\n')
    .slice(1, -1)
    .map((line) => line.split(','));
  expect(records.map((r) => [r[1], r[11]])).toEqual([
    ['Ada Lovelace', 'A1'],
    ['Ada Lovelace', 'A2'],
    ['Ada Lovelace', 'A3'],
  ]);
  await logOff(page);

  // The next person who is not staff sees theirs, nothing of hers.
  await logOn(page, 'bob', '2222');
  await page.getByRole('tab', { name: 'Usage data history' }).click();
  await expect(page.getByText('1 usage event, 1 row')).toBeVisible();
  await expect(table.getByRole('cell', { name: 'B1', exact: true })).toBeVisible();
  await expect(table.getByRole('cell', { name: 'A1', exact: true })).toHaveCount(0);
});

test('history: a long history is drawn 500 rows at a time; the CSV export has them all', async ({
  page,
  startStation,
}) => {
  const station = await startStation(facility(), (dataDir) => {
    // 1,200 ended usages of ada's, a day apart, written as a station records them.
    const db = new Database(join(dataDir, 'labstation.db'));
    db.prepare(
      `INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, start, "end",
         pre_run_data, updated_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1200)
       SELECT lower(hex(randomblob(16))), u.id, u.id, p.id, t.id,
         strftime('%Y-%m-%dT09:00:00.000Z', '2020-01-01', '+' || i || ' days'),
         strftime('%Y-%m-%dT10:00:00.000Z', '2020-01-01', '+' || i || ' days'),
         json_object('experiment_title', 'run ' || i), '2024-01-01T00:00:00.000Z'
       FROM n, users u, projects p, tools t
       WHERE u.username = 'ada' AND p.name = 'Engines'`,
    ).run();
    db.close();
  });
  await page.goto(station.url);
  await logOn(page, 'sam', '9999');
  await page.getByRole('tab', { name: 'Usage data history' }).click();
  await page.getByLabel('From', { exact: true }).fill('2020-01-01');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page.getByText('1200 usage events, 1200 rows')).toBeVisible();
  const bodyRows = page.getByRole('region', { name: 'History table' }).locator('tbody tr');
  // Every row was drawn at once: tens of thousands froze the screen for most of a minute.
  await expect(bodyRows).toHaveCount(500);
  await expect(
    page.getByText('Showing 500 of 1200 rows; the CSV export has them all.'),
  ).toBeVisible();
  await page.getByRole('button', { name: 'Show more' }).click();
  await expect(bodyRows).toHaveCount(1000);
  await page.getByRole('button', { name: 'Show more' }).click();
  await expect(bodyRows).toHaveCount(1200);
  await expect(page.getByRole('button', { name: 'Show more' })).toHaveCount(0);
  const downloading = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export CSV' }).click();
  const csv = await readFile(await (await downloading).path(), 'utf8');
  expect(csv.split('\r\n').length).toBe(1200 + 2);
});
