/**
 * A listener that is closing ends each keep-alive connection with the answer under way on it.
 * Fastify's close() ends the connections idle at that moment and waits for the rest; one whose
 * answer is sent after (a station's long-poll, which the close answers at once) would stay open
 * until its keep-alive timeout ran out, about 70 s, and `labstation serve` with it, after a
 * SIGTERM. The answer's `connection: close` makes Node end the connection once it is sent.
 * One whose client does not read its answer is ended after CLOSE_GRACE_MS.
 */
import type { FastifyInstance } from 'fastify';

/**
 * How long a closing listener waits for answers still being sent before it ends their
 * connections: a client that stopped reading a large answer (a page's script map, a tab left in
 * the background) holds its connection open, and the close with it, for as long as it does.
 */
export const CLOSE_GRACE_MS = 3_000;

export function closeConnectionsOnClose(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS).unref();
    done();
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) void reply.header('connection', 'close');
    return payload;
  });
}
