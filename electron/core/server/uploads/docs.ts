/** The upload routes in /openapi.json (electron/core/sync/uploadProtocol.ts says what they do). */
import { z } from 'zod';
import { detailResponse } from '../openapi/common.js';
import type { ApiDocs } from '../openapi/registry.js';
import { SYNC_TAG, withStationResponses } from '../sync/docs.js';
import {
  UPLOADS_PATH,
  uploadRequestSchema,
  uploadStateSchema,
  type UploadRequest,
  type UploadState,
} from '../../sync/uploadProtocol.js';

const idParams = z.object({ id: z.string().describe('The upload_id the POST answered.') });

const requestExample: UploadRequest = {
  file_uuid: '0193a1f2-7c1e-7b55-9d7a-2f1c9e0b4d11',
  storage_location_uuid: '0193a1f0-1111-7222-8333-444455556666',
  storage_location: 'central',
  destination_path: 'TEM camera/2026/11/20/grid3_0001.dm4',
  size: 67_108_864,
  xxhash: '6f1ed002ab5595859014ebf0951522d9',
};

const receiving: UploadState = {
  upload_id: '0193a1f2-9000-7000-8000-000000000001',
  status: 'receiving',
  offset: 16_777_216,
  size: 67_108_864,
  destination_path: 'TEM camera/2026/11/20/grid3_0001.dm4',
  server_path: null,
  dest_checksum: null,
  checksum_verified: false,
  note: '',
};

const completed: UploadState = {
  ...receiving,
  status: 'completed',
  offset: 67_108_864,
  server_path: '/srv/labstation/central/TEM camera/2026/11/20/grid3_0001.dm4',
  dest_checksum: '6f1ed002ab5595859014ebf0951522d9',
  checksum_verified: true,
};

const notFound = detailResponse(
  'No such upload of this station.',
  'upload: not found; start it again with POST /sync/uploads',
);

export function describeUploadApi(docs: ApiDocs): void {
  docs.add({
    method: 'POST',
    path: UPLOADS_PATH,
    tag: SYNC_TAG,
    summary: 'Open (or resume) an upload into a server storage location',
    description:
      'For a file version (station, file, location, destination, size, XXH3-128 hash). The ' +
      'same request again answers the same upload at the offset the server holds, so a cut ' +
      'upload resumes; a finished one answers its result again. The same content already at ' +
      'the destination answers `skipped` at once. A station writes only into locations its ' +
      'instruments (or their redirect hooks) use, and never into the folder of an instrument ' +
      'another station runs there (the folder its template fixes with its name), nor a file ' +
      'where that folder or one holding it must be.',
    security: 'station',
    body: uploadRequestSchema,
    bodyExample: requestExample,
    responses: withStationResponses({
      200: {
        description: 'The upload and its offset.',
        schema: uploadStateSchema,
        example: receiving,
      },
      400: detailResponse(
        'A field breaks a rule (the destination leaves base_path, the location is not a server one).',
        'destination_path: must not contain ..',
      ),
      403: detailResponse(
        'No instrument of this station stores there, or the destination is in the folder of another station’s instrument.',
        'storage_location: central is not used by an instrument of this station (nor named by a redirect hook for them)',
      ),
      404: detailResponse(
        'No such storage location.',
        'storage_location_uuid: the server has no storage location …',
      ),
      409: detailResponse(
        'A file on the server stands where the destination needs a folder.',
        'destination_path: a file on the server stands where the destination needs a folder (…); an admin must move it',
      ),
      507: detailResponse(
        'The storage location is full.',
        'the storage location on the server is full: ENOSPC: no space left on device',
      ),
      503: detailResponse(
        'The location’s folder is not reachable on the server, or the upload was dropped while ' +
          'it was opened or resumed: open it again.',
        'storage_location: central (/srv/central) is not reachable on the server: …',
      ),
    }),
  });
  docs.add({
    method: 'GET',
    path: `${UPLOADS_PATH}/{id}`,
    tag: SYNC_TAG,
    summary: 'The state of an upload',
    security: 'station',
    params: idParams,
    responses: withStationResponses({
      200: { description: 'The upload.', schema: uploadStateSchema, example: receiving },
      404: notFound,
    }),
  });
  docs.add({
    method: 'PATCH',
    path: `${UPLOADS_PATH}/{id}`,
    tag: SYNC_TAG,
    summary: 'Append bytes at the offset; the last byte verifies and places the file',
    description:
      'Header `Upload-Offset` must be the server’s offset. The body (application/octet-stream) ' +
      'is streamed to disk and hashed as it arrives; a body that stops short keeps what came. ' +
      'At the last byte the server re-reads the file from its disk and places it only when both ' +
      'the bytes received and the bytes on disk hash to the declared hash. A key replaced, or ' +
      'the station disabled or deleted, while the body arrives or the file is placed answers ' +
      '401 and drops the upload: no record, partial or placed file stays; an upload dropped ' +
      'meanwhile (its station disabled, then enabled again) answers 404: open it again (POST).',
    security: 'station',
    params: idParams,
    bodyContentType: 'application/octet-stream',
    responses: withStationResponses({
      200: {
        description: 'The upload after these bytes.',
        schema: uploadStateSchema,
        example: completed,
      },
      400: detailResponse(
        'Upload-Offset missing, a body longer than declared, the location disabled, or its ' +
          'folder leading outside its base path now.',
        'Upload-Offset: header required, a whole number of bytes',
      ),
      403: detailResponse(
        'The station no longer stores there, or the destination is now in the folder of ' +
          'another station’s instrument (`"code": "destination_of_another_instrument"`).',
        'destination_path: SEM-2/a.tif is in sem-2/, the folder of the instrument sem-2, which another station runs',
      ),
      409: {
        description: 'Upload-Offset is not the server’s offset: send from `offset`.',
        schema: z.object({ detail: z.string(), offset: z.number().int() }),
        example: { detail: 'Upload-Offset: the server holds 16777216 bytes', offset: 16_777_216 },
      },
      422: {
        description: 'The file does not hash to the declared hash: nothing was kept.',
        schema: z.object({
          detail: z.string(),
          received_hash: z.string(),
          server_hash: z.string(),
        }),
        example: {
          detail: 'xxhash: the file does not hash to the declared hash; nothing was kept',
          received_hash: '00000000000000000000000000000000',
          server_hash: '00000000000000000000000000000000',
        },
      },
      404: notFound,
      415: detailResponse(
        'The body is not application/octet-stream.',
        'body: Content-Type must be application/octet-stream',
      ),
      507: detailResponse(
        'The storage location is full: what came past the recorded offset is cut; resume later.',
        'the storage location on the server is full: ENOSPC: no space left on device',
      ),
    }),
  });
  docs.add({
    method: 'DELETE',
    path: `${UPLOADS_PATH}/{id}`,
    tag: SYNC_TAG,
    summary: 'Drop an unfinished upload and its bytes',
    security: 'station',
    params: idParams,
    responses: withStationResponses({
      204: { description: 'Dropped.', example: null },
      404: notFound,
      409: detailResponse(
        'The upload is finished: it stays.',
        'upload: already completed; a finished upload stays',
      ),
    }),
  });
}
