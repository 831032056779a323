/**
 * The file and transfer records the stations push, which every user may read: admins all of
 * them, other users those of the instruments granted to them (files.ts decides which).
 */
import type { FastifyRequest } from 'fastify';
import {
  fileExample,
  fileOut,
  fileQuery,
  getFile,
  getTransfer,
  listFiles,
  listTransfers,
  transferExample,
  transferOut,
  transferQuery,
  type Reader,
} from './files.js';
import type { HarvestApiDeps } from './routes.js';
import {
  RECORDS_TAG,
  badId,
  envelopeOf,
  idOf,
  idParams,
  invalid,
  notFound,
  unauthorized,
  type Route,
} from './routing.js';

function readerOf(request: FastifyRequest): Reader {
  const account = request.principal!.account;
  return { id: account.id, role: account.role };
}

export function registerRecordRoutes(route: Route, deps: HarvestApiDeps): void {
  const { db } = deps;

  // --- Files and transfers -------------------------------------------------------------------
  const recordResponses = { 401: unauthorized };
  route(
    {
      method: 'GET',
      path: '/api/files',
      tag: RECORDS_TAG,
      summary: 'List file records',
      description: 'Admins see every file; other users the files of instruments granted to them.',
      security: 'user',
      query: fileQuery,
      responses: {
        200: {
          description: 'One page of files, in id order',
          schema: envelopeOf(fileOut),
          example: { items: [fileExample], total: 1, page: 1, size: 50 },
        },
        ...recordResponses,
        422: invalid(['query', 'instrument_id'], 'must be a whole number'),
      },
    },
    deps.anyUser,
    (request) =>
      listFiles(
        db,
        readerOf(request),
        request.query as Record<string, string | string[]>,
        deps.timeZone(),
      ),
  );
  route(
    {
      method: 'GET',
      path: '/api/files/{id}',
      tag: RECORDS_TAG,
      summary: 'Get a file record',
      security: 'user',
      params: idParams,
      responses: {
        200: { description: 'The file', schema: fileOut, example: fileExample },
        ...recordResponses,
        404: notFound('file'),
        422: badId(),
      },
    },
    deps.anyUser,
    (request) => getFile(db, readerOf(request), idOf(request)),
  );
  route(
    {
      method: 'GET',
      path: '/api/transfers',
      tag: RECORDS_TAG,
      summary: 'List transfer records',
      description: 'Admins see every transfer; other users those of files they may see.',
      security: 'user',
      query: transferQuery,
      responses: {
        200: {
          description: 'One page of transfers, in id order',
          schema: envelopeOf(transferOut),
          example: { items: [transferExample], total: 1, page: 1, size: 50 },
        },
        ...recordResponses,
        422: invalid(['query', 'file_id'], 'must be a whole number'),
      },
    },
    deps.anyUser,
    (request) =>
      listTransfers(db, readerOf(request), request.query as Record<string, string | string[]>),
  );
  route(
    {
      method: 'GET',
      path: '/api/transfers/{id}',
      tag: RECORDS_TAG,
      summary: 'Get a transfer record',
      security: 'user',
      params: idParams,
      responses: {
        200: { description: 'The transfer', schema: transferOut, example: transferExample },
        ...recordResponses,
        404: notFound('transfer'),
        422: badId(),
      },
    },
    deps.anyUser,
    (request) => getTransfer(db, readerOf(request), idOf(request)),
  );
}
