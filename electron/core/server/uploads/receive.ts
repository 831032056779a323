/**
 * The server's half of an upload: a partial file under the storage location, appended to from
 * request bodies with bounded memory while hashing, then re-read from disk, compared with the
 * station's hash and placed without overwriting anything.
 *
 * Partials live in `<base_path>/.labstation-uploads/<upload uuid>.partial` rather than beside
 * their destination: destination folders are made only for verified files (an abandoned upload
 * leaves nothing in the folders people browse), the cleanup has one folder per location to look
 * at, and the partial is still on the storage location's file system, so placing it is a link
 * or rename, not a copy.
 */
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { basename, dirname, join, posix } from 'node:path';
import type { Readable } from 'node:stream';
import type { Db } from '../../db/open.js';
import { freeOrSameName, inFolder, removeQuietly, statIfThere } from '../../harvest/place.js';
import type { UploadState } from '../../sync/uploadProtocol.js';
import { newUuid } from '../../util/ids.js';
import type { Logger } from '../../util/log.js';
import { receiveBody } from './bodyWrite.js';
import { HashStates } from './hashing.js';
import { createPartial, NOFOLLOW, removeOrphans, UPLOAD_FOLDER } from './partialFile.js';
import {
  holdsSameContent,
  placeFinished,
  placedBefore,
  takeBackUploadFolders,
} from './placement.js';
import {
  assertLetIn,
  DROPPED,
  DROPPED_OPENED,
  DROPPED_RESUMED,
  UploadRefusal,
  type RefusedNow,
} from './refusal.js';
import { destinationIn, stateOf } from './state.js';
import {
  deleteUpload,
  findUpload,
  finishUpload,
  insertUpload,
  locationById,
  setReceived,
  supersededUploads,
  uploadByUuid,
  type Finished,
  type ServerLocation,
  type UploadKey,
  type UploadRow,
} from './store.js';
import { UploadTurns } from './turns.js';
import { verifyFinished } from './verify.js';

export { UPLOAD_FOLDER } from './partialFile.js';
export { UploadRefusal, type RefusedNow } from './refusal.js';
export { destinationIn, stateOf } from './state.js';

export class UploadReceiver {
  private readonly turns = new UploadTurns();
  private readonly hashStates = new HashStates();

  constructor(private readonly deps: { db: Db; log: Logger }) {}

  isBusy(uuid: string): boolean {
    return this.turns.isBusy(uuid);
  }

  /**
   * Makes the partial agree with the record: bytes beyond the recorded offset (written before a
   * crash, never confirmed) are cut off; a partial that is shorter or gone moves the offset back.
   */
  private async reconcile(row: UploadRow, location: ServerLocation): Promise<UploadRow> {
    const path = row.partial_path as string;
    const found = await statIfThere(path, lstat);
    if (found?.isFile()) {
      if (found.size === row.received) return row;
      if (found.size > row.received) {
        const handle = await open(path, constants.O_RDWR | NOFOLLOW);
        try {
          await handle.truncate(row.received);
          await handle.datasync();
        } finally {
          await handle.close();
        }
        return row;
      }
    } else {
      if (found) await removeQuietly(path);
      await createPartial(location, path);
    }
    const received = found?.isFile() ? found.size : 0;
    this.deps.log.warn(
      { upload: row.uuid, recorded: row.received, found: received },
      'upload: the partial file holds less than recorded; resuming from what it holds',
    );
    this.hashStates.delete(row.uuid);
    setReceived(this.deps.db, row.uuid, received);
    return { ...row, received };
  }

  /**
   * POST: the upload for this file version, found again (resumed) or opened. A station refused
   * by the time its record would be written (`refusedNow`), or once its upload is found again,
   * gets its 401 and nothing of the unfinished upload is kept.
   */
  async open(
    location: ServerLocation,
    key: UploadKey,
    refusedNow: RefusedNow,
  ): Promise<UploadState> {
    const { db } = this.deps;
    for (const older of supersededUploads(db, key)) await this.drop(older);
    const existing = findUpload(db, key);
    if (existing) return this.resume(existing, location, refusedNow);

    // The same content at the destination, or at a numbered name before a free one: nothing
    // to send.
    const there = await freeOrSameName(destinationIn(location, key.destination), (path) =>
      holdsSameContent(path, key.size, key.xxhash),
    );
    if (there.same) {
      const skipped: Finished = {
        state: 'skipped',
        finalPath: posix.join(posix.dirname(key.destination), basename(there.name)),
        destChecksum: key.xxhash,
        note: 'the destination already holds the same content',
      };
      let row = findUpload(db, key);
      if (!row) {
        assertLetIn(refusedNow);
        row = insertUpload(db, key, { uuid: newUuid(), partialPath: null, finished: skipped });
      }
      return stateOf(row, location);
    }

    const uuid = newUuid();
    const partial = join(location.base_path, UPLOAD_FOLDER, `${uuid}.partial`);
    // Another request for the same version may have opened it while this one looked.
    const raced = findUpload(db, key);
    if (raced) return this.resume(raced, location, refusedNow);
    assertLetIn(refusedNow);
    const row = insertUpload(db, key, { uuid, partialPath: partial });
    // The partial is made in the upload's turn, taken before anything is awaited: a second POST
    // for it (a retry sent while this one still works) finds the record at once, and waits for
    // the partial instead of making it too.
    await this.turns.exclusive(
      uuid,
      () => undefined,
      async () => {
        try {
          await createPartial(location, partial);
        } catch (error) {
          deleteUpload(db, row.uuid);
          throw error;
        }
      },
    );
    await this.dropUnlessGoingOn(row, refusedNow, 503, DROPPED_OPENED);
    return stateOf(row, location);
  }

  private resume(
    row: UploadRow,
    location: ServerLocation,
    refusedNow: RefusedNow,
  ): Promise<UploadState> {
    if (row.state !== 'receiving') return Promise.resolve(stateOf(row, location));
    // A body still arriving for this upload belongs to a connection the station gave up on.
    return this.turns.exclusive(
      row.uuid,
      () => undefined,
      async () => {
        const now = await this.refusedAtTurn(row, refusedNow);
        if (!now) throw new UploadRefusal(503, DROPPED_RESUMED);
        if (now.state !== 'receiving') return stateOf(now, location);
        const placed = await this.finishPlaced(now, location);
        if (placed) return stateOf(placed, location);
        const reconciled = await this.reconcile(now, location);
        // Refused meanwhile, its record may be gone with the change (dropUploadsOfRefused)
        // while reconcile made the partial anew: it goes, as for a refused append; gone with
        // its station let in again (disabled, then enabled), it goes too.
        await this.dropUnlessGoingOn(reconciled, refusedNow, 503, DROPPED_RESUMED);
        return stateOf(reconciled, location);
      },
    );
  }

  /**
   * PATCH: appends `body` at `offset`; once the last byte is in, verifies and places the file.
   * A body cut short keeps what arrived (flushed and recorded before answering). A station
   * refused once the body has ended, or when the file would be recorded finished
   * (`refusedNow`), gets its 401, and nothing of the upload stays: no record, partial or file.
   * An upload whose record went meanwhile, its station let in again (disabled, then enabled),
   * gets 404 (dropped), and nothing of it stays either.
   */
  append(
    row: UploadRow,
    location: ServerLocation,
    offset: number,
    body: Readable | null,
    length: number | null,
    refusedNow: RefusedNow,
  ): Promise<UploadState> {
    const stop = (): void => {
      body?.destroy(new Error('superseded by a newer request for this upload'));
    };
    return this.turns.exclusive(row.uuid, stop, async () => {
      let current = await this.refusedAtTurn(row, refusedNow);
      if (!current) throw new UploadRefusal(404, DROPPED);
      if (current.state !== 'receiving') return stateOf(current, location);
      const placed = await this.finishPlaced(current, location);
      if (placed) return stateOf(placed, location);
      current = await this.reconcile(current, location);
      await this.dropIfGone(current, 404, DROPPED);
      if (offset !== current.received) {
        throw new UploadRefusal(
          409,
          `Upload-Offset: is ${offset}, but the server holds ${current.received} bytes of this upload`,
          { offset: current.received },
        );
      }
      const remaining = current.size - current.received;
      if (length !== null && length > remaining) {
        throw new UploadRefusal(
          400,
          `body: ${length} bytes, but only ${remaining} remain of the declared size ${current.size}`,
        );
      }
      const receiving = current;
      const received = await receiveBody(this.deps, this.hashStates, receiving, body).catch(
        async (error: unknown) => {
          await this.dropUnlessGoingOn(receiving, refusedNow, 404, DROPPED);
          throw error;
        },
      );
      await this.dropUnlessGoingOn(receiving, refusedNow, 404, DROPPED);
      if (received.bytes < current.size)
        return stateOf({ ...current, received: received.bytes }, location);
      const whole = { ...current, received: received.bytes };
      return await this.finish(whole, location, received.hash, refusedNow).catch(
        async (error: unknown) => {
          // Refused meanwhile, its partial may have gone with its record (dropUploadsOfRefused)
          // under the hashing or the placing: its 401, or its 404 once let in again, not that
          // file error.
          if (!(error instanceof UploadRefusal)) {
            await this.dropUnlessGoingOn(whole, refusedNow, 404, DROPPED);
          }
          throw error;
        },
      );
    });
  }

  /**
   * The upload as a request finds it at its turn, once its station is asked first: refused
   * while the request waited (let in before the change, its work begun after), its record may
   * be gone with the change; the request's answer is then the 401, not that it is gone. An
   * unfinished upload goes with the 401 (dropIfRefused); a finished one stays.
   */
  private async refusedAtTurn(
    row: UploadRow,
    refusedNow: RefusedNow,
  ): Promise<UploadRow | undefined> {
    const now = uploadByUuid(this.deps.db, row.uuid);
    if (now && now.state !== 'receiving') assertLetIn(refusedNow);
    else await this.dropIfRefused(now ?? row, refusedNow);
    return now;
  }

  /**
   * The 401 of a station refused now, once nothing of its upload is left: its record first
   * (a partial whose removal fails is then an orphan, for the cleanup).
   */
  private async dropIfRefused(row: UploadRow, refusedNow: RefusedNow): Promise<void> {
    const refused = refusedNow();
    if (refused === null) return;
    deleteUpload(this.deps.db, row.uuid);
    this.hashStates.delete(row.uuid);
    await removeQuietly(row.partial_path);
    this.deps.log.info({ upload: row.uuid, refused }, 'upload: dropped, its station refused now');
    throw new UploadRefusal(401, refused);
  }

  /**
   * Whether the upload may go on, asked at each step a refusal may have come in: its station
   * refused now (dropIfRefused, the 401), or its record gone meanwhile (dropIfGone).
   */
  private async dropUnlessGoingOn(
    row: UploadRow,
    refusedNow: RefusedNow,
    status: 404 | 503,
    detail: string,
  ): Promise<void> {
    await this.dropIfRefused(row, refusedNow);
    await this.dropIfGone(row, status, detail);
  }

  /**
   * The refusal of an upload whose record went meanwhile, its station let in again (dropped as
   * its station was disabled, then enabled): the partial this request wrote to, or made anew,
   * goes too (an orphan otherwise, its record gone).
   */
  private async dropIfGone(row: UploadRow, status: 404 | 503, detail: string): Promise<void> {
    if (uploadByUuid(this.deps.db, row.uuid)) return;
    this.hashStates.delete(row.uuid);
    await removeQuietly(row.partial_path);
    this.deps.log.info({ upload: row.uuid }, 'upload: its record went meanwhile (dropped)');
    throw new UploadRefusal(status, detail);
  }

  /**
   * Records the upload finished as `finished`, or, for a station refused now or a record gone
   * meanwhile (dropped), removes the file it placed and its record and answers 401 or 404.
   * Within the folder's turn (inFolder): no other upload takes the placed file for its own
   * content before it goes.
   */
  private async recordFinished(
    row: UploadRow,
    location: ServerLocation,
    finished: Finished,
    refusedNow: RefusedNow,
  ): Promise<UploadRow> {
    const refused = refusedNow();
    const done = refused === null ? finishUpload(this.deps.db, row.uuid, finished) : undefined;
    if (done) return done;
    deleteUpload(this.deps.db, row.uuid);
    this.hashStates.delete(row.uuid);
    if (finished.state === 'completed') {
      await removeQuietly(destinationIn(location, finished.finalPath));
    }
    if (refused === null) {
      this.deps.log.info({ upload: row.uuid }, 'upload: its record went meanwhile (dropped)');
      throw new UploadRefusal(404, DROPPED);
    }
    this.deps.log.info({ upload: row.uuid, refused }, 'upload: dropped, its station refused now');
    throw new UploadRefusal(401, refused);
  }

  /** The last byte is in: fsync, re-read and hash, compare, place without clobbering. */
  private async finish(
    row: UploadRow,
    location: ServerLocation,
    receivedHash: string | null,
    refusedNow: RefusedNow,
  ): Promise<UploadState> {
    const { db } = this.deps;
    const reread = await verifyFinished(this.deps, this.hashStates, row, receivedHash);

    const destination = destinationIn(location, row.destination_path);
    const folder = dirname(destination);
    // The destination's folders this placement made: taken back, when still empty, should it
    // be refused (its station refused as it is recorded, or the placement failing).
    const made: string[] = [];
    const done = await inFolder(folder, async () => {
      try {
        return await this.recordFinished(
          row,
          location,
          await placeFinished(db, row, location, reread, destination, made),
          refusedNow,
        );
      } catch (error) {
        await takeBackUploadFolders(made, folder);
        throw error;
      }
    });
    this.deps.log.info(
      { upload: row.uuid, path: done.final_path, state: done.state },
      'upload: finished',
    );
    return stateOf(done, location);
  }

  /**
   * Records an upload placed before the server stopped, before its record (placement.ts
   * placedBefore); null when it was not.
   */
  private async finishPlaced(row: UploadRow, location: ServerLocation): Promise<UploadRow | null> {
    const destination = destinationIn(location, row.destination_path);
    const finished = await placedBefore(this.deps.db, row, location, destination);
    if (!finished) return null;
    this.hashStates.delete(row.uuid);
    const done = finishUpload(this.deps.db, row.uuid, finished);
    if (!done) {
      // Its record went meanwhile (its station refused): nothing of it stays, as recordFinished.
      const at = destinationIn(location, finished.finalPath);
      await inFolder(dirname(at), () => removeQuietly(at));
      return null;
    }
    this.deps.log.warn(
      { upload: row.uuid, path: finished.finalPath },
      'upload: placed before the server stopped, recorded now',
    );
    return done;
  }

  /**
   * Drops an unfinished upload and its bytes (a superseded version, DELETE, the cleanup).
   * Answers what became of it: dropped; gone already; or finished meanwhile, its state (a
   * request at work on it placed it first, or it was placed before the server stopped), which
   * stays.
   */
  drop(row: UploadRow): Promise<'dropped' | 'gone' | UploadRow['state']> {
    return this.turns.exclusive(
      row.uuid,
      () => undefined,
      async () => {
        const now = uploadByUuid(this.deps.db, row.uuid);
        if (!now) return 'gone';
        if (now.state !== 'receiving') return now.state;
        const location = locationById(this.deps.db, now.storage_location_id);
        const placed = location ? await this.finishPlaced(now, location) : null;
        if (placed) return placed.state;
        await removeQuietly(now.partial_path);
        deleteUpload(this.deps.db, now.uuid);
        this.hashStates.delete(now.uuid);
        return 'dropped';
      },
    );
  }

  /** Partial files no record counts on, older than `before` (ms): left by a crash. */
  removeOrphans(locations: ServerLocation[], before: number): Promise<number> {
    return removeOrphans(this.deps.db, locations, before);
  }
}
