/**
 * The schema of GET /sync/changes (protocol.ts FacilityDelta), field by field as the server
 * builds it (server/sync/export.ts, exportHarvest.ts, exportReservations.ts, routes.ts). The
 * station parses every pull answer with it before it applies anything (client.ts), and the
 * server's API docs describe the answer with the same schema (server/sync/docs.ts), so the
 * docs, the check and the types cannot drift apart: a compile-time check below holds the
 * schema's output type identical to the protocol.ts interfaces.
 *
 * Unknown keys, at any depth, are tolerated and dropped (zod's default `z.object`), not
 * refused: a newer server adds fields (cursor_mark, acked_through, answers and validations came
 * that way), and a station that refused them would stop taking its facility until it is
 * upgraded. What the station does not know it cannot apply anyway, and dropping it means
 * applyDelta only ever sees the fields it was written for. A missing or wrongly typed field the
 * station does know is refused: applying it would store an empty form, a person without a name,
 * a flag read from a string.
 *
 * Optional fields are those an older server leaves out (the station copes without them); the
 * current server always sends cursor_mark, answers, validations and runs.
 */
import { z } from 'zod';
import { parseAnswer } from './parseAnswer.js';
import type {
  FacilityDelta,
  SyncAnswer,
  SyncHarvest,
  SyncHook,
  SyncInstrument,
  SyncProject,
  SyncReservation,
  SyncRun,
  SyncSchedule,
  SyncStorageLocation,
  SyncTool,
  SyncUser,
  SyncResolution,
  SyncValidation,
} from './protocol.js';

/**
 * A record's uuid: a non-empty string, its form not checked. The station uses it only as a key,
 * and the server sends its records' uuids as its database holds them, without checking their
 * form (a record written there by another tool, or restored, may hold one without dashes):
 * refusing the delta for that would stop the whole facility from reaching the station over a
 * difference it does not care about. Documented as what the server makes (format uuid).
 */
export const uuid = z.string().min(1).meta({ format: 'uuid' });

/**
 * A JSON object kept as it came: `z.record` rebuilds the object by assignment, which turns a
 * key `__proto__` (JSON.parse makes it an own key) into the new object's prototype and loses
 * it. Described as an object in the API docs.
 */
export const jsonObject = z
  .custom<Record<string, unknown>>(
    (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
    { message: 'expected an object' },
  )
  .meta({ type: 'object' });

const syncUser = z.object({
  uuid,
  username: z.string(),
  email: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  badge_number: z.string().nullable(),
  pin_hash: z.string().nullable(),
  is_staff: z.boolean(),
  is_active: z.boolean(),
  projects: z.array(uuid),
  qualified_tools: z.array(uuid),
});

const syncProject = z.object({
  uuid,
  name: z.string(),
  application_identifier: z.string(),
  active: z.boolean(),
});

const syncTool = z.object({
  uuid,
  name: z.string(),
  pre_usage_questions: z.string().describe('The question list, as JSON text.'),
  post_usage_questions: z.string().describe('The question list, as JSON text.'),
  category: z.string(),
  operational: z.boolean(),
  visible: z.boolean(),
});

const syncAnswer = z.object({
  usage_uuid: uuid,
  run_data: z.string(),
  answered_at: z.string(),
  answered_by_uuid: uuid.nullable(),
});

const syncValidation = z.object({
  usage_uuid: uuid,
  validated_by_uuid: uuid.nullable(),
  validated_at: z.string(),
});

const syncResolution = z.object({
  report_uuid: uuid,
  resolved_at: z.string(),
  resolved_by_uuid: uuid.nullable(),
});

const syncStorageLocation = z.object({
  uuid,
  name: z.string(),
  type: z.enum(['local', 'server']),
  base_path: z.string(),
  enabled: z.boolean(),
});

const syncInstrument = z.object({
  uuid,
  name: z.string(),
  description: z.string(),
  tool_uuid: uuid,
  watch: z.array(
    z.object({ path: z.string(), include: z.array(z.string()), exclude: z.array(z.string()) }),
  ),
  stability_seconds: z.number().min(0),
  storage_location_uuid: uuid.nullable(),
  destination_template: z.string(),
  enabled: z.boolean(),
});

const syncHook = z.object({
  uuid,
  name: z.string(),
  trigger: z.enum(['pre_transfer', 'post_transfer']),
  kind: z.string(),
  config: jsonObject,
  priority: z.number(),
  instrument_uuid: uuid.nullable().describe('Null: every instrument of the station.'),
  enabled: z.boolean(),
});

const syncSchedule = z.object({
  uuid,
  instrument_uuid: uuid,
  cron: z.string(),
  timezone: z.string().nullable(),
  enabled: z.boolean(),
  version: z.int(),
});

const syncHarvest = z.object({
  storage_locations: z.array(syncStorageLocation),
  instruments: z.array(syncInstrument),
  hooks: z.array(syncHook),
  schedules: z.array(syncSchedule),
});

const syncRun = z.object({
  uuid,
  instrument_uuid: uuid,
  schedule_uuid: uuid.nullable(),
  requested_at: z.string(),
});

export const syncReservationSchema = z
  .object({
    uuid,
    id: z.int(),
    tool_uuid: uuid.nullable().describe('Null: an area reservation.'),
    area_name: z.string().nullable(),
    target_name: z.string(),
    user_uuid: uuid,
    user_name: z.string(),
    creator_uuid: uuid,
    project_uuid: uuid.nullable(),
    project_name: z.string().nullable(),
    start: z.string(),
    end: z.string(),
    question_data: z.string().describe('The answers to the reservation questions, JSON text.'),
  })
  .meta({ id: 'SyncReservation' });

export const facilityDeltaSchema = z
  .object({
    cursor: z.int().min(0).describe('Send it back as `cursor` next time.'),
    cursor_mark: z
      .string()
      .optional()
      .describe(
        'Send it back as `mark` with the cursor: it tells a restored server that the cursor ' +
          'names another history.',
      ),
    full: z.boolean().describe('The whole facility (first pull, or a cursor the server reset).'),
    acked_through: z
      .int()
      .min(1)
      .optional()
      .describe(
        'The highest outbox id the server took from the data dir named by ' +
          '`X-Labstation-Install` (the one holding the key): a data dir whose outbox never ' +
          'made that id was restored from a backup, and fetches its instruments’ file records ' +
          'before it harvests them again.',
      ),
    ack_seq: z
      .int()
      .min(1)
      .nullable()
      .optional()
      .describe(
        'The number of the last push the server took from that data dir (null: its count is ' +
          'from before it numbered them): a station that kept records of a later push (the ' +
          'server was restored from a backup) sends them again.',
      ),
    station: z.object({ uuid, name: z.string(), tool: z.string().nullable() }),
    users: z.array(syncUser),
    projects: z.array(syncProject),
    tools: z.array(syncTool),
    deleted: z.object({ users: z.array(uuid), projects: z.array(uuid), tools: z.array(uuid) }),
    answers: z
      .array(syncAnswer)
      .optional()
      .describe('Post-usage answers given on the server that the station has not pushed back.'),
    validations: z
      .array(syncValidation)
      .optional()
      .describe('Validations given by staff on the server that the station has not pushed back.'),
    resolutions: z
      .array(syncResolution)
      .optional()
      .describe(
        "The station's problem reports resolved on the server (staff brought the tool back) " +
          'that it has not pushed back.',
      ),
    harvest: syncHarvest.optional().describe('The harvest configuration, when it changed.'),
    runs: z
      .array(syncRun)
      .optional()
      .describe('Manual harvests asked for on the server, until the station starts them.'),
    reservations: z
      .array(syncReservationSchema)
      .optional()
      .describe(
        "The station tool's reservations that have not ended (its own and those of areas " +
          'holding it), all of them: sent when anything changed since the cursor.',
      ),
  })
  .meta({ id: 'SyncFacilityDelta' });

/**
 * True when A and B are the same type (a property optional in one and required in the other,
 * or nullable in one only, makes them differ), else false: assignability both ways would miss
 * an optional property one side lacks.
 */
export type Same<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

// Compile-time: each part of the schema reads as exactly its protocol.ts interface. A field
// added to one and not the other, or made optional or nullable in one only, fails typecheck.
const schemaMatchesProtocol: [
  Same<z.output<typeof syncUser>, SyncUser>,
  Same<z.output<typeof syncProject>, SyncProject>,
  Same<z.output<typeof syncTool>, SyncTool>,
  Same<z.output<typeof syncAnswer>, SyncAnswer>,
  Same<z.output<typeof syncValidation>, SyncValidation>,
  Same<z.output<typeof syncResolution>, SyncResolution>,
  Same<z.output<typeof syncStorageLocation>, SyncStorageLocation>,
  Same<z.output<typeof syncInstrument>, SyncInstrument>,
  Same<z.output<typeof syncHook>, SyncHook>,
  Same<z.output<typeof syncSchedule>, SyncSchedule>,
  Same<z.output<typeof syncHarvest>, SyncHarvest>,
  Same<z.output<typeof syncRun>, SyncRun>,
  Same<z.output<typeof syncReservationSchema>, SyncReservation>,
  Same<z.output<typeof facilityDeltaSchema>, FacilityDelta>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true];
void schemaMatchesProtocol;

/** The pull answer as a FacilityDelta, unknown keys dropped; throws BadAnswerError. */
export function parseFacilityDelta(data: unknown): FacilityDelta {
  // Zod's own messages: a field left out reads "expected string, received undefined", which
  // says both that it is missing and what it should be.
  return parseAnswer(facilityDeltaSchema, data, 'facility delta', 'nothing applied');
}
