/**
 * `labstation metadata check` and `metadata convert`, run as a user runs them: the built
 * command in a child process, real files. Needs `npm run build` first (npm test does it).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareMetadata } from '../../electron/core/notebook/store.js';
import { runCli, tempDir, writeJson } from './helpers.js';

/** A template as the notebook service exports it. */
const TEMPLATE = {
  elabftw: { extra_fields_groups: [{ id: 1, name: 'Sample' }] },
  extra_fields: {
    'Sample mass': { type: 'number', value: '12', units: ['g', 'kg'], unit: 'g', group_id: 1 },
    Degassed: { type: 'checkbox', value: 'on' },
    Solvent: { type: 'select-multi', options: ['water', 'DMSO'], value: ['DMSO'] },
    Operator: { value: '', required: true, lab_note: 'kept' },
  },
  instrument: { serial: 'SEM-1' },
};

describe('labstation metadata check', () => {
  it('prints ok with the field count; an empty required field is only a notice', async () => {
    const file = writeJson(tempDir(), 'template.json', TEMPLATE);
    const out = await runCli(['metadata', 'check', file]);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe('ok: 4 fields\n');
    expect(out.stderr).toContain('notice: extra_fields."Operator".value: is empty');
  });

  it('reads a file that starts with a byte order mark, as Windows editors write it', async () => {
    const dir = tempDir();
    const file = join(dir, 'bom.json');
    writeFileSync(file, `\uFEFF${JSON.stringify(TEMPLATE)}`, 'utf8');
    const out = await runCli(['metadata', 'check', file]);
    expect(out.stderr).not.toContain('not valid JSON');
    expect(out.stdout).toBe('ok: 4 fields\n');
    const questions = join(dir, 'questions.json');
    writeFileSync(
      questions,
      `\uFEFF${JSON.stringify([{ type: 'textbox', name: 'sample', title: 'Sample' }])}`,
      'utf8',
    );
    const checked = await runCli(['questions', 'check', questions]);
    expect(checked.stderr).toBe('');
    expect(checked.code).toBe(0);
    expect(checked.stdout).toBe('ok: 1 question\n');
  });

  it('counts one field as one', async () => {
    const file = writeJson(tempDir(), 'one.json', {
      extra_fields: { Degassed: { type: 'checkbox', value: 'on' } },
    });
    const out = await runCli(['metadata', 'check', file]);
    expect(out.stdout).toBe('ok: 1 field\n');
  });

  it('prints one line per problem, naming the field and the property, and exits 1', async () => {
    const file = writeJson(tempDir(), 'bad.json', {
      extra_fields: {
        'Sample mass': { type: 'number', value: '12', units: ['g', 'kg'], unit: 'mg' },
        Contact: { type: 'email', value: 'nobody' },
        Kind: { type: 'select', value: 'x' },
        Day: { type: 'date', value: '2023-02-29' },
      },
    });
    const out = await runCli(['metadata', 'check', file]);
    expect(out.code).toBe(1);
    expect(out.stdout.split('\n').filter(Boolean)).toEqual([
      'extra_fields."Sample mass".unit: "mg" is not one of units (g, kg)',
      'extra_fields."Contact".value: "nobody" is not a valid e-mail address',
      'extra_fields."Kind".options: a select field needs "options", a list of choices',
      'extra_fields."Day".value: "2023-02-29" is not a valid date (YYYY-MM-DD)',
    ]);
  });

  it('names the file and the line of a JSON syntax error', async () => {
    const file = join(tempDir(), 'broken.json');
    writeFileSync(
      file,
      '{\n  "extra_fields": {\n    "A": {"value": "1"}\n    "B": {"value": "2"}\n  }\n}\n',
    );
    const out = await runCli(['metadata', 'check', file]);
    expect(out.code).toBe(1);
    expect(out.stdout).toBe('');
    expect(out.stderr).toContain(file);
    expect(out.stderr).toContain('line 4, column 5');
  });

  it('refuses a file that is not UTF-8, naming it and the line, and writes nothing', async () => {
    const dir = tempDir();
    const file = join(dir, 'latin1.json');
    // Latin-1 as an old editor saves it: ü and ß are single bytes that UTF-8 cannot read.
    writeFileSync(
      file,
      Buffer.concat([
        Buffer.from('{"extra_fields": {\n  "M'),
        Buffer.from([0xfc]),
        Buffer.from('nster": {"value": "Stra'),
        Buffer.from([0xdf]),
        Buffer.from('e"}}}\n'),
      ]),
    );
    for (const args of [
      ['metadata', 'check', file],
      ['metadata', 'convert', file, '--to', 'notebook'],
      ['questions', 'check', file],
    ]) {
      const out = await runCli(args);
      expect(out.code, args.join(' ')).toBe(1);
      expect(out.stdout, args.join(' ')).toBe('');
      expect(out.stderr, args.join(' ')).toContain(
        `${file}: is not UTF-8 text (line 2); save it as UTF-8`,
      );
    }
  });

  it('names a file it cannot read', async () => {
    const file = join(tempDir(), 'missing.json');
    const out = await runCli(['metadata', 'check', file]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(file);
  });

  it("refuses a document past the station's size limits, as the station's saves do", async () => {
    const dir = tempDir();
    // Four fields of 300,000 characters: 1.2 million as stored, over the limit of a million.
    const big = {
      extra_fields: Object.fromEntries(
        [1, 2, 3, 4].map((i) => [`Note ${i}`, { type: 'text', value: 'x'.repeat(300_000) }]),
      ),
    };
    const file = writeJson(dir, 'big.json', big);
    const out = await runCli(['metadata', 'check', file]);
    const rule =
      "at most 1,000,000 characters of JSON as stored, with each field's type written out " +
      '(this comes to 1,200,162)';
    expect(out.stdout).toBe(`${file}: ${rule}\n`);
    expect(out.code).toBe(1);
    expect(() => prepareMetadata(JSON.stringify(big))).toThrow(`metadata: ${rule}`);
    const converted = await runCli(['metadata', 'convert', file, '--to', 'elabftw']);
    expect(converted.code).toBe(1);
    expect(converted.stdout).toContain('at most 1,000,000 characters of JSON as stored');

    // A small document in text laid out past four million characters is not read at all.
    const padded = join(dir, 'padded.json');
    const text = `${JSON.stringify(TEMPLATE)}${' '.repeat(4_000_000)}`;
    writeFileSync(padded, text);
    const laidOut = await runCli(['metadata', 'check', padded]);
    expect(laidOut.stdout).toBe(
      `${padded}: at most 4,000,000 characters of JSON text (this has ${text.length.toLocaleString('en-US')})\n`,
    );
    expect(laidOut.code).toBe(1);
    expect(() => prepareMetadata(text)).toThrow('at most 4,000,000 characters of JSON text');
  });

  it('is a usage error without exactly one FILE', async () => {
    const out = await runCli(['metadata', 'check']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('metadata check takes one FILE');
  });
});

describe('labstation metadata convert', () => {
  it('writes the notebook service form and back, losing nothing', async () => {
    const dir = tempDir();
    const source = writeJson(dir, 'template.json', TEMPLATE);
    const ours = await runCli(['metadata', 'convert', source, '--to', 'notebook']);
    expect(ours.code).toBe(0);
    const notebook = JSON.parse(ours.stdout) as Record<string, unknown>;
    expect(Object.keys(notebook)).toEqual(['extra_fields', 'notebook', 'instrument']);
    expect(notebook['notebook']).toEqual(TEMPLATE.elabftw);
    expect(notebook['extra_fields']).toMatchObject({
      Degassed: { type: 'checkbox', value: true },
      Solvent: { type: 'select', allow_multi_values: true, value: ['DMSO'] },
      Operator: { value: '', required: true, lab_note: 'kept' },
    });

    const converted = join(dir, 'labstation.json');
    writeFileSync(converted, ours.stdout);
    const theirs = await runCli(['metadata', 'convert', converted, '--to', 'elabftw']);
    expect(theirs.code).toBe(0);
    const elabftw = JSON.parse(theirs.stdout) as Record<string, unknown>;
    expect(Object.keys(elabftw)).toEqual(['extra_fields', 'elabftw', 'instrument']);
    expect(elabftw['extra_fields']).toMatchObject({ Degassed: { type: 'checkbox', value: 'on' } });

    const back = join(dir, 'back.json');
    writeFileSync(back, theirs.stdout);
    const again = await runCli(['metadata', 'convert', back, '--to', 'notebook']);
    expect(again.stdout).toBe(ours.stdout);
  });

  it('refuses a document with structural problems, one line each', async () => {
    const file = writeJson(tempDir(), 'bad.json', {
      extra_fields: { A: { type: 'textarea', value: '' } },
    });
    const out = await runCli(['metadata', 'convert', file, '--to', 'elabftw']);
    expect(out.code).toBe(1);
    expect(out.stdout).toBe(
      'extra_fields."A".type: "textarea" is not a field type; use one of checkbox, date, datetime-local, email, number, radio, select, text, time, url\n',
    );
  });

  it('a bad or missing --to is a usage error', async () => {
    const file = writeJson(tempDir(), 'template.json', TEMPLATE);
    for (const args of [['--to', 'xml'], []]) {
      const out = await runCli(['metadata', 'convert', file, ...args]);
      expect(out.code).toBe(2);
      expect(out.stdout).toBe('');
      expect(out.stderr).toContain('--to elabftw or --to notebook');
    }
  });
});
