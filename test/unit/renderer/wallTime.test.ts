import { describe, expect, it } from 'vitest';
import { formatWallTime } from '../../../renderer/src/format.js';

describe('formatWallTime', () => {
  const day = new Intl.DateTimeFormat(undefined, {
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  });

  it('shows a date and a wall time as the day and time they name, in no zone', () => {
    expect(formatWallTime('2024-05-01', 'date')).toBe(day.format(new Date(2024, 4, 1)));
    expect(formatWallTime('2024-05-02T10:30', 'datetime-local')).toBe(
      formatWallTime('2024-05-02T10:30:00', 'datetime-local'),
    );
  });

  it('leaves text of another shape, or no day of the calendar, to be shown as written', () => {
    expect(formatWallTime('2026-02-30', 'date')).toBeNull();
    expect(formatWallTime('01/05/2024', 'date')).toBeNull();
    expect(formatWallTime('2024-05-02T10:30Z', 'datetime-local')).toBeNull();
    expect(formatWallTime('2024-05-02', 'datetime-local')).toBeNull();
  });
});
