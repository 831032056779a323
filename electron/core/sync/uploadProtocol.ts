/**
 * Uploads from a station into a `server` storage location (issue 5), shared by the station
 * (electron/core/harvest/upload.ts) and the server (electron/core/server/uploads). Every request
 * carries `Authorization: Station <key>`, as the rest of the sync API does.
 *
 *   POST /sync/uploads  UploadRequest  ->  UploadState
 *     Opens an upload, or finds the one already open for the same file version (station, file
 *     uuid, storage location, destination, size and hash): a retry resumes at its `offset`, and
 *     a finished upload answers its result again. The same content already at the destination
 *     answers `skipped` at once, with no bytes sent.
 *   PATCH /sync/uploads/:id  (Upload-Offset: N, application/octet-stream)  ->  UploadState
 *     Appends the body at N, which must be the server's offset (409 with the offset if not).
 *     A body may stop short: the offset says how far it got. Once the offset reaches the size,
 *     the server re-reads the file from its disk, hashes it and places it only if both the bytes
 *     received and the bytes on disk hash to the declared hash (422 otherwise, upload deleted).
 *   GET /sync/uploads/:id  ->  UploadState
 *   DELETE /sync/uploads/:id  ->  204 (an unfinished upload is dropped with its bytes)
 *
 * Errors answer `{ detail }`, naming the field and the rule; 409 adds `offset`, 422 adds the
 * server's hashes.
 */
import { z } from 'zod';
import type { Same } from './deltaSchema.js';

/**
 * The code of a 403 for a destination in the folder of another station's instrument: a station
 * tries it again after its backoff (an instrument renamed or moved meanwhile, whose change it
 * has not pulled yet) instead of waiting for a Retry.
 */
/**
 * The code of a 409 answer to an upload whose destination needs a folder where the server has a
 * file: the station's transfer fails with the reason and is tried again after its backoff (an
 * admin may move the file meanwhile).
 */
export const DESTINATION_BLOCKED = 'destination_blocked';
export const DESTINATION_OF_ANOTHER_INSTRUMENT = 'destination_of_another_instrument';

export const UPLOADS_PATH = '/sync/uploads';
export const UPLOAD_OFFSET_HEADER = 'upload-offset';

const XXH3_128_HEX = /^[0-9a-f]{32}$/;

export const uploadRequestSchema = z.object({
  /** The station's harvest_files uuid. */
  file_uuid: z.string().min(1).max(64),
  storage_location_uuid: z.string().min(1).max(64),
  /**
   * The storage location's name, for a location the station configured itself (its local
   * bundle): its uuid is the station's own, and the server knows the location by name. The
   * uuid decides where the server knows it (a location the server gave the station, renamed
   * since or not); uploads go to a 'server' location only (server/uploads/store.ts findLocation).
   */
  storage_location: z.string().min(1).max(200),
  /** Relative to the location's base_path on the server, as the station's template rendered it. */
  destination_path: z.string().min(1).max(4096),
  size: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  /** XXH3-128 of the whole file, lowercase hex (hash_algorithm xxh3-128). */
  xxhash: z.string().regex(XXH3_128_HEX, 'must be an XXH3-128 hash: 32 lowercase hex digits'),
});

export type UploadRequest = z.infer<typeof uploadRequestSchema>;

/** An upload's state, as its answers give it and the server's harvest_uploads stores it. */
export const UPLOAD_STATUSES = ['receiving', 'completed', 'skipped'] as const;
export type UploadStatus = (typeof UPLOAD_STATUSES)[number];

export interface UploadState {
  upload_id: string;
  status: UploadStatus;
  /** Bytes the server holds; the next PATCH starts here. Equals size once finished. */
  offset: number;
  size: number;
  /**
   * Relative to base_path: what was asked for while receiving; once finished, where the file is
   * (`name (1).ext` when other content held the name).
   */
  destination_path: string;
  /** Once finished: the file's absolute path on the server. */
  server_path: string | null;
  /** Once finished: the server's XXH3-128 of the file as re-read from its disk. */
  dest_checksum: string | null;
  checksum_verified: boolean;
  note: string;
}

/**
 * Every answer of the upload routes but an error, as the server's API docs describe it
 * (server/uploads/docs.ts) and as the station checks it before it sends a byte or counts a
 * transfer (harvest/upload.ts): a flag read from a string, or an offset beyond the file, would
 * make it send from the wrong place or take an upload as verified that was not.
 */
export const uploadStateSchema = z
  .object({
    upload_id: z.string().min(1),
    status: z.enum(UPLOAD_STATUSES),
    offset: z.int().min(0),
    size: z.int().min(0),
    destination_path: z.string(),
    server_path: z.string().nullable(),
    dest_checksum: z.string().nullable(),
    checksum_verified: z.boolean(),
    note: z.string(),
  })
  .refine((state) => state.offset <= state.size, {
    path: ['offset'],
    message: 'must not be beyond size',
  })
  .meta({ id: 'UploadState' });

// Compile-time: the schema reads as exactly the interface above.
const schemaMatchesProtocol: Same<z.output<typeof uploadStateSchema>, UploadState> = true;
void schemaMatchesProtocol;

/** The body of a 409: the offset the next PATCH must give. */
export interface OffsetConflict {
  detail: string;
  offset: number;
}

/** The body of a 422 after the last byte: nothing was kept. */
export interface HashMismatch {
  detail: string;
  /** What the bytes received hash to, and the file re-read from the server's disk. */
  received_hash: string;
  server_hash: string;
}
