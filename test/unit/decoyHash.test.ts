/**
 * The decoy hash that unknown logins are verified against (electron/core/station/logon.ts): it
 * must cost what a real hash costs, so it must carry the parameters argon2Hash uses now.
 */
import { describe, expect, it } from 'vitest';
import { DECOY_HASH } from '../../electron/core/station/logon.js';
import { argon2Check } from '../../electron/core/util/argon2.js';
import { hashWasm } from '../../electron/core/util/hasher.js';
import { hashSecret } from '../../electron/core/util/pin.js';

/** A PHC string's parts: `$argon2id$v=19$m=...,t=...,p=...$salt$hash`. */
function phc(hash: string): { head: string; salt: Buffer; digest: Buffer } {
  const [empty, algorithm, version, params, salt, digest] = hash.split('$');
  expect(empty).toBe('');
  return {
    head: [algorithm, version, params].join('$'),
    salt: Buffer.from(salt, 'base64'),
    digest: Buffer.from(digest, 'base64'),
  };
}

describe('the decoy hash', () => {
  it('has the algorithm, version, parameters and lengths of a hash made now', async () => {
    // As a PIN or password is hashed for an account (its salt too).
    const made = phc(await hashSecret('1234'));
    const decoy = phc(DECOY_HASH);
    expect(decoy.head).toBe(made.head);
    expect(decoy.salt.length).toBe(made.salt.length);
    expect(decoy.digest.length).toBe(made.digest.length);
  });

  it('matches no guessable secret', async () => {
    // Its form (the test above) makes a false here the secret's, not a hash that cannot be read.
    for (const secret of [' ', '0000', '1234', 'decoy', 'password', DECOY_HASH]) {
      expect(await argon2Check(secret, DECOY_HASH)).toBe(false);
    }
    // argon2Check answers false for a hash hash-wasm cannot read, too; hash-wasm itself throws.
    await expect(hashWasm().argon2Verify({ password: '1234', hash: DECOY_HASH })).resolves.toBe(
      false,
    );
  });
});
