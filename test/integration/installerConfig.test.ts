/**
 * The installers' configuration (electron-builder.yml), checked with electron-builder's own
 * schema: `npm run dist` needs internet and runs elsewhere, so a key it would refuse, or a
 * hardening fuse dropped, shows here first.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);

interface Validate {
  validateConfiguration(config: unknown, logger: unknown): Promise<void>;
}

function builderConfig(): Record<string, unknown> {
  const yaml = require('js-yaml') as { load(text: string): unknown };
  return yaml.load(readFileSync('electron-builder.yml', 'utf8')) as Record<string, unknown>;
}

async function validate(config: unknown): Promise<void> {
  const builder = require('app-builder-lib/out/util/config/config') as Validate;
  const { DebugLogger } = require('builder-util') as { DebugLogger: new (on: boolean) => unknown };
  await builder.validateConfiguration(config, new DebugLogger(false));
}

describe('installer configuration', () => {
  it('is one electron-builder takes', async () => {
    await expect(validate(builderConfig())).resolves.toBeUndefined();
    // The check is real: a key electron-builder does not know is refused.
    const wrong = builderConfig();
    wrong.electronFuses = { ...(wrong.electronFuses as object), runAsNodes: false };
    await expect(validate(wrong)).rejects.toThrow(/electronFuses/);
  });

  it("sets Electron's fuses: no plain Node, no NODE_OPTIONS, no --inspect", () => {
    expect(builderConfig().electronFuses).toMatchObject({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
    });
  });
});
