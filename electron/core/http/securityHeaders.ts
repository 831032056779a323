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

/**
 * The UI page's Content-Security-Policy, the same as the meta tag of renderer/index.html (a unit
 * test compares them).
 */
export const UI_PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'";

/**
 * The policy as a header, with what only a header can say: no other site may frame the page
 * (a meta tag's frame-ancestors is ignored). Sent with every file of the UI, from the
 * station's and the server's listeners (uiFiles.ts) and the desktop's app:// scheme.
 */
export const UI_CSP_HEADER = `${UI_PAGE_CSP}; frame-ancestors 'none'`;

/** Adds SECURITY_HEADERS to every reply of `app` (an onSend hook: errors and 404s too). */
export function addSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    void reply.headers(SECURITY_HEADERS);
    return payload;
  });
}
