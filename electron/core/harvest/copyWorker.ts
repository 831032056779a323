/** Copy worker: runs copy.ts jobs off the thread that serves the UI and the database. */
import { parentPort, workerData } from 'node:worker_threads';
import { createXXHash128 } from '../util/hasher.js';
import { runCopyMessage, type WorkerRequest } from './copyPool.js';

const port = parentPort;
if (port) {
  port.on('message', (request: WorkerRequest) => {
    void runCopyMessage(request, (message) => port.postMessage(message));
  });
}

// A copy worker compiles the hasher's WebAssembly while it waits for its first job. The service
// worker (copyPool.ts) places and probes files and never hashes.
if ((workerData as { service?: boolean } | null)?.service !== true) {
  void createXXHash128().catch(() => undefined);
}
