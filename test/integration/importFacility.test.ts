/**
 * `labstation import` of a facility bundle's tools, projects and people: what an entry leaves
 * out is kept, problems in a question list are named where they are, and a username may not
 * be someone else's badge.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir, writeJson } from './helpers.js';

const question = { type: 'textbox', name: 'sample' };

async function imported(data: string, bundle: object): Promise<{ code: number; out: string }> {
  const run = await runCli(['import', '--data', data, writeJson(tempDir(), 'b.json', bundle)]);
  return { code: run.code ?? -1, out: run.stdout + run.stderr };
}

function row(data: string, sql: string): unknown {
  const db = new Database(join(data, 'labstation.db'), { readonly: true });
  try {
    return db.prepare(sql).get();
  } finally {
    db.close();
  }
}

describe('labstation import: what an entry leaves out', () => {
  it("keeps a stored tool's question lists and a project's identifier and state", async () => {
    const data = join(tempDir(), 'data');
    const first = await imported(data, {
      projects: [{ name: 'Pilot', application_identifier: 'PRJ-7', active: false }],
      tools: [{ name: 'SEM', pre_usage_questions: [question], post_usage_questions: [question] }],
    });
    expect(first.code).toBe(0);
    // Entries that name only the record, or change one list.
    const second = await imported(data, {
      projects: [{ name: 'Pilot' }],
      tools: [{ name: 'SEM', post_usage_questions: [] }],
    });
    expect(second.code).toBe(0);
    expect(
      row(data, "SELECT application_identifier, active FROM projects WHERE name = 'Pilot'"),
    ).toEqual({
      application_identifier: 'PRJ-7',
      active: 0,
    });
    const sem = row(
      data,
      "SELECT pre_usage_questions AS pre, post_usage_questions AS post FROM tools WHERE name = 'SEM'",
    ) as { pre: string; post: string };
    expect(JSON.parse(sem.pre)).toEqual([expect.objectContaining({ name: 'sample' })]);
    expect(JSON.parse(sem.post)).toEqual([]);
    // A new one takes the defaults: no questions, an active project.
    expect(
      (await imported(data, { projects: [{ name: 'New' }], tools: [{ name: 'AFM' }] })).code,
    ).toBe(0);
    expect(
      row(data, "SELECT application_identifier, active FROM projects WHERE name = 'New'"),
    ).toEqual({
      application_identifier: '',
      active: 1,
    });
    expect(row(data, "SELECT pre_usage_questions AS pre FROM tools WHERE name = 'AFM'")).toEqual({
      pre: '[]',
    });
  });
});

describe('labstation import: problems named where they are', () => {
  it("names a question's place in its tool's list, as `questions check` does", async () => {
    const data = join(tempDir(), 'data');
    const run = await imported(data, {
      tools: [
        {
          name: 'SEM',
          pre_usage_questions: [
            { type: 'textbox', name: 'a' },
            { type: 'textbox', name: 'b', maxlength: -1 },
            {
              type: 'group',
              name: 'g',
              questions: [{ type: 'textbox', name: 'x', pattern: '(' }],
            },
          ],
        },
      ],
    });
    expect(run.code).toBe(1);
    expect(run.out).toContain('tools[0] (SEM).pre_usage_questions.b.maxlength: ');
    expect(run.out).toContain('tools[0] (SEM).pre_usage_questions.g.x.pattern: ');
  });

  it('refuses text that is not well-formed Unicode anywhere, naming where, and stores nothing', async () => {
    const data = join(tempDir(), 'data');
    expect((await imported(data, { tools: [{ name: 'SEM' }] })).code).toBe(0);
    const bundle = JSON.parse(
      '{"tools": [{"name": "SEM"}], "storage_locations": [{"name": "a", "type": "local", "base_path": "/srv/d\\ud800"}]}',
    ) as object;
    const run = await imported(data, bundle);
    expect(run.code).toBe(1);
    expect(run.out).toContain(
      'storage_locations[0].base_path: not well-formed Unicode (lone surrogate)',
    );
    expect(row(data, 'SELECT count(*) AS n FROM storage_locations')).toEqual({ n: 0 });
  });

  it('refuses a key written twice, which JSON.parse would read as its last value alone', async () => {
    const data = join(tempDir(), 'data');
    const file = join(tempDir(), 'twice.json');
    writeFileSync(
      file,
      '{"tools": [{"name": "SEM", "post_usage_questions": [{"type": "textbox", "name": "a"}],' +
        ' "post_usage_questions": []}]}',
    );
    const run = await runCli(['import', '--data', data, file]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('tools[0].post_usage_questions: is written more than once');
    const questions = join(tempDir(), 'q.json');
    writeFileSync(questions, '[{"type": "textbox", "name": "a", "name": "b"}]');
    const checked = await runCli(['questions', 'check', questions]);
    expect(checked.code).toBe(1);
    expect(checked.stderr).toContain('[0].name: is written more than once');
  });

  it("refuses a username that is someone else's badge, in any case", async () => {
    const data = join(tempDir(), 'data');
    const people = [{ username: 'alice', pin: '1234', badge_number: 'B100200' }];
    expect((await imported(data, { users: people })).code).toBe(0);
    const run = await imported(data, { users: [{ username: 'b100200', pin: '5555' }] });
    expect(run.code).toBe(1);
    expect(run.out).toContain('users[0] (b100200).username: b100200 is the badge number of alice');
    expect(row(data, 'SELECT count(*) AS n FROM users')).toEqual({ n: 1 });
    // Taken from alice in the same bundle, the badge frees the name.
    const moved = await imported(data, {
      users: [
        { username: 'alice', badge_number: 'B200300' },
        { username: 'b100200', pin: '5555' },
      ],
    });
    expect(moved.code).toBe(0);
  });
});

describe('--data that is no data dir', () => {
  it('names a file given for the folder, and an empty labstation.db, changing neither', async () => {
    const root = tempDir();
    const file = join(root, 'afile');
    writeFileSync(file, 'notes');
    for (const args of [
      ['import', '--data', file, writeJson(root, 'b.json', { tools: [{ name: 'SEM' }] })],
      ['station', '--data', join(file, 'sub')],
    ]) {
      const run = await runCli(args);
      expect(run.code, args[0]).toBe(1);
      expect(run.stderr + run.stdout, args[0]).toMatch(
        /is a file, or lies below one: give a folder/,
      );
    }
    expect(readFileSync(file, 'utf8')).toBe('notes');
    // An empty labstation.db is not taken for a new database, by a command that only reads.
    const data = join(root, 'data');
    mkdirSync(data);
    writeFileSync(join(data, 'labstation.db'), '');
    for (const command of ['usage', 'files']) {
      const run = await runCli([command, '--data', data]);
      expect(run.code, command).toBe(1);
      expect(run.stderr, command).toContain('is an empty file, not a Labstation database');
    }
    const mail = await runCli(['mail', 'list', '--data', data]);
    expect(mail.code).toBe(1);
    expect(statSync(join(data, 'labstation.db')).size).toBe(0);
  });
});
