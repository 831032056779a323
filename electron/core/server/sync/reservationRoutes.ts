/**
 * Booking from a station while it is online: the reservation form of the station's tool, a
 * booking, a cancellation. The station vouches for the person (logged on there with badge and
 * PIN, as for the usage events it pushes) and names them by uuid; the server then books as that
 * person, with the same checks as its own UI (server/reservations/book.ts): qualification,
 * project membership, the merged reservation questions, overlaps.
 *
 * Errors carry the contract's `{code, message, details?}` (plus `detail`), so the station can
 * show the server's own words, at the field they name.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { HTTP_STATUS, type ApiError } from '../../../../shared/errors.js';
import { instant } from '../../../../shared/reservationApi.js';
import type { Db } from '../../db/open.js';
import {
  SYNC_RESERVATION_CANCEL_PATH,
  SYNC_RESERVATION_FORM_PATH,
  SYNC_RESERVATIONS_PATH,
  type SyncReservation,
} from '../../sync/protocol.js';
import { AppError, fieldError, toApiError } from '../../util/errors.js';
import { nowIso } from '../../util/ids.js';
import type { Logger } from '../../util/log.js';
import type { Account } from '../auth.js';
import type { ApiDocs } from '../openapi/registry.js';
import { bookReservation, cancelReservation, HOLDS_TOOL_SQL } from '../reservations/book.js';
import { mergedQuestions } from '../reservations/questionSets.js';
import {
  bookedReservationSchema,
  cancelledReservationSchema,
  reservationFormSchema,
} from '../../sync/answerSchema.js';
import { SYNC_TAG, withStationResponses } from './docs.js';
import { syncedReservation } from './exportReservations.js';
import { stationAuth } from './stationAuth.js';

const uuid = z.uuid();
const formQuery = z.object({ project_uuid: uuid.describe('The project the booking charges.') });
const bookBody = z
  .object({
    user_uuid: uuid.describe('The person logged on at the station, who the booking is for.'),
    project_uuid: uuid,
    start: instant,
    end: instant,
    answers: z.unknown().describe('Answers to the merged reservation questions.'),
  })
  .strict();
const cancelBody = z
  .object({
    user_uuid: uuid.describe('The person logged on at the station, who cancels.'),
    reservation_uuid: uuid,
  })
  .strict();

const errorBody = z
  .object({
    code: z.string(),
    message: z.string(),
    details: z.unknown().optional(),
    detail: z.string(),
  })
  .meta({ id: 'StationReservationError' });

function send(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply.code(HTTP_STATUS[error.code]).send({ ...error, detail: error.message });
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.map(String).join('.') || 'body';
  throw fieldError(field, issue?.message ?? 'is not valid');
}

/**
 * The person a station names, as they act there: as themselves, without staff or admin rights.
 * The station's key vouches for who logged on at the instrument (badge and PIN, checked at the
 * station), not for what staff may do; a stolen key or a station set up wrong would otherwise
 * book anything for any time by naming a staff member. Staff book, for the past or others, and
 * cancel what has ended on the server's page, where they log in themselves.
 */
function accountOf(db: Db, userUuid: string): Account {
  const row = db
    .prepare('SELECT id, uuid, email, username, role, is_active FROM users WHERE uuid = ?')
    .get(userUuid) as Account | undefined;
  if (!row) {
    throw fieldError('user', 'the person logged on is not known to the server', 'not_found');
  }
  if (row.is_active !== 1) throw new AppError('forbidden', `${row.username} is deactivated`);
  return { ...row, role: 'user' };
}

function idOf(db: Db, table: 'projects' | 'reservations', value: string, field: string): number {
  const id = db.prepare(`SELECT id FROM ${table} WHERE uuid = ?`).pluck().get(value) as
    number | undefined;
  if (id === undefined) throw fieldError(field, 'no such record on the server', 'not_found');
  return id;
}

function stationTool(toolId: number | null): number {
  if (toolId === null) {
    throw new AppError('conflict', 'this station is not registered for a tool on the server');
  }
  return toolId;
}

export function registerStationReservationRoutes(
  app: FastifyInstance,
  deps: { db: Db; log: Logger; docs?: ApiDocs; clock?: () => number },
): void {
  const { db, log } = deps;
  const clock = deps.clock ?? Date.now;
  const authenticate = stationAuth(app, { db, log });
  if (deps.docs) describe(deps.docs);

  const answer = async (reply: FastifyReply, work: () => unknown): Promise<unknown> => {
    try {
      return work();
    } catch (error) {
      const answer = toApiError(error);
      if (answer.code === 'internal') {
        log.error({ err: error }, 'station reservation request failed');
        return send(reply, { ...answer, message: 'internal error; see the server log' });
      }
      return send(reply, answer);
    }
  };

  app.get(SYNC_RESERVATION_FORM_PATH, { onRequest: authenticate }, (request, reply) =>
    answer(reply, () => {
      const query = parse(formQuery, request.query);
      const tool = stationTool(request.station!.tool_id);
      return mergedQuestions(db, { tool }, idOf(db, 'projects', query.project_uuid, 'project'));
    }),
  );

  app.post(SYNC_RESERVATIONS_PATH, { onRequest: authenticate }, (request, reply) =>
    answer(reply, () => {
      const body = parse(bookBody, request.body);
      const tool = stationTool(request.station!.tool_id);
      const account = accountOf(db, body.user_uuid);
      const { reservation } = bookReservation(
        db,
        account,
        {
          tool,
          project: idOf(db, 'projects', body.project_uuid, 'project'),
          start: body.start,
          end: body.end,
          answers: body.answers,
        },
        nowIso(clock),
      );
      log.info(
        { station: request.station!.name, reservation: reservation.id, user: account.username },
        'reservation booked at a station',
      );
      return { reservation: syncedReservation(db, reservation.id) };
    }),
  );

  app.post(SYNC_RESERVATION_CANCEL_PATH, { onRequest: authenticate }, (request, reply) =>
    answer(reply, () => {
      const body = parse(cancelBody, request.body);
      const tool = stationTool(request.station!.tool_id);
      const account = accountOf(db, body.user_uuid);
      const id = idOf(db, 'reservations', body.reservation_uuid, 'uuid');
      // A station cancels only what it lists: reservations of its own tool or areas holding it.
      const ours = db
        .prepare(`SELECT 1 FROM reservations r WHERE r.id = @id AND ${HOLDS_TOOL_SQL}`)
        .get({ id, tool });
      if (!ours) {
        throw new AppError('forbidden', "this reservation is not one of this station's tool");
      }
      // At a station a person cancels their own (booked for them or by them), as accountOf says.
      const owner = db
        .prepare('SELECT 1 FROM reservations WHERE id = ? AND (user_id = ? OR creator_id = ?)')
        .get(id, account.id, account.id);
      if (!owner) {
        throw new AppError(
          'forbidden',
          'At a station only the person a reservation is for, or who booked it, can cancel it.',
        );
      }
      const { reservation } = cancelReservation(db, account, id, nowIso(clock));
      log.info(
        { station: request.station!.name, reservation: reservation.id, user: account.username },
        'reservation cancelled at a station',
      );
      return { cancelled: reservation.cancelled, id: reservation.id, uuid: reservation.uuid };
    }),
  );
}

const ALICE = '0c6f1b8e-8a0e-4f55-9d7e-2b8f0f3a4c21';
const PROJECT = '9f3e2d1c-4b5a-4c6d-8e7f-0a1b2c3d4e5f';
const SEM = '3a2b1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d';
const RESERVATION = '5e0c1a2b-3d4e-4f50-8a6b-7c8d9e0f1a2b';
const ANSWERS = { data_consent: 'Agree', experiment_title: 'Grain boundaries' };

const bookExample = {
  user_uuid: ALICE,
  project_uuid: PROJECT,
  start: '2026-03-02T09:00:00+01:00',
  end: '2026-03-02T12:00:00+01:00',
  answers: ANSWERS,
};

const reservationExample: SyncReservation = {
  uuid: RESERVATION,
  id: 311,
  tool_uuid: SEM,
  area_name: null,
  target_name: 'SEM',
  user_uuid: ALICE,
  user_name: 'alice',
  creator_uuid: ALICE,
  project_uuid: PROJECT,
  project_name: 'Cathodes',
  start: '2026-03-02T08:00:00.000Z',
  end: '2026-03-02T11:00:00.000Z',
  question_data: JSON.stringify(ANSWERS),
};

const conflictExample = {
  code: 'conflict',
  message:
    'This time overlaps reservation 310 of the tool SEM ' +
    '(2026-03-02T07:00:00.000Z to 2026-03-02T09:00:00.000Z); choose another time.',
  details: { reservation: 310 },
  detail:
    'This time overlaps reservation 310 of the tool SEM ' +
    '(2026-03-02T07:00:00.000Z to 2026-03-02T09:00:00.000Z); choose another time.',
};

function describe(docs: ApiDocs): void {
  const errors = withStationResponses({
    404: {
      description: 'The person, project or reservation is not on the server.',
      schema: errorBody,
    },
    409: {
      description: 'The time overlaps another reservation, or the station has no tool.',
      schema: errorBody,
      example: conflictExample,
    },
    422: { description: 'A field breaks a rule; `details.problems` names it.', schema: errorBody },
  });
  docs.add({
    method: 'GET',
    path: SYNC_RESERVATION_FORM_PATH,
    tag: SYNC_TAG,
    summary: "The reservation form of the station's tool",
    description:
      'The questions of every enabled reservation question set that applies to a booking of ' +
      "the station's tool for the project, in set order: one form.",
    security: 'station',
    query: formQuery,
    responses: {
      200: {
        description: 'The merged form.',
        schema: reservationFormSchema,
        example: {
          sets: [{ id: 1, name: 'Experiment' }],
          questions: [
            {
              type: 'radio',
              name: 'data_consent',
              title: 'May the data be harvested?',
              choices: ['Agree', 'Disagree'],
              required: true,
            },
            { type: 'textbox', name: 'experiment_title', title: 'Experiment', required: true },
          ],
        },
      },
      ...errors,
    },
  });
  docs.add({
    method: 'POST',
    path: SYNC_RESERVATIONS_PATH,
    tag: SYNC_TAG,
    summary: "Book the station's tool for the person logged on there",
    description:
      'Books as that person, with the checks of the server UI and without staff rights (the ' +
      'key vouches for who is at the instrument): qualification, a start from now on, a ' +
      'project of theirs, the merged reservation questions, no overlap with another ' +
      "reservation of the tool or of an area holding it. Answers the reservation in the delta's " +
      'shape.',
    security: 'station',
    body: bookBody,
    bodyExample: bookExample,
    responses: {
      200: {
        description: 'The reservation, as the delta lists it.',
        schema: bookedReservationSchema,
        example: { reservation: reservationExample },
      },
      403: { description: 'The person is not qualified or deactivated.', schema: errorBody },
      ...errors,
    },
  });
  docs.add({
    method: 'POST',
    path: SYNC_RESERVATION_CANCEL_PATH,
    tag: SYNC_TAG,
    summary: 'Cancel a reservation of the station’s tool',
    description:
      'Its person or whoever booked it may (staff cancel others’ on the server). The record ' +
      'stays, with `cancelled` true.',
    security: 'station',
    body: cancelBody,
    bodyExample: { user_uuid: ALICE, reservation_uuid: RESERVATION },
    responses: {
      200: {
        description: 'Cancelled.',
        schema: cancelledReservationSchema,
        example: { cancelled: true, id: 311, uuid: RESERVATION },
      },
      403: { description: 'This person may not cancel it.', schema: errorBody },
      ...errors,
    },
  });
}
