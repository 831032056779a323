/** Copy worker: runs copy.ts jobs off the thread that serves the UI and the database. */
import { parentPort } from 'node:worker_threads';
import { runCopyMessage, type WorkerRequest } from './copyPool.js';

const port = parentPort;
if (port) {
  port.on('message', (request: WorkerRequest) => {
    void runCopyMessage(request, (message) => port.postMessage(message));
  });
}
