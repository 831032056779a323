/** Secret worker: argon2id off the thread that serves requests (secretPool.ts). */
import { parentPort } from 'node:worker_threads';
import { argon2Check, argon2Hash } from './argon2.js';
import type { SecretReply, SecretRequest } from './secretPool.js';

const port = parentPort;
if (port) {
  port.on('message', (request: SecretRequest) => {
    const work =
      request.op === 'hash'
        ? argon2Hash(request.secret, request.salt)
        : argon2Check(request.secret, request.hash);
    work.then(
      (value) => port.postMessage({ id: request.id, ok: true, value } satisfies SecretReply),
      (error: unknown) =>
        port.postMessage({
          id: request.id,
          ok: false,
          message: error instanceof Error ? error.message : String(error),
        } satisfies SecretReply),
    );
  });
}
