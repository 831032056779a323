import { connect, createServer, type Socket } from 'node:net';

export interface CutProxyOptions {
  /** The server on loopback to forward to. */
  port: number;
  /** Cut a connection once this many bytes of it went to the server (then forward faithfully). */
  cutAfter?: number;
  /** Flip the lowest bit of the byte at this position of a connection's way to the server. */
  flipAt?: number;
  /** How many connections are cut, and how many get a flipped bit (1 each by default). */
  times?: number;
}

export interface CutProxy {
  url: string;
  readonly cuts: number;
  readonly flips: number;
  /** Bytes forwarded to the server, all connections together. */
  readonly upstreamBytes: number;
  close(): Promise<void>;
}

/**
 * A TCP proxy for faults at a known place: after N bytes of a connection towards the server it
 * destroys both sides (a cable pulled mid-upload), or it changes one bit in flight (which TCP's
 * checksum cannot catch here, since the proxy is an end of both connections). Each fault
 * happens `times` times; later connections go through untouched.
 */
export function startCutProxy(options: CutProxyOptions): Promise<CutProxy> {
  const times = options.times ?? 1;
  const sockets = new Set<Socket>();
  let cuts = 0;
  let flips = 0;
  let upstreamBytes = 0;

  const server = createServer((client) => {
    const upstream = connect(options.port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    const kill = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', kill);
    upstream.on('error', kill);
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    upstream.on('data', (chunk: Buffer) => {
      if (!client.write(chunk)) {
        upstream.pause();
        client.once('drain', () => upstream.resume());
      }
    });

    let seen = 0;
    let cutting = options.cutAfter !== undefined && cuts < times;
    let flipping = options.flipAt !== undefined && flips < times;
    client.on('data', (data: Buffer) => {
      let chunk = data;
      const start = seen;
      seen += chunk.length;
      if (flipping && options.flipAt! >= start && options.flipAt! < seen && flips < times) {
        chunk = Buffer.from(chunk);
        chunk[options.flipAt! - start] ^= 0x01;
        flips += 1;
        flipping = false;
      }
      if (cutting && seen >= options.cutAfter! && cuts < times) {
        cuts += 1;
        cutting = false;
        const keep = options.cutAfter! - start;
        upstreamBytes += keep;
        upstream.write(chunk.subarray(0, keep), kill);
        client.pause();
        return;
      }
      upstreamBytes += chunk.length;
      if (!upstream.write(chunk)) {
        client.pause();
        upstream.once('drain', () => client.resume());
      }
    });
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
        get flips() {
          return flips;
        },
        get upstreamBytes() {
          return upstreamBytes;
        },
        close() {
          for (const socket of sockets) socket.destroy();
          return new Promise((done) => server.close(() => done()));
        },
      });
    });
  });
}
