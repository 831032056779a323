/** Error codes that cross both carriers (IPC and HTTP). The UI shows `message`; tests assert `code`. */
export const ERROR_CODES = [
  'bad_request',
  'validation_failed',
  'unauthenticated',
  'forbidden',
  'not_found',
  'conflict',
  'locked',
  'not_qualified',
  'tool_shutdown',
  'tool_in_use',
  'no_active_usage',
  /** The server could not be reached (or is not linked) for something only it can do. */
  'unavailable',
  'internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ApiError {
  code: ErrorCode;
  message: string;
  details?: unknown;
}

/** HTTP status for each error code; the IPC carrier carries the code alone. */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  validation_failed: 422,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  locked: 429,
  not_qualified: 403,
  tool_shutdown: 409,
  tool_in_use: 409,
  no_active_usage: 409,
  unavailable: 503,
  internal: 500,
};

export function isApiError(value: unknown): value is ApiError {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.code === 'string' &&
    (ERROR_CODES as readonly string[]).includes(v.code) &&
    typeof v.message === 'string'
  );
}
