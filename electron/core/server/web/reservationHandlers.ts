/**
 * The reservation calls of the server's web carrier (shared/reservationApi.ts): booking,
 * cancelling, the booking form, the calendar and what one may book (anyone logged in; the
 * functions limit them to their own records), question sets and areas (admins, checked by the carrier before these run).
 */
import type {
  ServerApiName,
  ServerApiParsedArgs,
  ServerApiResult,
} from '../../../../shared/api.js';
import type { ReservationApiResults } from '../../../../shared/reservationApi.js';
import type { Db } from '../../db/open.js';
import { nowIso } from '../../util/ids.js';
import type { Account } from '../auth.js';
import { listAreas, saveArea } from '../reservations/areas.js';
import {
  bookReservation,
  calendarReservations,
  cancelReservation,
  myUpcomingReservations,
  upcomingForTool,
} from '../reservations/book.js';
import {
  deleteQuestionSet,
  listQuestionSets,
  mergedQuestions,
  saveQuestionSet,
  type FormTarget,
} from '../reservations/questionSets.js';
import { reservationTargets } from '../reservations/targets.js';

type ReservationCallName = keyof ReservationApiResults & ServerApiName;

export type ReservationHandlers = {
  [N in ReservationCallName]: (
    account: Account,
    args: ServerApiParsedArgs<N>,
  ) => ServerApiResult<N>;
};

const targetOf = (args: { tool?: number | undefined; area?: number | undefined }): FormTarget =>
  args.tool !== undefined ? { tool: args.tool } : { area: args.area as number };

export function createReservationHandlers(deps: {
  db: Db;
  clock?: () => number;
}): ReservationHandlers {
  const { db } = deps;
  const clock = deps.clock ?? Date.now;
  return {
    'reservations.book': (account, args) => bookReservation(db, account, args, nowIso(clock)),
    'reservations.cancel': (account, args) =>
      cancelReservation(db, account, args.id, nowIso(clock)),
    'reservations.forTool': (account, args) =>
      upcomingForTool(db, account, args.tool, nowIso(clock), args.limit),
    'reservations.questions': (_account, args) => mergedQuestions(db, targetOf(args), args.project),
    'reservations.calendar': (account, args) => calendarReservations(db, account, args),
    'reservations.mine': (account, args) =>
      myUpcomingReservations(db, account, nowIso(clock), args.limit),
    'reservations.targets': (account) => reservationTargets(db, account),
    'admin.reservationQuestionSets.list': () => listQuestionSets(db),
    'admin.reservationQuestionSets.save': (_account, args) =>
      saveQuestionSet(db, args, nowIso(clock)),
    'admin.reservationQuestionSets.delete': (_account, args) => deleteQuestionSet(db, args.id),
    'admin.reservationQuestionSets.preview': (_account, args) =>
      mergedQuestions(db, targetOf(args), args.project),
    'admin.areas.list': () => listAreas(db),
    'admin.areas.save': (_account, args) => saveArea(db, args, nowIso(clock)),
  };
}
