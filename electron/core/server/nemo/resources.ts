/**
 * The resources of the NEMO-compatible API: table, columns, the filters and ordering fields
 * each accepts, and its serializer. A filter not listed for a resource is ignored like any
 * unknown parameter.
 */
import { storedIso } from './datetime.js';
import type { Reader } from '../harvest/files.js';
import type { FilterDef, FilterSet, OrderField } from './params.js';
import {
  PROJECT_COLUMNS,
  RESERVATION_COLUMNS,
  TASK_COLUMNS,
  TOOL_COLUMNS,
  USAGE_EVENT_COLUMNS,
  USER_COLUMNS,
  WITHDRAWAL_COLUMNS,
  projectJson,
  reservationJson,
  taskJson,
  toolJson,
  usageEventJson,
  userJson,
  withdrawalJson,
  type NemoConsumableWithdraw,
  type NemoProject,
  type NemoReservation,
  type NemoTask,
  type NemoTool,
  type NemoUsageEvent,
  type NemoUser,
  type ProjectRow,
  type ReservationRow,
  type TaskRow,
  type ToolRow,
  type UsageEventRow,
  type UserRow,
  type WithdrawalRow,
} from './serialize.js';

export interface Resource<Row extends { id: number }, Json> {
  /** Path segment: /api/<name>/ and /api/<name>/<id>/. */
  name: string;
  table: string;
  columns: string;
  filters: FilterSet;
  ordering: Readonly<Record<string, OrderField>>;
  /** `reader` is who asks: what a result embeds from elsewhere (files) is within their grants. */
  serialize: (row: Row, timeZone: string, reader: Reader) => Json;
}

// Lists go through json_each so one SQL text serves any number of values.
const equals = (column: string): FilterDef => ({
  kind: 'integer',
  where: (value) => ({ sql: `${column} = ?`, args: [value] }),
});
const inList = (column: string): FilterDef => ({
  kind: 'integers',
  where: (values) => ({
    sql: `${column} IN (SELECT value FROM json_each(?))`,
    args: [JSON.stringify(values)],
  }),
});
// Stored values have whole milliseconds: ">= 10:00:00.0004" is "> 10:00:00.000", and
// "<= 10:00:00.0004" is "<= 10:00:00.000".
const atOrAfter = (column: string): FilterDef => ({
  kind: 'datetime',
  where: (value) => ({
    sql: `${column} ${value.subMillisecond ? '>' : '>='} ?`,
    args: [storedIso(value.ms)],
  }),
});
const atOrBefore = (column: string): FilterDef => ({
  kind: 'datetime',
  where: (value) => ({ sql: `${column} <= ?`, args: [storedIso(value.ms)] }),
});
// NEMO's strict bounds, by the same rule: "> 10:00:00.0004" is "> 10:00:00.000" (the next stored
// value is 10:00:00.001), and "< 10:00:00.0004" is "<= 10:00:00.000".
const after = (column: string): FilterDef => ({
  kind: 'datetime',
  where: (value) => ({ sql: `${column} > ?`, args: [storedIso(value.ms)] }),
});
const before = (column: string): FilterDef => ({
  kind: 'datetime',
  where: (value) => ({
    sql: `${column} ${value.subMillisecond ? '<=' : '<'} ?`,
    args: [storedIso(value.ms)],
  }),
});
// Both tables CHECK that end >= start, so an end at or before a time implies a start at or
// before it: saying so closes the range the start indexes seek (measured on 1,000,000 usage
// events, start__gte + end__lte without a tool: about 200 ms a request before, 8 ms after).
const endAtOrBefore: FilterDef = {
  kind: 'datetime',
  where: (value) => {
    const at = storedIso(value.ms);
    return { sql: '"end" <= ? AND start <= ?', args: [at, at] };
  },
};
const endBefore: FilterDef = {
  kind: 'datetime',
  where: (value) => {
    const at = storedIso(value.ms);
    const op = value.subMillisecond ? '<=' : '<';
    return { sql: `"end" ${op} ? AND start ${op} ?`, args: [at, at] };
  },
};
const isNull = (column: string, activeIndex: boolean): FilterDef => ({
  kind: 'boolean',
  where: (value) => ({
    sql: `${column} IS ${value ? '' : 'NOT '}NULL`,
    args: [],
    preferIndex: value && activeIndex,
  }),
});
const flag = (column: string): FilterDef => ({
  kind: 'boolean',
  where: (value) => ({ sql: `${column} = ?`, args: [value ? 1 : 0] }),
});

const ID_FILTERS = { id: equals('id'), id__in: inList('id') } as const;

/**
 * A relation's filters, under NEMO's two names for each (`tool_id` and `tool`, `tool_id__in`
 * and `tool__in`, and `__isnull` where it may be none).
 */
function relation(name: string, column: string, nullable = false): FilterSet {
  const set: Record<string, FilterDef> = {
    [`${name}_id`]: equals(column),
    [`${name}_id__in`]: inList(column),
    [name]: equals(column),
    [`${name}__in`]: inList(column),
  };
  if (nullable) {
    set[`${name}_id__isnull`] = isNull(column, false);
    set[`${name}__isnull`] = isNull(column, false);
  }
  return set;
}

const UNSUPPORTED: FilterDef = { kind: 'unsupported' };

/** NEMO's filters on the parts of a start or end in its time zone: not applied here. */
const DATE_PART_FILTERS: FilterSet = Object.fromEntries(
  ['start', 'end'].flatMap((field) =>
    ['year', 'month', 'day'].map((part) => [`${field}__${part}`, UNSUPPORTED]),
  ),
);

/** `activeIndex`: a partial index holds the rows whose end is null (active usage events). */
const timeFilters = (activeIndex: boolean): FilterSet => ({
  start__gte: atOrAfter('start'),
  start__gt: after('start'),
  start__lte: atOrBefore('start'),
  start__lt: before('start'),
  end__gte: atOrAfter('"end"'),
  end__gt: after('"end"'),
  end__lte: endAtOrBefore,
  end__lt: endBefore,
  end__isnull: isNull('"end"', activeIndex),
});

const TIME_ORDERING = {
  id: { column: 'id' },
  start: { column: 'start' },
  end: { column: '"end"', nullable: true },
} as const;

export const usageEvents: Resource<UsageEventRow, NemoUsageEvent> = {
  name: 'usage_events',
  table: 'usage_events',
  columns: USAGE_EVENT_COLUMNS,
  filters: {
    ...ID_FILTERS,
    ...timeFilters(true),
    ...DATE_PART_FILTERS,
    ...relation('tool', 'tool_id'),
    ...relation('user', 'user_id'),
    ...relation('project', 'project_id'),
    ...relation('operator', 'operator_id'),
    validated: flag('validated'),
    validated_by: equals('validated_by_id'),
    validated_by__in: inList('validated_by_id'),
    validated_by__isnull: isNull('validated_by_id', false),
  },
  ordering: TIME_ORDERING,
  serialize: usageEventJson,
};

export const reservations: Resource<ReservationRow, NemoReservation> = {
  name: 'reservations',
  table: 'reservations',
  columns: RESERVATION_COLUMNS,
  filters: {
    ...ID_FILTERS,
    ...timeFilters(false),
    ...DATE_PART_FILTERS,
    // A reservation is of a tool or of an area (NEMO's ReservationFilter has both).
    ...relation('tool', 'tool_id', true),
    ...relation('area', 'area_id', true),
    ...relation('user', 'user_id'),
    ...relation('creator', 'creator_id'),
    ...relation('project', 'project_id'),
    cancelled: flag('cancelled'),
    // Kept by NEMO for its billing of missed reservations, which this server does not do.
    missed: UNSUPPORTED,
    validated: UNSUPPORTED,
    validated_by: UNSUPPORTED,
    validated_by__in: UNSUPPORTED,
    validated_by__isnull: UNSUPPORTED,
    question_data__isnull: UNSUPPORTED,
    question_data__isempty: UNSUPPORTED,
  },
  ordering: TIME_ORDERING,
  serialize: reservationJson,
};

// usernames are unique without regard to case (COLLATE NOCASE), but Django's exact and in
// lookups compare case-sensitively; iexact is the case-insensitive one, for every letter (as
// Django's UPPER() = UPPER() on PostgreSQL), not ASCII alone (NOCASE).
export const users: Resource<UserRow, NemoUser> = {
  name: 'users',
  table: 'users',
  columns: USER_COLUMNS,
  filters: {
    ...ID_FILTERS,
    username: {
      kind: 'text',
      where: (value) => ({
        sql: 'username = ? AND username = ? COLLATE BINARY',
        args: [value, value],
      }),
    },
    username__iexact: {
      kind: 'text',
      where: (value) => ({ sql: 'unicode_upper(username) = unicode_upper(?)', args: [value] }),
    },
    username__in: {
      kind: 'texts',
      where: (values) => ({
        sql: 'username COLLATE BINARY IN (SELECT value FROM json_each(?))',
        args: [JSON.stringify(values)],
      }),
    },
  },
  ordering: { id: { column: 'id' }, username: { column: 'username' } },
  serialize: (row) => userJson(row),
};

export const tools: Resource<ToolRow, NemoTool> = {
  name: 'tools',
  table: 'tools',
  columns: TOOL_COLUMNS,
  filters: ID_FILTERS,
  ordering: { id: { column: 'id' }, name: { column: 'name' } },
  serialize: (row) => toolJson(row),
};

export const projects: Resource<ProjectRow, NemoProject> = {
  name: 'projects',
  table: 'projects',
  columns: PROJECT_COLUMNS,
  filters: ID_FILTERS,
  ordering: { id: { column: 'id' }, name: { column: 'name' } },
  serialize: (row) => projectJson(row),
};

/** The four bounds of a date-time field, under NEMO's names (`date__gte`, ...). */
const instantFilters = (name: string, column: string): FilterSet => ({
  [`${name}__gte`]: atOrAfter(column),
  [`${name}__gt`]: after(column),
  [`${name}__lte`]: atOrBefore(column),
  [`${name}__lt`]: before(column),
});

export const consumableWithdraws: Resource<WithdrawalRow, NemoConsumableWithdraw> = {
  name: 'consumable_withdraws',
  table: 'consumable_withdrawals',
  columns: WITHDRAWAL_COLUMNS,
  filters: {
    ...ID_FILTERS,
    ...relation('customer', 'user_id'),
    ...relation('project', 'project_id'),
    ...relation('usage_event', 'usage_event_id'),
    ...relation('tool', 'tool_id'),
    merchant: {
      kind: 'integer',
      where: (value) => ({
        sql: 'usage_event_id IN (SELECT id FROM usage_events WHERE operator_id = ?)',
        args: [value],
      }),
    },
    consumable: {
      kind: 'text',
      where: (value) => ({ sql: 'consumable = ?', args: [value] }),
    },
    ...instantFilters('date', 'created_at'),
  },
  ordering: { id: { column: 'id' }, date: { column: 'created_at' } },
  serialize: withdrawalJson,
};

export const tasks: Resource<TaskRow, NemoTask> = {
  name: 'tasks',
  table: 'problem_reports',
  columns: TASK_COLUMNS,
  filters: {
    ...ID_FILTERS,
    ...relation('tool', 'tool_id'),
    ...relation('creator', 'user_id'),
    ...relation('usage_event', 'usage_event_id', true),
    force_shutdown: flag('force_shutdown'),
    safety_hazard: flag('safety_hazard'),
    resolved: {
      kind: 'boolean',
      where: (value) => ({ sql: `resolved_at IS ${value ? 'NOT ' : ''}NULL`, args: [] }),
    },
    ...instantFilters('creation_time', 'created_at'),
    ...instantFilters('resolution_time', 'resolved_at'),
  },
  ordering: {
    id: { column: 'id' },
    creation_time: { column: 'created_at' },
    resolution_time: { column: 'resolved_at', nullable: true },
  },
  serialize: taskJson,
};
