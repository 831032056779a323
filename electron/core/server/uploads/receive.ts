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
import { constants, type Stats } from 'node:fs';
import { lstat, open, readdir, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, posix } from 'node:path';
import type { Readable } from 'node:stream';
import { createXXHash128, type IHasher } from '../../util/hasher.js';
import type { Db } from '../../db/open.js';
import { makeFolders, removeEmptyFolder, takeBackFolders } from '../../util/folders.js';
import { flipBit, hashFile } from '../../harvest/copy.js';
import {
  freeOrSameName,
  makeFoldersInside,
  inFolder,
  placeWithoutClobber,
  removeQuietly,
  syncFolder,
} from '../../harvest/place.js';
import type { UploadState } from '../../sync/uploadProtocol.js';
import { injected } from '../../util/failpoint.js';
import { newUuid } from '../../util/ids.js';
import type { Logger } from '../../util/log.js';
import {
  deleteUpload,
  findUpload,
  finishUpload,
  insertUpload,
  partialPaths,
  setReceived,
  supersededUploads,
  uploadByUuid,
  type Finished,
  type ServerLocation,
  type UploadKey,
  type UploadRow,
} from './store.js';

export const UPLOAD_FOLDER = '.labstation-uploads';
const CHUNK = 1024 * 1024;
/** A long upload is flushed and its offset recorded this often, so a crash loses little. */
const RECORD_EVERY = 64 * 1024 * 1024;
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** A PATCH's upload whose record went meanwhile (dropped): the station opens it anew. */
const DROPPED = 'upload: not found (dropped); start it again';
/** A POST's upload whose record went meanwhile: asked again, it is opened anew. */
const DROPPED_RESUMED = 'upload: dropped while resumed; ask again';
const DROPPED_OPENED = 'upload: dropped while opened; ask again';

/** A refusal with its HTTP status; `extra` goes into the body beside `detail`. */
export class UploadRefusal extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
  }
}

/**
 * What the request's station would be refused now (the 401 detail: a new key, the station
 * disabled or deleted since the request was let in), or null while it is let in.
 */
export type RefusedNow = () => string | null;

/** Throws the 401 of a station refused now; asked where nothing awaits before the write. */
function assertLetIn(refusedNow: RefusedNow): void {
  const refused = refusedNow();
  if (refused !== null) throw new UploadRefusal(401, refused);
}

const freeHashers: IHasher[] = [];
async function takeHasher(): Promise<IHasher> {
  return (freeHashers.pop() ?? (await createXXHash128())).init();
}

/** Absolute destination of a checked relative path ('/'-separated). */
export function destinationIn(location: ServerLocation, relative: string): string {
  return join(location.base_path, ...relative.split('/'));
}

export function stateOf(row: UploadRow, location: ServerLocation): UploadState {
  const finished = row.state !== 'receiving';
  return {
    upload_id: row.uuid,
    status: row.state,
    offset: row.received,
    size: row.size,
    destination_path: row.final_path ?? row.destination_path,
    server_path: row.final_path ? destinationIn(location, row.final_path) : null,
    dest_checksum: finished ? row.dest_checksum : null,
    checksum_verified: finished,
    note: row.note,
  };
}

async function readFull(handle: FileHandle, buffer: Buffer, position: number): Promise<number> {
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(
      buffer,
      filled,
      buffer.length - filled,
      position + filled,
    );
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled;
}

async function writeFull(handle: FileHandle, buffer: Buffer, length: number, position: number) {
  let written = 0;
  while (written < length) {
    const { bytesWritten } = await handle.write(
      buffer,
      written,
      length - written,
      position + written,
    );
    written += bytesWritten;
  }
}

/** True when `path` is a regular file (not a link) of `size` bytes that hashes to `hash`. */
async function holdsSameContent(path: string, size: number, hash: string): Promise<boolean> {
  const found = await lstat(path).catch(() => null);
  return found !== null && found.isFile() && found.size === size
    ? (await hashFile(path)).hash === hash
    : false;
}

/**
 * The folders a refused placement into `folder` made (`made`, outermost first), those still
 * empty, deepest first, each in its own turn (inFolder; `folder`'s is the caller's): an upload
 * into one of them makes it again, or has put its file there, before or after, never between
 * its folder made and its file placed. Another upload's folder below a made one keeps that one
 * and those above it (rmdir refuses a folder that is not empty).
 */
function takeBackUploadFolders(made: readonly string[], folder: string): Promise<void> {
  return takeBackFolders(made, (at) =>
    at === folder ? removeEmptyFolder(at) : inFolder(at, () => removeEmptyFolder(at)),
  );
}

interface Busy {
  stop(): void;
  done: Promise<void>;
}

export class UploadReceiver {
  /**
   * Work on one upload at a time; a newer request stops the body an older one still reads. By
   * uuid: a request at work on an upload dropped meanwhile (its station refused) holds its turn
   * under its own upload's name, never under an id another upload may have taken since.
   */
  private readonly busy = new Map<string, Busy>();
  /**
   * Hasher states (hash-wasm save()) at an upload's recorded offset, so a PATCH that follows
   * another need not re-read the partial. Only for this process: after a restart, or when the
   * offset does not match, the state is rebuilt from the bytes on disk. By uuid, not id: a
   * record deleted outside the receiver (its station refused, dropUploadsOfRefused) leaves its
   * state here.
   */
  private readonly hashStates = new Map<string, { offset: number; state: Uint8Array }>();

  constructor(private readonly deps: { db: Db; log: Logger }) {}

  private async exclusive<T>(uuid: string, stop: () => void, work: () => Promise<T>): Promise<T> {
    for (let current = this.busy.get(uuid); current; current = this.busy.get(uuid)) {
      current.stop();
      await current.done;
    }
    let release = (): void => undefined;
    const done = new Promise<void>((resolve) => (release = resolve));
    this.busy.set(uuid, { stop, done });
    try {
      return await work();
    } finally {
      this.busy.delete(uuid);
      release();
    }
  }

  isBusy(uuid: string): boolean {
    return this.busy.has(uuid);
  }

  private rememberHash(uuid: string, offset: number, hasher: IHasher): void {
    this.hashStates.delete(uuid);
    this.hashStates.set(uuid, { offset, state: hasher.save() });
    // A few hundred bytes each; the oldest go first (they are rebuilt from disk if needed).
    if (this.hashStates.size > 4096) {
      this.hashStates.delete(this.hashStates.keys().next().value as string);
    }
  }

  /** A hasher holding the upload's first `row.received` bytes. */
  private async hasherAt(row: UploadRow, handle: FileHandle): Promise<IHasher> {
    const hasher = await takeHasher();
    const saved = this.hashStates.get(row.uuid);
    if (saved?.offset === row.received) return hasher.load(saved.state);
    const buffer = Buffer.allocUnsafe(CHUNK);
    for (let position = 0; position < row.received;) {
      const want = Math.min(CHUNK, row.received - position);
      const n = await readFull(handle, buffer.subarray(0, want), position);
      if (n < want) throw new Error(`the partial file ${row.partial_path} shrank while read`);
      hasher.update(buffer.subarray(0, n));
      position += n;
    }
    return hasher;
  }

  /**
   * Makes the partial agree with the record: bytes beyond the recorded offset (written before a
   * crash, never confirmed) are cut off; a partial that is shorter or gone moves the offset back.
   */
  private async reconcile(row: UploadRow, location: ServerLocation): Promise<UploadRow> {
    const path = row.partial_path as string;
    const found: Stats | null = await lstat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
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
      await this.createPartial(location, path);
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

  private async createPartial(location: ServerLocation, path: string): Promise<void> {
    const folder = join(location.base_path, UPLOAD_FOLDER);
    await makeFolders(folder, 0o700);
    const found = await lstat(folder);
    if (!found.isDirectory()) {
      throw new Error(`${folder} is not a folder (a symbolic link?); uploads cannot be kept there`);
    }
    const handle = await open(path, constants.O_CREAT | constants.O_EXCL | constants.O_RDWR, 0o644);
    await handle.close();
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
    try {
      await this.createPartial(location, partial);
    } catch (error) {
      deleteUpload(db, row.uuid);
      throw error;
    }
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
    return this.exclusive(
      row.uuid,
      () => undefined,
      async () => {
        const now = await this.refusedAtTurn(row, refusedNow);
        if (!now) throw new UploadRefusal(503, DROPPED_RESUMED);
        if (now.state !== 'receiving') return stateOf(now, location);
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
    return this.exclusive(row.uuid, stop, async () => {
      let current = await this.refusedAtTurn(row, refusedNow);
      if (!current) throw new UploadRefusal(404, DROPPED);
      if (current.state !== 'receiving') return stateOf(current, location);
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
      const received = await this.receive(receiving, body).catch(async (error: unknown) => {
        await this.dropUnlessGoingOn(receiving, refusedNow, 404, DROPPED);
        throw error;
      });
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

  /**
   * Writes the body to the partial in 1 MiB steps, hashing what is written. Receiving, writing
   * and flushing overlap: one buffer fills while the other is written, and the flush that
   * records progress runs behind both (waiting on it would stall the sender every 64 MiB).
   */
  private async receive(
    row: UploadRow,
    body: Readable | null,
  ): Promise<{ bytes: number; hash: string | null }> {
    const { db } = this.deps;
    const handle = await open(row.partial_path as string, constants.O_RDWR | NOFOLLOW);
    let hasher: IHasher | null = null;
    let writing: Promise<void> = Promise.resolve();
    let flushing: Promise<void> = Promise.resolve();
    try {
      hasher = await this.hasherAt(row, handle);
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
        this.deps.log.info({ upload: row.uuid, err: error }, 'upload: body cut short');
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
        this.rememberHash(row.uuid, position, h);
        throw new UploadRefusal(400, `body: longer than the ${row.size} bytes declared`);
      }
      if (position < row.size) {
        this.rememberHash(row.uuid, position, h);
        return { bytes: position, hash: null };
      }
      this.hashStates.delete(row.uuid);
      return { bytes: position, hash: h.digest('hex') };
    } catch (error) {
      // The hasher may hold bytes that did not reach the disk: rebuilt from the disk next time.
      if (!(error instanceof UploadRefusal)) this.hashStates.delete(row.uuid);
      await Promise.allSettled([writing, flushing]);
      throw error;
    } finally {
      if (hasher) freeHashers.push(hasher);
      await handle.close();
    }
  }

  /** The last byte is in: fsync, re-read and hash, compare, place without clobbering. */
  private async finish(
    row: UploadRow,
    location: ServerLocation,
    receivedHash: string | null,
    refusedNow: RefusedNow,
  ): Promise<UploadState> {
    const { db } = this.deps;
    const partial = row.partial_path as string;
    const handle = await open(partial, constants.O_RDWR | NOFOLLOW);
    let received = receivedHash;
    try {
      await handle.sync();
      if (received === null) {
        // Everything had arrived before (an earlier finish failed): the disk is all there is.
        const hasher = await this.hasherAt(row, handle);
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
      this.deps.log.warn(
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

    const destination = destinationIn(location, row.destination_path);
    const folder = dirname(destination);
    // The destination's folders this placement made: taken back, when still empty, should it
    // be refused (its station refused as it is recorded, or the placement failing).
    const made: string[] = [];
    const place = async (): Promise<Finished> => {
      const outside = await makeFoldersInside(location.base_path, folder, made);
      if (outside !== null) {
        await removeQuietly(partial);
        deleteUpload(db, row.uuid);
        throw new UploadRefusal(
          400,
          `destination_path: the folder leads outside the storage location (to ${outside}, ` +
            'through a symbolic link)',
        );
      }
      // The same content at the name, or at a numbered name before a free one, is a skip.
      const holds = (path: string) => holdsSameContent(path, row.size, row.xxhash);
      let name: string;
      for (;;) {
        const next = await freeOrSameName(destination, holds);
        if (next.same) {
          await removeQuietly(partial);
          return {
            state: 'skipped',
            finalPath: posix.join(posix.dirname(row.destination_path), basename(next.name)),
            destChecksum: reread.hash,
            note: 'the destination already holds the same content',
          };
        }
        name = next.name;
        if (await placeWithoutClobber(partial, name)) break;
      }
      await syncFolder(folder);
      const finalPath = posix.join(posix.dirname(row.destination_path), basename(name));
      return {
        state: 'completed',
        finalPath,
        destChecksum: reread.hash,
        note:
          name === destination
            ? ''
            : `the destination held other content; this copy was written as ${basename(name)}`,
      };
    };
    const done = await inFolder(folder, async () => {
      try {
        return await this.recordFinished(row, location, await place(), refusedNow);
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

  /** Drops an unfinished upload and its bytes (a superseded version, DELETE, the cleanup). */
  drop(row: UploadRow): Promise<void> {
    return this.exclusive(
      row.uuid,
      () => undefined,
      async () => {
        const now = uploadByUuid(this.deps.db, row.uuid);
        if (!now || now.state !== 'receiving') return;
        await removeQuietly(now.partial_path);
        deleteUpload(this.deps.db, now.uuid);
        this.hashStates.delete(now.uuid);
      },
    );
  }

  /** Partial files no record counts on, older than `before` (ms): left by a crash. */
  async removeOrphans(locations: ServerLocation[], before: number): Promise<number> {
    const known = partialPaths(this.deps.db);
    let removed = 0;
    for (const location of locations) {
      const folder = join(location.base_path, UPLOAD_FOLDER);
      const names = await readdir(folder).catch(() => [] as string[]);
      for (const name of names) {
        const path = join(folder, name);
        if (!name.endsWith('.partial') || known.has(path)) continue;
        const found = await stat(path).catch(() => null);
        if (found?.isFile() && found.mtimeMs < before) {
          await removeQuietly(path);
          removed += 1;
        }
      }
    }
    return removed;
  }
}
