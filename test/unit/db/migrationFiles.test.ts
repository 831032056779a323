import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  LATEST_VERSION,
  migrations,
  type Migration,
} from '../../../electron/core/db/migrations.js';

// Each migration is a file of electron/core/db/migrations/ (NNN_name.ts, exporting migrationNNN)
// and migrations.ts lists them in order: a file added but not listed, listed twice or out of
// order, or numbered other than its version fails here.
const FOLDER = join(import.meta.dirname, '../../../electron/core/db/migrations');
const NUMBERED = /^(\d{3})_[a-z0-9_]+\.ts$/;
/** Modules of the folder that are not migrations: helpers several migrations use. */
const HELPERS = ['shared.ts'];

const files = readdirSync(FOLDER)
  .filter((name) => !HELPERS.includes(name))
  .sort();

async function exportsOf(file: string): Promise<Record<string, unknown>> {
  return (await import(join(FOLDER, file))) as Record<string, unknown>;
}

describe('migration files', () => {
  it('are named by a three-digit number and a name, beside the helper modules alone', () => {
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(file).toMatch(NUMBERED);
  });

  it('are numbered 1 to N, with no gap and no number twice', () => {
    const numbers = files.map((file) => Number(NUMBERED.exec(file)?.[1]));
    expect(numbers).toEqual(Array.from({ length: files.length }, (_, i) => i + 1));
  });

  it('each export one migration, migrationNNN, whose version is the number of its file', async () => {
    for (const file of files) {
      const digits = file.slice(0, 3);
      const exported = await exportsOf(file);
      expect(Object.keys(exported), file).toEqual([`migration${digits}`]);
      const migration = exported[`migration${digits}`] as Migration;
      expect(migration.version, file).toBe(Number(digits));
      expect(typeof migration.name, file).toBe('string');
      expect(typeof migration.sql, file).toBe('string');
    }
  });

  it('import the Migration type alone from migrations.ts (no import cycle at run time)', () => {
    for (const file of [...files, ...HELPERS]) {
      const text = readFileSync(join(FOLDER, file), 'utf8');
      expect(text, file).not.toMatch(/^import (?!type )[^;]*from '\.\.\/migrations\.js';/m);
    }
  });

  it('are listed in migrations.ts once each, in version order', async () => {
    expect(migrations.map((m) => m.version)).toEqual(
      Array.from({ length: files.length }, (_, i) => i + 1),
    );
    for (const [i, file] of files.entries()) {
      const exported = await exportsOf(file);
      expect(migrations[i], file).toBe(exported[`migration${file.slice(0, 3)}`]);
    }
    expect(LATEST_VERSION).toBe(files.length);
  });
});
