/**
 * argon2id in worker threads (secretPool.ts), as `labstation serve` and `station` hash and check
 * PINs and passwords from the built files (npm run build:core): what a worker answers agrees with
 * the hash computed on the calling thread, a worker that dies fails only the job it had, and the
 * calling thread stays free meanwhile.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { argon2Check, argon2Hash } from '../../electron/core/util/argon2.js';
import { SecretPool } from '../../electron/core/util/secretPool.js';
import { tempDir } from './helpers.js';

const built = pathToFileURL(
  join(import.meta.dirname, '..', '..', 'dist', 'electron', 'core', 'util', 'secretWorker.js'),
);
const pools: SecretPool[] = [];
const poolOf = (size: number, url: URL = built): SecretPool => {
  const pool = new SecretPool(size, url);
  pools.push(pool);
  return pool;
};

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.close()));
});

describe('the secret pool', () => {
  it('hashes and checks in a worker, agreeing with the hash made on the calling thread', async () => {
    const pool = poolOf(2);
    expect(pool.inline).toBe(false);
    const salt = new Uint8Array(16).fill(7);
    const inWorker = await pool.hash('1234', salt);
    expect(inWorker).toBe(await argon2Hash('1234', salt));
    expect(inWorker).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    const [right, wrong, other] = await Promise.all([
      pool.verify('1234', inWorker),
      pool.verify('1235', inWorker),
      pool.verify('1234', '$2b$10$notargon2id'),
    ]);
    expect({ right, wrong, other }).toEqual({ right: true, wrong: false, other: false });
    expect(await argon2Check('1234', await pool.hash('1234', new Uint8Array(16)))).toBe(true);
  });

  // Mutation: pin.ts hashing on the calling thread (argon2Hash/argon2Check directly): the
  // immediate callbacks stopped while each hash ran.
  it('leaves the calling thread free while it hashes', async () => {
    const pool = poolOf(1);
    const salt = new Uint8Array(16);
    await pool.hash('warm', salt);
    let turns = 0;
    let spinning = true;
    const spin = (): void => {
      turns++;
      if (spinning) setImmediate(spin);
    };
    setImmediate(spin);
    const hashes = await Promise.all([1, 2, 3].map((i) => pool.hash(`pin ${i}`, salt)));
    spinning = false;
    expect(hashes).toHaveLength(3);
    // Three hashes of tens of milliseconds each: a thread left free turns many times meanwhile;
    // one that computed them itself turned once or twice between them.
    expect(turns).toBeGreaterThan(30);
  });

  it('fails only the job a dying worker had, and starts another for the next', async () => {
    const dir = tempDir('labstation-secret-pool-');
    const dying = join(dir, 'dying.mjs');
    // Answers its first job, dies at its second (as a worker out of memory would).
    writeFileSync(
      dying,
      `import { parentPort } from 'node:worker_threads';
       let jobs = 0;
       parentPort.on('message', (m) => {
         if (++jobs === 2) process.exit(3);
         parentPort.postMessage({ id: m.id, ok: true, value: m.op === 'verify' });
       });`,
    );
    const pool = poolOf(1, pathToFileURL(dying));
    expect(await pool.verify('a', '$argon2id$x')).toBe(true);
    await expect(pool.verify('b', '$argon2id$x')).rejects.toThrow(
      'argon2id worker failed: exited with code 3',
    );
    expect(await pool.verify('c', '$argon2id$x')).toBe(true);
  });

  // Mutation: the pool failing every job when its worker cannot start: each log-on failed with
  // an internal error instead of being checked.
  it('hashes on the calling thread when its worker cannot start', async () => {
    const dir = tempDir('labstation-secret-pool-');
    const broken = join(dir, 'broken.mjs');
    writeFileSync(broken, "throw new Error('hash-wasm could not be loaded');");
    const pool = poolOf(1, pathToFileURL(broken));
    expect(pool.inline).toBe(false);
    const hash = await argon2Hash('1234', new Uint8Array(16).fill(5));
    expect(await Promise.all([pool.verify('1234', hash), pool.verify('4321', hash)])).toEqual([
      true,
      false,
    ]);
    expect(pool.inline).toBe(true);
    expect(await pool.verify('1234', hash)).toBe(true);
  });
});
