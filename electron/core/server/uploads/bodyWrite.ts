/** Writing a request's body into an upload's partial file, hashing it on the way. */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { IHasher } from '../../util/hasher.js';
import type { Db } from '../../db/open.js';
import { flipBit } from '../../harvest/copy.js';
import { injected } from '../../util/failpoint.js';
import type { Logger } from '../../util/log.js';
import { freeHashers, type HashStates } from './hashing.js';
import { CHUNK, NOFOLLOW, writeFull } from './partialFile.js';
import { UploadRefusal } from './refusal.js';
import { setReceived, uploadByUuid, type UploadRow } from './store.js';

/** A long upload is flushed and its offset recorded this often, so a crash loses little. */
const RECORD_EVERY = 64 * 1024 * 1024;

/**
 * Writes the body to the partial in 1 MiB steps, hashing what is written. Receiving, writing
 * and flushing overlap: one buffer fills while the other is written, and the flush that
 * records progress runs behind both (waiting on it would stall the sender every 64 MiB).
 */
export async function receiveBody(
  deps: { db: Db; log: Logger },
  hashStates: HashStates,
  row: UploadRow,
  body: Readable | null,
): Promise<{ bytes: number; hash: string | null }> {
  const { db } = deps;
  const handle = await open(row.partial_path as string, constants.O_RDWR | NOFOLLOW);
  let hasher: IHasher | null = null;
  let writing: Promise<void> = Promise.resolve();
  let flushing: Promise<void> = Promise.resolve();
  try {
    hasher = await hashStates.hasherAt(row, handle);
    const h = hasher;
    const buffers = [Buffer.allocUnsafe(CHUNK), Buffer.allocUnsafe(CHUNK)];
    let current = 0;
    let filled = 0;
    let position = row.received;
    let unrecorded = 0;
    const dispatch = async (): Promise<void> => {
      if (filled === 0) return;
      // The one write in flight is the other buffer's: the next to fill.
      await writing;
      const buffer = buffers[current] as Buffer;
      h.update(buffer.subarray(0, filled));
      writing = writeFull(handle, buffer, filled, position);
      writing.catch(() => undefined);
      position += filled;
      unrecorded += filled;
      current ^= 1;
      filled = 0;
      if (unrecorded >= RECORD_EVERY) {
        unrecorded = 0;
        const [written, upTo] = [writing, position];
        flushing = flushing
          .then(() => written)
          .then(() => handle.datasync())
          .then(() => setReceived(db, row.uuid, upTo));
        flushing.catch(() => undefined);
      }
    };
    let tooLong = false;
    try {
      for await (const chunk of body ?? []) {
        let data = chunk as Buffer;
        const room = row.size - position - filled;
        if (data.length > room) {
          tooLong = true;
          data = data.subarray(0, room);
        }
        while (data.length > 0) {
          const n = data.copy(buffers[current], filled);
          filled += n;
          data = data.subarray(n);
          if (filled === CHUNK) await dispatch();
        }
        if (tooLong) break;
      }
    } catch (error) {
      // The connection ended mid-body (or a newer request stopped it): what arrived stays.
      deps.log.info({ upload: row.uuid, err: error }, 'upload: body cut short');
    }
    await dispatch();
    await writing;
    await flushing;
    // A bit flipped on its way to the disk, for the test that the re-read in finish catches
    // what the hash of the arriving bytes cannot.
    if (injected('upload.flip-bit') && position > 0) flipBit(handle.fd, position);
    await handle.datasync();
    setReceived(db, row.uuid, position);
    if (tooLong) {
      hashStates.remember(row.uuid, position, h);
      throw new UploadRefusal(400, `body: longer than the ${row.size} bytes declared`);
    }
    if (position < row.size) {
      hashStates.remember(row.uuid, position, h);
      return { bytes: position, hash: null };
    }
    hashStates.delete(row.uuid);
    return { bytes: position, hash: h.digest('hex') };
  } catch (error) {
    // The hasher may hold bytes that did not reach the disk: rebuilt from the disk next time.
    if (!(error instanceof UploadRefusal)) hashStates.delete(row.uuid);
    await Promise.allSettled([writing, flushing]);
    if (!(error instanceof UploadRefusal)) {
      // What a failed write (a full disk) left past the recorded offset is sent again on the
      // resume: cut now, it does not keep the disk full for every other upload meanwhile.
      const recorded = uploadByUuid(db, row.uuid)?.received;
      if (recorded !== undefined) await handle.truncate(recorded).catch(() => undefined);
    }
    throw error;
  } finally {
    if (hasher) freeHashers.push(hasher);
    await handle.close();
  }
}
