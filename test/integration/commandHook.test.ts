/**
 * What the `command` hook gives a program and takes from it (commandHook.ts), with real
 * processes and no station: the file's paths, ARK and instrument in its environment; what it
 * prints merged when it is a JSON object, nothing when it prints nothing, and a hook error,
 * the transfer standing, for anything else.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acceptHooks, endRunningHooks } from '../../electron/core/harvest/commandHook.js';
import { runPostTransferHooks } from '../../electron/core/harvest/hooks.js';
import { tempDir } from './helpers.js';
import { copiedFile, nodeHook } from './hookFixtures.js';

afterEach(() => {
  endRunningHooks('test over');
  acceptHooks();
});

/** Runs one hook whose Node script is `script` on copy 1 of a fresh folder. */
function runScript(script: string) {
  return runPostTransferHooks(
    [nodeHook('probe', ['-e', script])],
    copiedFile(tempDir('labstation-command-hook-'), 1),
  );
}

describe('command hook', () => {
  it("gives the program the source's and the copy's paths, the ARK and the instrument", async () => {
    const dir = tempDir('labstation-command-hook-');
    const ctx = {
      ...copiedFile(dir, 1),
      sourcePath: join(dir, 'source.dat'),
      destinationPath: join(dir, 'copy.dat'),
    };
    const script = `const e = process.env; console.log(JSON.stringify({
      source: e.LABSTATION_SOURCE_PATH, destination: e.LABSTATION_DESTINATION_PATH,
      ark: e.LABSTATION_ARK, instrument: e.LABSTATION_INSTRUMENT, last: process.argv.at(-1) }));`;
    const metadata = await runPostTransferHooks([nodeHook('env', ['-e', script])], ctx);
    expect(metadata).toEqual({
      source: join(dir, 'source.dat'),
      destination: join(dir, 'copy.dat'),
      ark: 'ark:99999/fk4test1',
      instrument: 'sem-1',
      // Without {path} in its arguments, the copy's path comes last.
      last: join(dir, 'copy.dat'),
    });
  });

  it('adds nothing, and says nothing, when the program prints nothing', async () => {
    expect(await runScript('process.exit(0)')).toEqual({});
  });

  it('records a hook error for output that is not a JSON object', async () => {
    for (const [printed, error] of [
      ['[1, 2]', 'printed JSON that is not an object'],
      ['"text"', 'printed JSON that is not an object'],
      ['not json', 'printed no JSON object: not json'],
    ]) {
      const metadata = await runScript(`console.log(${JSON.stringify(printed)})`);
      expect(metadata).toEqual({ hook_errors: [{ hook: 'probe', kind: 'command', error }] });
    }
  });

  it('ends a program at its own timeout_seconds', async () => {
    const hook = nodeHook('slow', ['-e', 'setTimeout(() => {}, 20000)']);
    hook.config.timeout_seconds = 0.5;
    const started = Date.now();
    const metadata = await runPostTransferHooks(
      [hook],
      copiedFile(tempDir('labstation-command-hook-'), 1),
    );
    expect(metadata.hook_errors).toEqual([
      { hook: 'slow', kind: 'command', error: 'timed out after 0.5 s' },
    ]);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('names what the program wrote to stderr however it failed, not only at a non-zero exit', async () => {
    const said = (error: string) => [{ hook: 'probe', kind: 'command', error }];
    expect(await runScript('console.error("no licence"); console.log("oops")')).toEqual({
      hook_errors: said('printed no JSON object: oops; it wrote to stderr: no licence'),
    });
    expect(await runScript('console.error("cannot read"); process.exit(3)')).toEqual({
      hook_errors: [
        {
          hook: 'probe',
          kind: 'command',
          error: expect.stringMatching(/ exited with 3: cannot read$/) as unknown,
        },
      ],
    });
    const hook = nodeHook('slow', [
      '-e',
      'console.error("waiting for the license server"); setTimeout(() => {}, 20000)',
    ]);
    hook.config.timeout_seconds = 1;
    const metadata = await runPostTransferHooks(
      [hook],
      copiedFile(tempDir('labstation-command-hook-'), 1),
    );
    expect(metadata.hook_errors).toEqual([
      {
        hook: 'slow',
        kind: 'command',
        error: 'timed out after 1 s; it wrote to stderr: waiting for the license server',
      },
    ]);
  });
});
