import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { APP_ROOT, DEMO_BUNDLE, appRootAbove } from '../../electron/core/paths.js';

describe("the app's root", () => {
  let base = '';
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('is the nearest folder with a package.json, from any depth below it', () => {
    base = mkdtempSync(join(tmpdir(), 'approot-'));
    const app = join(base, 'app');
    // The three places paths.ts runs from: tsc's output, the bundled command, the sources.
    for (const dir of ['dist/electron/core', 'dist/cli', 'electron/core']) {
      mkdirSync(join(app, dir), { recursive: true });
    }
    writeFileSync(join(app, 'package.json'), '{}');
    writeFileSync(join(base, 'package.json'), '{}');

    expect(appRootAbove(join(app, 'dist/electron/core'))).toBe(app);
    expect(appRootAbove(join(app, 'dist/cli'))).toBe(app);
    expect(appRootAbove(join(app, 'electron/core'))).toBe(app);
    expect(appRootAbove(app)).toBe(app);
  });

  it('is an error where no folder above holds a package.json', () => {
    base = mkdtempSync(join(tmpdir(), 'approot-'));
    mkdirSync(join(base, 'a', 'b'), { recursive: true });
    // tmpdir() itself may sit below a package.json on some machine; only this is certain:
    // a found root is never inside the tree that has none.
    let found: string | undefined;
    try {
      found = appRootAbove(join(base, 'a', 'b'));
    } catch (error) {
      expect((error as Error).message).toMatch(/^no package\.json above /);
    }
    if (found !== undefined) expect(found.startsWith(base)).toBe(false);
  });

  it("is this checkout's root when run from the sources, so the demo bundle is found", () => {
    expect(APP_ROOT).toBe(join(import.meta.dirname, '..', '..'));
    expect(DEMO_BUNDLE).toBe(join(APP_ROOT, 'resources', 'demo-facility.json'));
  });
});
