/** A copy worker's hash lane (hashLane.ts): hashes the chunks its copy worker publishes. */
import { parentPort, workerData } from 'node:worker_threads';
import { injected } from '../util/failpoint.js';
import { createXXHash128 } from '../util/hasher.js';
import { runLane, type LaneShared } from './hashLane.js';

const port = parentPort;
if (port) {
  // Test hook: the lane's thread fails, as one that ran out of memory would.
  if (injected('harvest.hash-lane-dies')) throw new Error('the hash lane died (injected)');
  const hashers = await Promise.all([createXXHash128(), createXXHash128()]);
  runLane(workerData as LaneShared, hashers, (end) => port.postMessage(end));
}
