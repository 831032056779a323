/**
 * Crash-injection points for the integration tests that kill a process mid-write. A failpoint
 * does nothing unless LABSTATION_FAILPOINT names it, in which case the process dies on the spot
 * with SIGKILL, as it would on a power cut: no exit handlers, no rollback code of ours runs.
 */
export function failpoint(name: string): void {
  if (process.env.LABSTATION_FAILPOINT === name) process.kill(process.pid, 'SIGKILL');
}
