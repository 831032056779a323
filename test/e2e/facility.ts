import type { Page } from '@playwright/test';
import { expect } from '@playwright/test';
import type { FacilityBundle } from './fixtures.js';

export const TOOL = 'SEM Quanta';

/** Pre-usage questions: a pattern, a required radio, a repeatable group and a formula over it. */
export const PRE_QUESTIONS = [
  {
    type: 'textbox',
    name: 'experiment_title',
    title: 'Experiment title',
    required: true,
    maxlength: 80,
  },
  {
    type: 'textbox',
    name: 'sample_code',
    title: 'Sample code',
    pattern: '[A-Z]{2}-[0-9]{3}',
    placeholder: 'AB-123',
    help: 'Two capital letters, a dash, three digits.',
  },
  {
    type: 'radio',
    name: 'data_consent',
    title: 'Data consent',
    required: true,
    choices: ['Agree', 'Disagree'],
    inline: true,
  },
  {
    type: 'group',
    name: 'sample_group',
    title: 'Sample',
    max_number: 3,
    questions: [
      { type: 'textbox', name: 'sample_name', title: 'Sample name', required: true },
      {
        type: 'number_float',
        name: 'sample_mass',
        title: 'Mass',
        precision: 2,
        min: 0,
        suffix: 'mg',
      },
    ],
  },
  {
    type: 'formula',
    name: 'total_mass',
    title: 'Total mass',
    formula: 'sum(sample_mass)',
    precision: 2,
    suffix: 'mg',
  },
];

export const POST_QUESTIONS = [
  {
    type: 'dropdown',
    name: 'condition',
    title: 'Condition after use',
    required: true,
    choices: ['good', 'needs_service'],
    labels: ['Good', 'Needs service'],
  },
  {
    type: 'checkbox',
    name: 'cleaned',
    title: 'Cleaned',
    choices: ['stage', 'holder'],
    labels: ['Stage', 'Sample holder'],
    inline: true,
  },
  {
    type: 'textarea',
    name: 'notes',
    title_html: 'Notes <em>for staff</em><img src=x onerror="document.title=1">',
    rows: 3,
  },
  {
    type: 'radio_report_problem',
    name: 'problem',
    title: 'Did anything go wrong?',
    options: { problem_description: 'Stage vibration', force_shutdown: true },
  },
];

export function facility(): FacilityBundle {
  return {
    users: [
      {
        username: 'ada',
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: 'ada@example.org',
        badge_number: '100234',
        pin: '1234',
        projects: ['Engines', 'Looms'],
        qualified_tools: [TOOL],
      },
      {
        username: 'bob',
        first_name: 'Bob',
        last_name: 'Babbage',
        email: 'bob@example.org',
        badge_number: '100777',
        pin: '2222',
        projects: ['Engines'],
        qualified_tools: [TOOL],
      },
      {
        username: 'sam',
        first_name: 'Sam',
        last_name: 'Staff',
        email: 'sam@example.org',
        pin: '9999',
        is_staff: true,
        projects: ['Facility'],
      },
    ],
    projects: [
      { name: 'Engines', application_identifier: 'ENG-1', active: true },
      { name: 'Looms', application_identifier: 'LOO-2', active: true },
      { name: 'Facility', application_identifier: 'FAC-0', active: true },
    ],
    tools: [
      { name: TOOL, pre_usage_questions: PRE_QUESTIONS, post_usage_questions: POST_QUESTIONS },
    ],
    station: { tool: TOOL },
  };
}

export async function logOn(page: Page, login: string, pin: string): Promise<void> {
  await page.getByLabel('Username or badge number').fill(login);
  await page.getByLabel('PIN', { exact: true }).fill(pin);
  await page.getByRole('button', { name: 'Log on' }).click();
  await expect(page.getByRole('button', { name: 'Log off' })).toBeVisible();
}

export async function logOff(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Log off' }).click();
  await expect(page.getByRole('heading', { name: 'Log on' })).toBeVisible();
}

/** Fills the pre-usage form with one or more samples and enables the tool. */
export async function enableWith(
  page: Page,
  options: { project?: string; samples: { name: string; mass?: string }[]; title?: string },
): Promise<void> {
  await fillPreUsage(page, options);
  await page.getByRole('button', { name: 'Enable', exact: true }).click();
  await expect(page.getByTestId('tool-state')).toHaveText('In use');
}

/** Fills the pre-usage form with one or more samples (title, consent Agree), sending nothing. */
export async function fillPreUsage(
  page: Page,
  options: { project?: string; samples: { name: string; mass?: string }[]; title?: string },
): Promise<void> {
  if (options.project) await page.getByLabel('Project').selectOption({ label: options.project });
  await page.getByLabel('Experiment title').fill(options.title ?? 'Grain boundaries');
  await page
    .getByRole('radiogroup', { name: 'Data consent' })
    .getByLabel('Agree', { exact: true })
    .check();
  for (const [i, sample] of options.samples.entries()) {
    if (i > 0) await page.getByRole('button', { name: 'Add another Sample' }).click();
    const repetition = page.getByRole('group', { name: `Sample ${i + 1}`, exact: true });
    await repetition.getByLabel('Sample name').fill(sample.name);
    if (sample.mass !== undefined)
      await repetition.getByLabel('Mass', { exact: true }).fill(sample.mass);
  }
}

/**
 * A call of the station's contract with the token in its page's `url`, as the signed-in page
 * makes it; answered 200, its body returned.
 */
export async function callStation(url: string, name: string, body: unknown): Promise<unknown> {
  const token = /#token=([^&]+)/.exec(url)?.[1] ?? '';
  const res = await fetch(new URL(`/rpc/${name}`, url), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return res.json();
}

/** Makes a notebook item through the station's contract, as another screen or program would. */
export async function createItem(url: string, title: string, metadata?: unknown): Promise<void> {
  await callStation(url, 'notebook.create', { kind: 'item', title, metadata });
}
