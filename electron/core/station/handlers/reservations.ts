/**
 * The reservations.* calls of the station's handler map (station.ts): the bookings synced from
 * the server, and booking or cancelling, which only the server can answer (SyncControl.request).
 */
import {
  SYNC_RESERVATION_CANCEL_PATH,
  SYNC_RESERVATION_FORM_PATH,
  SYNC_RESERVATIONS_PATH,
} from '../../sync/protocol.js';
import {
  bookedReservationSchema,
  cancelledReservationSchema,
  reservationFormSchema,
} from '../../sync/answerSchema.js';
import { AppError } from '../../util/errors.js';
import { findProject, findTool, findUser, toolInfo } from '../records.js';
import {
  currentReservation,
  dropStationReservation,
  reservationsSyncedAt,
  storeStationReservation,
  upcomingReservations,
  viewOfSynced,
} from '../reservations.js';
import type { HandlerContext, HandlersOf } from './context.js';

export type ReservationContext = Pick<
  HandlerContext,
  'db' | 'session' | 'actor' | 'now' | 'clock' | 'stationTool' | 'sync' | 'server' | 'emit'
>;

export function reservationHandlers(ctx: ReservationContext): HandlersOf<'reservations'> {
  const { db } = ctx;
  return {
    'reservations.upcoming': ({ limit }) => {
      const session = ctx.session();
      const viewer = session ? findUser(db, session.userId) : null;
      const status = ctx.sync()?.status() ?? null;
      return {
        reservations: upcomingReservations(db, viewer, ctx.now(), limit ?? 100),
        linked: status !== null,
        online: status?.online ?? false,
        synced_at: reservationsSyncedAt(db),
      };
    },
    'reservations.current': ({ user }) => {
      const actor = ctx.actor();
      const person = user === undefined ? actor : findUser(db, user);
      if (person.id !== actor.id && actor.is_staff !== 1) {
        throw new AppError('forbidden', "only staff can see someone else's reservation");
      }
      const tool = ctx.stationTool();
      const questions = tool === null ? [] : toolInfo(findTool(db, tool)).pre_usage_questions;
      return currentReservation(db, person, questions, new Date(ctx.clock()));
    },
    'reservations.form': async ({ project }) => {
      ctx.actor();
      const projectRow = findProject(db, project);
      return await ctx.server().request('GET', SYNC_RESERVATION_FORM_PATH, {
        params: { project_uuid: projectRow.uuid },
        schema: reservationFormSchema,
      });
    },
    'reservations.book': async ({ project, start, end, answers }) => {
      const actor = ctx.actor();
      const projectRow = findProject(db, project);
      const { reservation } = await ctx.server().request('POST', SYNC_RESERVATIONS_PATH, {
        body: { user_uuid: actor.uuid, project_uuid: projectRow.uuid, start, end, answers },
        schema: bookedReservationSchema,
      });
      // Listed at once; the next pull brings the same record.
      storeStationReservation(db, reservation);
      ctx.emit({ type: 'reservations.changed' });
      return { reservation: viewOfSynced(reservation, actor) };
    },
    'reservations.cancel': async ({ uuid }) => {
      const actor = ctx.actor();
      // Dropped here only once the server says it cancelled it.
      await ctx.server().request('POST', SYNC_RESERVATION_CANCEL_PATH, {
        body: { user_uuid: actor.uuid, reservation_uuid: uuid },
        schema: cancelledReservationSchema,
      });
      dropStationReservation(db, uuid);
      ctx.emit({ type: 'reservations.changed' });
      return { ok: true as const };
    },
  };
}
