import { describe, expect, it } from 'vitest';
import {
  BATCH_MAX_FILES,
  BATCH_MIN_SPLIT,
  filesPerBatch,
} from '../../../electron/core/harvest/batch.js';

describe('filesPerBatch', () => {
  it('fills whole batches from a long queue', () => {
    expect(filesPerBatch(10_000, 2)).toBe(BATCH_MAX_FILES);
    expect(filesPerBatch(2 * BATCH_MAX_FILES, 2)).toBe(BATCH_MAX_FILES);
  });

  it('splits a short queue so that every copy worker gets a batch', () => {
    for (const workers of [1, 2, 3, 4, 16]) {
      for (let queued = 1; queued <= workers * BATCH_MAX_FILES; queued++) {
        const size = filesPerBatch(queued, workers);
        expect(size).toBeLessThanOrEqual(BATCH_MAX_FILES);
        // No more batches than workers unless the batches are already at their floor.
        const batches = Math.ceil(queued / size);
        if (size > BATCH_MIN_SPLIT) expect(batches).toBeLessThanOrEqual(workers);
        if (queued >= workers * BATCH_MIN_SPLIT) expect(batches).toBeGreaterThanOrEqual(workers);
      }
    }
    expect(filesPerBatch(100, 2)).toBe(50);
  });

  it('does not cut a few files into tiny batches', () => {
    expect(filesPerBatch(10, 2)).toBe(BATCH_MIN_SPLIT);
    expect(filesPerBatch(0, 2)).toBe(BATCH_MIN_SPLIT);
  });

  it('counts no workers as one', () => {
    expect(filesPerBatch(100, 0)).toBe(100);
  });
});
