/**
 * util/shutdown.ts: the parts stop side by side, the database closes after them, a failing or
 * hanging part is logged and holds nothing for ever, and a failing close does not throw.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { stopThenClose } from '../../../electron/core/util/shutdown.js';

/** A real logger whose lines are kept. */
function keptLog(): { log: pino.Logger; lines: { level: number; msg: string }[] } {
  const lines: { level: number; msg: string }[] = [];
  const log = pino(
    { level: 'info' },
    { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) },
  );
  return { log, lines };
}

const after = (ms: number, what: () => void): Promise<void> =>
  new Promise((resolve) =>
    setTimeout(() => {
      what();
      resolve();
    }, ms),
  );

describe('stopThenClose', () => {
  it('stops every part side by side and closes only after the last', async () => {
    const { log, lines } = keptLog();
    const events: string[] = [];
    const outcome = await stopThenClose(
      {
        harvest: () => after(30, () => events.push('harvest stopped')),
        sync: () => after(10, () => events.push('sync stopped')),
        server: undefined,
      },
      () => events.push('closed'),
      { log, waitMs: 5_000 },
    );
    expect(outcome).toBe('stopped');
    // Side by side: the quicker part ended first although it was named second.
    expect(events).toEqual(['sync stopped', 'harvest stopped', 'closed']);
    expect(lines).toEqual([]);
  });

  it('logs a part that fails to stop by name, and still stops the others and closes', async () => {
    const { log, lines } = keptLog();
    const events: string[] = [];
    const outcome = await stopThenClose(
      {
        harvest: () => Promise.reject(new Error('EIO on the share')),
        sync: () => after(10, () => events.push('sync stopped')),
      },
      () => events.push('closed'),
      { log, waitMs: 5_000 },
    );
    expect(outcome).toBe('stopped');
    expect(events).toEqual(['sync stopped', 'closed']);
    expect(lines.map((l) => l.msg)).toEqual(['harvest did not stop cleanly']);
  });

  it('closes after waitMs when a part hangs, and says so', async () => {
    const { log, lines } = keptLog();
    const events: string[] = [];
    const outcome = await stopThenClose(
      { harvest: () => new Promise(() => undefined), sync: () => Promise.resolve() },
      () => events.push('closed'),
      { log, waitMs: 50 },
    );
    expect(outcome).toBe('late');
    expect(events).toEqual(['closed']);
    expect(lines.map((l) => l.msg)).toEqual(['closing before everything stopped (waited 0.05 s)']);
  });

  it('logs a close that throws instead of throwing', async () => {
    const { log, lines } = keptLog();
    const outcome = await stopThenClose(
      {},
      () => {
        throw new Error('database is locked');
      },
      { log, waitMs: 50 },
    );
    expect(outcome).toBe('stopped');
    expect(lines.map((l) => l.msg)).toEqual(['the database did not close cleanly']);
  });
});
