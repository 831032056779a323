/**
 * Crash-injection points for the integration tests that kill a process mid-write. A failpoint
 * does nothing unless LABSTATION_FAILPOINT names it, in which case the process dies on the spot
 * with SIGKILL, as it would on a power cut: no exit handlers, no rollback code of ours runs.
 */
export function failpoint(name: string): void {
  if (process.env.LABSTATION_FAILPOINT === name) process.kill(process.pid, 'SIGKILL');
}

/**
 * Fault-injection points for tests that need a fault a real machine gives only rarely (a bit
 * flipped on its way to disk, a full disk where no small file system can be mounted). Active
 * when LABSTATION_INJECT lists the name (comma-separated); never set outside tests.
 */
export function injected(name: string): boolean {
  const list = process.env.LABSTATION_INJECT;
  return list !== undefined && list.split(',').includes(name);
}

/** An injected fault's error, with the code the system would give it (callers branch on it). */
export function injectedError(code: string, what: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${what} (injected)`), { code });
}
