/**
 * What a failed exchange with the server says, and whether the server was reached at all: the
 * push and pull loops, the history fetch and the one-off requests all word their errors with
 * it, so the status line reads the same whichever of them failed; the loops and the requests
 * decide "offline" by it.
 */
import axios from 'axios';

export function describeFailure(error: unknown): {
  message: string;
  reachable: boolean;
  /** The server answered, with this status and this reason. */
  answer?: { status: number; reason: string };
} {
  if (axios.isAxiosError(error)) {
    const status = error.response?.status;
    if (status !== undefined) {
      const detail = (error.response?.data as { detail?: unknown } | undefined)?.detail;
      const text = typeof detail === 'string' ? detail : error.message;
      return {
        message: `server answered ${status}: ${text}`,
        reachable: status < 500,
        answer: { status, reason: text },
      };
    }
    return { message: `server unreachable: ${error.code ?? error.message}`, reachable: false };
  }
  return { message: error instanceof Error ? error.message : String(error), reachable: true };
}
