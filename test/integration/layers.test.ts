/**
 * The layer rule of DESIGN.md is enforced by ESLint (imports) and by compiling shared/ without
 * Node or DOM types. These tests show that both checks reject a violation, so a green lint run
 * means something.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ESLint } from 'eslint';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const probeDir = join(root, 'shared', '__layer_probe__');

afterAll(() => rmSync(probeDir, { recursive: true, force: true }));

/** Lints `code` as if it were the (existing) `file`, so the typed project finds it. */
async function restrictedImports(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: root });
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'no-restricted-globals')
    .map((m) => m.message);
}

describe('layer rule', () => {
  it('ESLint rejects Node, Electron and app imports in shared/, and electron/ in renderer/', async () => {
    expect(
      await restrictedImports(
        'shared/errors.ts',
        "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n",
      ),
    ).toHaveLength(1);
    expect(
      await restrictedImports(
        'shared/errors.ts',
        "import { app } from 'electron';\nexport const x = app;\n",
      ),
    ).toHaveLength(1);
    expect(
      await restrictedImports(
        'shared/errors.ts',
        "import { Station } from '../electron/core/station/station.js';\nexport const x = Station;\n",
      ),
    ).toHaveLength(1);
    expect(
      await restrictedImports('shared/errors.ts', 'export const x = window.location;\n'),
    ).toHaveLength(1);
    expect(
      await restrictedImports(
        'renderer/src/format.ts',
        "import { Station } from '../../electron/core/station/station.js';\nexport const x = Station;\n",
      ),
    ).toHaveLength(1);
    expect(
      await restrictedImports(
        'shared/errors.ts',
        "import { z } from 'zod';\nexport const x = z;\n",
      ),
    ).toEqual([]);
  });

  it('shared/ does not compile when it uses a Node or DOM global', async () => {
    mkdirSync(probeDir, { recursive: true });
    writeFileSync(
      join(probeDir, 'probe.ts'),
      'export const here = process.cwd() + document.title;\n',
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const run = promisify(execFile)(
      process.execPath,
      [tsc, '-p', join(root, 'tsconfig.shared.json'), '--noEmit'],
      {
        cwd: root,
      },
    );
    const error = (await run.then(
      () => null,
      (e: unknown) => e,
    )) as { stdout: string } | null;
    expect(error).not.toBeNull();
    expect(error!.stdout).toMatch(/probe\.ts.*Cannot find name 'process'/);
    expect(error!.stdout).toMatch(/Cannot find name 'document'/);
  });
});
