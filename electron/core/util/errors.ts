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

export function toApiError(error: unknown): ApiError {
  if (error instanceof AppError) return error.toJSON();
  return { code: 'internal', message: 'internal error; see the station log' };
}
