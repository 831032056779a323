import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runSyncF } from '../../../electron/core/harvest/durable.js';

// The real `sync -f` that flushes batches of small copies on Linux; elsewhere it is not used.
describe.runIf(process.platform === 'linux')('runSyncF', () => {
  const dir = mkdtempSync(join(tmpdir(), 'labstation-syncf-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('flushes the file systems of existing folders', async () => {
    await expect(runSyncF([dir, tmpdir()])).resolves.toBeUndefined();
  });

  it("fails with sync's own reason when a folder is missing", async () => {
    await expect(runSyncF([join(dir, 'gone')])).rejects.toThrow(
      /^sync -f failed: .*gone.*No such file or directory/,
    );
  });
});
