/**
 * The NEMO-compatible read API in the OpenAPI document: the response shapes of serialize.ts as
 * zod schemas (for the docs only; the serializers' types keep them honest), an example of each
 * resource, and each resource's query parameters derived from the filters it really accepts.
 */
import { z } from 'zod';
import { SOURCES, type ExperimentRecord } from '../../../../shared/experiment/index.js';
import { fileExample, fileOut } from '../harvest/files.js';
import { EXPERIMENTS, type ExperimentJson } from './experiments.js';
import { detailResponse, detailSchema, GUARD_RESPONSES } from '../openapi/common.js';
import type { ApiDocs } from '../openapi/registry.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, MESSAGES, type FilterDef } from './params.js';
import {
  consumableWithdraws,
  projects,
  reservations,
  tasks,
  tools,
  usageEvents,
  users,
  type Resource,
} from './resources.js';
import type {
  NemoConsumableWithdraw,
  NemoProject,
  NemoReservation,
  NemoTask,
  NemoTool,
  NemoUsageEvent,
  NemoUser,
} from './serialize.js';

export const NEMO_TAG = 'NEMO read API';

const id = z.int().positive();
const dateTime = z.iso
  .datetime({ offset: true })
  .describe('ISO 8601 with the offset of the server time zone.');
const jsonText = (what: string): z.ZodString =>
  z.string().describe(`${what}: JSON text inside a string ('' when none); parse it to read it.`);

const userSchema = z
  .object({
    id,
    username: z.string(),
    first_name: z.string(),
    last_name: z.string(),
    email: z.string(),
    badge_number: z.string().nullable(),
    is_active: z.boolean(),
    is_staff: z.boolean(),
  })
  .meta({ id: 'NemoUser' }) satisfies z.ZodType<NemoUser>;

const toolSchema = z
  .object({
    id,
    name: z.string(),
    category: z.string(),
    operational: z.boolean().describe('False while the tool is shut down by a problem report.'),
    visible: z.boolean(),
  })
  .meta({ id: 'NemoTool' }) satisfies z.ZodType<NemoTool>;

const projectSchema = z
  .object({
    id,
    name: z.string(),
    application_identifier: z.string(),
    active: z.boolean(),
  })
  .meta({ id: 'NemoProject' }) satisfies z.ZodType<NemoProject>;

const reservationSchema = z
  .object({
    id,
    user: id.describe('The user the reservation is for.'),
    creator: id.describe('The user who made it.'),
    tool: id.nullable(),
    area: id.nullable(),
    project: id.nullable(),
    start: dateTime,
    end: dateTime,
    cancelled: z.boolean(),
    question_data: jsonText('Answers to the reservation questions'),
  })
  .meta({ id: 'NemoReservation' }) satisfies z.ZodType<NemoReservation>;

const usageEventSchema = z
  .object({
    id,
    user: id.describe('The user billed.'),
    operator: id.describe('The user who operated the tool.'),
    project: id,
    tool: id,
    start: dateTime,
    end: dateTime.nullable().describe('Null while the usage is active.'),
    validated: z.boolean(),
    validated_by: id.nullable(),
    remote_work: z.boolean(),
    pre_run_data: jsonText('Answers to the pre-usage questions'),
    run_data: jsonText('Answers to the post-usage questions'),
  })
  .meta({ id: 'NemoUsageEvent' }) satisfies z.ZodType<NemoUsageEvent>;

const withdrawSchema = z
  .object({
    id,
    customer: id.describe("The user billed (the usage event's user)."),
    merchant: id.describe('Who recorded it: the operator of the usage event.'),
    consumable: z.string().describe('The consumable the question names.'),
    quantity: z.number().positive(),
    project: id.describe('The project billed.'),
    date: dateTime,
    usage_event: id.describe('The usage event whose answers made it.'),
    tool_usage: z.literal(true).describe('Always true: made in a usage form.'),
    tool: id,
    question: z.string().describe('The name of the question answered.'),
  })
  .meta({ id: 'NemoConsumableWithdraw' }) satisfies z.ZodType<NemoConsumableWithdraw>;

const taskSchema = z
  .object({
    id,
    tool: id,
    creator: id.describe('Who reported it.'),
    creation_time: dateTime,
    problem_description: z.string(),
    force_shutdown: z.boolean().describe('True: the report shut the tool down.'),
    safety_hazard: z.boolean(),
    resolved: z.boolean().describe('True once staff brought the tool back.'),
    resolution_time: dateTime.nullable(),
    resolver: id.nullable(),
    usage_event: id
      .nullable()
      .describe('The usage event whose answers reported it; null for an enable it refused.'),
    question: z.string().describe('The name of the question answered Yes.'),
  })
  .meta({ id: 'NemoTask' }) satisfies z.ZodType<NemoTask>;

const sampleSchema = z.object({
  sample_name: z.string(),
  sample_or_pid: z.enum(['Sample Name', 'PID']),
  sample_details: z.string(),
  sample_elements: z.array(z.string()),
});

const matchedReservation = z
  .object({ id, start: z.string(), end: z.string(), overlap_seconds: z.int().min(0) })
  .nullable()
  .describe("The tool's reservation that overlaps the usage most, if any.");

const experimentRecordSchema = z
  .object({
    usage_event_id: id,
    tool_id: id,
    start: z.string(),
    end: z.string().nullable(),
    experiment_title: z.string(),
    experiment_purpose: z.string(),
    project_id: z.string(),
    samples: z.array(sampleSchema),
    data_consent: z
      .string()
      .describe('The consent answer as given: Agree, Yes, True or Affirmative.'),
    source: z
      .enum(SOURCES)
      .describe('The answers used: run_data, then pre_run_data, then the reservation.'),
    reservation: matchedReservation,
  })
  .meta({ id: 'ExperimentRecord' }) satisfies z.ZodType<ExperimentRecord>;

const experimentSchema = z
  .object({
    id: id.describe("The usage event's id."),
    usage_event: usageEventSchema,
    record: experimentRecordSchema.nullable().describe('Null when no answer source is usable.'),
    reason: z.string().nullable().describe('Why there is no record: each source and its fault.'),
    reservation: matchedReservation.describe(
      "The tool's reservation that overlaps the usage most, if any, with a record or without.",
    ),
    attempts: z.array(
      z.object({
        source: z.enum(SOURCES),
        reservation_id: id.optional(),
        ok: z.boolean(),
        reason: z
          .enum([
            'empty',
            'malformed_json',
            'not_an_object',
            'missing_field',
            'wrong_type',
            'consent_missing',
            'consent_declined',
            'consent_unrecognized',
            'no_reservation',
          ])
          .optional(),
        detail: z.string().optional(),
      }),
    ),
    files: z
      .array(fileOut)
      .describe("File records of the tool's instruments found during the usage."),
    notebook_entries: z
      .array(
        z.object({
          uuid: z.string(),
          title: z.string(),
          tags: z.array(z.string()),
          metadata: z.record(z.string(), z.unknown()).nullable(),
          updated_at: z.string(),
        }),
      )
      .describe('Notebook experiments linked to this usage at the station (spec 001 metadata).'),
  })
  .meta({ id: 'Experiment' }) satisfies z.ZodType<ExperimentJson>;

const validationErrors = z.record(z.string(), z.array(z.string())).meta({
  id: 'NemoValidationErrors',
  description: 'Every malformed parameter, with its message.',
});

const BASE = 'https://labstation.example.org';

interface ResourceDoc<Json> {
  resource: Pick<Resource<{ id: number }, Json>, 'name' | 'filters' | 'ordering'>;
  schema: z.ZodType<Json>;
  example: Json;
  /** "user", "usage event" */
  singular: string;
}

const USERS: ResourceDoc<NemoUser> = {
  resource: users,
  schema: userSchema,
  singular: 'user',
  example: {
    id: 2,
    username: 'alice',
    first_name: 'Alice',
    last_name: 'Liddell',
    email: 'alice@example.org',
    badge_number: '100200',
    is_active: true,
    is_staff: false,
  },
};

const TOOLS: ResourceDoc<NemoTool> = {
  resource: tools,
  schema: toolSchema,
  singular: 'tool',
  example: { id: 1, name: 'SEM', category: 'Microscopy', operational: true, visible: true },
};

const PROJECTS: ResourceDoc<NemoProject> = {
  resource: projects,
  schema: projectSchema,
  singular: 'project',
  example: { id: 1, name: 'Cathodes', application_identifier: 'PRJ-1', active: true },
};

const RESERVATIONS: ResourceDoc<NemoReservation> = {
  resource: reservations,
  schema: reservationSchema,
  singular: 'reservation',
  example: {
    id: 12,
    user: 2,
    creator: 2,
    tool: 1,
    area: null,
    project: 1,
    start: '2024-01-05T08:30:00-05:00',
    end: '2024-01-05T10:30:00-05:00',
    cancelled: false,
    question_data: JSON.stringify({ project_id: 'PRJ-1', sample_group: [{ sample_name: 'S1' }] }),
  },
};

const USAGE_EVENTS: ResourceDoc<NemoUsageEvent> = {
  resource: usageEvents,
  schema: usageEventSchema,
  singular: 'usage event',
  example: {
    id: 31,
    user: 2,
    operator: 2,
    project: 1,
    tool: 1,
    start: '2024-01-05T09:00:00-05:00',
    end: '2024-01-05T10:15:00.250000-05:00',
    validated: false,
    validated_by: null,
    remote_work: false,
    pre_run_data: JSON.stringify({ data_consent: 'Agree', project_id: 'PRJ-1' }),
    run_data: JSON.stringify({ problem: 'No' }),
  },
};

const CONSUMABLE_WITHDRAWS: ResourceDoc<NemoConsumableWithdraw> = {
  resource: consumableWithdraws,
  schema: withdrawSchema,
  singular: 'consumable withdraw',
  example: {
    id: 7,
    customer: 2,
    merchant: 2,
    consumable: 'LN2 (litres)',
    quantity: 3,
    project: 1,
    date: '2024-01-05T10:15:00.250000-05:00',
    usage_event: 31,
    tool_usage: true,
    tool: 1,
    question: 'ln2_litres',
  },
};

const TASKS: ResourceDoc<NemoTask> = {
  resource: tasks,
  schema: taskSchema,
  singular: 'task',
  example: {
    id: 4,
    tool: 1,
    creator: 2,
    creation_time: '2024-01-05T10:15:00.250000-05:00',
    problem_description: 'Vacuum fault',
    force_shutdown: true,
    safety_hazard: false,
    resolved: true,
    resolution_time: '2024-01-05T14:00:00-05:00',
    resolver: 3,
    usage_event: 31,
    question: 'problem',
  },
};

const EXPERIMENTS_DOC: ResourceDoc<ExperimentJson> = {
  resource: EXPERIMENTS,
  schema: experimentSchema,
  singular: 'experiment',
  example: {
    id: 31,
    usage_event: USAGE_EVENTS.example,
    record: {
      usage_event_id: 31,
      tool_id: 1,
      start: '2024-01-05T09:00:00-05:00',
      end: '2024-01-05T10:15:00.250000-05:00',
      experiment_title: 'Grain boundaries in 316L',
      experiment_purpose: 'EDS maps',
      project_id: 'PRJ-1',
      samples: [
        {
          sample_name: 'S1',
          sample_or_pid: 'Sample Name',
          sample_details: '',
          sample_elements: ['Fe', 'Cr'],
        },
      ],
      data_consent: 'Agree',
      source: 'question_data',
      reservation: {
        id: 12,
        start: '2024-01-05T08:30:00-05:00',
        end: '2024-01-05T11:00:00-05:00',
        overlap_seconds: 4500,
      },
    },
    reason: null,
    reservation: {
      id: 12,
      start: '2024-01-05T08:30:00-05:00',
      end: '2024-01-05T11:00:00-05:00',
      overlap_seconds: 4500,
    },
    attempts: [
      { source: 'run_data', ok: false, reason: 'consent_missing', detail: 'data_consent: missing' },
      {
        source: 'pre_run_data',
        ok: false,
        reason: 'missing_field',
        detail: 'experiment_title: missing or blank',
      },
      { source: 'question_data', reservation_id: 12, ok: true },
    ],
    files: [fileExample],
    notebook_entries: [
      {
        uuid: '0193a1f2-8d2e-7c31-a1b2-3c4d5e6f7a8b',
        title: 'EDS of 316L',
        tags: ['steel'],
        metadata: {
          extra_fields: {
            'Beam energy': { type: 'number', value: '15', units: ['kV'], unit: 'kV' },
          },
        },
        updated_at: '2024-01-05T15:20:00.000Z',
      },
    ],
  },
};

export function describeNemoApi(docs: ApiDocs): void {
  docs.describeTag(
    NEMO_TAG,
    'Read-only and compatible with NEMO clients: django-filter style filters, Django REST ' +
      'framework page-number pagination (`{count, next, previous, results}`) and ordering. ' +
      'For staff and admin accounts.',
  );
  describeResource(docs, USERS);
  describeResource(docs, TOOLS);
  describeResource(docs, PROJECTS);
  describeResource(docs, RESERVATIONS);
  describeResource(docs, USAGE_EVENTS);
  describeResource(docs, EXPERIMENTS_DOC);
  describeResource(docs, CONSUMABLE_WITHDRAWS);
  describeResource(docs, TASKS);
}

// Made once per resource: a schema's id names one component, whatever number of servers
// this process builds.
const pages = new Map<string, z.ZodType>();

/** DRF's page envelope around the resource's records. */
function pageSchema<Json>({ resource, schema, singular }: ResourceDoc<Json>): z.ZodType {
  let page = pages.get(resource.name);
  if (!page) {
    const typeName = singular.replace(/(^| )(\w)/g, (_m, _s: string, c: string) => c.toUpperCase());
    page = z
      .object({
        count: z.int().min(0).describe('How many records match, on all pages.'),
        next: z.url().nullable().describe('The next page, or null on the last.'),
        previous: z.url().nullable().describe('The previous page, or null on the first.'),
        results: z.array(schema),
      })
      .meta({ id: `Nemo${typeName}Page` });
    pages.set(resource.name, page);
  }
  return page;
}

function describeResource<Json>(docs: ApiDocs, doc: ResourceDoc<Json>): void {
  const { resource, schema, example, singular } = doc;
  const name = resource.name;
  const plural = name.replaceAll('_', ' ');
  const page = pageSchema(doc);
  docs.add({
    method: 'GET',
    path: `/api/${name}/`,
    tag: NEMO_TAG,
    summary: `List ${plural}`,
    description:
      `One page of ${plural}, newest id first unless \`ordering\` says otherwise. An unknown ` +
      'parameter, or a filter given an empty value, is ignored; a repeated one counts once, ' +
      'with its last value.',
    security: 'staff',
    query: listQuery(resource),
    responses: {
      200: {
        description: `A page of ${plural}.`,
        schema: page,
        example: {
          count: 2,
          next: `${BASE}/api/${name}/?page=2&page_size=1`,
          previous: null,
          results: [example],
        },
      },
      400: {
        description: 'Malformed filter values, each with its message.',
        schema: validationErrors,
        example: { id: [MESSAGES.integer] },
      },
      ...GUARD_RESPONSES,
      404: detailResponse('No such page.', MESSAGES.invalidPage),
    },
  });
  docs.add({
    method: 'GET',
    path: `/api/${name}/{id}/`,
    tag: NEMO_TAG,
    summary: `Get one ${singular}`,
    security: 'staff',
    params: z.object({ id: id.describe(`The ${singular}'s id.`) }),
    responses: {
      200: { description: `The ${singular}.`, schema, example },
      ...GUARD_RESPONSES,
      404: {
        description: `No ${singular} with this id.`,
        schema: detailSchema,
        example: { detail: MESSAGES.notFound },
      },
    },
  });
}

const DATE_TIME_FORMAT =
  'ISO 8601: with an offset (`2024-01-05T10:00:00-05:00`, `2024-01-05T15:00:00Z`), or without ' +
  "one, read in the server's time zone; a date alone (`2024-01-05`) is its midnight.";

const FILTER_MEANING: Record<string, string> = {
  id: 'Only the record with this id.',
  id__in: 'Only the records with these ids.',
  start__gte: 'Starts at or after this time.',
  start__gt: 'Starts after this time.',
  start__lte: 'Starts at or before this time.',
  start__lt: 'Starts before this time.',
  end__gte: 'Ends at or after this time.',
  end__gt: 'Ends after this time.',
  end__lte: 'Ends at or before this time.',
  end__lt: 'Ends before this time.',
  end__isnull: '`true`: not ended yet; `false`: ended.',
  tool_id: 'Only those of this tool.',
  tool_id__in: 'Only those of these tools.',
  area_id: 'Only those of this area (not those of the tools in it).',
  area_id__in: 'Only those of these areas.',
  user_id: 'Only those of this user.',
  user_id__in: 'Only those of these users.',
  project_id: 'Only those charged to this project.',
  project_id__in: 'Only those charged to these projects.',
  operator_id: 'Only those operated by this user.',
  operator_id__in: 'Only those operated by these users.',
  tool_id__isnull: '`true`: only those of an area; `false`: only those of a tool.',
  area_id__isnull: '`true`: only those of a tool; `false`: only those of an area.',
  creator_id: 'Only those booked by this user (for themselves or for another).',
  creator_id__in: 'Only those booked by these users.',
  validated: '`true`: only those staff validated; `false`: only those not validated.',
  validated_by: 'Only those validated by this staff member.',
  validated_by__in: 'Only those validated by these staff members.',
  validated_by__isnull: '`true`: only those nobody validated; `false`: only validated ones.',
  cancelled: '`true`: only cancelled ones; `false`: only those not cancelled.',
  username: 'Only the user with exactly this username (letter case counts).',
  username__iexact: 'Only the user with this username, in any letter case.',
  username__in: 'Only the users with these usernames (letter case counts).',
};

/** A filter as a query parameter: the type its kind parses, and what it means. */
function filterParameter(name: string, def: FilterDef): z.ZodType {
  // NEMO's second name of a relation's filter (`tool` for `tool_id`) means the same.
  const meaning =
    FILTER_MEANING[name] ??
    FILTER_MEANING[name.replace(/^([a-z]+)(__|$)/, '$1_id$2')] ??
    `Filters on ${name}.`;
  switch (def.kind) {
    case 'unsupported':
      return z
        .string()
        .optional()
        .describe(
          'A NEMO filter this server does not apply (what it filters on is not kept here): ' +
            'given, it is refused with 400, rather than ignored.',
        );
    case 'integer':
      return z.int().optional().describe(meaning);
    case 'integers':
      return z.string().optional().describe(`${meaning} Comma-separated: \`1,2,3\`.`);
    case 'datetime':
      return z.string().optional().describe(`${meaning} ${DATE_TIME_FORMAT}`);
    case 'boolean':
      return z.boolean().optional().describe(`${meaning} Also \`1\`/\`0\`, in any letter case.`);
    case 'text':
      return z.string().optional().describe(meaning);
    case 'texts':
      return z.string().optional().describe(`${meaning} Comma-separated.`);
  }
}

function listQuery(resource: ResourceDoc<unknown>['resource']): z.ZodObject {
  const fields = Object.keys(resource.ordering);
  const shape: Record<string, z.ZodType> = {};
  for (const [name, def] of Object.entries(resource.filters))
    shape[name] = filterParameter(name, def);
  shape.ordering = z
    .string()
    .optional()
    .describe(
      `Comma-separated fields among ${fields.map((f) => `\`${f}\``).join(', ')}; a \`-\` ` +
        'before a field orders it descending. Default: `-id`.',
    );
  shape.page = z
    .union([z.int().min(1), z.literal('last')])
    .optional()
    .describe('The page, from 1, or `last`. Default: 1.');
  shape.page_size = z
    .int()
    .optional()
    .describe(
      `Records per page. Default: ${DEFAULT_PAGE_SIZE}; more than ${MAX_PAGE_SIZE} is ` +
        `${MAX_PAGE_SIZE}.`,
    );
  return z.object(shape);
}
