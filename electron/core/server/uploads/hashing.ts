/**
 * The hashers of uploads being received: a pool of free ones, and the states saved at an
 * upload's recorded offset, so that appending resumes hashing where it stopped.
 */
import type { FileHandle } from 'node:fs/promises';
import { createXXHash128, type IHasher } from '../../util/hasher.js';
import { readFull } from '../../util/readFull.js';
import { CHUNK } from './partialFile.js';
import type { UploadRow } from './store.js';

export const freeHashers: IHasher[] = [];
export async function takeHasher(): Promise<IHasher> {
  return (freeHashers.pop() ?? (await createXXHash128())).init();
}

export class HashStates {
  /**
   * Hasher states (hash-wasm save()) at an upload's recorded offset, so a PATCH that follows
   * another need not re-read the partial. Only for this process: after a restart, or when the
   * offset does not match, the state is rebuilt from the bytes on disk. By uuid, not id: a
   * record deleted outside the receiver (its station refused, dropUploadsOfRefused) leaves its
   * state here.
   */
  private readonly states = new Map<string, { offset: number; state: Uint8Array }>();

  delete(uuid: string): void {
    this.states.delete(uuid);
  }

  remember(uuid: string, offset: number, hasher: IHasher): void {
    this.states.delete(uuid);
    this.states.set(uuid, { offset, state: hasher.save() });
    // A few hundred bytes each; the oldest go first (they are rebuilt from disk if needed).
    if (this.states.size > 4096) {
      this.states.delete(this.states.keys().next().value as string);
    }
  }

  /** A hasher holding the upload's first `row.received` bytes. */
  async hasherAt(row: UploadRow, handle: FileHandle): Promise<IHasher> {
    const hasher = await takeHasher();
    const saved = this.states.get(row.uuid);
    if (saved?.offset === row.received) return hasher.load(saved.state);
    const buffer = Buffer.allocUnsafe(CHUNK);
    for (let position = 0; position < row.received;) {
      const want = Math.min(CHUNK, row.received - position);
      const n = await readFull(handle, buffer.subarray(0, want), position);
      if (n < want) throw new Error(`the partial file ${row.partial_path} shrank while read`);
      hasher.update(buffer.subarray(0, n));
      position += n;
    }
    return hasher;
  }
}
