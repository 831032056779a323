import { describe, expect, it } from 'vitest';
import type { ActiveTransfer } from '../../../shared/api.js';
import {
  addSamples,
  recentRate,
  type ProgressSamples,
} from '../../../renderer/src/features/harvest/rate.js';

const MB = 1_000_000;

/** A 1 GB file, `done` bytes copied in `seconds`, with the core's average rate. */
function transfer(done: number, seconds: number, id = 1): ActiveTransfer {
  const rate = seconds > 0 ? done / seconds : 0;
  return {
    file_id: id,
    filename: 'big.emd',
    relative_path: 'big.emd',
    persistent_id: 'ark:99999/fk41',
    bytes_done: done,
    bytes_total: 1000 * MB,
    rate,
    seconds_left: rate > 0 ? (1000 * MB - done) / rate : null,
    started_at: '2026-12-02T05:00:00.000Z',
  };
}

/** The status polled once a second, as the Data tab does while files are copied. */
function poll(bytesAt: (second: number) => number, seconds: number): ProgressSamples {
  let samples: ProgressSamples = new Map();
  for (let s = 0; s <= seconds; s += 1) {
    samples = addSamples(samples, [transfer(bytesAt(s), s)], 1_000_000 + s * 1000);
  }
  return samples;
}

describe('the rate of a transfer under way', () => {
  it('is the rate of the last seconds when the copy slows down, and its time left with it', () => {
    // 100 MB/s for 5 s, then the share slows to 10 MB/s for 10 s: 600 MB done in 15 s.
    const bytesAt = (s: number): number => (s <= 5 ? s * 100 * MB : 500 * MB + (s - 5) * 10 * MB);
    const now = transfer(bytesAt(15), 15);
    // The average since the start says 40 MB/s and 10 s left.
    expect(now.rate).toBe(40 * MB);
    expect(now.seconds_left).toBe(10);
    const { rate, secondsLeft } = recentRate(now, poll(bytesAt, 15).get(1));
    expect(rate).toBe(10 * MB);
    expect(secondsLeft).toBe(40);
  });

  it('follows a copy that speeds up again within the window', () => {
    // 10 MB/s for 20 s, then 50 MB/s for 5 s.
    const bytesAt = (s: number): number => (s <= 20 ? s * 10 * MB : 200 * MB + (s - 20) * 50 * MB);
    const { rate, secondsLeft } = recentRate(transfer(bytesAt(25), 25), poll(bytesAt, 25).get(1));
    expect(rate).toBe(50 * MB);
    expect(secondsLeft).toBe(11);
  });

  it("is the core's average until the samples span a second", () => {
    const first = transfer(30 * MB, 0.5);
    const samples = addSamples(new Map(), [first], 1000);
    expect(recentRate(first, samples.get(1))).toEqual({
      rate: first.rate,
      secondsLeft: first.seconds_left,
    });
    const soon = transfer(40 * MB, 0.9);
    const closeTogether = addSamples(samples, [soon], 1400);
    expect(recentRate(soon, closeTogether.get(1)).rate).toBe(soon.rate);
    expect(recentRate(soon, undefined).rate).toBe(soon.rate);
  });

  it('gives no time left while nothing moved for the window (a share that hangs)', () => {
    const bytesAt = (s: number): number => (s <= 3 ? s * 10 * MB : 30 * MB);
    expect(recentRate(transfer(30 * MB, 10), poll(bytesAt, 10).get(1))).toEqual({
      rate: 0,
      secondsLeft: null,
    });
  });

  it('keeps the samples of the window only, and of the transfers still under way', () => {
    const samples = poll((s) => s * MB, 12);
    // The last 5 s: the samples at 7 s to 12 s.
    expect(samples.get(1)?.map((s) => s.bytes)).toEqual([7, 8, 9, 10, 11, 12].map((n) => n * MB));
    const after = addSamples(samples, [transfer(MB, 1, 2)], 1_013_000);
    expect([...after.keys()]).toEqual([2]);
  });

  it('starts again for a copy whose bytes went back (its source changed, copied anew)', () => {
    const samples = poll((s) => s * 10 * MB, 4);
    const again = transfer(2 * MB, 1);
    const restarted = addSamples(samples, [again], 1_005_000);
    expect(restarted.get(1)).toEqual([{ at: 1_005_000, bytes: 2 * MB }]);
    expect(recentRate(again, restarted.get(1)).rate).toBe(again.rate);
  });
});
