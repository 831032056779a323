/**
 * The OpenAPI 3.1 document of the server, built from what the route modules said in `ApiDocs`:
 * the same zod schemas that validate requests, plus examples. Built once the routes are all
 * registered; the same registrations always give the same document.
 */
import type { ApiDocs, OperationDoc, Security } from './registry.js';
import { SchemaComponents, type JsonSchema } from './schemas.js';

/** The API has no version in its paths; this changes when an operation changes incompatibly. */
export const API_VERSION = '1';

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    securitySchemes: Record<string, JsonSchema>;
    schemas: Record<string, JsonSchema>;
  };
}

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

export interface OpenApiOperation {
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  security: Record<string, string[]>[];
  parameters?: OpenApiParameter[];
  requestBody?: {
    required: boolean;
    content: Record<string, { schema: JsonSchema; example?: unknown }>;
  };
  responses: Record<
    string,
    { description: string; content?: Record<string, { schema?: JsonSchema; example?: unknown }> }
  >;
}

export const SECURITY_SCHEMES = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'The `access_token` that `POST /auth/jwt/login` returns, sent as ' +
      '`Authorization: Bearer <access_token>`.',
  },
  apiToken: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description:
      'An API token made by an administrator, sent as `Authorization: Token <token>`: ' +
      'type the word `Token`, a space, then the token.',
  },
  stationKey: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description:
      'The key of a registered station (`labstation admin station create`), sent as ' +
      '`Authorization: Station <key>`: type the word `Station`, a space, then the key.',
  },
} as const satisfies Record<string, JsonSchema>;

type SchemeName = keyof typeof SECURITY_SCHEMES;

const SECURITY: Record<Security, { schemes: SchemeName[]; who: string }> = {
  none: { schemes: [], who: 'anyone, without credentials' },
  user: { schemes: ['bearer', 'apiToken'], who: 'any logged-in account' },
  staff: { schemes: ['bearer', 'apiToken'], who: 'staff and admin accounts' },
  admin: { schemes: ['bearer', 'apiToken'], who: 'admin accounts' },
  station: { schemes: ['stationKey'], who: 'registered stations, with their key' },
};

const DESCRIPTION = `The HTTP API of a Labstation server: the NEMO-compatible read API, the harvest
management API, the station sync API and the web UI's carrier.

**Authentication.** Log in with \`POST /auth/jwt/login\` (form fields \`username\`, the e-mail
address, and \`password\`) and send the \`access_token\` it returns as
\`Authorization: Bearer <token>\`, or send an API token as \`Authorization: Token <token>\`.
Stations send \`Authorization: Station <key>\`. Use **Authorize** to set one here.

**Errors** are JSON: \`{"detail": ...}\` on the REST routes, \`{"code", "message"}\` on
\`/rpc/{name}\`.`;

const METHOD_ORDER = ['get', 'put', 'post', 'patch', 'delete', 'head'];

export function buildOpenApiDocument(docs: ApiDocs): OpenApiDocument {
  const components = new SchemaComponents();
  const operations = new Map<string, Map<string, OpenApiOperation>>();
  const operationIds = new Set<string>();
  const tags: string[] = [];
  for (const op of docs.operations) {
    const method = op.method.toLowerCase();
    const item = operations.get(op.path) ?? new Map<string, OpenApiOperation>();
    operations.set(op.path, item);
    if (item.has(method)) throw new Error(`${op.method} ${op.path} is described twice`);
    const operation = operationOf(op, components);
    if (operationIds.has(operation.operationId)) {
      throw new Error(`two operations are named ${operation.operationId}`);
    }
    operationIds.add(operation.operationId);
    item.set(method, operation);
    if (!tags.includes(op.tag)) tags.push(op.tag);
  }
  // Paths in the order the routes were described; methods in one fixed order.
  const paths: OpenApiDocument['paths'] = {};
  for (const [path, item] of operations) {
    const methods = [...item.keys()].sort(
      (a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b),
    );
    paths[path] = Object.fromEntries(methods.map((method) => [method, item.get(method)!]));
  }
  const resolved = components.finish(paths);
  return {
    openapi: '3.1.0',
    info: { title: 'Labstation server API', version: API_VERSION, description: DESCRIPTION },
    tags: tags.map((name) => {
      const description = docs.tagDescriptions.get(name);
      return description === undefined ? { name } : { name, description };
    }),
    paths: resolved.document,
    components: { securitySchemes: SECURITY_SCHEMES, schemas: resolved.schemas },
  };
}

/** `GET /api/users/{id}/` -> `getApiUsersById`; `GET /` -> `getRoot`. */
export function defaultOperationId(method: string, path: string): string {
  const words = path
    .split('/')
    .filter((segment) => segment !== '')
    .flatMap((segment) =>
      segment.startsWith('{') ? ['by', segment.slice(1, -1)] : segment.split(/[^A-Za-z0-9]+/),
    )
    .filter((word) => word !== '');
  const tail = words.length ? words : ['root'];
  return (
    method.toLowerCase() +
    tail.map((word) => word[0].toUpperCase() + word.slice(1).toLowerCase()).join('')
  );
}

function operationOf(op: OperationDoc, components: SchemaComponents): OpenApiOperation {
  const operationId = op.operationId ?? defaultOperationId(op.method, op.path);
  const security = SECURITY[op.security];
  const who = `**Who may call:** ${security.who}.`;
  const parameters = [
    ...parametersOf(op, 'path', components, operationId),
    ...parametersOf(op, 'query', components, operationId),
  ];
  return {
    operationId,
    tags: [op.tag],
    summary: op.summary,
    description: op.description ? `${op.description}\n\n${who}` : who,
    security: security.schemes.map((scheme) => ({ [scheme]: [] })),
    ...(parameters.length ? { parameters } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: true,
            content: {
              [op.bodyContentType ?? 'application/json']: {
                schema: components.convert(op.body, 'input', `${operationId}_body`),
                ...(op.bodyExample === undefined ? {} : { example: op.bodyExample }),
              },
            },
          },
        }
      : {}),
    responses: responsesOf(op, components, operationId),
  };
}

function responsesOf(
  op: OperationDoc,
  components: SchemaComponents,
  operationId: string,
): OpenApiOperation['responses'] {
  const responses: OpenApiOperation['responses'] = {};
  const statuses = Object.keys(op.responses)
    .map(Number)
    .sort((a, b) => a - b);
  for (const status of statuses) {
    const response = op.responses[status];
    const media: { schema?: JsonSchema; example?: unknown } = {};
    if (response.schema) {
      media.schema = components.convert(response.schema, 'output', `${operationId}_${status}`);
    }
    if (response.example !== undefined) media.example = response.example;
    responses[String(status)] = {
      description: response.description,
      ...(Object.keys(media).length
        ? { content: { [response.contentType ?? 'application/json']: media } }
        : {}),
    };
  }
  return responses;
}

/** One parameter per property of the operation's params or query object. */
function parametersOf(
  op: OperationDoc,
  where: 'path' | 'query',
  components: SchemaComponents,
  operationId: string,
): OpenApiParameter[] {
  const object = where === 'path' ? op.params : op.query;
  const templated = [...op.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
  if (where === 'path') {
    const declared = Object.keys(object?.shape ?? {});
    const missing = templated.filter((name) => !declared.includes(name));
    const extra = declared.filter((name) => !templated.includes(name));
    if (missing.length || extra.length) {
      throw new Error(
        `${op.method} ${op.path}: path parameters [${templated.join(', ')}] but params ` +
          `[${declared.join(', ')}]`,
      );
    }
  }
  if (!object) return [];
  const schema = components.convert(object, 'input', `${operationId}_${where}`);
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}
