/**
 * Command hooks take turns (hooks.ts COMMAND_HOOKS_AT_ONCE), with real processes: a harvest
 * that stops refuses the hooks still waiting for a turn at once, so a harvest started again
 * in the same process soon after never runs a hook of the run that stopped.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Hook } from '../../electron/core/harvest/config.js';
import {
  acceptHooks,
  COMMAND_HOOKS_AT_ONCE,
  endRunningHooks,
  HarvestStopped,
  runPostTransferHooks,
  type PostTransferContext,
} from '../../electron/core/harvest/hooks.js';
import type { FileRow } from '../../electron/core/harvest/records.js';
import type { Db } from '../../electron/core/db/open.js';
import { tempDir, waitFor } from './helpers.js';

/** A hook that marks that it started (a file named after the copy), then runs for 30 s. */
const slowHook: Hook = {
  id: 1,
  name: 'slow',
  trigger: 'post_transfer',
  kind: 'command',
  config: {
    command: process.execPath,
    args: [
      '-e',
      "require('fs').writeFileSync(process.argv[1] + '.started', ''); setTimeout(() => {}, 30000)",
    ],
    timeout_seconds: 60,
  },
  priority: 0,
  instrument_id: null,
  from_server: false,
};

function context(dir: string, n: number): PostTransferContext {
  const file = { metadata_: '{}', persistent_id: `ark:99999/fk4test${n}` } as unknown as FileRow;
  const path = join(dir, `copy-${n}.dat`);
  return {
    db: null as unknown as Db,
    file,
    sourcePath: path,
    destinationPath: path,
    instrument: 'sem-1',
  };
}

afterEach(() => {
  endRunningHooks('test over');
  acceptHooks();
});

describe('command hooks taking turns', () => {
  it('refuses the waiting hooks when the harvest stops, even if it starts again at once', async () => {
    const dir = tempDir('labstation-hooks-');
    const runs = Array.from({ length: COMMAND_HOOKS_AT_ONCE + 2 }, (_, n) =>
      runPostTransferHooks([slowHook], context(dir, n)).then(
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
