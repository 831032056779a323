import { describe, expect, it } from 'vitest';
import { formatDateTime } from '../../../renderer/src/format.js';
import {
  formatBytes,
  formatDuration,
  nextTryWords,
} from '../../../renderer/src/features/harvest/words.js';

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

describe('nextTryWords (when a failed file is tried again)', () => {
  const now = Date.parse('2026-03-02T10:00:00.000Z');
  const later = '2026-03-02T10:05:00.000Z';
  const passed = '2026-03-02T09:59:00.000Z';
  const file = (
    nextAttemptAt: string | null,
  ): { instrument: string; next_attempt_at: string | null } => ({
    instrument: 'sem-1',
    next_attempt_at: nextAttemptAt,
  });
  const idle = { active: false, waitingForHistory: false, now };

  it('names the time of the next try while it is to come', () => {
    expect(nextTryWords(file(later), idle)).toBe(`; next try ${formatDateTime(later)}`);
  });

  it('says a file whose time has passed waits for its turn, not "next try" a time gone by', () => {
    const words = nextTryWords(file(passed), idle);
    expect(words).not.toContain('next try');
    expect(words).toBe('; due, waiting for its turn');
    // Due this very moment: its turn too.
    expect(nextTryWords(file(new Date(now).toISOString()), idle)).toBe(
      '; due, waiting for its turn',
    );
  });

  it('says a file being copied is tried now, whatever its time', () => {
    expect(nextTryWords(file(passed), { ...idle, active: true })).toBe('; being tried again now');
    expect(nextTryWords(file(null), { ...idle, active: true })).toBe('; being tried again now');
  });

  it("waits for its instrument's history, and names the time only while it is to come", () => {
    const waiting = { ...idle, waitingForHistory: true };
    expect(nextTryWords(file(later), waiting)).toBe(
      `; next try once sem-1's history is here, not before ${formatDateTime(later)}`,
    );
    expect(nextTryWords(file(passed), waiting)).toBe("; next try once sem-1's history is here");
    expect(nextTryWords(file(null), waiting)).toBe(
      "; not retried by itself; Retry once sem-1's history is here",
    );
  });

  it('says a file of an instrument not harvested here is not tried, whatever its time', () => {
    const off = { ...idle, notHarvested: true };
    for (const at of [later, passed, null]) {
      expect(nextTryWords(file(at), off)).toBe(
        '; not tried: sem-1 is not harvested on this station now',
      );
    }
  });

  it('says a file not retried by itself is not', () => {
    expect(nextTryWords(file(null), idle)).toBe('; not retried by itself');
  });
});
