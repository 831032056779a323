/** Copy worker: runs copy.ts jobs off the thread that serves the UI and the database. */
import { parentPort } from 'node:worker_threads';
import { createXXHash128 } from 'hash-wasm';
import { runCopyMessage, type WorkerRequest } from './copyPool.js';

const port = parentPort;
if (port) {
  port.on('message', (request: WorkerRequest) => {
    void runCopyMessage(request, (message) => port.postMessage(message));
  });
}

// The hasher's WebAssembly is compiled while the worker waits for its first job.
void createXXHash128().catch(() => undefined);
