/**
 * The server's Experiments page: a usage at the station whose pre-usage answers miss the
 * experiment's title, a reservation of the tool with complete answers, and a file harvested
 * during the usage. Staff see the record built from the reservation's answers, its samples and
 * the file (of an instrument granted to them); the reasons the usage's own answers were passed
 * over are kept in the API.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { goodPreAnswers } from '../fixtures/facility.js';
import { holdNextAnswer } from './heldAnswer.js';
import { expect, PEOPLE, serverWrite, test } from './serverFixtures.js';

// The browser 25 hours ahead of the server's zone (set below): their dates always differ.
test.use({ timezoneId: 'Pacific/Kiritimati' });

test('staff see the experiment record built from the reservation, with its samples and files', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  await setup.stationRpc('session.logon', { login: 'alice', pin: PEOPLE.alice.pin });
  const enabled = await setup.stationRpc('toolControl.enable', {
    tool: 'SEM',
    project: 'Cathodes',
    answers: goodPreAnswers,
  });
  const usageUuid = (enabled.usage as { uuid: string }).uuid;
  const dbFile = join(setup.serverDir, 'labstation.db');
  const usageOnServer = (): { id: number; start: string } | undefined => {
    const db = new Database(dbFile, { readonly: true });
    try {
      return db.prepare('SELECT id, start FROM usage_events WHERE uuid = ?').get(usageUuid) as
        { id: number; start: string } | undefined;
    } finally {
      db.close();
    }
  };
  await expect.poll(() => usageOnServer()?.id, { timeout: 15_000 }).toBeDefined();
  const usage = usageOnServer()!;

  // A reservation of the SEM around the usage, and a file found during it.
  const db = new Database(dbFile);
  try {
    const now = new Date().toISOString();
    const alice = db.prepare("SELECT id FROM users WHERE username = 'alice'").pluck().get();
    const sem = db.prepare("SELECT id FROM tools WHERE name = 'SEM'").pluck().get();
    const start = new Date(Date.parse(usage.start) - 30 * 60_000).toISOString();
    const end = new Date(Date.now() + 60 * 60_000).toISOString();
    db.prepare(
      `INSERT INTO reservations (uuid, user_id, creator_id, tool_id, start, "end", question_data,
         created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      crypto.randomUUID(),
      alice,
      alice,
      sem,
      start,
      end,
      JSON.stringify({
        data_consent: 'Yes',
        experiment_title: 'Grain boundaries in 316L',
        experiment_purpose: 'EDS maps',
        project_id: 'PRJ-1',
        sample_group: [
          { sample_name: 'A1', sample_or_pid: 'Sample Name', sample_elements: ['Fe', 'Cr'] },
          { sample_name: 'ark:99999/fk4q', sample_or_pid: 'PID' },
        ],
      }),
      now,
      now,
    );
    const instrument = db
      .prepare(
        `INSERT INTO instruments (uuid, name, tool_id, destination_template, created_at, updated_at)
         VALUES (?, 'SEM camera', ?, '{relative_path}', ?, ?) RETURNING id`,
      )
      .pluck()
      .get(crypto.randomUUID(), sem, now, now);
    db.prepare(
      `INSERT INTO harvest_files (uuid, instrument_id, persistent_id, watch_path, relative_path,
         source_path, filename, size, mtime_ms, xxhash, first_discovered_at, state, updated_at)
       VALUES (?, ?, 'ark:99999/fk4e2e7x', '/data', 'grain.tif', '/data/grain.tif', 'grain.tif',
         4096, 0, 'abc', ?, 'done', ?)`,
    ).run(crypto.randomUUID(), instrument, new Date().toISOString(), now);
    // Staff read the files of the instruments granted to them, as in /api/files.
    const sam = db.prepare('SELECT id FROM users WHERE email = ?').pluck().get(PEOPLE.sam.email);
    db.prepare(
      `INSERT INTO user_instrument_access (instrument_id, user_id, granted_at) VALUES (?, ?, ?)`,
    ).run(instrument, sam, now);
    db.prepare(
      `INSERT INTO settings (key, value) VALUES ('server.timeZone', '"Pacific/Pago_Pago"')
       ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    ).run();
  } finally {
    db.close();
  }

  await page.goto(setup.serverUrl);
  await page.getByLabel('E-mail').fill(PEOPLE.sam.email);
  await page.getByLabel('Password').fill(PEOPLE.sam.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('link', { name: 'Experiments' }).click();
  const card = page.getByRole('article', { name: `Usage event ${usage.id}` });
  await expect(card.getByRole('heading', { name: 'Grain boundaries in 316L' })).toBeVisible();
  await expect(card.getByText(/the answers of reservation \d+/)).toBeVisible();
  const samples = card.getByRole('table', { name: 'Samples' });
  await expect(samples.getByRole('row')).toHaveCount(3);
  await expect(samples.getByRole('cell', { name: 'Fe, Cr' })).toBeVisible();
  const files = card.getByRole('table', { name: 'Files (1)' });
  await expect(files.getByRole('cell', { name: 'ark:99999/fk4e2e7x' })).toBeVisible();

  // The date filter takes the days of the browser's zone, as the page shows the times.
  const today = await page.evaluate(() => new Date().toLocaleDateString('sv'));
  const filters = page.getByRole('form', { name: 'Filter experiments' });
  await filters.getByLabel('Started from').fill(today);
  await filters.getByLabel('to', { exact: true }).fill(today);
  await filters.getByRole('button', { name: 'Show' }).click();
  await expect(page.getByRole('status').filter({ hasText: /usage event/ })).toHaveText(
    '1 usage event',
  );
  await expect(card).toBeVisible();

  // The tool is chosen by its name (staff do not know the tools' ids), and each card names it.
  await expect(card.getByText(/^Usage event \d+, SEM, /)).toBeVisible();
  const tool = filters.getByLabel('Tool', { exact: true });
  await expect(tool.locator('option')).toHaveText(['All tools', 'AFM', 'SEM']);
  // A read of every tool answers only after the AFM's, asked for after it, has shown: what was
  // asked for last stays on show.
  const everyTool = await holdNextAnswer(page, (url) => url.pathname === '/api/experiments/');
  await filters.getByRole('button', { name: 'Show' }).click();
  await everyTool.asked;
  await tool.selectOption({ label: 'AFM' });
  await filters.getByRole('button', { name: 'Show' }).click();
  const count = page.getByRole('status').filter({ hasText: /usage event/ });
  await expect(count).toHaveText('0 usage events');
  await everyTool.release();
  expect(await count.textContent()).toBe('0 usage events');
  await tool.selectOption({ label: 'SEM' });
  await filters.getByRole('button', { name: 'Show' }).click();
  await expect(page.getByRole('status').filter({ hasText: /usage event/ })).toHaveText(
    '1 usage event',
  );
  await expect(card).toBeVisible();

  // Next pages through the list on show, with the filters it was read with, not with those
  // typed since and not applied (it asked for page 2 of a list of none: "Invalid page.").
  serverWrite(
    setup,
    `INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, start, "end",
       pre_run_data, run_data, updated_at)
     WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
     SELECT lower(hex(randomblob(16))), user_id, operator_id, project_id, tool_id,
       '2020-01-01T09:00:00.000Z', '2020-01-01T10:00:00.000Z', pre_run_data, run_data, updated_at
     FROM usage_events, n WHERE usage_events.id = ?`,
    usage.id,
  );
  await tool.selectOption({ label: 'SEM' });
  await filters.getByLabel('Started from').fill('');
  await filters.getByLabel('to', { exact: true }).fill('');
  await filters.getByRole('button', { name: 'Show' }).click();
  await expect(page.getByRole('status').filter({ hasText: /usage event/ })).toHaveText(
    '21 usage events',
  );
  await filters.getByLabel('Started from').fill('2031-01-01');
  await page.getByRole('button', { name: 'Next' }).click();
  await expect(page.getByRole('article', { name: /^Usage event \d+$/ })).toHaveCount(1);
  await expect(page.getByRole('alert')).toHaveCount(0);

  // Alice is neither staff nor admin: no link, and the page says so.
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByLabel('E-mail').fill(PEOPLE.alice.email);
  await page.getByLabel('Password').fill(PEOPLE.alice.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByTestId('account-name')).toBeVisible();
  await expect(page.getByRole('link', { name: 'Experiments' })).toHaveCount(0);
  await page.goto(`${setup.serverUrl}#/experiments`);
  await expect(page.getByText('Experiment records are for staff.')).toBeVisible();
});
