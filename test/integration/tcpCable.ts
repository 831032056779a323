/**
 * A TCP forwarder between a station and its server on loopback that a test can cut: unplugged
 * and plugged back in on the same port (a short outage), or left listening but refusing, each
 * connection made meanwhile counted and cut at once (a server unreachable).
 */
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A loopback address of its own for a port a test gives up and takes again. The other tests'
 * listeners and the local ends of all connections are on 127.0.0.1, so none of them can take
 * that port meanwhile, as they could on 127.0.0.1 (Linux routes all of 127.0.0.0/8 to lo).
 */
export const LONE_HOST = '127.0.0.2';

export interface TcpCable {
  url: string;
  /** Connections cut at once while it refused. */
  readonly refused: number;
  /** Stops listening and cuts every connection through it; resolves once it stopped. */
  unplug(): Promise<void>;
  /** Listens again on the port it had. */
  plugIn(): Promise<void>;
  /** Cuts every connection through it, and each new one at once until `accept`. */
  refuse(): void;
  /** Forwards new connections again. */
  accept(): void;
  /** Stops listening and cuts every connection through it. */
  close(): void;
}

/** A cable to the server listening on `target` of 127.0.0.1, from a port of LONE_HOST. */
export async function startTcpCable(target: number): Promise<TcpCable> {
  let refusing = false;
  let refused = 0;
  const sockets = new Set<Socket>();
  const forward = createServer((client) => {
    if (refusing) {
      refused += 1;
      client.destroy();
      return;
    }
    const upstream = connect(target, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number): Promise<void> =>
    new Promise((resolve, reject) => {
      forward.once('error', reject);
      forward.listen(port, LONE_HOST, () => {
        forward.off('error', reject);
        resolve();
      });
    });
  const cutAll = (): void => {
    for (const s of sockets) s.destroy();
  };
  await listen(0);
  const port = (forward.address() as AddressInfo).port;
  return {
    url: `http://${LONE_HOST}:${port}/`,
    get refused() {
      return refused;
    },
    unplug: () =>
      new Promise((resolve) => {
        forward.close(() => resolve());
        cutAll();
      }),
    plugIn: () => listen(port),
    refuse: () => {
      refusing = true;
      cutAll();
    },
    accept: () => {
      refusing = false;
    },
    close: () => {
      forward.close();
      cutAll();
    },
  };
}
