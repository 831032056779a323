/**
 * Headers every answer of the station's and the server's HTTP listeners carries, whatever route
 * or error sent it: a browser must not guess a JSON body's type, leak the address of a page in
 * a Referer, or show a page inside another site's frame. The desktop window's app:// scheme
 * (desktop/appScheme.ts) sends them too.
 */
import type { FastifyInstance } from 'fastify';

export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
} as const;

/** Adds SECURITY_HEADERS to every reply of `app` (an onSend hook: errors and 404s too). */
export function addSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    void reply.headers(SECURITY_HEADERS);
    return payload;
  });
}
