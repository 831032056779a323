import type { FileHandle } from 'node:fs/promises';

/**
 * Reads into all of `buffer` from `position` on, as far as the file goes: one read may give
 * fewer bytes than asked without the file ending (a share, a signal). Returns the bytes read;
 * fewer than the buffer's length only at the end of the file.
 */
export async function readFull(
  handle: FileHandle,
  buffer: Buffer,
  position: number,
): Promise<number> {
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(
      buffer,
      filled,
      buffer.length - filled,
      position + filled,
    );
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled;
}
