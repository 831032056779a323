/**
 * The OpenAPI builder on small registries: parameters from zod objects, request schemas read as
 * clients send them and responses as the server sends them, named and recursive schemas as
 * components, and the mistakes it refuses.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  buildOpenApiDocument,
  defaultOperationId,
} from '../../../electron/core/server/openapi/document.js';
import { ApiDocs, type OperationDoc } from '../../../electron/core/server/openapi/registry.js';

function docsOf(...ops: OperationDoc[]): ApiDocs {
  const docs = new ApiDocs();
  for (const op of ops) docs.add(op);
  return docs;
}

const ok = { 200: { description: 'ok', example: {} } };

describe('buildOpenApiDocument', () => {
  it('turns params and query objects into parameters, with defaults optional', () => {
    const doc = buildOpenApiDocument(
      docsOf({
        method: 'GET',
        path: '/things/{id}',
        tag: 'Things',
        summary: 'One thing',
        security: 'admin',
        params: z.object({ id: z.coerce.number().int().describe('Its id.') }),
        query: z.object({
          q: z.string(),
          limit: z.coerce.number().int().min(1).default(10),
          after: z.string().optional(),
        }),
        responses: ok,
      }),
    );
    const op = doc.paths['/things/{id}'].get;
    expect(op.operationId).toBe('getThingsById');
    expect(op.security).toEqual([{ bearer: [] }, { apiToken: [] }]);
    expect(op.description).toBe('**Who may call:** admin accounts.');
    expect(op.parameters).toEqual([
      {
        name: 'id',
        in: 'path',
        required: true,
        description: 'Its id.',
        schema: { type: 'integer' },
      },
      { name: 'q', in: 'query', required: true, schema: { type: 'string' } },
      {
        name: 'limit',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 1, default: 10 },
      },
      { name: 'after', in: 'query', required: false, schema: { type: 'string' } },
    ]);
  });

  it('reads bodies as sent (before transforms) and answers as returned', () => {
    const doc = buildOpenApiDocument(
      docsOf({
        method: 'POST',
        path: '/things',
        tag: 'Things',
        summary: 'Make a thing',
        security: 'station',
        body: z.object({ name: z.string().transform((s) => s.trim()), n: z.number().default(1) }),
        bodyExample: { name: 'x' },
        responses: {
          201: {
            description: 'made',
            schema: z.object({ id: z.int(), n: z.number().default(1) }),
            example: { id: 1, n: 1 },
          },
        },
      }),
    );
    const op = doc.paths['/things'].post;
    expect(op.security).toEqual([{ stationKey: [] }]);
    expect(op.requestBody).toEqual({
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: { name: { type: 'string' }, n: { type: 'number', default: 1 } },
            required: ['name'],
          },
          example: { name: 'x' },
        },
      },
    });
    expect(op.responses['201'].content!['application/json'].schema).toEqual({
      type: 'object',
      properties: { id: { type: 'integer' }, n: { type: 'number', default: 1 } },
      required: ['id', 'n'],
      additionalProperties: false,
    });
  });

  it('makes named schemas components, split in two only where requests and answers differ', () => {
    const same = z.object({ a: z.string() }).strict().meta({ id: 'TestSame' });
    const differs = z.object({ b: z.string().default('') }).meta({ id: 'TestDiffers' });
    const holder = z.object({ same, differs }).strict().meta({ id: 'TestHolder' });
    const doc = buildOpenApiDocument(
      docsOf({
        method: 'PUT',
        path: '/holders',
        tag: 'T',
        summary: 's',
        security: 'user',
        body: holder,
        bodyExample: {},
        responses: { 200: { description: 'ok', schema: holder, example: {} } },
      }),
    );
    expect(Object.keys(doc.components.schemas)).toEqual([
      'TestDiffers',
      'TestDiffersInput',
      'TestHolder',
      'TestHolderInput',
      'TestSame',
    ]);
    const body = doc.paths['/holders'].put.requestBody!.content['application/json'].schema;
    expect(body).toEqual({ $ref: '#/components/schemas/TestHolderInput' });
    expect(doc.components.schemas.TestHolderInput.properties).toEqual({
      same: { $ref: '#/components/schemas/TestSame' },
      differs: { $ref: '#/components/schemas/TestDiffersInput' },
    });
    expect(doc.components.schemas.TestDiffers.required).toEqual(['b']);
    expect(doc.components.schemas.TestDiffersInput.required).toBeUndefined();
  });

  it('makes recursive schemas components named after their operation', () => {
    interface Node {
      name: string;
      children: Node[];
    }
    const node: z.ZodType<Node> = z.lazy(() =>
      z.object({ name: z.string(), children: z.array(node) }),
    );
    const doc = buildOpenApiDocument(
      docsOf({
        method: 'GET',
        path: '/tree',
        tag: 'T',
        summary: 's',
        security: 'none',
        responses: {
          200: { description: 'ok', schema: node, example: { name: 'a', children: [] } },
        },
      }),
    );
    expect(doc.paths['/tree'].get.security).toEqual([]);
    expect(doc.paths['/tree'].get.responses['200'].content!['application/json'].schema).toEqual({
      $ref: '#/components/schemas/getTree_200',
    });
    expect(doc.components.schemas.getTree_200.properties).toEqual({
      name: { type: 'string' },
      children: { type: 'array', items: { $ref: '#/components/schemas/getTree_200' } },
    });
  });

  it('keeps the order routes were described in, tags first seen first, methods in one order', () => {
    const op = (method: OperationDoc['method'], path: string, tag: string): OperationDoc => ({
      method,
      path,
      tag,
      summary: `${method} ${path}`,
      security: 'none',
      responses: ok,
    });
    const docs = docsOf(
      op('POST', '/b', 'Second'),
      op('GET', '/a', 'First'),
      op('GET', '/b', 'Second'),
      op('DELETE', '/a', 'First'),
    );
    docs.describeTag('First', 'The first.');
    const doc = buildOpenApiDocument(docs);
    expect(Object.keys(doc.paths)).toEqual(['/b', '/a']);
    expect(Object.keys(doc.paths['/b'])).toEqual(['get', 'post']);
    expect(doc.tags).toEqual([{ name: 'Second' }, { name: 'First', description: 'The first.' }]);
    expect(JSON.stringify(buildOpenApiDocument(docs))).toBe(JSON.stringify(doc));
  });

  it('refuses path parameters without params, operations described twice and clashing ids', () => {
    const base: OperationDoc = {
      method: 'GET',
      path: '/x/{id}',
      tag: 'T',
      summary: 's',
      security: 'none',
      responses: ok,
    };
    expect(() => buildOpenApiDocument(docsOf(base))).toThrow(/path parameters \[id\]/);
    const withId = { ...base, params: z.object({ id: z.string() }) };
    expect(() => buildOpenApiDocument(docsOf(withId, withId))).toThrow(/described twice/);
    const a = z.object({ a: z.string() }).meta({ id: 'TestClash' });
    const b = z.object({ b: z.string() }).meta({ id: 'TestClash' });
    expect(() =>
      buildOpenApiDocument(
        docsOf(
          { ...withId, responses: { 200: { description: 'a', schema: a } } },
          { ...withId, path: '/y/{id}', responses: { 200: { description: 'b', schema: b } } },
        ),
      ),
    ).toThrow(/two different schemas are named TestClash/);
  });
});

describe('defaultOperationId', () => {
  it('joins the method and the path words', () => {
    expect(defaultOperationId('GET', '/api/usage_events/{id}/')).toBe('getApiUsageEventsById');
    expect(defaultOperationId('POST', '/api/storage-locations')).toBe('postApiStorageLocations');
    expect(defaultOperationId('GET', '/')).toBe('getRoot');
    expect(defaultOperationId('GET', '/openapi.json')).toBe('getOpenapiJson');
  });
});
