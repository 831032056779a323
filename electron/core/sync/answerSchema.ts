/**
 * The schemas of the server's other answers a station reads, besides the delta
 * (deltaSchema.ts): a page of an instrument's history (GET /sync/harvest/history), the push
 * answer (POST /sync/push) and the answers of booking at a station (/sync/reservations,
 * /sync/reservations/form, /sync/reservations/cancel). The station parses each answer with
 * its schema before it stores or deletes anything (pushLoop.ts, historyFetch.ts, request.ts),
 * and the server's API docs describe the answers with the same schemas (server/sync/docs.ts,
 * reservationRoutes.ts); a compile-time check holds them identical to the protocol.ts
 * interfaces.
 *
 * As for the delta, unknown keys are dropped, not refused (a newer server adds fields), and a
 * field the station knows that is missing or of the wrong type is refused, naming its path.
 * Uuids are non-empty strings, their form not checked (deltaSchema.ts says why): a file's uuid
 * is what the station that made it pushed.
 */
import { z } from 'zod';
import { FILE_STATES, TRANSFER_STATUSES } from '../../../shared/harvest/management.js';
import { parseQuestions, type Question } from '../../../shared/questions/index.js';
import { jsonObject, syncReservationSchema, uuid, type Same } from './deltaSchema.js';
import type {
  PushError,
  PushResult,
  SyncHistoryFile,
  SyncHistoryPage,
  SyncHistoryTransfer,
  SyncReservation,
} from './protocol.js';

const historyTransfer = z.object({
  uuid,
  status: z.enum(TRANSFER_STATUSES),
  storage_location_uuid: uuid.nullable(),
  destination_path: z.string().nullable(),
  bytes_transferred: z.int().min(0),
  dest_checksum: z.string().nullable(),
  checksum_verified: z.boolean(),
  started_at: z.string(),
  completed_at: z.string().nullable(),
  error: z.string(),
  note: z.string(),
});

const historyFile = z.object({
  id: z.int().describe("The server's id."),
  uuid,
  persistent_id: z.string(),
  persistent_id_type: z.string(),
  watch_path: z.string(),
  source_path: z.string(),
  relative_path: z.string(),
  filename: z.string(),
  size: z.int().min(0),
  mtime_ms: z.number(),
  xxhash: z.string().nullable(),
  hash_algorithm: z.string(),
  first_discovered_at: z.string(),
  usage_event_uuid: uuid.nullable(),
  usage_context: jsonObject
    .nullable()
    .optional()
    .describe(
      'The usage the file was made during, as the `usage_context` hook describes it ' +
        '(usage_event, tool, start, end, user, project, answers, experiments), for a ' +
        'station that does not hold it; null without a usage.',
    ),
  metadata_: jsonObject,
  state: z.enum(FILE_STATES),
  updated_at: z.string(),
  transfers: z.array(historyTransfer),
});

export const historyPageSchema = z
  .object({
    files: z.array(historyFile),
    next: z.int().nullable().describe('`after` for the next page; null after the last.'),
  })
  .meta({ id: 'SyncHistoryPage' });

const pushError = z.object({
  id: z.int(),
  kind: z.string(),
  uuid: z.string(),
  code: z.string().describe('unknown_reference, invalid, forbidden or conflict.'),
  detail: z.string(),
  missing: z
    .object({ table: z.string(), uuid: z.string() })
    .optional()
    .describe(
      'With unknown_reference: the record the server lacks (usage_events, harvest_files, ' +
        'users, ...). A station that made it pushes it again.',
    ),
});

/**
 * The push answer: the station deletes the outbox rows it names in `acked`, so each must be an
 * outbox id (a positive integer); a string, a fraction or a list of something else refuses the
 * whole answer, and nothing is deleted.
 */
export const pushResultSchema = z
  .object({
    acked: z
      .array(z.int().min(1))
      .describe('Outbox ids stored (or already held): delete exactly these.'),
    acked_before: z
      .int()
      .nullable()
      .optional()
      .describe(
        'The highest outbox id taken from this data dir before this batch (null: none yet). ' +
          'A station that had more acknowledged sends again what the server lost.',
      ),
    ack_seq_before: z
      .int()
      .min(1)
      .nullable()
      .optional()
      .describe(
        'The number of the last push taken from this data dir before this batch (null: none ' +
          'yet). A station that kept records of a later push sends them again.',
      ),
    ack_seq: z
      .int()
      .min(1)
      .nullable()
      .optional()
      .describe('The number of the last push taken from this data dir, this one included.'),
    stale: z
      .array(z.int().min(1))
      .describe('Among `acked`: older versions than the server holds, kept out.'),
    error: pushError
      .nullable()
      .describe('The first record refused; it and those after it are to be sent again later.'),
  })
  .meta({ id: 'SyncPushResult' });

/**
 * A question of the reservation form, checked with the form's other questions by
 * parseQuestions (the check of every question list), so the station shows only a form it
 * can render.
 */
const question = z
  .custom<Question>(
    (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
    {
      message: 'expected an object',
    },
  )
  .meta({ type: 'object' });

/** GET /sync/reservations/form: the merged reservation questions of the station's tool. */
export const reservationFormSchema = z.object({
  sets: z.array(z.object({ id: z.int(), name: z.string() })),
  questions: z
    .array(question)
    .superRefine((questions, ctx) => {
      // As the server read them (questionSets.ts): a set saved under older rules still loads.
      const parsed = parseQuestions(questions, { stored: true });
      if (parsed.ok) return;
      for (const problem of parsed.problems) {
        // parseQuestions names the question by its name, or its place when it has none
        // ("data_consent.choices", "[0].name"), and says the rule in its own words.
        ctx.addIssue({
          code: 'custom',
          message: problem.path ? `${problem.path}: ${problem.message}` : problem.message,
        });
      }
    })
    .describe('Questions in the language of the usage questions.'),
});

/** POST /sync/reservations: the reservation booked, as the delta lists it. */
export const bookedReservationSchema = z.object({ reservation: syncReservationSchema });

/** POST /sync/reservations/cancel. */
export const cancelledReservationSchema = z.object({
  cancelled: z.boolean(),
  id: z.int(),
  uuid,
});

// Compile-time: each reads as exactly its protocol.ts interface (see deltaSchema.ts).
const schemaMatchesProtocol: [
  Same<z.output<typeof historyTransfer>, SyncHistoryTransfer>,
  Same<z.output<typeof historyFile>, SyncHistoryFile>,
  Same<z.output<typeof historyPageSchema>, SyncHistoryPage>,
  Same<z.output<typeof pushError>, PushError>,
  Same<z.output<typeof pushResultSchema>, PushResult>,
  Same<z.output<typeof bookedReservationSchema>, { reservation: SyncReservation }>,
] = [true, true, true, true, true, true];
void schemaMatchesProtocol;
