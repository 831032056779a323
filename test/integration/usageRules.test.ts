/**
 * The usage a harvested file belongs to: the one on its tool when it was made, not the latest
 * one. Two usages run one after the other while no harvest runs; the files written during the
 * first are harvested after the second, through the real station and `labstation harvest
 * --once`, and are named and described by the first, its answers at its end before those at
 * its start.
 */
import { renameSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importBundle, startStation, type StationProcess } from './helpers.js';
import { filesOf, harvestOnce, setupHarvest } from './harvestSetup.js';

let station: StationProcess | null = null;
afterEach(async () => {
  await station?.stop();
  station = null;
});

interface Usage {
  uuid: string;
  start: string;
  end: string;
}

/**
 * Ada uses the tool with `project` and this title, for a moment, and ends the usage giving
 * the title it ended with (run_data); the usage, ended.
 */
async function useTool(
  st: StationProcess,
  project: string,
  title: string,
  endTitle: string,
): Promise<Usage> {
  const enabled = await st.rpc('toolControl.enable', {
    tool: 'SEM',
    project,
    answers: { experiment_title: title },
  });
  expect(enabled.status, JSON.stringify(enabled.body)).toBe(200);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const disabled = await st.rpc('toolControl.disable', {
    tool: 'SEM',
    answers: { experiment_title: endTitle },
  });
  expect(disabled.status, JSON.stringify(disabled.body)).toBe(200);
  return (disabled.body as { usage: Usage }).usage;
}

/** A harvest of the SEM, whose user Ada has two projects and a title asked at enable. */
function adasHarvest(options: { template: string; hooks?: unknown[] }) {
  return setupHarvest({
    ...options,
    projects: [{ name: 'Cathodes' }, { name: 'Anodes' }],
    users: [
      {
        username: 'ada',
        first_name: 'Ada',
        last_name: 'L',
        pin: '1234',
        projects: ['Cathodes', 'Anodes'],
        qualified_tools: ['SEM'],
      },
    ],
    preUsage: [{ type: 'textbox', name: 'experiment_title', title: 'Title' }],
  });
}

describe('the usage of a harvested file', () => {
  it('is the one it was made during, though another came after: template fields and usage_context', async () => {
    const dirs = await adasHarvest({
      template: '{user}/{project}/{usage_event}/{filename}',
      hooks: [{ name: 'ctx', trigger: 'post_transfer', kind: 'usage_context' }],
    });
    // The same question after the usage: its answer (run_data) is the one the file is given.
    const forms = await importBundle(dirs.data, {
      tools: [
        {
          name: 'SEM',
          pre_usage_questions: [{ type: 'textbox', name: 'experiment_title', title: 'Title' }],
          post_usage_questions: [{ type: 'textbox', name: 'experiment_title', title: 'Title' }],
        },
      ],
    });
    expect(forms.code, forms.stderr).toBe(0);
    station = await startStation(dirs.data);
    expect((await station.rpc('session.logon', { login: 'ada', pin: '1234' })).status).toBe(200);
    const first = await useTool(station, 'Cathodes', 'Grain growth', 'Grain growth at 900 C');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = await useTool(station, 'Anodes', 'Coating', 'Coating, second layer');
    await station.stop();
    station = null;
    const path = join(dirs.src, 'made-first.dat');
    writeFileSync(path, 'acquired during the first usage');
    const during = (Date.parse(first.start) + Date.parse(first.end)) / 2000;
    utimesSync(path, during, during);

    expect((await harvestOnce(dirs.data)).code).toBe(0);
    const [file] = await filesOf(dirs.data);
    expect(file?.usage_event).toBe(first.uuid);
    expect(file?.last_transfer?.destination_path).toBe(
      join(dirs.dest, 'ada', 'Cathodes', first.uuid, 'made-first.dat'),
    );
    expect(file?.metadata_.usage_context).toMatchObject({
      usage_event: first.uuid,
      project: { name: 'Cathodes' },
      experiment_title: 'Grain growth at 900 C',
      pre_run_data: { experiment_title: 'Grain growth' },
    });
    expect(JSON.stringify(file)).not.toContain(second.uuid);
  });

  // Mutation: Intake.consider going by the mtime for every file older than the start, as it
  // did: the file below went to the first usage, hours before (its mtime), not the one on.
  it('is the one on when a file is moved in after the first walk, whatever its old mtime', async () => {
    const dirs = await adasHarvest({ template: '{project}/{filename}' });
    // The first usage before this harvest started (the station ran then, and was restarted).
    station = await startStation(dirs.data);
    expect((await station.rpc('session.logon', { login: 'ada', pin: '1234' })).status).toBe(200);
    const first = await useTool(station, 'Cathodes', 'Grain growth', 'Grain growth');
    await station.stop();
    station = await startStation(dirs.data);
    const st = station;
    expect((await st.rpc('session.logon', { login: 'ada', pin: '1234' })).status).toBe(200);
    const enabled = await st.rpc('toolControl.enable', {
      tool: 'SEM',
      project: 'Anodes',
      answers: { experiment_title: 'Coating' },
    });
    expect(enabled.status, JSON.stringify(enabled.body)).toBe(200);
    const on = (enabled.body as { usage: Usage }).usage;
    // The first walk since the start is over.
    await expect
      .poll(
        async () =>
          ((await st.rpc('harvest.status', {})).body as { last_scan_at: unknown }).last_scan_at,
        { timeout: 15_000 },
      )
      .not.toBeNull();
    // Copied (or moved) in as cp -p, mv or Explorer do: with the mtime it was written at,
    // during the first usage.
    const outside = join(dirs.root, 'moved.dat');
    writeFileSync(outside, 'acquired earlier, copied in now');
    const during = (Date.parse(first.start) + Date.parse(first.end)) / 2000;
    utimesSync(outside, during, during);
    renameSync(outside, join(dirs.src, 'moved.dat'));
    await expect
      .poll(async () => (await filesOf(dirs.data))[0]?.last_transfer?.status, { timeout: 15_000 })
      .toBe('completed');
    const [file] = await filesOf(dirs.data);
    expect(file?.usage_event).toBe(on.uuid);
    expect(file?.last_transfer?.destination_path).toBe(join(dirs.dest, 'Anodes', 'moved.dat'));
  });
});
