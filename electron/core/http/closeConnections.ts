/**
 * A listener that is closing ends each keep-alive connection with the answer under way on it.
 * Fastify's close() ends the connections idle at that moment and waits for the rest; one whose
 * answer is sent after (a station's long-poll, which the close answers at once) would stay open
 * until its keep-alive timeout ran out, about 70 s, and `labstation serve` with it, after a
 * SIGTERM. The answer's `connection: close` makes Node end the connection once it is sent.
 */
import type { FastifyInstance } from 'fastify';

export function closeConnectionsOnClose(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) void reply.header('connection', 'close');
    return payload;
  });
}
