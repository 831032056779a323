/**
 * The harvest.* calls of the station's handler map (station.ts): the engine's status, the
 * harvested files and their transfers as whoever is at the screen may see them, and retries.
 */
import { dirname } from 'node:path';
import type { HarvestFileView, HarvestTransferView } from '../../../../shared/api.js';
import { noSuchFile, retryNowOrRefuse } from '../../harvest/due.js';
import { HELD_FOR_NEW_BYTES } from '../../harvest/retries.js';
import { idleHarvestStatus } from '../../harvest/status.js';
import { getFileView, listFiles, listTransfers } from '../../harvest/views.js';
import { AppError } from '../../util/errors.js';
import { fileUsageView } from '../records.js';
import type { HandlerContext, HandlersOf } from './context.js';

export type HarvestContext = Pick<
  HandlerContext,
  'db' | 'session' | 'actor' | 'staffLoggedOn' | 'harvest' | 'emit'
>;

export function harvestHandlers(ctx: HarvestContext): HandlersOf<'harvest'> {
  const { db } = ctx;
  return {
    'harvest.status': () => ctx.harvest()?.status() ?? idleHarvestStatus(db),
    'harvest.files': (args) => {
      const files = listFiles(db, {
        state: args.state,
        limit: args.limit ?? 100,
        beforeId: args.before_id,
        search: args.search,
      });
      const { whole } = seenWhole(ctx, files);
      return { files: files.map((f) => forViewer(whole(f), f)) };
    },
    'harvest.file': ({ id }) => {
      const file = getFileView(db, id);
      if (!file) throw noSuchFile(id);
      const seen = seenWhole(ctx, [file]);
      const viewing = seen.whole(file);
      return {
        file: forViewer(viewing, file),
        transfers: listTransfers(db, { fileId: id }).map((t) =>
          transferForViewer(viewing, t, file.usage_event),
        ),
        // Who made it and with which project: for whom it is seen whole (seenWhole).
        usage: viewing ? fileUsageView(db, id) : null,
        withheld: seen.loggedOn && !viewing && file.usage_event !== null,
      };
    },
    'harvest.retry': ({ file_id: fileId }) => {
      ctx.actor();
      const harvest = ctx.harvest();
      let held = false;
      if (harvest) held = harvest.retry(fileId).held;
      else retryNowOrRefuse(db, fileId);
      const file = getFileView(db, fileId) as HarvestFileView;
      ctx.emit({ type: 'harvest.changed' });
      // Else a Retry of a file being written again did nothing anyone could see.
      const note = held ? `${file.relative_path} ${HELD_FOR_NEW_BYTES}` : null;
      return { file: forViewer(seenWhole(ctx, [file]).whole(file), file), note };
    },
    'harvest.retryAll': () => {
      ctx.actor();
      const harvest = ctx.harvest();
      if (!harvest) throw new AppError('bad_request', 'no harvest runs on this station');
      const count = harvest.retryAll();
      ctx.emit({ type: 'harvest.changed' });
      return { count };
    },
    'harvest.rescan': async () => {
      ctx.actor();
      const harvest = ctx.harvest();
      if (!harvest) throw new AppError('bad_request', 'no harvest runs on this station');
      await harvest.rescanNow();
      return { ok: true as const };
    },
  };
}

/**
 * Which of `files` the person at the screen sees whole: staff every one; anyone else those made
 * outside any usage and those made during their own usages (another person's usage answers,
 * and destinations named after them, are that person's, as their usage history is: usage.ts);
 * nobody logged on, none. Who is logged on is read once (from the database, station.ts), and
 * given back as `loggedOn`.
 */
function seenWhole(
  ctx: HarvestContext,
  files: HarvestFileView[],
): { loggedOn: boolean; whole: (file: HarvestFileView) => boolean } {
  const session = ctx.session();
  if (session === null) return { loggedOn: false, whole: () => false };
  if (ctx.staffLoggedOn()) return { loggedOn: true, whole: () => true };
  // Their own: a usage of theirs here, or one made on another station, known by the usage
  // context the file came with (records.ts fileUsageView: usage_elsewhere).
  const ids = files.flatMap((f) => (f.usage_event === null ? [] : [f.id]));
  const own = new Set(
    ids.length
      ? (ctx.db
          .prepare(
            `SELECT f.id FROM harvest_files f LEFT JOIN usage_events e ON e.id = f.usage_event_id
              WHERE f.id IN (SELECT value FROM json_each(?))
                AND (e.user_id = ? OR (f.usage_event_id IS NULL
                  AND json_extract(f.usage_elsewhere, '$.user.username') =
                    (SELECT username FROM users WHERE id = ?)))`,
          )
          .pluck()
          .all(JSON.stringify(ids), session.userId, session.userId) as number[])
      : [],
  );
  return { loggedOn: true, whole: (file) => file.usage_event === null || own.has(file.id) };
}

/**
 * A file as whoever is at the screen may see it. Its metadata_ holds who made it and the
 * usage's answers (usage_context), and the destination of a file made during a usage may be
 * named after them ({user}, {project}, {usage_event}): whole only for those who see it so
 * (`viewing`, seenWhole), as the usage history is.
 */
function forViewer(viewing: boolean, file: HarvestFileView): HarvestFileView {
  if (viewing) return file;
  const last = file.last_transfer;
  return {
    ...file,
    usage_event: null,
    metadata_: {},
    last_transfer: last && transferForViewer(viewing, last, file.usage_event),
  };
}

/**
 * A transfer of a file made during `usage` for a viewer who does not see the file whole
 * (seenWhole): where it went is left out (forViewer). The reason stays, as the screen must say
 * why a file failed, with the destination's folder cut out of it.
 */
function transferForViewer(
  viewing: boolean,
  transfer: HarvestTransferView,
  usage: string | null,
): HarvestTransferView {
  if (viewing || usage === null) return transfer;
  const destination = transfer.destination_path;
  const folder = destination === null ? '.' : dirname(destination);
  const redact = (text: string): string =>
    folder === '.' || folder === '/' || folder === '' ? text : text.split(folder).join('…');
  return {
    ...transfer,
    destination_path: null,
    error: redact(transfer.error),
    note: redact(transfer.note),
  };
}
