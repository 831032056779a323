/**
 * Sidecars that come after their file. A `sidecar_json` hook reads `<name>.json` (or the
 * stem's, or its other suffixes) beside a file when the file's transfer ends; instrument
 * software often writes it later. When such a sidecar is harvested as a file of its own, the
 * records it describes are noted (in the transaction that records it: noteLateSidecar), and
 * each one that is done is given the sidecar hooks' output once more, merged over what it
 * holds, and goes to the server again. A record whose transfer is still to come or under way
 * is left to its transfer, then looked at again: its hooks may have looked before the sidecar
 * was there. Merging is idempotent: a sidecar its record already holds changes nothing.
 */
import { lstat } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { likePrefix } from '../../../shared/sqlLike.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import { nowIso } from '../util/ids.js';
import type { Logger } from '../util/log.js';
import { hooksFor, type Hook } from './config.js';
import { HarvestStopped } from './commandHook.js';
import { runPostTransferHooks } from './hooks.js';
import {
  enqueueFile,
  fileById,
  latestBySource,
  NEXT_UPDATED_AT,
  sameBytes,
  type FileRow,
} from './records.js';
import { sourceKey } from './storageGuard.js';

const isSidecarHook = (hook: Hook): boolean => hook.kind === 'sidecar_json';

/** An instrument's sidecar_json hooks, in the order they run. */
export function sidecarHooks(db: Db, instrumentId: number): Hook[] {
  return hooksFor(db, instrumentId, 'post_transfer').filter(isSidecarHook);
}

/**
 * The suffixes a sidecar hook reads (its `suffixes`, `.json` by default). A config its schema
 * would refuse gives none: the hook itself fails on it, naming the rule, when it runs.
 */
function suffixesOf(hook: Hook): string[] {
  const { suffixes } = hook.config;
  if (suffixes === undefined) return ['.json'];
  if (!Array.isArray(suffixes) || !suffixes.every((s) => typeof s === 'string' && s !== '')) {
    return [];
  }
  return suffixes as string[];
}

/**
 * The latest records of the files beside `sidecarPath` whose sidecar it may be, as
 * metadataHooks.ts sidecarJson looks for one: `<name><suffix>` or `<stem><suffix>`. Letter
 * case is compared as a file's identity is (sourceKey).
 */
function describedBy(db: Db, instrumentId: number, sidecarPath: string, hooks: Hook[]): number[] {
  const dir = dirname(sidecarPath);
  const name = basename(sidecarPath);
  const ids = new Set<number>();
  for (const suffix of new Set(hooks.flatMap(suffixesOf))) {
    if (name.length <= suffix.length || !sourceKey(name).endsWith(sourceKey(suffix))) continue;
    const base = name.slice(0, name.length - suffix.length);
    // `<name><suffix>`: the file named `base`.
    const named = latestBySource(db, instrumentId, join(dir, base));
    if (named) ids.add(named.id);
    // `<stem><suffix>`: a file named `base` and an extension. Newest first, so the first
    // record of each path is its latest.
    const rows = cachedStatement(
      db,
      `SELECT id, source_path, filename FROM harvest_files
         WHERE instrument_id = ? AND source_path LIKE ? ESCAPE '\\' ORDER BY id DESC`,
    ).all(instrumentId, likePrefix(join(dir, `${base}.`))) as {
      id: number;
      source_path: string;
      filename: string;
    }[];
    const seen = new Set<string>();
    for (const row of rows) {
      const key = sourceKey(row.source_path);
      if (seen.has(key)) continue;
      seen.add(key);
      const stem = row.filename.slice(0, row.filename.length - extname(row.filename).length);
      const beside = key === sourceKey(join(dir, row.filename));
      if (beside && sourceKey(stem) === sourceKey(base)) ids.add(row.id);
    }
  }
  return [...ids];
}

/**
 * Notes the records the file just recorded as `sidecarId` may be the sidecar of, where its
 * instrument has sidecar hooks (`hooks`: sidecarHooks); answers how many. In the caller's
 * transaction.
 */
export function noteLateSidecar(
  db: Db,
  instrumentId: number,
  sidecarId: number,
  sidecarPath: string,
  hooks: Hook[],
): number {
  if (!hooks.length) return 0;
  // Noted again: a merge under way over the sidecar's earlier version keeps the note.
  const note = cachedStatement(
    db,
    `INSERT INTO harvest_late_sidecars (file_id, noted_at) VALUES (?, ?)
       ON CONFLICT (file_id) DO UPDATE SET noted_at = excluded.noted_at, times = times + 1`,
  );
  let count = 0;
  for (const id of describedBy(db, instrumentId, sidecarPath, hooks)) {
    if (id !== sidecarId) count += note.run(id, nowIso()).changes;
  }
  return count;
}

export interface LateSidecarsHost {
  stopped(): boolean;
  /** Whether the file's transfer is queued or under way: it is looked at when that ends. */
  transferring(fileId: number): boolean;
  /** The instrument's name, or null when it is not harvested here. */
  instrumentName(instrumentId: number): string | null;
  changed(): void;
  checkIdle(): void;
}

/** A record noted: `times` counts the sidecars recorded for it since the note was made. */
interface Note {
  file_id: number;
  noted_at: string;
  times: number;
}

export class LateSidecars {
  private running: Promise<void> | null = null;
  private again = false;
  /** Records noted and not yet merged or let go, as last counted (but those given up on). */
  private noted = 0;
  /**
   * Notes this process could not settle (the database refused even their removal): left to
   * the next start, and not waited for meanwhile, so that a one-shot run ends.
   */
  private readonly givenUp = new Set<number>();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly host: LateSidecarsHost,
  ) {}

  /** Whether merges are under way or due: a one-shot run waits for them. */
  get busy(): boolean {
    return this.running !== null || this.noted > 0;
  }

  /** Once the merge under way, if any, has ended (a stop: no other starts). */
  async ended(): Promise<void> {
    await this.running;
  }

  /** Counts the noted records (at a start, after sidecars were recorded), and looks at them. */
  recount(): void {
    this.noted = this.count();
    this.wake();
  }

  /** Looks at the noted records, if any (also after a transfer ends). */
  wake(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.noted === 0 || this.host.stopped()) return;
    // From a microtask: a wake may come from inside another part's transaction, which the
    // merge's reads and deletes must not join.
    this.running = Promise.resolve()
      .then(() => this.mergeNoted())
      .catch((error: unknown) => {
        if (!(error instanceof HarvestStopped)) {
          this.log.error({ err: error }, 'harvest: a late sidecar could not be merged');
        }
      })
      .finally(() => {
        this.running = null;
        try {
          this.noted = this.count();
        } catch {
          this.noted = 0;
        }
        if (this.again) {
          this.again = false;
          this.wake();
        }
        this.host.checkIdle();
      });
  }

  private notes(): Note[] {
    return (
      cachedStatement(
        this.db,
        'SELECT file_id, noted_at, times FROM harvest_late_sidecars ORDER BY file_id',
      ).all() as Note[]
    ).filter((n) => !this.givenUp.has(n.file_id));
  }

  private count(): number {
    return this.notes().length;
  }

  private async mergeNoted(): Promise<void> {
    const notes = this.notes();
    // Notes settled without a merge, let go of in one commit at the end of the pass.
    const settled: Note[] = [];
    try {
      for (const note of notes) {
        if (this.host.stopped()) return;
        if (this.host.transferring(note.file_id)) continue;
        const file = fileById(this.db, note.file_id);
        const name = file ? this.host.instrumentName(file.instrument_id) : null;
        // A record not done has its transfer to come, whose hooks read the sidecar; one of an
        // instrument no longer harvested here is not changed by this station; one whose
        // hooks ran after the sidecar was recorded read it (the common case: a file and its
        // sidecar written together, recorded together). One a skip hook kept out ran no
        // post-transfer hooks, so gets no sidecar later either.
        if (
          !file ||
          file.state !== 'done' ||
          name === null ||
          this.readSince(file, note) ||
          this.keptOut(file)
        ) {
          settled.push(note);
          continue;
        }
        try {
          await this.merge(file, name, note);
        } catch (error) {
          if (error instanceof HarvestStopped) throw error;
          // The record keeps what it had; the note is tried again at the next start.
          this.log.error(
            { err: error, file: file.source_path },
            'harvest: a late sidecar could not be merged',
          );
          this.givenUp.add(note.file_id);
        }
      }
    } finally {
      try {
        if (settled.length) this.db.transaction(() => settled.forEach((n) => this.letGo(n)))();
      } catch (error) {
        this.log.error({ err: error }, 'harvest: late sidecar notes could not be let go');
        for (const n of settled) this.givenUp.add(n.file_id);
      }
    }
  }

  /**
   * Whether the record's hooks ran after the note was made: its last transfer's end is
   * stamped as its copy is in place, before its hooks run.
   */
  private readSince(file: FileRow, note: Note): boolean {
    const completedAt = cachedStatement(
      this.db,
      `SELECT completed_at FROM harvest_transfers
         WHERE file_id = ? AND status IN ('completed', 'skipped') AND completed_at IS NOT NULL
         ORDER BY id DESC LIMIT 1`,
    )
      .pluck()
      .get(file.id) as string | undefined;
    return completedAt !== undefined && completedAt >= note.noted_at;
  }

  /** Whether the record's last transfer is a skip hook's (a skip with no destination). */
  private keptOut(file: FileRow): boolean {
    const last = cachedStatement(
      this.db,
      `SELECT status = 'skipped' AND destination_path IS NULL FROM harvest_transfers
         WHERE file_id = ? ORDER BY id DESC LIMIT 1`,
    )
      .pluck()
      .get(file.id) as number | undefined;
    return last === 1;
  }

  /**
   * Lets go of a note, unless a sidecar was recorded for its record again since it was read
   * (`times`): that one is merged at the next pass. Answers whether it let go.
   */
  private letGo(note: Note): boolean {
    return (
      cachedStatement(
        this.db,
        'DELETE FROM harvest_late_sidecars WHERE file_id = ? AND times = ?',
      ).run(note.file_id, note.times).changes === 1
    );
  }

  /** The record given its sidecar hooks' output again, and sent again if that changed it. */
  private async merge(file: FileRow, instrument: string, note: Note): Promise<void> {
    const hooks = hooksFor(this.db, file.instrument_id, 'post_transfer');
    // The source no longer the version recorded (written again: a new version, whose own
    // transfer reads its sidecar) is not described by what is beside it now.
    const source = await lstat(file.source_path).catch(() => null);
    const same = source !== null && sameBytes(file, source);
    if (!hooks.some(isSidecarHook) || !same) {
      if (!this.letGo(note)) this.again = true;
      return;
    }
    const destination = cachedStatement(
      this.db,
      `SELECT destination_path FROM harvest_transfers
         WHERE file_id = ? AND destination_path IS NOT NULL ORDER BY id DESC LIMIT 1`,
    )
      .pluck()
      .get(file.id) as string | undefined;
    const metadata = await runPostTransferHooks(
      hooks,
      {
        db: this.db,
        file,
        sourcePath: file.source_path,
        destinationPath: destination ?? file.source_path,
        instrument,
      },
      isSidecarHook,
    );
    const text = JSON.stringify(metadata);
    this.db
      .transaction(() => {
        // Only over what was read: a record changed meanwhile (a new mtime, another merge) is
        // looked at again.
        const now = fileById(this.db, file.id);
        if (!now || now.metadata_ !== file.metadata_ || now.state !== 'done') {
          this.again = true;
          return;
        }
        // A sidecar recorded again meanwhile keeps the note, for the next pass to read.
        if (!this.letGo(note)) this.again = true;
        if (text === JSON.stringify(JSON.parse(file.metadata_))) return;
        // Later than the record's last change, as every write of it is: the server takes a
        // record only over an older one.
        cachedStatement(
          this.db,
          `UPDATE harvest_files SET metadata_ = ?, updated_at = ${NEXT_UPDATED_AT} WHERE id = ?`,
        ).run(text, nowIso(), file.id);
        enqueueFile(this.db, file.id);
        this.log.info(
          { file: file.source_path },
          'harvest: a sidecar harvested after its file is merged into its record',
        );
        this.host.changed();
      })
      .immediate();
  }
}
