/** The turn of one upload: one request at work on it at a time. */

interface Busy {
  stop(): void;
  done: Promise<void>;
}

export class UploadTurns {
  /**
   * Work on one upload at a time; a newer request stops the body an older one still reads. By
   * uuid: a request at work on an upload dropped meanwhile (its station refused) holds its turn
   * under its own upload's name, never under an id another upload may have taken since.
   */
  private readonly busy = new Map<string, Busy>();

  async exclusive<T>(uuid: string, stop: () => void, work: () => Promise<T>): Promise<T> {
    for (let current = this.busy.get(uuid); current; current = this.busy.get(uuid)) {
      current.stop();
      await current.done;
    }
    let release = (): void => undefined;
    const done = new Promise<void>((resolve) => (release = resolve));
    this.busy.set(uuid, { stop, done });
    try {
      return await work();
    } finally {
      this.busy.delete(uuid);
      release();
    }
  }

  isBusy(uuid: string): boolean {
    return this.busy.has(uuid);
  }
}
