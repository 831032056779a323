/**
 * A file's destination as the harvest renders it (destination.ts renderDestination): the
 * template's fields filled from the file's record, its usage (held here, described by the
 * server, or none: the fallback word), and the result checked to stay in its storage location.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../../electron/core/db/open.js';
import { openDatabase } from '../../../electron/core/db/open.js';
import type { Instrument } from '../../../electron/core/harvest/config.js';
import { renderDestination } from '../../../electron/core/harvest/destination.js';
import type { FileRow } from '../../../electron/core/harvest/records.js';
import { makeArk } from '../../../shared/ark.js';

let db: Db;
beforeEach(() => {
  db = openDatabase(':memory:');
});
afterEach(() => db.close());

const instrument = { id: 1, name: 'sem-1' } as Instrument;

function fileRow(row: Partial<FileRow> = {}): FileRow {
  return {
    persistent_id: makeArk({ naan: '99999', shoulder: 'fk4' }, 'bcdf0123gh'),
    relative_path: 'run 1/scan.tif',
    filename: 'scan.tif',
    // The station's own calendar day: 5 January 2024, at noon where it stands.
    first_discovered_at: new Date(2024, 0, 5, 12, 0, 0).toISOString(),
    usage_event_id: null,
    usage_elsewhere: null,
    ...row,
  } as FileRow;
}

function render(template: string, row: Partial<FileRow> = {}): string {
  const rendered = renderDestination(db, template, instrument, fileRow(row));
  if (!rendered.ok) throw new Error(rendered.reason);
  return rendered.path;
}

describe('renderDestination', () => {
  it('fills the date from the first sighting, in local time, month and day in two digits', () => {
    expect(render('{instrument}/{yyyy}/{mm}/{dd}/{relative_path}')).toBe(
      'sem-1/2024/01/05/run 1/scan.tif',
    );
    const lastDay = new Date(2023, 11, 31, 23, 30, 0).toISOString();
    expect(render('{yyyy}-{mm}-{dd}/{filename}', { first_discovered_at: lastDay })).toBe(
      '2023-12-31/scan.tif',
    );
  });

  it('gives the fallback word for user, project and usage when no usage was active', () => {
    expect(render('{user}/{project}/{usage_event}/{filename}')).toBe(
      'no-usage/no-usage/no-usage/scan.tif',
    );
  });

  it('names the usage held here: its user, project and uuid', () => {
    const at = '2026-01-01T00:00:00.000Z';
    db.exec(`
      INSERT INTO users (id, uuid, username, created_at, updated_at) VALUES (1, 'u-1', 'ada', '${at}', '${at}');
      INSERT INTO projects (id, uuid, name, created_at, updated_at) VALUES (1, 'p-1', 'R&D: Q?', '${at}', '${at}');
      INSERT INTO tools (id, uuid, name, created_at, updated_at) VALUES (1, 't-1', 'SEM', '${at}', '${at}');
      INSERT INTO usage_events (id, uuid, user_id, operator_id, project_id, tool_id, start, updated_at)
        VALUES (7, 'e-7', 1, 1, 1, 1, '${at}', '${at}');
    `);
    // A project's name made into one folder a Windows share can hold.
    expect(render('{user}/{project}/{usage_event}/{filename}', { usage_event_id: 7 })).toBe(
      'ada/R&D_ Q_/e-7/scan.tif',
    );
  });

  it("names a usage made on another station as the server described it, and ignores one it can't trust", () => {
    const elsewhere = {
      usage_event: 'e-remote',
      start: '2026-01-01T00:00:00.000Z',
      user: { username: 'grace' },
      project: { name: 'Anodes' },
    };
    expect(
      render('{user}/{project}/{usage_event}/{filename}', {
        usage_elsewhere: JSON.stringify(elsewhere),
      }),
    ).toBe('grace/Anodes/e-remote/scan.tif');
    expect(
      render('{user}/{filename}', {
        usage_elsewhere: JSON.stringify({ ...elsewhere, user: 'grace' }),
      }),
    ).toBe('no-usage/scan.tif');
  });

  it('keeps the folders of {relative_path}, makes {filename} and {ark_blade} one name each', () => {
    expect(render('{relative_path}')).toBe('run 1/scan.tif');
    expect(render('{ark_blade}-{filename}', { filename: 'a/b\\c.tif' })).toBe(
      'bcdf0123gh-a_b_c.tif',
    );
  });

  it('cannot climb out of the storage location through a value', () => {
    expect(render('{relative_path}', { relative_path: '../../etc/passwd' })).toBe('_/_/etc/passwd');
    expect(render('{instrument}/{filename}', { filename: '..' })).toBe('sem-1/_');
  });

  it('refuses a template whose own text climbs out, names a drive, or is absolute', () => {
    const reason = (template: string): string => {
      const rendered = renderDestination(db, template, instrument, fileRow());
      return rendered.ok ? 'ok' : rendered.reason;
    };
    expect(reason('../{filename}')).toMatch(/climbs out of the storage location/);
    expect(reason('a/.. /{filename}')).toMatch(/climbs out of the storage location/);
    // Only dots and spaces, ".." among them: Windows trims such names, so it counts as climbing.
    expect(reason('a/. ../{filename}')).toMatch(/climbs out of the storage location/);
    expect(reason('C:/{filename}')).toMatch(/names a drive \(C:\)/);
    expect(reason('x/d:{filename}')).toMatch(/names a drive \(d:\)/);
    expect(reason('/srv/{filename}')).toMatch(/absolute path/);
    expect(reason('\\{filename}')).toMatch(/absolute path/);
    expect(reason('a\0/{filename}')).toMatch(/NUL/);
  });
});
