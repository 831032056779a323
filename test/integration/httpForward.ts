/**
 * An HTTP proxy between a station and its server on loopback, for tests that change what the
 * server answers (its clock, an answer held back) or answer in its place: forwardTo(target)
 * forwards each request as it came and hands the server's answer to `answer`, which sends it
 * back as it came unless told otherwise.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type RequestListener,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** What to do with the server's answer to `request`. */
export type Answer = (
  answer: IncomingMessage,
  response: ServerResponse,
  request: IncomingMessage,
) => void;

/** The server's answer, as it came. */
export const passOn: Answer = (answer, response) => {
  response.writeHead(answer.statusCode ?? 502, answer.headers);
  answer.pipe(response);
};

/** A request handler forwarding to the server at `target`; a server away cuts the request. */
export function forwardTo(target: URL, answer: Answer = passOn): RequestListener {
  return (request, response) => {
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: request.url,
        method: request.method,
        headers: request.headers,
      },
      (reply) => answer(reply, response, request),
    );
    upstream.on('error', () => response.destroy());
    request.pipe(upstream);
  };
}

export interface HttpProxy {
  url: string;
  /** Ends the connections held open (a held pull, a held answer) and stops listening. */
  close(): Promise<void>;
}

/** `handler` listening on an ephemeral port of 127.0.0.1. */
export async function startHttpProxy(handler: RequestListener): Promise<HttpProxy> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
