/**
 * The server's admin calls (`POST /rpc/admin.*` with an admin's login): people, projects, tools
 * with their question forms, qualifications, API tokens and stations. Part of the server-mode
 * contract of api.ts; kept here so that file stays readable.
 */
import { z } from 'zod';
import { emailSchema, lineSchema, passwordProblem } from './text.js';

const id = z.number().int().positive();
/** Text of several lines (a station's description). */
const text = (max: number) => z.string().trim().max(max, `must be at most ${max} characters`);
const name = lineSchema(200).min(1, 'must not be empty');
const empty = z.object({}).strict();
/**
 * The record's updated_at as the editor loaded it: a save of a record changed since is refused
 * (conflict) instead of overwriting that change. Absent: saved whatever changed (a script).
 */
const loadedAt = z.string().max(40).optional();

export const ACCOUNT_ROLES = ['admin', 'staff', 'user'] as const;

/** The states of a mail of the outbox (electron/core/mail/outbox.ts). */
export const MAIL_STATUSES = ['queued', 'sent', 'failed', 'cancelled'] as const;
export type MailStatus = (typeof MAIL_STATUSES)[number];

export const adminUserInput = z
  .object({
    /** Absent: a new person. */
    id: id.optional(),
    username: name,
    /** Empty: none. */
    email: emailSchema,
    first_name: lineSchema(200),
    last_name: lineSchema(200),
    /** Empty: no badge. */
    badge_number: lineSchema(64),
    role: z.enum(ACCOUNT_ROLES),
    is_active: z.boolean(),
    /** Absent or empty: keep the current PIN (a new person then has none). */
    pin: z
      .string()
      .regex(/^(\d{4,12})?$/, 'must be 4 to 12 digits')
      .optional(),
    /** Absent or empty: keep the current password (a new person then cannot log in here). */
    password: z
      .string()
      .max(200, 'must be at most 200 characters')
      .superRefine((p, ctx) => {
        const problem = p === '' ? null : passwordProblem(p);
        if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
    projects: z.array(id).max(10_000),
    qualified_tools: z.array(id).max(10_000),
    updated_at: loadedAt,
  })
  .strict();

export const adminProjectInput = z
  .object({
    id: id.optional(),
    name,
    application_identifier: lineSchema(200),
    active: z.boolean(),
    updated_at: loadedAt,
  })
  .strict();

export const adminToolInput = z
  .object({
    id: id.optional(),
    name,
    category: lineSchema(200),
    operational: z.boolean(),
    visible: z.boolean(),
    /** Question lists in the spec 000 language; checked by the same parser as everywhere. */
    pre_usage_questions: z.unknown(),
    post_usage_questions: z.unknown(),
    qualified_users: z.array(id).max(100_000),
    updated_at: loadedAt,
  })
  .strict();

export const adminSchemas = {
  'admin.facility': empty,
  'admin.users.save': adminUserInput,
  'admin.projects.save': adminProjectInput,
  'admin.tools.save': adminToolInput,
  'admin.tokens.list': empty,
  'admin.tokens.create': z.object({ user: id, name: lineSchema(200) }).strict(),
  'admin.tokens.revoke': z.object({ id }).strict(),
  'admin.stations.list': empty,
  'admin.stations.create': z
    .object({ name, description: text(2000), tool: id.nullable() })
    .strict(),
  'admin.stations.update': z
    .object({
      id,
      name,
      description: text(2000),
      tool: id.nullable(),
      enabled: z.boolean(),
      /**
       * The station as the editor loaded it (or last saved it): a save is refused (conflict)
       * when its name, description, tool or enabled changed since. Absent: saved whatever
       * changed (a script).
       */
      loaded: z
        .object({
          name: z.string(),
          description: z.string(),
          tool_id: z.number().int().nullable(),
          enabled: z.boolean(),
        })
        .optional(),
    })
    .strict(),
  'admin.stations.newKey': z.object({ id }).strict(),
  'admin.mail.list': z.object({ status: z.enum(MAIL_STATUSES).optional() }).strict(),
  'admin.mail.retry': z.object({ id }).strict(),
} as const;

export type AdminUserInput = z.input<typeof adminUserInput>;
export type AdminProjectInput = z.input<typeof adminProjectInput>;
export type AdminToolInput = z.input<typeof adminToolInput>;

export interface AdminUser {
  id: number;
  uuid: string;
  username: string;
  email: string;
  first_name: string;
  last_name: string;
  badge_number: string;
  role: (typeof ACCOUNT_ROLES)[number];
  is_active: boolean;
  has_pin: boolean;
  has_password: boolean;
  projects: number[];
  qualified_tools: number[];
  /** Sent back with a save (adminUserInput.updated_at). */
  updated_at: string;
}

export interface AdminProject {
  id: number;
  uuid: string;
  name: string;
  application_identifier: string;
  active: boolean;
  updated_at: string;
}

export interface AdminTool {
  id: number;
  uuid: string;
  name: string;
  category: string;
  operational: boolean;
  visible: boolean;
  /** Canonical question lists (serialized as stored). */
  pre_usage_questions: unknown[];
  post_usage_questions: unknown[];
  qualified_users: number[];
  shutdown: { reason: string; since: string | null } | null;
  updated_at: string;
}

export interface AdminToken {
  id: number;
  user_id: number;
  /** '' for a person without one (staff may read the API with a token all the same). */
  user_email: string;
  user_username: string;
  name: string;
  /** The first characters of the token, to tell tokens apart; the token itself is not kept. */
  prefix: string;
  created_at: string;
  last_used_at: string | null;
}

export interface AdminStation {
  id: number;
  uuid: string;
  name: string;
  description: string;
  tool_id: number | null;
  tool_name: string | null;
  enabled: boolean;
  created_at: string;
  last_seen_at: string | null;
  /** Host name of the Labstation that holds the key (server/sync/stationAuth.ts); null: none yet. */
  host: string | null;
}

/** A mail of the server's outbox, as an admin lists it. */
export interface AdminMail {
  id: number;
  uuid: string;
  kind: 'pending_answers' | 'pending_reminder';
  /** The usage event's uuid (null: the event was deleted). */
  usage_event: string | null;
  /** The username of the person the mail is about. */
  user: string | null;
  to: string;
  cc: string;
  subject: string;
  status: MailStatus;
  attempts: number;
  next_attempt_at: string;
  /** Why the last try failed (or why the mail was never tried: no address). */
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}

/** What a retry did: queued again, or why not (cancelled: the answers are no longer owed). */
export type MailRetryOutcome =
  | 'queued'
  | 'cancelled'
  | 'not_found'
  | 'not_failed'
  | 'no_address'
  /** The person's account is turned off: the mail stays failed until it is on again. */
  | 'account_off';

export interface AdminResults {
  'admin.facility': { users: AdminUser[]; projects: AdminProject[]; tools: AdminTool[] };
  'admin.users.save': { user: AdminUser };
  'admin.projects.save': { project: AdminProject };
  'admin.tools.save': { tool: AdminTool };
  'admin.tokens.list': { tokens: AdminToken[] };
  /** `token` is shown once: only its hash is stored. */
  'admin.tokens.create': { token: string; info: AdminToken };
  'admin.tokens.revoke': { ok: true };
  'admin.stations.list': { stations: AdminStation[] };
  /** `key` is shown once: only its hash is stored. */
  'admin.stations.create': { key: string; station: AdminStation };
  'admin.stations.update': { station: AdminStation };
  'admin.stations.newKey': { key: string; station: AdminStation };
  'admin.mail.list': { mails: AdminMail[] };
  /** Refused (not_found, conflict) when the mail is not queued again nor cancelled. */
  'admin.mail.retry': { mail: AdminMail; message: string };
}
