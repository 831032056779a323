/**
 * The station sync API in the OpenAPI document: the request schemas are the ones routes.ts
 * checks requests with; the answers are described by the schemas the station parses them with
 * (sync/deltaSchema.ts for the delta, sync/answerSchema.ts for the push answer and the history
 * page), kept to the protocol.ts types by the compiler.
 */
import { z } from 'zod';
import {
  MAX_PUSH_BATCH,
  MAX_WAIT_SECONDS,
  PUSH_KINDS,
  HISTORY_PAGE,
  SYNC_CHANGES_PATH,
  SYNC_HARVEST_HISTORY_PATH,
  SYNC_PUSH_PATH,
  type FacilityDelta,
  type SyncHistoryPage,
  type PushResult,
} from '../../sync/protocol.js';
import { facilityDeltaSchema } from '../../sync/deltaSchema.js';
import { historyPageSchema, pushResultSchema } from '../../sync/answerSchema.js';
import { detailResponse } from '../openapi/common.js';
import type { ApiDocs, ResponseDoc } from '../openapi/registry.js';
import { BAD_IDENTITY, KEY_IN_USE } from '../../sync/identity.js';
import { STATION_THROTTLED } from './stationAuth.js';

export const SYNC_TAG = 'Station sync';

const STATION = '6b1d0d4e-2f51-4c43-a6a1-0e0b8f2f6a11';
const ALICE = '0c6f1b8e-8a0e-4f55-9d7e-2b8f0f3a4c21';
const PROJECT = '9f3e2d1c-4b5a-4c6d-8e7f-0a1b2c3d4e5f';
const SEM = '3a2b1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d';
const USAGE = 'd4c3b2a1-0f9e-4d8c-b7a6-958473625140';
const ENTRY = '01890a5d-ac96-774b-bcce-b302099a8057';

const deltaExample: FacilityDelta = {
  cursor: 1042,
  cursor_mark: '5f0c2a9d3b7e4c61',
  full: false,
  station: { uuid: STATION, name: 'sem', tool: 'SEM' },
  users: [
    {
      uuid: ALICE,
      username: 'alice',
      email: 'alice@example.org',
      first_name: 'Alice',
      last_name: 'Liddell',
      badge_number: '100200',
      pin_hash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA',
      is_staff: false,
      is_active: true,
      projects: [PROJECT],
      qualified_tools: [SEM],
    },
  ],
  projects: [],
  tools: [],
  deleted: { users: [], projects: [], tools: [] },
  answers: [],
  validations: [],
};

const pushExample = {
  records: [
    {
      id: 7,
      kind: 'usage_event',
      uuid: USAGE,
      payload: {
        uuid: USAGE,
        user_uuid: ALICE,
        operator_uuid: ALICE,
        project_uuid: PROJECT,
        tool_uuid: SEM,
        start: '2024-01-05T14:00:00.000Z',
        end: '2024-01-05T15:15:00.000Z',
        validated: false,
        remote_work: false,
        pre_run_data: JSON.stringify({ data_consent: 'Agree', project_id: 'PRJ-1' }),
        run_data: JSON.stringify({ problem: 'No' }),
        post_usage_pending: false,
        reminder_due: false,
        version: 2,
      },
    },
    {
      id: 8,
      kind: 'notebook_entry',
      uuid: ENTRY,
      payload: {
        uuid: ENTRY,
        kind: 'experiment',
        title: 'Cathode cross-sections',
        body: 'Polished at 5 kV.',
        tags: ['cathodes'],
        metadata: {
          extra_fields: {
            'Beam energy': { type: 'number', value: 5, units: ['kV', 'V'], unit: 'kV' },
            'Sample date': { type: 'date', value: '2024-01-05' },
          },
        },
        owner_uuid: ALICE,
        owner_username: 'alice',
        template_uuid: null,
        usage_event_uuid: USAGE,
        created_at: '2024-01-05T14:05:00.000Z',
        updated_at: '2024-01-05T14:20:00.000Z',
        version: 3,
        deleted_at: null,
      },
    },
  ],
};

const historyExample: SyncHistoryPage = {
  files: [
    {
      id: 41,
      uuid: '0192f3a4-6c1e-7d2a-9b3c-4d5e6f708192',
      persistent_id: 'ark:99999/fk4bc7dfg9h1',
      persistent_id_type: 'ark',
      watch_path: 'D:/Acquisition',
      source_path: 'D:/Acquisition/run-12/grid-3.tif',
      relative_path: 'run-12/grid-3.tif',
      filename: 'grid-3.tif',
      size: 52428800,
      mtime_ms: 1763997000000,
      xxhash: '5d1b0c9a3e7f64a2b8c1d0e9f7a6b5c4',
      hash_algorithm: 'xxh3-128',
      first_discovered_at: '2026-11-24T15:10:02.000Z',
      usage_event_uuid: '0192f3a0-1b2c-7d3e-8f40-5a6b7c8d9e0f',
      usage_context: {
        usage_event: '0192f3a0-1b2c-7d3e-8f40-5a6b7c8d9e0f',
        tool: 'SEM',
        start: '2026-11-24T14:30:00.000Z',
        end: '2026-11-24T16:05:00.000Z',
        user: { username: 'ada', name: 'Ada Lovelace', email: 'ada@example.org' },
        project: { name: 'Cathodes', application_identifier: 'PRJ-7' },
        experiment_title: 'Grain growth',
        pre_run_data: { experiment_title: 'Grain growth' },
        run_data: null,
        experiments: [],
      },
      metadata_: { file_info: { mime_type: 'image/tiff' } },
      state: 'done',
      updated_at: '2026-11-24T15:10:09.000Z',
      transfers: [
        {
          uuid: '0192f3a4-7a2b-7c3d-8e4f-5061728394a5',
          status: 'completed',
          storage_location_uuid: '0192f000-0000-7000-8000-000000000001',
          destination_path: '/archive/sem-1/2026/11/24/run-12/grid-3.tif',
          bytes_transferred: 52428800,
          dest_checksum: '5d1b0c9a3e7f64a2b8c1d0e9f7a6b5c4',
          checksum_verified: true,
          started_at: '2026-11-24T15:10:07.000Z',
          completed_at: '2026-11-24T15:10:09.000Z',
          error: '',
          note: '',
        },
      ],
    },
  ],
  next: null,
};

const identityError = (code: string): z.ZodType =>
  z.object({ detail: z.string(), code: z.literal(code) });

/** The answers of the station guard (stationAuth.ts), on every route a station calls. */
const STATION_RESPONSES: Record<number, ResponseDoc> = {
  400: {
    description:
      'A malformed `X-Labstation-Install` or `X-Labstation-Previous-Install` (not a UUID) or ' +
      '`X-Labstation-Host` (not URI-encoded, or over 255 characters), with `code` ' +
      '`bad_station_identity`.',
    schema: identityError(BAD_IDENTITY),
    example: { detail: 'x-labstation-install: must be a UUID', code: BAD_IDENTITY },
  },
  401: detailResponse(
    'No station key, an unknown one, or a disabled station; also a request let in whose key ' +
      'was replaced, or whose station was disabled or deleted, before its work was done (a ' +
      'push whose body was still arriving, a held pull, woken at once, an upload whose body ' +
      'was still arriving or whose file was being placed): nothing of it is kept.',
    'Station key required: Authorization: Station <key>.',
  ),
  409: {
    description:
      'Another Labstation holds this key, with `code` `station_key_in_use`: a station names ' +
      'its data dir and host in `X-Labstation-Install` (a UUID) and `X-Labstation-Host` ' +
      '(URI-encoded), and the key is held by the data dir that uses it until that one has been ' +
      'silent (no request open) for the takeover time (2 minutes unless set) or an admin makes ' +
      'a new key. A data dir found on another machine sends its id there before in ' +
      '`X-Labstation-Previous-Install` and takes the key from that one at once. A request ' +
      'without `X-Labstation-Install` is let in and holds nothing.',
    schema: identityError(KEY_IN_USE),
    example: {
      detail:
        'This station key is in use by another Labstation (host "sem-pc", data dir ' +
        '0192f3a4-7a2b-7c3d-8e4f-5061728394a5), last seen 12 s ago. …',
      code: KEY_IN_USE,
    },
  },
  429: detailResponse(
    'Too many wrong keys from this address: wait (a valid key still gets in).',
    STATION_THROTTLED,
  ),
};

/**
 * A station route's answers with the station guard's: where the route has its own answer with
 * the same status (a 400 of its body, a 409 of its own), the two are documented as one.
 */
export function withStationResponses(
  own: Record<number, ResponseDoc>,
): Record<number, ResponseDoc> {
  const merged: Record<number, ResponseDoc> = { ...own };
  for (const [key, guard] of Object.entries(STATION_RESPONSES)) {
    const status = Number(key);
    const mine = own[status];
    merged[status] =
      mine === undefined
        ? guard
        : {
            ...mine,
            description: `${mine.description} Or: ${guard.description}`,
            ...(mine.schema && guard.schema
              ? { schema: z.union([mine.schema, guard.schema]) }
              : {}),
          };
  }
  return merged;
}

export function describeSyncApi(
  docs: ApiDocs,
  schemas: { pushBody: z.ZodType; changesQuery: z.ZodObject; historyQuery: z.ZodObject },
): void {
  docs.describeTag(
    SYNC_TAG,
    'What stations call to stay in step with the server: they pull the facility as deltas ' +
      'since a cursor and push their records. Authenticated by the station key.',
  );
  docs.add({
    method: 'POST',
    path: SYNC_PUSH_PATH,
    tag: SYNC_TAG,
    summary: "Push the station's records",
    description:
      `Up to ${MAX_PUSH_BATCH} outbox rows, in id order, stored in one transaction and upserted ` +
      'by uuid, so sending one again changes nothing. The first record that cannot be stored ' +
      'stops the batch. Kinds: ' +
      PUSH_KINDS.map((kind) => `\`${kind}\``).join(', ') +
      '. A `notebook_entry` carries the whole entry (metadata in Labstation form, owner, ' +
      'template and usage event by uuid, `version`, `deleted_at`); the server keeps the ' +
      'highest version and refuses one whose owner, template or usage event it does not hold. ' +
      'A record of a tool or instrument the station no longer runs is refused (`forbidden`) ' +
      'once the station has pulled with the move applied (as of the station clock its pull ' +
      'names in `X-Labstation-Clock`, else the server clock), if made after that (a report or ' +
      'withdrawal counts from its usage event): those made before still drain from its outbox.',
    security: 'station',
    body: schemas.pushBody,
    bodyExample: pushExample,
    responses: withStationResponses({
      200: {
        description: 'What was stored.',
        schema: pushResultSchema,
        example: {
          acked: [7],
          stale: [],
          error: null,
          acked_before: 6,
          ack_seq_before: 3,
          ack_seq: 4,
        } satisfies PushResult,
      },
      400: detailResponse(
        'The body is not a batch of records.',
        'records.0.uuid: Invalid input: expected string, received undefined',
      ),
    }),
  });
  docs.add({
    method: 'GET',
    path: SYNC_CHANGES_PATH,
    tag: SYNC_TAG,
    summary: 'Pull the changes since a cursor',
    description:
      'The facility as a delta since `cursor` (all of it for cursor 0, or a cursor the ' +
      `server never issued). With \`wait\`, the request is held up to ${MAX_WAIT_SECONDS} s ` +
      'until something newer exists; with nothing new it answers an empty delta and the same ' +
      'cursor. A held request whose key is replaced, or whose station is disabled or deleted, ' +
      'is answered 401 at once.',
    security: 'station',
    query: schemas.changesQuery,
    responses: withStationResponses({
      200: { description: 'The delta.', schema: facilityDeltaSchema, example: deltaExample },
      400: {
        description: 'A malformed parameter.',
        schema: z.record(z.string(), z.array(z.string())),
        example: { wait: ['Too big: expected number to be <=30'] },
      },
    }),
  });
  docs.add({
    method: 'GET',
    path: SYNC_HARVEST_HISTORY_PATH,
    tag: SYNC_TAG,
    summary: "An instrument's earlier file records",
    description:
      'The file records of an instrument this station runs, made wherever: on the station that ' +
      'ran it before, or on this one before its data dir was made anew. A station given an ' +
      'instrument takes them all before it harvests it, so a file harvested already keeps its ' +
      `ARK and is not harvested again. Pages of ${HISTORY_PAGE} files in id order, each with ` +
      'its transfers; ask again with `after` set to `next` until `next` is null. The station ' +
      'running the instrument may then push changes to those records (a file gone, a retry).',
    security: 'station',
    query: schemas.historyQuery,
    responses: withStationResponses({
      200: {
        description: 'A page of records.',
        schema: historyPageSchema,
        example: historyExample,
      },
      400: {
        description: 'A malformed parameter.',
        schema: z.record(z.string(), z.array(z.string())),
        example: { instrument: ['Invalid string: must match pattern'] },
      },
      403: detailResponse(
        'The station does not run that instrument (or no instrument has that uuid).',
        'instrument 0192f3a4-…: this station does not run that instrument',
      ),
    }),
  });
}
