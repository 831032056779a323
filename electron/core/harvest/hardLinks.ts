/**
 * Hard links as the placement of a copy uses them (place.ts, and copyBatch.ts on a copy
 * worker): shared by both so that they fall back to check-then-rename on the same errors.
 */
import { injected, injectedError } from '../util/failpoint.js';

/** The errors of a link that mean this file system (some shares) has no hard links. */
export const NO_HARD_LINKS = new Set([
  'EPERM',
  'ENOTSUP',
  'EOPNOTSUPP',
  'ENOSYS',
  'EXDEV',
  'EMLINK',
]);

/**
 * In tests (LABSTATION_INJECT=harvest.no-hard-links), throws what a share without hard links
 * answers to a link, since no test machine mounts such a share; otherwise does nothing.
 */
export function refuseLinkInTests(partial: string, destination: string): void {
  if (injected('harvest.no-hard-links')) {
    throw injectedError(
      'EXDEV',
      `cross-device link not permitted, link '${partial}' -> '${destination}'`,
    );
  }
}
