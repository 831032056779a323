/**
 * The server's reservation calls (`POST /rpc/<name>`): booking, cancelling and listing tool and
 * area reservations (anyone logged in, within their own records), and the reservation question
 * sets of spec 000 (table reservation_questions) and areas (admins). Part of the server-mode
 * contract of api.ts; kept here so that file stays readable.
 */
import { z } from 'zod';
import type { Question } from './questions/index.js';
import { lineSchema } from './text.js';

const id = z.number().int().positive();
const ids = z.array(id).max(100_000);
const name = lineSchema(200).min(1, 'must not be empty');
/**
 * A moment with its offset: a booking made in one time zone means the same instant elsewhere.
 * Up to nine decimals of a second, as the read API writes six (`.250000`): stored to the
 * millisecond.
 */
export const instant = z
  .string()
  .regex(
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/,
    'must be an ISO 8601 date-time with an offset, like 2026-03-01T09:00:00Z',
  );

/** Exactly one of tool and area: what is reserved (or what a form is for). */
const target = {
  tool: id.optional(),
  area: id.optional(),
};
const oneTarget = (value: { tool?: number | undefined; area?: number | undefined }): boolean =>
  (value.tool === undefined) !== (value.area === undefined);
const oneTargetMessage = { message: 'give exactly one of tool and area', path: ['tool'] };

const formArgs = z
  .object({ ...target, project: id })
  .strict()
  .refine(oneTarget, oneTargetMessage);

export const reservationQuestionSetInput = z
  .object({
    /** Absent: a new set. */
    id: id.optional(),
    enabled: z.boolean(),
    name,
    /** A question list in the usage questions' language; checked by the same parser. */
    questions: z.unknown(),
    tool_reservations: z.boolean(),
    /** Empty: every tool. */
    only_for_tools: ids,
    area_reservations: z.boolean(),
    /** Empty: every area. */
    only_for_areas: ids,
    /** Empty: every project. */
    only_for_projects: ids,
    /**
     * The set's updated_at as the editor read it: a save of a set changed since is refused
     * (conflict), as a tool's is. Left out: saved whatever changed.
     */
    updated_at: z.string().optional(),
  })
  .strict();

export const areaInput = z
  .object({
    id: id.optional(),
    name,
    tools: ids,
    /**
     * The area's updated_at as the editor read it: a save of an area changed since is refused
     * (conflict), as a tool's is. Left out: saved whatever changed.
     */
    updated_at: z.string().optional(),
  })
  .strict();

export const reservationSchemas = {
  'reservations.book': z
    .object({
      ...target,
      project: id,
      start: instant,
      end: instant,
      /** Answers to the merged reservation questions (reservations.questions). */
      answers: z.unknown(),
      /** The person the reservation is for; absent: the caller. Staff may book for others. */
      user: id.optional(),
    })
    .strict()
    .refine(oneTarget, oneTargetMessage),
  'reservations.cancel': z.object({ id }).strict(),
  'reservations.forTool': z
    .object({ tool: id, limit: z.number().int().min(1).max(500).optional() })
    .strict(),
  'reservations.questions': formArgs,
  'reservations.calendar': z
    .object({ ...target, from: instant, to: instant })
    .strict()
    .refine(oneTarget, oneTargetMessage),
  'reservations.mine': z.object({ limit: z.number().int().min(1).max(500).optional() }).strict(),
  'reservations.targets': z.object({}).strict(),
  'admin.reservationQuestionSets.list': z.object({}).strict(),
  'admin.reservationQuestionSets.save': reservationQuestionSetInput,
  'admin.reservationQuestionSets.delete': z.object({ id }).strict(),
  'admin.reservationQuestionSets.preview': formArgs,
  'admin.areas.list': z.object({}).strict(),
  'admin.areas.save': areaInput,
} as const;

export const reservationApiAccess = {
  'reservations.book': 'any',
  'reservations.cancel': 'any',
  'reservations.forTool': 'any',
  'reservations.questions': 'any',
  'reservations.calendar': 'any',
  'reservations.mine': 'any',
  'reservations.targets': 'any',
  'admin.reservationQuestionSets.list': 'admin',
  'admin.reservationQuestionSets.save': 'admin',
  'admin.reservationQuestionSets.delete': 'admin',
  'admin.reservationQuestionSets.preview': 'admin',
  'admin.areas.list': 'admin',
  'admin.areas.save': 'admin',
} as const satisfies Record<keyof typeof reservationSchemas, 'any' | 'admin'>;

export type ReservationQuestionSetInput = z.output<typeof reservationQuestionSetInput>;
export type AreaInput = z.output<typeof areaInput>;

export interface ReservationQuestionSet {
  id: number;
  uuid: string;
  enabled: boolean;
  name: string;
  /** The canonical question list, as stored. */
  questions: unknown[];
  tool_reservations: boolean;
  only_for_tools: number[];
  area_reservations: boolean;
  only_for_areas: number[];
  only_for_projects: number[];
  created_at: string;
  updated_at: string;
}

export interface AreaView {
  id: number;
  uuid: string;
  name: string;
  tools: number[];
  updated_at: string;
}

/** The questions of every set that applies, in set order (by id): one form. */
export interface ReservationForm {
  sets: { id: number; name: string }[];
  questions: Question[];
}

/** A reservation as stored (question_data is JSON text, as spec 000 says), with names. */
export interface ReservationView {
  id: number;
  uuid: string;
  user_id: number;
  creator_id: number;
  project_id: number | null;
  tool_id: number | null;
  area_id: number | null;
  start: string;
  end: string;
  cancelled: boolean;
  question_data: string;
  created_at: string;
  updated_at: string;
  user_name: string;
  project_name: string | null;
  /** The tool's or the area's name. */
  target_name: string;
}

/** The longest span `reservations.calendar` answers for (two months and a day or so). */
export const CALENDAR_MAX_DAYS = 62;

/** What a person may book and for which projects (`reservations.targets`). */
export interface ReservationTargets {
  /** Tools the caller may book: those they are qualified on, every tool for staff and admins. */
  tools: { id: number; name: string }[];
  /** Every area, with the tools it holds. */
  areas: { id: number; name: string; tools: { id: number; name: string }[] }[];
  /** Active projects by id: the caller's own, every active project for staff and admins. */
  projects: { id: number; name: string }[];
  /**
   * Whom the caller may book for, with the ids of their active projects: the caller alone, or
   * every active person for staff and admins (reservations.book's `user`).
   */
  people: { id: number; name: string; projects: number[] }[];
}

export interface ReservationApiResults {
  'reservations.book': { reservation: ReservationView };
  'reservations.cancel': { reservation: ReservationView };
  /** Not cancelled and not yet ended: the tool's own and those of areas holding it. */
  'reservations.forTool': { reservations: ReservationView[] };
  'reservations.questions': ReservationForm;
  /**
   * Not cancelled and overlapping [from, to): for a tool its own and those of areas holding it;
   * for an area its own, its tools' and those of areas sharing a tool with it; by start. The
   * answers of other people's are left out unless staff asks.
   */
  'reservations.calendar': { reservations: ReservationView[] };
  /** The caller's reservations (for them or booked by them), not cancelled and not over. */
  'reservations.mine': { reservations: ReservationView[] };
  'reservations.targets': ReservationTargets;
  'admin.reservationQuestionSets.list': { sets: ReservationQuestionSet[] };
  'admin.reservationQuestionSets.save': { set: ReservationQuestionSet };
  'admin.reservationQuestionSets.delete': { ok: true };
  'admin.reservationQuestionSets.preview': ReservationForm;
  'admin.areas.list': { areas: AreaView[] };
  'admin.areas.save': { area: AreaView };
}
