import { describe, expect, it } from 'vitest';
import { formatBytes, formatDuration } from '../../../renderer/src/features/harvest/words.js';

describe('formatDuration (time left of a transfer)', () => {
  it('never shows 60 seconds: a value that rounds up carries to the minute', () => {
    expect(formatDuration(0.2)).toBe('1 s');
    expect(formatDuration(59.5)).toBe('1 min 0 s');
    expect(formatDuration(119.6)).toBe('2 min 0 s');
    expect(formatDuration(3599.7)).toBe('1 h 0 min');
    expect(formatDuration(61)).toBe('1 min 1 s');
    expect(formatDuration(7322)).toBe('2 h 2 min');
  });
});

describe('formatBytes (sizes, bytes copied, rates)', () => {
  it('never shows 1000 of a unit: a value that rounds up takes the next unit', () => {
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(999_999)).toBe('1.0 MB');
    expect(formatBytes(999_600_000)).toBe('1.0 GB');
    expect(formatBytes(9_960)).toBe('10 kB');
    expect(formatBytes(9_940)).toBe('9.9 kB');
    expect(formatBytes(1_610_612_736)).toBe('1.6 GB');
    expect(formatBytes(2_000_000_000_000_000)).toBe('2000 TB');
  });
});
