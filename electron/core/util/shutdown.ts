/**
 * Ending a running app: the parts that use the database (the harvest, the sync client, a
 * server) are stopped side by side, and the database is closed only after them. A part that
 * fails to stop is logged and does not hold the others. One that hangs (a copy stuck on a share
 * that is gone) does not hold the app for ever: after `waitMs` the database is closed anyway,
 * and the next start finishes or cleans up what was under way.
 */
import type { Logger } from './log.js';

export type Stop = () => Promise<unknown>;

/** How long the parts are given to stop (the desktop app's quit, a station process's end). */
export const STOP_WAIT_MS = 10_000;

export async function stopThenClose(
  parts: Record<string, Stop | undefined>,
  close: () => void,
  options: { waitMs?: number; log: Logger },
): Promise<'stopped' | 'late'> {
  const stopped = Promise.all(
    Object.entries(parts).map(async ([name, stop]) => {
      try {
        await stop?.();
      } catch (error) {
        options.log.error({ err: error }, `${name} did not stop cleanly`);
      }
    }),
  ).then(() => 'stopped' as const);
  const waitMs = options.waitMs ?? STOP_WAIT_MS;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), waitMs);
  });
  const outcome = await Promise.race([stopped, late]);
  clearTimeout(timer);
  if (outcome === 'late') {
    options.log.warn(`closing before everything stopped (waited ${waitMs / 1000} s)`);
  }
  try {
    close();
  } catch (error) {
    options.log.error({ err: error }, 'the database did not close cleanly');
  }
  return outcome;
}
