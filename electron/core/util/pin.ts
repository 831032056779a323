import { randomBytes } from 'node:crypto';
import { hashWasm } from './hasher.js';

// OWASP's second argon2id profile (19 MiB, 2 passes): tolerable on an instrument PC at log-on.
const PARAMS = { parallelism: 1, iterations: 2, memorySize: 19456, hashLength: 32 } as const;

/** Salted argon2id hash in the PHC string form ($argon2id$v=19$m=...,t=...,p=...$salt$hash). */
export async function hashSecret(secret: string): Promise<string> {
  return hashWasm().argon2id({
    ...PARAMS,
    password: secret,
    salt: randomBytes(16),
    outputType: 'encoded',
  });
}

export async function verifySecret(secret: string, hash: string): Promise<boolean> {
  if (!hash.startsWith('$argon2id$')) return false;
  try {
    return await hashWasm().argon2Verify({ password: secret, hash });
  } catch {
    return false;
  }
}
