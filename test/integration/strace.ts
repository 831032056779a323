/**
 * Reading which paths a real process fsynced, for the tests of durability no test can cut the
 * power to show: strace, where it is installed and allowed to trace (a container may forbid
 * ptrace), follows every thread and child and names each descriptor's path (`-y`).
 */
import { spawnSync } from 'node:child_process';

export const hasStrace =
  process.platform === 'linux' &&
  spawnSync('strace', ['-qq', '-e', 'trace=none', 'true'], { stdio: 'ignore' }).status === 0;

/** The command to run a program under, its fsyncs written to `trace`; the program goes last. */
export function traceFsyncs(trace: string): string[] {
  return ['strace', '-f', '-qq', '-y', '-e', 'trace=fsync', '-o', trace];
}

/** The paths fsynced in a trace: `fsync(23</path/of/it>)`. */
export function fsyncedPaths(trace: string): string[] {
  return [...trace.matchAll(/fsync\(\d+<([^>\n]*)>/g)].map((m) => m[1]);
}
