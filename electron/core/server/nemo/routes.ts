/**
 * The NEMO-compatible read API (issue 3, spec 000 Endpoints): GET /api/<resource>/ and
 * /api/<resource>/<id>/ for users, tools, projects, reservations and usage events (and the
 * experiment records built from usage events, experiments.ts), and what usage forms made:
 * consumable withdraws and tasks (problem reports), with
 * django-filter style filters, DRF's page-number pagination and ordering, and DRF's bodies.
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
} from 'fastify';
import type { Db } from '../../db/open.js';
import type { Reader } from '../harvest/files.js';
import type { ApiDocs } from '../openapi/registry.js';
import { describeNemoApi } from './docs.js';
import {
  MESSAGES,
  orderByOf,
  pageNumberOf,
  pageSizeOf,
  parseFilters,
  searchParamsOf,
  type Clause,
  type ValidationErrors,
} from './params.js';
import { experimentsResource } from './experiments.js';
import { countRows, pageIds, rowById, rowsByIds } from './queries.js';
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

export interface NemoDeps {
  db: Db;
  /** IANA name of the server's zone: naive filter values are read in it, output carries it. */
  timeZone: () => string;
  /** Authenticates and authorizes; sends 401/403 itself. */
  authorize: onRequestAsyncHookHandler;
  /** Where the routes describe themselves for /openapi.json. */
  docs?: ApiDocs;
  /**
   * The server's configured public address (no trailing slash), which page links start with;
   * null: the scheme and host of the request (behind a trusted proxy, its forwarded ones).
   */
  publicUrl?: () => string | null;
}

export interface Page<Json> {
  count: number;
  next: string | null;
  previous: string | null;
  results: Json[];
}

export function registerNemoApi(app: FastifyInstance, deps: NemoDeps): void {
  registerResource(app, deps, users);
  registerResource(app, deps, tools);
  registerResource(app, deps, projects);
  registerResource(app, deps, reservations);
  registerResource(app, deps, usageEvents);
  registerResource(app, deps, experimentsResource(deps.db));
  registerResource(app, deps, consumableWithdraws);
  registerResource(app, deps, tasks);
  if (deps.docs) describeNemoApi(deps.docs);
}

const DETAIL_ID_RE = /^\d{1,15}$/;

/** Who asks (authorize has run, so there is a principal). */
function readerOf(request: FastifyRequest): Reader {
  const account = request.principal!.account;
  return { id: account.id, role: account.role };
}

function registerResource<Row extends { id: number }, Json>(
  app: FastifyInstance,
  deps: NemoDeps,
  resource: Resource<Row, Json>,
): void {
  app.get(
    `/api/${resource.name}/`,
    { onRequest: deps.authorize },
    (request, reply): Page<Json> | ValidationErrors | { detail: string } =>
      listPage(deps, resource, request, reply),
  );

  app.get<{ Params: { id: string } }>(
    `/api/${resource.name}/:id/`,
    { onRequest: deps.authorize },
    (request, reply): Json | ValidationErrors | { detail: string } => {
      // The list's filters hold here too, as DRF's get_object filters its queryset first: a
      // bad value is 400, a record they leave out 404 (`/api/usage_events/1/?tool_id=2`).
      const filters = parseFilters(resource.filters, searchParamsOf(request.url), deps.timeZone());
      if (!filters.ok) {
        void reply.code(400);
        return filters.errors;
      }
      const id = request.params.id;
      let row = DETAIL_ID_RE.test(id)
        ? rowById<Row>(deps.db, resource.table, resource.columns, Number(id))
        : undefined;
      if (row && filters.clauses.length) {
        const clauses = [...filters.clauses, { sql: 'id = ?', args: [row.id] }];
        if (countRows(deps.db, resource.table, clauses) === 0) row = undefined;
      }
      if (!row) {
        void reply.code(404);
        return { detail: MESSAGES.notFound };
      }
      return resource.serialize(row, deps.timeZone(), readerOf(request));
    },
  );
}

export type ListQuery =
  | { ok: true; clauses: Clause[]; orderBy: string; pageSize: number }
  | { ok: false; errors: ValidationErrors };

/** The filters, order and page size of a list request (exported for the query-plan test). */
export function listQueryOf<Row extends { id: number }, Json>(
  resource: Resource<Row, Json>,
  query: URLSearchParams,
  timeZone: string,
): ListQuery {
  const filters = parseFilters(resource.filters, query, timeZone);
  if (!filters.ok) return filters;
  const preferIndex = filters.clauses.some((clause) => clause.preferIndex === true);
  return {
    ok: true,
    clauses: filters.clauses,
    orderBy: orderByOf(query, resource.ordering, preferIndex ? '+id' : 'id'),
    pageSize: pageSizeOf(query),
  };
}

function listPage<Row extends { id: number }, Json>(
  deps: NemoDeps,
  resource: Resource<Row, Json>,
  request: FastifyRequest,
  reply: FastifyReply,
): Page<Json> | ValidationErrors | { detail: string } {
  const query = searchParamsOf(request.url);
  const timeZone = deps.timeZone();
  const list = listQueryOf(resource, query, timeZone);
  if (!list.ok) {
    void reply.code(400);
    return list.errors;
  }
  const { clauses, orderBy, pageSize } = list;
  // One read transaction: the count and the page come from the same snapshot.
  const found = deps.db.transaction(() => {
    const count = countRows(deps.db, resource.table, clauses);
    const pages = Math.max(1, Math.ceil(count / pageSize));
    const page = pageNumberOf(query, pages);
    if (page === null) return null;
    const ids = pageIds(deps.db, {
      table: resource.table,
      clauses,
      orderBy,
      limit: pageSize,
      offset: (page - 1) * pageSize,
      count,
    });
    return {
      count,
      page,
      pages,
      rows: rowsByIds<Row>(deps.db, resource.table, resource.columns, ids),
    };
  })();
  if (!found) {
    void reply.code(404);
    return { detail: MESSAGES.invalidPage };
  }
  const { count, page, pages, rows } = found;
  const base = publicBase(deps, request);
  return {
    count,
    next: page < pages ? pageUrl(base, request, query, page + 1) : null,
    previous: page > 1 ? pageUrl(base, request, query, page - 1) : null,
    results: rows.map((row) => resource.serialize(row, timeZone, readerOf(request))),
  };
}

/**
 * Where the absolute links of a response start: the configured public address when it is an
 * http(s) URL (a server behind a proxy: the address clients reach it at), else the scheme and
 * host of the request as DRF's build_absolute_uri takes them.
 */
function publicBase(deps: NemoDeps, request: FastifyRequest): string {
  const configured = deps.publicUrl?.() ?? null;
  if (configured !== null && /^https?:\/\/[^/]/i.test(configured) && URL.canParse(configured)) {
    return configured.replace(/\/+$/, '');
  }
  return `${request.protocol}://${request.host}`;
}

/**
 * DRF's replace_query_param / remove_query_param on the absolute request URL: the other
 * parameters kept (sorted by name, as DRF re-encodes them), page set, or dropped for page 1;
 * `,` and `:` left as they are (DRF escapes them).
 */
export function pageUrl(
  base: string,
  request: FastifyRequest,
  query: URLSearchParams,
  page: number,
): string {
  const grouped = new Map<string, string[]>();
  for (const [name, value] of query) {
    if (name === 'page') continue;
    const values = grouped.get(name);
    if (values) values.push(value);
    else grouped.set(name, [value]);
  }
  if (page > 1) grouped.set('page', [String(page)]);
  const out = new URLSearchParams();
  for (const name of [...grouped.keys()].sort()) {
    for (const value of grouped.get(name) ?? []) out.append(name, value);
  }
  const at = request.url.indexOf('?');
  const path = at < 0 ? request.url : request.url.slice(0, at);
  // `,` and `:` are legal in a query as they are (RFC 3986 sub-delims and pchar): escaped, a
  // long `id__in=1,2,...` grew by 2 characters a value in its link, past what the same server
  // takes in a request line (431). A `%2C` here is always an escaped comma: `%` itself is `%25`.
  const search = out.toString().replace(/%2C/g, ',').replace(/%3A/g, ':');
  return `${base}${path}${search ? `?${search}` : ''}`;
}
