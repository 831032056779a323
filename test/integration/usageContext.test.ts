/**
 * The experiment fields of the `usage_context` hook (harvest/usageContext.ts), read from a usage
 * event's answers in a real database: run_data first, then pre_run_data, an answer left empty
 * in the first falling back to the second, and answers declining consent passed over, as the
 * experiment record reads them.
 */
import { expect, it } from 'vitest';
import { openDatabase, type Db } from '../../electron/core/db/open.js';
import { finishTransfer } from '../../electron/core/harvest/records.js';
import { usageContextOf } from '../../electron/core/harvest/usageContext.js';
import { refreshUsageContexts } from '../../electron/core/harvest/usageContextRefresh.js';
import { METADATA_MAX_BYTES } from '../../electron/core/harvest/metadataLimit.js';
import { initialAnswers, normalizeAnswers, parseQuestions } from '../../shared/questions/index.js';

function usageWith(preRunData: string, runData: string): ReturnType<typeof usageContextOf> {
  const db = openDatabase(':memory:');
  try {
    const at = '2026-01-01T00:00:00.000Z';
    db.prepare(
      `INSERT INTO users (id, uuid, username, email, first_name, last_name, created_at, updated_at)
       VALUES (1, 'u-1', 'ada', 'ada@example.org', 'Ada', 'Lovelace', ?, ?)`,
    ).run(at, at);
    db.prepare(
      `INSERT INTO projects (id, uuid, name, application_identifier, created_at, updated_at)
       VALUES (1, 'p-1', 'Cathodes', 'PRJ-7', ?, ?)`,
    ).run(at, at);
    db.prepare(
      "INSERT INTO tools (id, uuid, name, created_at, updated_at) VALUES (1, 't-1', 'SEM', ?, ?)",
    ).run(at, at);
    db.prepare(
      `INSERT INTO usage_events (id, uuid, user_id, operator_id, project_id, tool_id, start,
         "end", pre_run_data, run_data, updated_at)
       VALUES (1, 'e-1', 1, 1, 1, 1, ?, ?, ?, ?, ?)`,
    ).run(at, at, preRunData, runData, at);
    return usageContextOf(db, 1);
  } finally {
    db.close();
  }
}

it('samples left empty after the run fall back to those given before it, as the title does', () => {
  const before = JSON.stringify({
    experiment_title: 'Grain growth',
    sample_group: [{ sample_name: 'S1', sample_elements: 'Fe, Ni' }],
  });
  const context = usageWith(before, JSON.stringify({ experiment_title: '', sample_group: [] }));
  expect(context).toMatchObject({
    experiment_title: 'Grain growth',
    samples: [
      { sample_name: 'S1', sample_or_pid: '', sample_details: '', sample_elements: ['Fe', 'Ni'] },
    ],
  });
  // A post-usage form that asks for the group too, left as it came: one repetition holding
  // only its defaults, as the form sends it.
  const post = parseQuestions([
    {
      type: 'group',
      name: 'sample_group',
      max_number: 10,
      questions: [
        { type: 'textbox', name: 'sample_name', title: 'Sample' },
        {
          type: 'radio',
          name: 'sample_or_pid',
          choices: ['Sample Name', 'PID'],
          default_value: 'Sample Name',
        },
        { type: 'checkbox', name: 'sample_elements', choices: ['C', 'O'] },
      ],
    },
  ]);
  if (!post.ok) throw new Error(JSON.stringify(post.problems));
  const untouched = JSON.stringify(
    normalizeAnswers(post.questions, initialAnswers(post.questions)),
  );
  expect(JSON.parse(untouched)).toMatchObject({ sample_group: [{ sample_or_pid: 'Sample Name' }] });
  expect(usageWith(before, untouched)?.samples).toEqual([
    { sample_name: 'S1', sample_or_pid: '', sample_details: '', sample_elements: ['Fe', 'Ni'] },
  ]);
  // Samples given after the run are the ones that count.
  const after = usageWith(
    before,
    JSON.stringify({ sample_group: [{ sample_name: 'S2', sample_or_pid: 'PID' }] }),
  );
  expect(after?.samples).toEqual([
    { sample_name: 'S2', sample_or_pid: 'PID', sample_details: '', sample_elements: [] },
  ]);
  // None anywhere: an empty list, as asked.
  expect(usageWith('{"sample_group": []}', '{}')?.samples).toEqual([]);
});

it('takes no experiment field from answers that decline consent, as the experiment record does', () => {
  // Rule 4 of spec 000: declined consent in one source falls back to the next. The hook took
  // the title and samples of the post-usage answers that declined, and of a usage whose every
  // answer declined, which has no experiment record at all.
  const before = JSON.stringify({
    data_consent: 'Agree',
    experiment_title: 'Grain growth',
    sample_group: [{ sample_name: 'S1' }],
  });
  const declined = JSON.stringify({
    data_consent: 'Disagree',
    experiment_title: 'Not to be harvested',
    sample_group: [{ sample_name: 'S9' }],
  });
  expect(usageWith(before, declined)).toMatchObject({
    experiment_title: 'Grain growth',
    samples: [{ sample_name: 'S1' }],
  });
  const none = usageWith(declined, JSON.stringify({ data_consent: false }));
  expect(none?.experiment_title).toBeUndefined();
  expect(none?.samples).toBeUndefined();
  // Answers that ask no consent are taken as before.
  expect(usageWith(JSON.stringify({ experiment_title: 'Asked nothing' }), '')).toMatchObject({
    experiment_title: 'Asked nothing',
  });
});

/** A usage in progress (ada, SEM) and a file recorded during it, waiting for its transfer. */
const AT = '2026-01-01T00:00:00.000Z';
const SEED_USAGE_AND_FILE = `
      INSERT INTO users (id, uuid, username, email, first_name, last_name, created_at, updated_at)
        VALUES (1, 'u-1', 'ada', 'ada@example.org', 'Ada', 'Lovelace', '${AT}', '${AT}');
      INSERT INTO projects (id, uuid, name, application_identifier, created_at, updated_at)
        VALUES (1, 'p-1', 'Cathodes', 'PRJ-7', '${AT}', '${AT}');
      INSERT INTO tools (id, uuid, name, created_at, updated_at)
        VALUES (1, 't-1', 'SEM', '${AT}', '${AT}');
      INSERT INTO usage_events (id, uuid, user_id, operator_id, project_id, tool_id, start,
          pre_run_data, run_data, updated_at)
        VALUES (1, 'e-1', 1, 1, 1, 1, '${AT}', '{"experiment_title":"As planned"}', '', '${AT}');
      INSERT INTO instruments (id, uuid, name, tool_id, destination_template, created_at, updated_at)
        VALUES (1, 'i-1', 'sem-1', 1, '{relative_path}', '${AT}', '${AT}');
      INSERT INTO harvest_files (id, uuid, instrument_id, persistent_id, watch_path,
          relative_path, source_path, filename, size, mtime_ms, xxhash, first_discovered_at,
          metadata_, state, updated_at, usage_event_id)
        VALUES (1, 'f-1', 1, 'ark:99999/fk4t1', '/data', 'a.dat', '/data/a.dat', 'a.dat', 1, 0,
          NULL, '${AT}', '{}', 'waiting', '${AT}', 1);
    `;

/** The seeded file's transfer recorded completed, with the metadata its hooks gave. */
function copiedWith(db: Db, metadata: Record<string, unknown>): void {
  finishTransfer(db, 1, {
    status: 'completed',
    storageLocationId: null,
    destinationPath: '/archive/a.dat',
    bytes: 1,
    destChecksum: 'x',
    checksumVerified: true,
    startedAt: AT,
    completedAt: AT,
    metadata,
  });
}

it("stores a transfer's usage_context as the usage is when the transfer is recorded", () => {
  // Its hook took the context while the usage was in progress; the usage ended before the
  // transfer was recorded, which the refresh at the usage's end could not see yet.
  const db = openDatabase(':memory:');
  try {
    db.exec(SEED_USAGE_AND_FILE);
    const taken = usageContextOf(db, 1);
    expect(taken).toMatchObject({ end: null, experiment_title: 'As planned' });
    db.prepare(
      `UPDATE usage_events SET "end" = ?, run_data = '{"experiment_title":"As it went"}' WHERE id = 1`,
    ).run('2026-01-01T01:00:00.000Z');
    copiedWith(db, { usage_context: taken, sample: 'S1' });
    const stored = JSON.parse(
      db.prepare('SELECT metadata_ FROM harvest_files WHERE id = 1').pluck().get() as string,
    ) as { sample: string; usage_context: Record<string, unknown> };
    expect(stored.sample).toBe('S1');
    expect(stored.usage_context).toMatchObject({
      end: '2026-01-01T01:00:00.000Z',
      experiment_title: 'As it went',
    });
  } finally {
    db.close();
  }
});

it('keeps the usage_context a record has when the one taken again would pass the most a record holds', () => {
  const db = openDatabase(':memory:');
  try {
    db.exec(SEED_USAGE_AND_FILE);
    const taken = usageContextOf(db, 1);
    // An experiment linked to the usage since, with 7 MB of metadata.
    db.prepare(
      `INSERT INTO notebook_entries (uuid, kind, title, title_search, tags, metadata, owner_id,
         usage_event_id, created_at, updated_at)
       VALUES ('n-1', 'experiment', 'Big', 'big', '[]', ?, 1, 1, ?, ?)`,
    ).run(JSON.stringify({ extra_fields: { Notes: { value: 'x'.repeat(7_000_000) } } }), AT, AT);
    copiedWith(db, { usage_context: taken });
    const stored = (): string =>
      db.prepare('SELECT metadata_ FROM harvest_files WHERE id = 1').pluck().get() as string;
    // Stored as the hook took it, which fit; a record past 6 MiB would never reach the server.
    expect(JSON.parse(stored())).toEqual({ usage_context: taken });
    expect(refreshUsageContexts(db, 1)).toBe(0);
    expect(Buffer.byteLength(stored())).toBeLessThan(METADATA_MAX_BYTES);
  } finally {
    db.close();
  }
});
