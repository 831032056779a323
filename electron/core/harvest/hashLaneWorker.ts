/** A copy worker's hash lane (hashLane.ts): hashes the chunks its copy worker publishes. */
import { parentPort, workerData } from 'node:worker_threads';
import { injected } from '../util/failpoint.js';
import { createXXHash128, type IHasher } from '../util/hasher.js';
import { runLane, type LaneShared } from './hashLane.js';

/** Test hook: the lane's thread fails at its 16th chunk, as one that ran out of memory would. */
function diesMidway(hasher: IHasher): IHasher {
  let chunks = 0;
  const update = hasher.update.bind(hasher);
  hasher.update = (data) => {
    chunks += 1;
    if (chunks === 16) throw new Error('the hash lane died midway (injected)');
    return update(data);
  };
  return hasher;
}

const port = parentPort;
if (port) {
  // Test hook: the lane's thread fails before it starts.
  if (injected('harvest.hash-lane-dies')) throw new Error('the hash lane died (injected)');
  const [source, copy] = await Promise.all([createXXHash128(), createXXHash128()]);
  const hashers: [IHasher, IHasher] = [
    injected('harvest.hash-lane-dies-midway') ? diesMidway(source) : source,
    copy,
  ];
  runLane(workerData as LaneShared, hashers, (end) => port.postMessage(end));
}
