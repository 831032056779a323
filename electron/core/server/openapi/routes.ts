/**
 * `GET /openapi.json` (the document) and `GET /docs` (Swagger UI on it), both without
 * credentials. Registered last or not, they read `docs` only once the server is ready, when
 * every route module has described its operations.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { detailResponse } from './common.js';
import { SERVER_TAG } from './basics.js';
import { buildOpenApiDocument } from './document.js';
import { DOCS_ASSET_NAMES, DOCS_CSP, DOCS_HTML, docsAsset } from './page.js';
import type { ApiDocs } from './registry.js';

const assetParams = z.object({
  file: z.enum(DOCS_ASSET_NAMES).describe('A file of the docs page.'),
});

export function registerApiDocs(app: FastifyInstance, deps: { docs: ApiDocs }): void {
  const { docs } = deps;
  describeApiDocs(docs);
  let document: string | undefined;

  app.get('/openapi.json', (_request, reply) => {
    document ??= JSON.stringify(buildOpenApiDocument(docs));
    return reply
      .header('cache-control', 'no-cache')
      .type('application/json; charset=utf-8')
      .send(document);
  });

  app.get('/docs', (_request, reply) =>
    reply
      .header('content-security-policy', DOCS_CSP)
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(DOCS_HTML),
  );

  app.get('/docs/assets/:file', async (request, reply) => {
    const params = assetParams.safeParse(request.params);
    if (!params.success) return reply.code(404).send({ detail: 'Not found.' });
    const asset = await docsAsset(params.data.file);
    void reply.header('cache-control', 'no-cache').header('etag', asset.etag);
    if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    return reply.type(asset.type).send(asset.body);
  });
}

function describeApiDocs(docs: ApiDocs): void {
  docs.add({
    method: 'GET',
    path: '/openapi.json',
    tag: SERVER_TAG,
    summary: 'The OpenAPI document',
    description: 'This API described as OpenAPI 3.1, built from the schemas that check requests.',
    security: 'none',
    responses: {
      200: {
        description: 'The document.',
        schema: z.looseObject({ openapi: z.literal('3.1.0') }).describe('An OpenAPI 3.1 document.'),
        example: {
          openapi: '3.1.0',
          info: { title: 'Labstation server API', version: '1' },
          paths: { '/health': { get: { summary: 'Health check' } } },
        },
      },
    },
  });
  docs.add({
    method: 'GET',
    path: '/docs',
    tag: SERVER_TAG,
    summary: 'Interactive API docs',
    description: 'This page: browse the operations, their schemas and examples, and try them.',
    security: 'none',
    responses: {
      200: {
        description: 'The page.',
        contentType: 'text/html',
        schema: z.string(),
        example: '<!doctype html>\n<html lang="en">…</html>\n',
      },
    },
  });
  docs.add({
    method: 'GET',
    path: '/docs/assets/{file}',
    tag: SERVER_TAG,
    summary: 'A file of the docs page',
    description:
      "Swagger UI's script, stylesheet and icon, and the script that starts it. Answers carry " +
      'an ETag; send it back in `If-None-Match` for a 304.',
    security: 'none',
    params: assetParams,
    responses: {
      200: {
        description: 'The file (JavaScript, CSS or PNG).',
        contentType: '*/*',
        schema: z.string().meta({ format: 'binary' }),
        example: "'use strict';\nwindow.addEventListener('load', function () { … });\n",
      },
      304: { description: 'Unchanged since the ETag sent in `If-None-Match`.' },
      404: detailResponse('No such file.', 'Not found.'),
    },
  });
}
