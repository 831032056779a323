import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Vitest global setup: every test file, and every program a test starts, makes its temporary
 * folders below one root (TMPDIR points there), and the root goes when the run ends, passed or
 * failed. Tests that stop early leave nothing behind in the machine's /tmp; a run of the
 * harvest tests writes several GB there.
 */
export function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'labstation-test-'));
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
