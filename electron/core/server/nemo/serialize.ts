/**
 * Rows -> the JSON NEMO's API returns. Foreign keys are integer ids, booleans are JSON booleans,
 * date-times carry the server zone's offset, and the answer columns stay JSON text (the spec:
 * "they are not native JSON objects and must be parsed by the reader"). Only the columns named
 * here are ever selected, so password, PIN and role data cannot leak.
 */
import type { ExperimentUsageEvent } from '../../../../shared/experiment/index.js';
import { formatDateTime } from './datetime.js';

export const USAGE_EVENT_COLUMNS =
  'id, user_id, operator_id, project_id, tool_id, start, "end", validated, validated_by_id, ' +
  'remote_work, pre_run_data, run_data';

export interface UsageEventRow {
  id: number;
  user_id: number;
  operator_id: number;
  project_id: number;
  tool_id: number;
  start: string;
  end: string | null;
  validated: number;
  validated_by_id: number | null;
  remote_work: number;
  pre_run_data: string;
  run_data: string;
}

/** The read API's usage event: the shape the experiment rules read too (shared/experiment). */
export type NemoUsageEvent = ExperimentUsageEvent;

export function usageEventJson(row: UsageEventRow, timeZone: string): NemoUsageEvent {
  return {
    id: row.id,
    user: row.user_id,
    operator: row.operator_id,
    project: row.project_id,
    tool: row.tool_id,
    start: formatDateTime(row.start, timeZone),
    end: row.end === null ? null : formatDateTime(row.end, timeZone),
    validated: row.validated === 1,
    validated_by: row.validated_by_id,
    remote_work: row.remote_work === 1,
    pre_run_data: row.pre_run_data,
    run_data: row.run_data,
  };
}

export const RESERVATION_COLUMNS =
  'id, user_id, creator_id, tool_id, area_id, project_id, start, "end", cancelled, question_data';

export interface ReservationRow {
  id: number;
  user_id: number;
  creator_id: number;
  tool_id: number | null;
  area_id: number | null;
  project_id: number | null;
  start: string;
  end: string;
  cancelled: number;
  question_data: string;
}

export interface NemoReservation {
  id: number;
  user: number;
  creator: number;
  tool: number | null;
  area: number | null;
  project: number | null;
  start: string;
  end: string;
  cancelled: boolean;
  question_data: string;
}

export function reservationJson(row: ReservationRow, timeZone: string): NemoReservation {
  return {
    id: row.id,
    user: row.user_id,
    creator: row.creator_id,
    tool: row.tool_id,
    area: row.area_id,
    project: row.project_id,
    start: formatDateTime(row.start, timeZone),
    end: formatDateTime(row.end, timeZone),
    cancelled: row.cancelled === 1,
    question_data: row.question_data,
  };
}

export const USER_COLUMNS =
  'id, username, first_name, last_name, email, badge_number, is_active, is_staff';

export interface UserRow {
  id: number;
  username: string;
  first_name: string;
  last_name: string;
  email: string;
  badge_number: string | null;
  is_active: number;
  is_staff: number;
}

export interface NemoUser {
  id: number;
  username: string;
  first_name: string;
  last_name: string;
  email: string;
  badge_number: string | null;
  is_active: boolean;
  is_staff: boolean;
}

export function userJson(row: UserRow): NemoUser {
  return {
    id: row.id,
    username: row.username,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    badge_number: row.badge_number,
    is_active: row.is_active === 1,
    is_staff: row.is_staff === 1,
  };
}

export const TOOL_COLUMNS = 'id, name, category, operational, shutdown, visible';

export interface ToolRow {
  id: number;
  name: string;
  category: string;
  operational: number;
  shutdown: number;
  visible: number;
}

export interface NemoTool {
  id: number;
  name: string;
  category: string;
  operational: boolean;
  visible: boolean;
}

/** A tool shut down by a problem report is not operational, as NEMO sets it on force shutdown. */
export function toolJson(row: ToolRow): NemoTool {
  return {
    id: row.id,
    name: row.name,
    category: row.category,
    operational: row.operational === 1 && row.shutdown === 0,
    visible: row.visible === 1,
  };
}

export const PROJECT_COLUMNS = 'id, name, application_identifier, active';

export interface ProjectRow {
  id: number;
  name: string;
  application_identifier: string;
  active: number;
}

export interface NemoProject {
  id: number;
  name: string;
  application_identifier: string;
  active: boolean;
}

export function projectJson(row: ProjectRow): NemoProject {
  return {
    id: row.id,
    name: row.name,
    application_identifier: row.application_identifier,
    active: row.active === 1,
  };
}

// A withdrawal's merchant is who recorded it: the operator of the usage whose answers made it
// (NEMO's merchant is the user who entered the withdrawal; at a tool that is the operator).
export const WITHDRAWAL_COLUMNS =
  'id, user_id, consumable, quantity, project_id, created_at, usage_event_id, tool_id, ' +
  'question, (SELECT u.operator_id FROM usage_events u ' +
  'WHERE u.id = consumable_withdrawals.usage_event_id) AS merchant_id';

export interface WithdrawalRow {
  id: number;
  user_id: number;
  merchant_id: number;
  consumable: string;
  quantity: number;
  project_id: number;
  created_at: string;
  usage_event_id: number;
  tool_id: number;
  question: string;
}

/**
 * NEMO's consumable withdraw, made by a numeric usage question naming a consumable (spec 000
 * rule 6): `consumable` is that name (this server keeps no consumable records to number), and
 * `tool` and `question` say where it was asked.
 */
export interface NemoConsumableWithdraw {
  id: number;
  customer: number;
  merchant: number;
  consumable: string;
  quantity: number;
  project: number;
  date: string;
  usage_event: number;
  tool_usage: true;
  tool: number;
  question: string;
}

export function withdrawalJson(row: WithdrawalRow, timeZone: string): NemoConsumableWithdraw {
  return {
    id: row.id,
    customer: row.user_id,
    merchant: row.merchant_id,
    consumable: row.consumable,
    quantity: row.quantity,
    project: row.project_id,
    date: formatDateTime(row.created_at, timeZone),
    usage_event: row.usage_event_id,
    tool_usage: true,
    tool: row.tool_id,
    question: row.question,
  };
}

export const TASK_COLUMNS =
  'id, tool_id, usage_event_id, user_id, question, description, force_shutdown, ' +
  'safety_hazard, created_at, resolved_at, resolved_by_id';

export interface TaskRow {
  id: number;
  tool_id: number;
  usage_event_id: number | null;
  user_id: number;
  question: string;
  description: string;
  force_shutdown: number;
  safety_hazard: number;
  created_at: string;
  resolved_at: string | null;
  resolved_by_id: number | null;
}

/**
 * NEMO's task (a tool problem report), made by a `radio_report_problem` question answered Yes
 * (spec 000 rule 6): resolved when staff bring the tool back. `usage_event` and `question` say
 * where it was reported (null: in the pre-usage form of an enable it refused).
 */
export interface NemoTask {
  id: number;
  tool: number;
  creator: number;
  creation_time: string;
  problem_description: string;
  force_shutdown: boolean;
  safety_hazard: boolean;
  resolved: boolean;
  resolution_time: string | null;
  resolver: number | null;
  usage_event: number | null;
  question: string;
}

export function taskJson(row: TaskRow, timeZone: string): NemoTask {
  return {
    id: row.id,
    tool: row.tool_id,
    creator: row.user_id,
    creation_time: formatDateTime(row.created_at, timeZone),
    problem_description: row.description,
    force_shutdown: row.force_shutdown === 1,
    safety_hazard: row.safety_hazard === 1,
    resolved: row.resolved_at !== null,
    resolution_time: row.resolved_at === null ? null : formatDateTime(row.resolved_at, timeZone),
    resolver: row.resolved_by_id,
    usage_event: row.usage_event_id,
    question: row.question,
  };
}
