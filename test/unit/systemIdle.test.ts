import { describe, expect, it } from 'vitest';
import { STUCK_AT_ZERO_MS, SystemIdleReadings } from '../../electron/core/station/systemIdle.js';

const SAMPLE_MS = 10_000;

describe('SystemIdleReadings (the PC idle time as the desktop shell reads it)', () => {
  it('counts input of the last 15 seconds, and not older', () => {
    const readings = new SystemIdleReadings();
    expect(readings.note(3, 0)).toBe(true);
    expect(readings.note(14, SAMPLE_MS)).toBe(true);
    expect(readings.note(15, 2 * SAMPLE_MS)).toBe(false);
    expect(readings.note(600, 3 * SAMPLE_MS)).toBe(false);
  });

  it('stops believing a reading stuck at 0 after half an hour, once, and believes it again when it moves', () => {
    const readings = new SystemIdleReadings();
    let told = 0;
    let now = 0;
    const samples: boolean[] = [];
    for (; now < STUCK_AT_ZERO_MS; now += SAMPLE_MS)
      samples.push(readings.note(0, now, () => told++));
    expect(samples.every(Boolean)).toBe(true);
    expect(told).toBe(0);
    expect(readings.note(0, now, () => told++)).toBe(false);
    expect(readings.note(0, now + SAMPLE_MS, () => told++)).toBe(false);
    expect(told).toBe(1);
    // The desktop tells again: someone idle for 40 s is not at the PC; a new input is.
    expect(readings.note(40, now + 2 * SAMPLE_MS)).toBe(false);
    expect(readings.note(0, now + 3 * SAMPLE_MS)).toBe(true);
  });

  it('a person working without a pause for a while, with one reading of 1 s, is believed throughout', () => {
    const readings = new SystemIdleReadings();
    let now = 0;
    for (; now < STUCK_AT_ZERO_MS / 2; now += SAMPLE_MS) expect(readings.note(0, now)).toBe(true);
    expect(readings.note(1, now)).toBe(true);
    for (let i = 0; i < STUCK_AT_ZERO_MS / 2 / SAMPLE_MS; i++) {
      now += SAMPLE_MS;
      expect(readings.note(0, now)).toBe(true);
    }
  });
});
