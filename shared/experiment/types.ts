import type { FileOut } from '../harvest/management.js';

// The experiment record that a metadata-harvesting consumer builds from a usage event (spec 000,
// "Conventions of a metadata-harvesting consumer"), and what the rules read it from.

/** The answer sources, in the order they are tried (rule 1). */
export const SOURCES = ['run_data', 'pre_run_data', 'question_data'] as const;
export type ExperimentSource = (typeof SOURCES)[number];

/** A usage event as the read API returns it (`GET /api/usage_events/{id}/`). */
export interface UsageEventInput {
  id: number;
  tool: number;
  user?: number;
  project?: number;
  /** ISO 8601 date-time, with an offset or Z. */
  start: string;
  /** null while the usage is in progress. */
  end: string | null;
  pre_run_data?: string | null;
  run_data?: string | null;
}

/** A reservation as the read API returns it (`GET /api/reservations/{id}/`). */
export interface ReservationInput {
  id: number;
  tool: number | null;
  area?: number | null;
  start: string;
  end: string;
  cancelled?: boolean;
  question_data?: string | null;
}

export interface Sample {
  sample_name: string;
  /** 'Sample Name' or 'PID': whether sample_name is a name or a persistent identifier. */
  sample_or_pid: 'Sample Name' | 'PID';
  sample_details: string;
  sample_elements: string[];
}

export interface MatchedReservation {
  id: number;
  start: string;
  end: string;
  /** Seconds of the usage event inside the reservation. */
  overlap_seconds: number;
}

export interface ExperimentRecord {
  usage_event_id: number;
  tool_id: number;
  start: string;
  end: string | null;
  experiment_title: string;
  experiment_purpose: string;
  project_id: string;
  samples: Sample[];
  /** The consent answer as given (Agree, Yes, True or Affirmative, in any case). */
  data_consent: string;
  source: ExperimentSource;
  /** The reservation with the largest overlap, whichever source was used; null when none. */
  reservation: MatchedReservation | null;
}

/** Why a source could not be used (rule 4), or that it was. */
export type AttemptReason =
  | 'empty'
  | 'malformed_json'
  | 'not_an_object'
  | 'missing_field'
  | 'wrong_type'
  | 'consent_missing'
  | 'consent_declined'
  | 'consent_unrecognized'
  | 'no_reservation';

export interface SourceAttempt {
  source: ExperimentSource;
  /** For question_data: the reservation read. */
  reservation_id?: number;
  ok: boolean;
  reason?: AttemptReason;
  /** Names the field and the rule, e.g. `sample_group[1].sample_or_pid: must be ...`. */
  detail?: string;
}

export type ExperimentResult =
  | { ok: true; record: ExperimentRecord; attempts: SourceAttempt[] }
  /** No source left (rule 4): no record; `reason` says why each source failed. */
  | {
      ok: false;
      reason: string;
      attempts: SourceAttempt[];
      reservation: MatchedReservation | null;
    };

/** A usage event as the read API gives it (`/api/usage_events/{id}/`). */
export interface ExperimentUsageEvent {
  id: number;
  user: number;
  operator: number;
  project: number;
  tool: number;
  start: string;
  end: string | null;
  validated: boolean;
  validated_by: number | null;
  remote_work: boolean;
  pre_run_data: string;
  run_data: string;
}

/** A notebook experiment linked to the usage at the station (spec 001 metadata). */
export interface LinkedNotebookEntry {
  uuid: string;
  title: string;
  tags: string[];
  /** The metadata document in Labstation's form, or null. */
  metadata: Record<string, unknown> | null;
  updated_at: string;
}

/** One result of `GET /api/experiments/`: a usage event and what the rules make of it. */
export interface ExperimentView {
  /** The usage event's id. */
  id: number;
  usage_event: ExperimentUsageEvent;
  /** null when no source is left (rule 4); `reason` says why. */
  record: ExperimentRecord | null;
  reason: string | null;
  /**
   * The reservation that overlaps the usage most, with a record or without one (whose
   * question_data was tried, and why it was passed over is in `attempts`); null when none.
   */
  reservation: MatchedReservation | null;
  /** Each source tried, in order, and why it was passed over. */
  attempts: SourceAttempt[];
  /** File records of the tool's instruments first discovered within the usage's span. */
  files: FileOut[];
  /** Notebook experiments linked to the usage event at the station. */
  notebook_entries: LinkedNotebookEntry[];
}
