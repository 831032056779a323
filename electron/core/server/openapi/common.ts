/**
 * Response shapes that several route modules share, for their docs: the `{"detail": ...}` error
 * body of the REST routes (DRF's and FastAPI's wording, which clients already read).
 */
import { z } from 'zod';
import { DETAIL } from '../auth.js';
import type { ResponseDoc } from './registry.js';

export const detailSchema = z
  .object({ detail: z.string() })
  .meta({ id: 'Detail', description: 'An error: what went wrong, in words.' });

export function detailResponse(description: string, detail: string): ResponseDoc {
  return { description, schema: detailSchema, example: { detail } };
}

/** The answers of every route behind the user guard (Bearer JWT or API token). */
export const GUARD_RESPONSES = {
  401: detailResponse(
    'No credentials, or a token that is unknown, expired or of a disabled account.',
    DETAIL.missing,
  ),
  403: detailResponse('The account may not call this.', DETAIL.forbidden),
  429: detailResponse(
    'Too many wrong credentials from this address: wait (a valid one still gets in).',
    DETAIL.throttled,
  ),
} satisfies Record<number, ResponseDoc>;
