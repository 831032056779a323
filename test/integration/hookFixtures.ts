/**
 * Command hooks run on their own, without a station: a hook of the shape the harvest stores,
 * and the context of one copied file. The hooks state is process-wide (commandHook.ts): a test
 * file that uses these ends its hooks after each test (endRunningHooks, then acceptHooks).
 */
import { join } from 'node:path';
import type { Hook } from '../../electron/core/harvest/config.js';
import type { PostTransferContext } from '../../electron/core/harvest/metadataHooks.js';
import type { FileRow } from '../../electron/core/harvest/records.js';
import type { Db } from '../../electron/core/db/open.js';

/** A post-transfer command hook that runs Node with `args` (a script and its arguments). */
export function nodeHook(name: string, args: string[]): Hook {
  return {
    id: 1,
    name,
    trigger: 'post_transfer',
    kind: 'command',
    config: { command: process.execPath, args, timeout_seconds: 60 },
    priority: 0,
    instrument_id: null,
    from_server: false,
  };
}

/** The context of copy `n` in `dir`, its file holding no metadata yet. */
export function copiedFile(dir: string, n: number): PostTransferContext {
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
