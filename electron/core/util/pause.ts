/**
 * Waits `ms`, or less: until `signal` is aborted, or until the wake-up handed to `onWake` is
 * called (the sync client's pull, nudged by a change). The caller looks at why itself; `onWake`
 * is given null once the wait is over.
 */
export function pause(
  ms: number,
  signal?: AbortSignal,
  onWake?: (wake: (() => void) | null) => void,
): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      onWake?.(null);
      resolve();
    };
    const timer = setTimeout(done, ms);
    onWake?.(done);
    signal?.addEventListener('abort', done, { once: true });
  });
}
