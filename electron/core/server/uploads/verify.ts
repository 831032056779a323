/**
 * Checking a finished upload before it is placed: its partial flushed to the disk, then re-read
 * and hashed, both hashes compared with the station's; a mismatch deletes the upload (422).
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Db } from '../../db/open.js';
import { hashFile } from '../../harvest/copy.js';
import { removeQuietly } from '../../harvest/place.js';
import type { Logger } from '../../util/log.js';
import { freeHashers, type HashStates } from './hashing.js';
import { NOFOLLOW } from './partialFile.js';
import { UploadRefusal } from './refusal.js';
import { deleteUpload, type UploadRow } from './store.js';

/**
 * The re-read hash and size of the finished partial of `row`, once they and `receivedHash` (the
 * hash of the bytes as they arrived; null: rebuilt from the disk) agree with the station's.
 */
export async function verifyFinished(
  deps: { db: Db; log: Logger },
  hashStates: HashStates,
  row: UploadRow,
  receivedHash: string | null,
): Promise<{ hash: string; bytes: number }> {
  const { db } = deps;
  const partial = row.partial_path as string;
  const handle = await open(partial, constants.O_RDWR | NOFOLLOW);
  let received = receivedHash;
  try {
    await handle.sync();
    if (received === null) {
      // Everything had arrived before (an earlier finish failed): the disk is all there is.
      const hasher = await hashStates.hasherAt(row, handle);
      received = hasher.digest('hex');
      freeHashers.push(hasher);
    }
  } finally {
    await handle.close();
  }
  const reread = await hashFile(partial);
  if (received !== row.xxhash || reread.hash !== row.xxhash || reread.bytes !== row.size) {
    await removeQuietly(partial);
    deleteUpload(db, row.uuid);
    const where =
      received !== row.xxhash
        ? `the ${row.size} bytes received hash to ${received}`
        : `the file re-read from the server's disk hashes to ${reread.hash} (${reread.bytes} bytes)`;
    deps.log.warn(
      { upload: row.uuid, declared: row.xxhash, received, reread: reread.hash },
      'upload: checksum mismatch',
    );
    throw new UploadRefusal(
      422,
      `xxhash: checksum mismatch: the station declared ${row.xxhash}, ${where}; ` +
        'the upload was deleted, send the file again',
      { received_hash: received, server_hash: reread.hash },
    );
  }
  return reread;
}
