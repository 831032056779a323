/**
 * argon2id for PINs and passwords, computed on the calling thread (hash-wasm's WebAssembly,
 * synchronous under its promise). pin.ts sends it to a worker (secretPool.ts); this is what the
 * worker runs, and what runs where no worker file is built (tests run from the sources).
 */
import { hashWasm } from './hasher.js';

// OWASP's second argon2id profile (19 MiB, 2 passes): tolerable on an instrument PC at log-on.
const PARAMS = { parallelism: 1, iterations: 2, memorySize: 19456, hashLength: 32 } as const;

/** Salted argon2id hash in the PHC string form ($argon2id$v=19$m=...,t=...,p=...$salt$hash). */
export function argon2Hash(secret: string, salt: Uint8Array): Promise<string> {
  return hashWasm().argon2id({ ...PARAMS, password: secret, salt, outputType: 'encoded' });
}

/** Whether `secret` hashes to the PHC string `hash`; false for a hash that is not argon2id. */
export async function argon2Check(secret: string, hash: string): Promise<boolean> {
  if (!hash.startsWith('$argon2id$')) return false;
  try {
    return await hashWasm().argon2Verify({ password: secret, hash });
  } catch {
    return false;
  }
}
