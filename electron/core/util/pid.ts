/**
 * Whether a process with this id is running: signal 0 only checks (EPERM: it runs, as another
 * user).
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
