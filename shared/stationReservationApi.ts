/**
 * The station's reservation calls (part of the station contract of api.ts): the tool's upcoming
 * reservations from the copy synced from the server (readable offline), the reservation that
 * is on now for the person at the station (its answers fill the pre-usage form where question
 * names match), and booking and cancelling, which go to the server and need it online.
 *
 * Not to be confused with the server's `reservations.*` rpc calls (reservationApi.ts): those
 * are a browser user's, on the server; these are the station UI's.
 */
import { z } from 'zod';
import type { ProjectSummary } from './api.js';
import type { Answers, Question } from './questions/index.js';
import { instant } from './reservationApi.js';

const ref = z.union([z.number().int().positive(), z.string().min(1).max(200)]);
/** How long before its start a reservation counts as the current one (people come early). */
export const EARLY_START_MINUTES = 15;

export const stationReservationSchemas = {
  'reservations.upcoming': z
    .object({ limit: z.number().int().min(1).max(500).optional() })
    .strict(),
  'reservations.current': z
    .object({
      /** Staff enabling the tool for someone: that person's reservation. Default: the caller. */
      user: ref.optional(),
    })
    .strict(),
  'reservations.form': z.object({ project: ref }).strict(),
  'reservations.book': z
    .object({ project: ref, start: instant, end: instant, answers: z.unknown() })
    .strict(),
  'reservations.cancel': z.object({ uuid: z.uuid() }).strict(),
} as const;

/** A reservation in the station's synced copy. */
export interface StationReservationView {
  uuid: string;
  /** The server's id. */
  id: number;
  /** The tool's name, or the area's for an area reservation. */
  target_name: string;
  /** Set for an area reservation: it holds this tool with the others of the area. */
  area_name: string | null;
  user_name: string;
  project_name: string | null;
  start: string;
  end: string;
  /** Booked for (or by) the person logged on. */
  mine: boolean;
  /** The reservation's answers (JSON text): the person's own only, empty for others. */
  question_data: string;
}

export interface StationReservationResults {
  'reservations.upcoming': {
    reservations: StationReservationView[];
    /** The station has a server link (reservations come from it). */
    linked: boolean;
    /** The last exchange with the server succeeded: booking works now. */
    online: boolean;
    /** When the copy was last brought up to date (null: never). */
    synced_at: string | null;
  };
  'reservations.current': {
    reservation: StationReservationView | null;
    /** The reservation's answers that fit the tool's pre-usage questions, by name. */
    answers: Answers;
    /** The names of those questions. */
    matched: string[];
    /** The reservation's project, when the person may still charge it. */
    project: ProjectSummary | null;
  };
  'reservations.form': { sets: { id: number; name: string }[]; questions: Question[] };
  'reservations.book': { reservation: StationReservationView };
  'reservations.cancel': { ok: true };
}
