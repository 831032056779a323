import type { ApiError, ErrorCode } from '../../../shared/errors.js';

/** An error meant for the person at the screen: its code crosses the carriers, its message is shown. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'AppError';
  }

  toJSON(): ApiError {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

/** An error's code (errno's `ENOSPC`, SQLite's `SQLITE_BUSY`), null when it has none. */
export function errorCode(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}

/**
 * A refusal that names its field: the message starts with it, and details.problems points at
 * it, so a form can show the message at that field.
 */
export function fieldError(
  field: string,
  message: string,
  code: 'validation_failed' | 'conflict' | 'not_found' = 'validation_failed',
): AppError {
  return new AppError(code, `${field}: ${message}`, { problems: [{ path: [field], message }] });
}

export const DATABASE_BUSY =
  'the database is busy: another Labstation process (an import, say) is writing to it; try ' +
  'again in a few seconds';

/**
 * The error as the caller is told it: SQLite's SQLITE_BUSY (another process held the write
 * lock for longer than busy_timeout) is `unavailable`, to try again, not a crash; any other is
 * left as it is.
 */
export function asAppError(error: unknown): unknown {
  return errorCode(error) === 'SQLITE_BUSY' ? new AppError('unavailable', DATABASE_BUSY) : error;
}

export function toApiError(error: unknown): ApiError {
  const known = asAppError(error);
  if (known instanceof AppError) return known.toJSON();
  return { code: 'internal', message: 'internal error; see the station log' };
}
