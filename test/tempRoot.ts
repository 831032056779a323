import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRunning } from '../electron/core/util/pid.js';

const PREFIX = 'labstation-test-';
/** A root's name: the prefix, the pid of the run that made it, then mkdtemp's suffix. */
const ROOT_NAME = new RegExp(`^${PREFIX}(\\d+)-`);

/**
 * Roots left by runs that were killed before their teardown (`labstation-test-<pid>-*`, whose
 * process is gone). A run of the harvest tests writes several GB there.
 */
export function removeAbandonedRoots(base: string): void {
  for (const name of readdirSync(base)) {
    const pid = Number(ROOT_NAME.exec(name)?.[1]);
    if (pid && pid !== process.pid && !isRunning(pid)) {
      rmSync(join(base, name), { recursive: true, force: true });
    }
  }
}

/**
 * Vitest global setup: every test file, and every program a test starts, makes its temporary
 * folders below one root (TMPDIR points there), and the root goes when the run ends, passed or
 * failed. Tests that stop early leave nothing behind in the machine's /tmp. A run that is
 * killed cannot clean up, so each run first removes the roots of runs that are no longer
 * running.
 */
export function setup(): () => void {
  const base = tmpdir();
  removeAbandonedRoots(base);
  const root = mkdtempSync(join(base, `${PREFIX}${process.pid}-`));
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
