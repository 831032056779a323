import { createServer, connect, type Server, type Socket } from 'node:net';

export interface FaultProxyOptions {
  /** Where to forward to. */
  host: string;
  port: number;
  /** At most this many connections are cut in all. */
  maxCuts: number;
  /** Chance that a chunk of data, in either direction, is where its connection is cut. */
  probability: number;
  random?: () => number;
}

export interface FaultProxy {
  url: string;
  /** Connections cut so far, and how many of them on the way to the server / back. */
  readonly cuts: number;
  readonly cutsUp: number;
  readonly cutsDown: number;
  /** Stop cutting (the proxy then forwards faithfully). */
  heal(): void;
  /** Forward new connections to another port (a server restarted elsewhere, same address). */
  forwardTo(port: number): void;
  close(): Promise<void>;
}

/**
 * A TCP proxy that forwards to a server and cuts connections at random points: in a random
 * chunk upstream (mid-request) or downstream (mid-response, after the server acted), it forwards
 * a random number of that chunk's bytes and destroys both sides. Connections are kept alive by
 * HTTP clients, so the decision is made per chunk (about one per request or response), not per
 * connection.
 */
export function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const random = options.random ?? Math.random;
  let targetPort = options.port;
  const sockets = new Set<Socket>();
  let cuts = 0;
  let healed = false;

  let cutsUp = 0;

  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, options.host);
    sockets.add(client);
    sockets.add(upstream);
    const forget = (): void => {
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', forget);
    upstream.on('close', forget);
    const kill = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', kill);
    upstream.on('error', kill);
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());

    let cut = false;
    const pipe = (from: Socket, to: Socket, direction: 'up' | 'down'): void => {
      from.on('data', (chunk: Buffer) => {
        if (cut) return;
        if (!healed && cuts < options.maxCuts && random() < options.probability) {
          const at = Math.floor(random() * chunk.length);
          cut = true;
          cuts += 1;
          if (direction === 'up') cutsUp += 1;
          if (at > 0) to.write(chunk.subarray(0, at), kill);
          else kill();
          return;
        }
        if (!to.write(chunk)) {
          from.pause();
          to.once('drain', () => from.resume());
        }
      });
    };
    pipe(client, upstream, 'up');
    pipe(upstream, client, 'down');
  });

  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({
        url: `http://127.0.0.1:${port}/`,
        get cuts() {
          return cuts;
        },
        get cutsUp() {
          return cutsUp;
        },
        get cutsDown() {
          return cuts - cutsUp;
        },
        heal() {
          healed = true;
        },
        forwardTo(next) {
          targetPort = next;
        },
        close() {
          for (const socket of sockets) socket.destroy();
          return new Promise((done) => server.close(() => done()));
        },
      });
    });
  });
}
