/**
 * The date-times the experiment rules take from files (shared/experiment/input.ts): ISO 8601
 * with an offset, on the calendar. Date.parse alone takes far more, and some of it wrongly.
 */
import { describe, expect, it } from 'vitest';
import { isIsoDateTime } from '../../../shared/experiment/index.js';

describe('isIsoDateTime', () => {
  it('takes what the read API writes', () => {
    for (const text of [
      '2026-05-05T10:00:00Z',
      '2026-05-05T10:00Z',
      '2026-05-05T10:00:00.123456-05:00',
      '2026-05-05T10:00:00+00:00',
      '2024-02-29T23:59:59.999z',
    ]) {
      expect(isIsoDateTime(text), text).toBe(true);
    }
  });

  // Mutation: Date.parse alone (it takes each of these, most as another date).
  it('refuses other text, times without an offset and dates not on the calendar', () => {
    for (const text of [
      '1',
      'May 5, 2026',
      '2026-05-05',
      '2026-05-05T10:00:00',
      '2026-05-05 10:00:00Z',
      '2026-02-30T00:00:00Z',
      '2025-02-29T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-05-05T24:00:00Z',
    ]) {
      expect(isIsoDateTime(text), text).toBe(false);
    }
  });
});
