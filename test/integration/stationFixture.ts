/**
 * A station run in the test process, for tests of its calls (tool control, log-on, config
 * deltas): its own data dir, a silent log, the test's clock, and the facility bundle imported.
 */
import { expect } from 'vitest';
import { importBundle } from '../../electron/core/station/facility.js';
import { Station } from '../../electron/core/station/station.js';
import { AppError } from '../../electron/core/util/errors.js';
import { createLogger } from '../../electron/core/util/log.js';
import { tempDir } from './helpers.js';

/** A new station with `bundle` imported, reading the time from `clock`. */
export async function openStation(
  bundle: Record<string, unknown>,
  clock: () => number,
  /** The clock the idle rule measures on (StationOptions.elapsed); `clock` when not given. */
  elapsed?: () => number,
): Promise<Station> {
  const st = Station.open({ dataDir: tempDir(), log: createLogger('silent'), clock, elapsed });
  await importBundle(st.db, bundle);
  return st;
}

/** Waits for `promise` to be refused with an AppError of `code`, and returns that error. */
export async function expectCode(promise: Promise<unknown>, code: string): Promise<AppError> {
  const error = await promise.then(
    () => {
      throw new Error(`expected ${code}, but the call succeeded`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(code);
  return error as AppError;
}
