/**
 * What the server answers a request Node's HTTP parser refuses before any route sees it: a
 * request line and headers over 16 KiB (431; a NEMO client's long `id__in=` list), a request
 * that took too long to arrive (408), or one that is not HTTP (400). Fastify's own answer is
 * `{"error", "message", "statusCode"}`; here it is `{"detail": ...}`, the body every API of
 * the server (NEMO's, the harvest API, the station sync) gives its errors in.
 */
import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';

const REFUSALS: Record<string, { status: number; detail: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    detail: 'Request header fields too large: the request line and headers exceed 16 KiB.',
  },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, detail: 'The request took too long to arrive.' },
};

/** Fastify's `clientErrorHandler` with `{"detail": ...}` bodies (as its default otherwise). */
export function detailClientErrors(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nothing left to answer (as Fastify's default handler).
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, detail } = REFUSALS[error.code ?? ''] ?? {
    status: 400,
    detail: 'The request is not valid HTTP.',
  };
  const body = JSON.stringify({ detail });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
