import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeAbandonedRoots } from '../tempRoot.js';

describe("the test run's temp root", () => {
  let base = '';
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('removes the roots of runs that are gone, and only those', () => {
    base = mkdtempSync(join(tmpdir(), 'roots-'));
    // The id of a process that has just exited.
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    expect(gone).toBeGreaterThan(0);
    const names = {
      abandoned: `labstation-test-${gone}-aB3dE`,
      running: `labstation-test-${process.pid}-xY7zQ`,
      older: 'labstation-test-Qw8rT',
      other: `other-${gone}-folder`,
    };
    for (const name of Object.values(names))
      mkdirSync(join(base, name, 'inside'), { recursive: true });

    removeAbandonedRoots(base);

    expect(existsSync(join(base, names.abandoned))).toBe(false);
    expect(existsSync(join(base, names.running))).toBe(true);
    expect(existsSync(join(base, names.older))).toBe(true);
    expect(existsSync(join(base, names.other))).toBe(true);
  });
});
