import {
  aliceEnablesSem,
  expect,
  logIn,
  PEOPLE,
  serverRow,
  serverWrite,
  test,
  type ServerSetup,
} from './serverFixtures.js';

interface Validation {
  validated: number;
  validated_by: string | null;
  validation_acked: number;
}

function serverValidation(setup: ServerSetup, uuid: string): Validation | undefined {
  return serverRow<Validation>(
    setup,
    `SELECT e.validated, v.username AS validated_by, e.validation_acked FROM usage_events e
     LEFT JOIN users v ON v.id = e.validated_by_id WHERE e.uuid = ?`,
    uuid,
  );
}

/** Alice uses the SEM at the station and ends it; the server has the event ended. */
async function endedUsage(setup: ServerSetup): Promise<string> {
  const uuid = await aliceEnablesSem(setup);
  await setup.stationRpc('toolControl.disable', { tool: 'SEM', answers: { problem: 'No' } });
  await setup.stationRpc('session.logoff', {});
  await expect.poll(() => serverValidation(setup, uuid)?.validated, { timeout: 15_000 }).toBe(0);
  return uuid;
}

test('staff validate another person’s ended usage on the server page; the station takes it', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  const uuid = await endedUsage(setup);

  // Alice sees her usage, done, and nothing to validate.
  await logIn(page, setup, PEOPLE.alice);
  const mine = page.getByRole('region', { name: 'My recent usage' });
  await expect(mine.getByRole('cell', { name: 'Done' })).toBeVisible();
  await expect(page.getByRole('button', { name: /^Validate/ })).toHaveCount(0);
  await expect(page.getByRole('region', { name: 'Recent usage of the facility' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Log out' }).click();

  // Sam (staff) sees everyone's recent usage, and validates Alice's.
  await logIn(page, setup, PEOPLE.sam);
  const facility = page.getByRole('region', { name: 'Recent usage of the facility' });
  const row = facility.getByRole('row', { name: /Alice Martin/ });
  await expect(row.getByRole('cell', { name: 'Done' })).toBeVisible();
  // Only those left to validate: Alice's is one.
  const toValidate = facility.getByRole('checkbox', { name: 'Only those left to validate' });
  await toValidate.check();
  await expect(row.getByRole('cell', { name: 'Done' })).toBeVisible();
  // Narrowed to a tool: nothing of the AFM's; the SEM's has it.
  const tool = facility.getByLabel('Tool');
  await tool.selectOption({ label: 'AFM' });
  await expect(facility.getByText('Nothing of AFM is left to validate.')).toBeVisible();
  await expect(facility.getByRole('row', { name: /Alice Martin/ })).toHaveCount(0);
  await tool.selectOption({ label: 'SEM' });
  await expect(row.getByRole('cell', { name: 'Done' })).toBeVisible();
  await tool.selectOption({ label: 'All tools' });
  await expect(row.getByRole('cell', { name: 'Done' })).toBeVisible();
  // On a narrow window the label stays whole, above its list (it was squeezed to "Too" / "l"),
  // and the two lists do not touch.
  await page.setViewportSize({ width: 420, height: 800 });
  const label = facility.locator('label', { hasText: 'Tool' });
  const [labelBox, toolBox] = [await label.boundingBox(), await tool.boundingBox()];
  expect(labelBox!.y + labelBox!.height).toBeLessThanOrEqual(toolBox!.y);
  expect(labelBox!.height).toBeLessThan(toolBox!.height);
  const myBox = await mine.boundingBox();
  expect((await facility.boundingBox())!.y).toBeGreaterThan(myBox!.y + myBox!.height);
  await page.setViewportSize({ width: 1280, height: 800 });
  await row.getByRole('button', { name: /^Validate the usage of SEM/ }).click();
  await expect(row.getByRole('cell', { name: 'Validated by sam' })).toBeVisible();
  await expect(row.getByRole('button', { name: /^Validate/ })).toHaveCount(0);
  // Read again, nothing is left to validate; everyone's usage still has it.
  await toValidate.uncheck();
  await toValidate.check();
  await expect(facility.getByText('Nothing is left to validate.')).toBeVisible();
  await expect(facility.getByRole('row', { name: /Alice Martin/ })).toHaveCount(0);
  await toValidate.uncheck();
  await expect(row.getByRole('cell', { name: 'Validated by sam' })).toBeVisible();

  // The station takes it and pushes it back: the server stops sending it, and keeps who.
  await expect
    .poll(() => serverValidation(setup, uuid), { timeout: 15_000 })
    .toEqual({ validated: 1, validated_by: 'sam', validation_acked: 1 });
  await page.reload();
  await expect(
    facility.getByRole('row', { name: /Alice Martin/ }).getByRole('cell', {
      name: 'Validated by sam',
    }),
  ).toBeVisible();
});

test('staff page further back through the facility’s usage with Older usage', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  const uuid = await endedUsage(setup);
  // 59 more ended usages of Alice's, an hour apart before hers: 60 in all, more than a page (50).
  expect(
    serverWrite(
      setup,
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 59)
       INSERT INTO usage_events (uuid, user_id, operator_id, project_id, tool_id, start, "end",
         pre_run_data, run_data, updated_at)
       SELECT printf('01900000-0000-7000-8000-%012d', i), user_id, operator_id, project_id,
         tool_id, strftime('%Y-%m-%dT%H:%M:%fZ', start, printf('-%d hours', i)),
         strftime('%Y-%m-%dT%H:%M:%fZ', start, printf('-%d hours', i), '+30 minutes'),
         pre_run_data, run_data, updated_at
       FROM usage_events, n WHERE uuid = ?`,
      uuid,
    ),
  ).toBe(59);

  await logIn(page, setup, PEOPLE.sam);
  const facility = page.getByRole('region', { name: 'Recent usage of the facility' });
  const rows = facility.getByRole('row', { name: /Alice Martin/ });
  await expect(rows).toHaveCount(50);
  const older = facility.getByRole('button', { name: 'Older usage' });
  // By keyboard: the last page comes, the button goes, and the focus stays with the list.
  await older.focus();
  await page.keyboard.press('Enter');
  await expect(rows).toHaveCount(60);
  await expect(older).toHaveCount(0);
  await expect(
    facility.getByRole('heading', { name: 'Recent usage of the facility' }),
  ).toBeFocused();
  // Another choice reads the first page again.
  await facility.getByRole('checkbox', { name: 'Only those left to validate' }).check();
  await expect(rows).toHaveCount(50);
  await expect(older).toBeVisible();
});

test('staff read the answers a station gave to a form answered on the server first', async ({
  page,
  startServer,
}) => {
  const setup = await startServer();
  const uuid = await endedUsage(setup);
  // As the server keeps them (sync.test.ts: a pending form answered on both sides).
  serverWrite(
    setup,
    'UPDATE usage_events SET station_answers_not_kept = ? WHERE uuid = ?',
    JSON.stringify({ problem: 'Yes', notes: 'sample 7 cracked', ln2: 3 }),
    uuid,
  );
  await logIn(page, setup, PEOPLE.sam);
  const facility = page.getByRole('region', { name: 'Recent usage of the facility' });
  const row = facility.getByRole('row', { name: /Alice Martin/ });
  const notKept = row.getByText('Answers given at the station too, not kept');
  await expect(notKept).toBeVisible();
  await notKept.click();
  await expect(row.getByRole('listitem')).toHaveText([
    'problem: Yes',
    'notes: sample 7 cracked',
    'ln2: 3',
  ]);
});
