/**
 * Hard links as the placement of a copy uses them (place.ts, and copyBatch.ts on a copy
 * worker): shared by both so that they fall back to check-then-rename on the same errors.
 */
import { injected, injectedError } from '../util/failpoint.js';

/** The errors of a link that mean this file system (some shares) has no hard links. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV', 'EMLINK']);

/**
 * Whether a link's error `code` means this file system has no hard links: one of
 * NO_HARD_LINKS, or on Windows EISDIR, libuv's name for ERROR_INVALID_FUNCTION, which a FAT32
 * or exFAT drive (a USB disk) answers to CreateHardLinkW.
 */
export function noHardLinks(
  code: string | undefined,
  platform: string = process.platform,
): boolean {
  if (code === undefined) return false;
  return NO_HARD_LINKS.has(code) || (platform === 'win32' && code === 'EISDIR');
}

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
