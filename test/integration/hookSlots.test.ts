/**
 * Command hooks take turns (commandHook.ts COMMAND_HOOKS_AT_ONCE), with real processes: a harvest
 * that stops refuses the hooks still waiting for a turn at once, so a harvest started again
 * in the same process soon after never runs a hook of the run that stopped.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  acceptHooks,
  COMMAND_HOOKS_AT_ONCE,
  endRunningHooks,
  HarvestStopped,
} from '../../electron/core/harvest/commandHook.js';
import { runPostTransferHooks } from '../../electron/core/harvest/hooks.js';
import { copiedFile, nodeHook } from './hookFixtures.js';
import { tempDir, waitFor } from './helpers.js';

/** A hook that marks that it started (a file named after the copy), then runs for 30 s. */
const slowHook = nodeHook('slow', [
  '-e',
  "require('fs').writeFileSync(process.argv[1] + '.started', ''); setTimeout(() => {}, 30000)",
]);

afterEach(() => {
  endRunningHooks('test over');
  acceptHooks();
});

describe('command hooks taking turns', () => {
  it('refuses the waiting hooks when the harvest stops, even if it starts again at once', async () => {
    const dir = tempDir('labstation-hooks-');
    const runs = Array.from({ length: COMMAND_HOOKS_AT_ONCE + 2 }, (_, n) =>
      runPostTransferHooks([slowHook], copiedFile(dir, n)).then(
        () => 'ended',
        (error: unknown) => (error instanceof HarvestStopped ? 'stopped' : String(error)),
      ),
    );
    const started = (): number =>
      runs.filter((_, n) => existsSync(join(dir, `copy-${n}.dat.started`))).length;
    await waitFor(
      'the first hooks to start',
      () => (started() === COMMAND_HOOKS_AT_ONCE ? true : undefined),
      20_000,
    );
    // Stopped, and started again in the same tick: the hooks killed free their turns only
    // when their processes have gone, after the new start.
    endRunningHooks('the harvest was stopped');
    acceptHooks();
    expect(await Promise.all(runs)).toEqual(runs.map(() => 'stopped'));
    // Nothing of the stopped run started after it: the two waiting hooks never ran.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(started()).toBe(COMMAND_HOOKS_AT_ONCE);
  });
});
