/**
 * A badge swiped while the log-on's PIN field has the focus: told from a PIN typed by a person
 * by its pace (useBadgeReader.ts badgeBurst).
 */
import { describe, expect, it } from 'vitest';
import { badgeBurst } from '../../../renderer/src/features/logon/useBadgeReader.js';

/** Feeds `keys` (each with its time in ms) and gives what the last one returned. */
function typed(keys: [string, number][]): string | null {
  const burst = { current: null };
  let last: string | null = null;
  for (const [key, at] of keys) last = badgeBurst(burst, key, at);
  return last;
}

const paced = (text: string, gap: number, extra: [string, number][] = []): [string, number][] => [
  ...[...text].map((key, i): [string, number] => [key, i * gap]),
  ...extra.map(([key, at]): [string, number] => [key, text.length * gap + at]),
];

describe('badgeBurst', () => {
  it('takes four or more keys 30 ms apart or less, then Enter, as a badge', () => {
    expect(typed(paced('100234', 5, [['Enter', 0]]))).toBe('100234');
    expect(typed(paced('1002', 30, [['Enter', 0]]))).toBe('1002');
  });

  it('leaves a PIN typed by a person, a short burst, or one without Enter to the PIN', () => {
    expect(typed(paced('1234', 80, [['Enter', 0]]))).toBeNull();
    expect(typed(paced('123', 5, [['Enter', 0]]))).toBeNull();
    expect(typed(paced('100234', 5, [['Enter', 200]]))).toBeNull();
    expect(typed(paced('100234', 5, [['Tab', 0]]))).toBeNull();
  });

  it('reads a badge with capitals, each typed with Shift', () => {
    const keys: [string, number][] = [];
    let at = 0;
    for (const ch of '04A3B2C1') {
      if (/[A-Z]/.test(ch)) keys.push(['Shift', (at += 2)]);
      keys.push([ch, (at += 3)]);
    }
    keys.push(['Enter', (at += 3)]);
    expect(typed(keys)).toBe('04A3B2C1');
  });
});
