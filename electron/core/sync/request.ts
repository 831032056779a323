/**
 * One-off requests of the station UI that only the server can answer (booking), beside the
 * push and pull loops: the caller waits for the answer, so the server's own error reaches it
 * as such, and anything else becomes `unavailable` or `forbidden` it can show.
 */
import axios, { type AxiosInstance } from 'axios';
import type { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../../../shared/errors.js';
import { AppError } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import { BadAnswerError, parseAnswer } from './parseAnswer.js';
import { describeFailure } from './serverFailure.js';

/** SyncClient.request, which says what it answers, once the client is known to be running. */
export async function requestServer<T>(
  link: {
    http: AxiosInstance;
    signal: AbortSignal;
    log: Logger;
    /** The server could not be reached: the station is offline. */
    offline: () => void;
    /** The server answered, and the answer parsed. */
    succeeded: () => void;
  },
  method: 'GET' | 'POST',
  path: string,
  options: { params?: Record<string, string>; body?: unknown; schema: z.ZodType<T> },
): Promise<T> {
  let answer: unknown;
  try {
    ({ data: answer } = await link.http.request<unknown>({
      method,
      url: path,
      params: options.params,
      data: options.body,
      timeout: 15_000,
      signal: link.signal,
    }));
  } catch (error) {
    const body = axios.isAxiosError(error)
      ? (error.response?.data as { code?: unknown; message?: unknown; details?: unknown })
      : undefined;
    if (
      typeof body?.code === 'string' &&
      (ERROR_CODES as readonly string[]).includes(body.code) &&
      typeof body.message === 'string'
    ) {
      // The server's "unauthenticated" is about the station's key, not the person logged on
      // here (whom the UI would log off on that code).
      const code = body.code === 'unauthenticated' ? 'forbidden' : (body.code as ErrorCode);
      throw new AppError(code, body.message, body.details);
    }
    const status = axios.isAxiosError(error) ? error.response?.status : undefined;
    // 409: the key is held by another Labstation (server/sync/stationAuth.ts).
    if (status === 401 || status === 403 || status === 409) {
      throw new AppError(
        'forbidden',
        `the server refused this station's key (${describeFailure(error).message}); ask an admin`,
      );
    }
    const { message, reachable } = describeFailure(error);
    if (!reachable) link.offline();
    throw new AppError('unavailable', `cannot reach the server now (${message}); try again later`);
  }
  // Checked before the caller stores or shows any of it: an answer this station cannot read
  // (a bug, another version, a proxy's page) fails as the server being away does.
  let data: T;
  try {
    data = parseAnswer(options.schema, answer, `answer to ${method} ${path}`, 'nothing of it used');
  } catch (error) {
    const problems = error instanceof BadAnswerError ? error.issues : [];
    link.log.warn(
      { path, problems: problems.slice(0, 10), count: problems.length },
      "sync: the server's answer does not parse; nothing of it was used",
    );
    throw new AppError(
      'unavailable',
      `${error instanceof Error ? error.message : String(error)}; try again later`,
    );
  }
  link.succeeded();
  return data;
}
