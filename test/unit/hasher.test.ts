import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createXXHash128, hashWasm } from '../../electron/core/util/hasher.js';
import { hashSecret, verifySecret } from '../../electron/core/util/pin.js';

const DIST = join(import.meta.dirname, '..', '..', 'dist', 'electron', 'core');

describe('hasher (hash-wasm loaded with require on first use)', () => {
  it('hashes XXH3-128 as xxhsum -H2 does', async () => {
    const h = await createXXHash128();
    // printf '' | xxhsum -H2; printf 'labstation' | xxhsum -H2
    expect(h.init().digest('hex')).toBe('99aa06d3014798d86001c324468d497f');
    expect(h.init().update('labstation').digest('hex')).toBe('243906c79a5eb110e2ade4dd69b82c73');
  });

  it('loads hash-wasm once', () => {
    expect(hashWasm()).toBe(hashWasm());
  });

  it('still hashes and checks PINs with argon2id', async () => {
    const hash = await hashSecret('1234');
    expect(hash.startsWith('$argon2id$')).toBe(true);
    expect(await verifySecret('1234', hash)).toBe(true);
    expect(await verifySecret('4321', hash)).toBe(false);
  });

  it('a thread that loads the copy code but never hashes does not load hash-wasm', () => {
    // The built copy pool, as the engine's thread and the service worker load it (npm test
    // builds before it runs vitest).
    const script = `
      import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      const loaded = () => Object.keys(require.cache).some((k) => k.includes('hash-wasm'));
      await import(${JSON.stringify(pathToFileURL(join(DIST, 'harvest', 'copyPool.js')).href)});
      const before = loaded();
      const { createXXHash128 } = await import(${JSON.stringify(pathToFileURL(join(DIST, 'util', 'hasher.js')).href)});
      await createXXHash128();
      console.log(JSON.stringify([before, loaded()]));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual([false, true]);
  });
});
