import { randomBytes } from 'node:crypto';
import { SecretPool } from './secretPool.js';

let pool: SecretPool | undefined;
const secrets = (): SecretPool => (pool ??= new SecretPool());

/**
 * Salted argon2id hash in the PHC string form ($argon2id$v=19$m=...,t=...,p=...$salt$hash),
 * computed off this thread (secretPool.ts).
 */
export function hashSecret(secret: string): Promise<string> {
  return secrets().hash(secret, randomBytes(16));
}

/** Whether `secret` matches the argon2id `hash`; false for any other hash. Off this thread. */
export function verifySecret(secret: string, hash: string): Promise<boolean> {
  return secrets().verify(secret, hash);
}
