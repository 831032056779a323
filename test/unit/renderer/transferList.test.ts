import { describe, expect, it } from 'vitest';
import type { ActiveTransfer } from '../../../shared/api.js';
import {
  finishing,
  MOST_SHOWN,
  shownTransfers,
} from '../../../renderer/src/features/harvest/transferList.js';

function transfer(id: number, done: number, total: number): ActiveTransfer {
  return {
    file_id: id,
    filename: `f${id}.dat`,
    relative_path: `batch/f${id}.dat`,
    persistent_id: `ark:99999/fk4${id}`,
    bytes_done: done,
    bytes_total: total,
    rate: done,
    seconds_left: 0,
    started_at: '2026-12-02T05:00:00.000Z',
  };
}

describe('the transfers under way on the Data tab', () => {
  it('shows a few bars and counts the rest when a burst of small files is in flight', () => {
    // 600 small files of batches, copied and being placed, and two big files still copying.
    const active = [
      ...Array.from({ length: 600 }, (_, i) => transfer(i + 1, 1_000_000, 1_000_000)),
      transfer(1001, 5_000_000, 2_000_000_000),
      transfer(1002, 0, 1_500_000_000),
    ];
    const { shown, more } = shownTransfers(active);
    expect(shown).toHaveLength(MOST_SHOWN);
    expect(more).toBe(602 - MOST_SHOWN);
    // The copies still moving bytes come first.
    expect(shown.slice(0, 2).map((t) => t.file_id)).toEqual([1001, 1002]);
  });

  it('shows every transfer while they are few', () => {
    const active = [transfer(1, 10, 20), transfer(2, 20, 20)];
    expect(shownTransfers(active)).toEqual({ shown: active, more: 0 });
  });

  it('tells a copy whose bytes are all written, which no rate or time left describes', () => {
    expect(finishing(transfer(1, 20, 20))).toBe(true);
    expect(finishing(transfer(2, 0, 0))).toBe(true);
    expect(finishing(transfer(3, 19, 20))).toBe(false);
  });
});
