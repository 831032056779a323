/**
 * The harvest.* calls of the station's handler map (station.ts): the engine's status, the
 * harvested files and their transfers as whoever is at the screen may see them, and retries.
 */
import { dirname } from 'node:path';
import type { HarvestFileView, HarvestTransferView } from '../../../../shared/api.js';
import { retryNowOrRefuse } from '../../harvest/due.js';
import { idleHarvestStatus } from '../../harvest/status.js';
import { getFileView, listFiles, listTransfers } from '../../harvest/views.js';
import { AppError } from '../../util/errors.js';
import { fileUsageView } from '../records.js';
import type { HandlerContext, HandlersOf } from './context.js';

export type HarvestContext = Pick<HandlerContext, 'db' | 'session' | 'actor' | 'harvest' | 'emit'>;

export function harvestHandlers(ctx: HarvestContext): HandlersOf<'harvest'> {
  const { db } = ctx;
  return {
    'harvest.status': () => ctx.harvest()?.status() ?? idleHarvestStatus(db),
    'harvest.files': (args) => {
      // Asked once per call: it reads who is logged on from the database (station.ts).
      const viewing = ctx.session() !== null;
      return {
        files: listFiles(db, {
          state: args.state,
          limit: args.limit ?? 100,
          beforeId: args.before_id,
          search: args.search,
        }).map((f) => forViewer(viewing, f)),
      };
    },
    'harvest.file': ({ id }) => {
      const file = getFileView(db, id);
      if (!file) throw new AppError('not_found', `no harvested file with id ${id}`);
      const viewing = ctx.session() !== null;
      return {
        file: forViewer(viewing, file),
        transfers: listTransfers(db, { fileId: id }).map((t) =>
          transferForViewer(viewing, t, file.usage_event),
        ),
        // Who made it and with which project: for someone logged on (forViewer).
        usage: viewing ? fileUsageView(db, id) : null,
      };
    },
    'harvest.retry': ({ file_id: fileId }) => {
      ctx.actor();
      const harvest = ctx.harvest();
      if (harvest) harvest.retry(fileId);
      else retryNowOrRefuse(db, fileId);
      const file = getFileView(db, fileId) as HarvestFileView;
      ctx.emit({ type: 'harvest.changed' });
      return { file };
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
 * A file as whoever is at the screen may see it. Its metadata_ holds who made it and the
 * usage's answers (usage_context), and the destination of a file made during a usage may be
 * named after them ({user}, {project}, {usage_event}): for someone logged on only, as the
 * usage history is.
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
 * A transfer of a file made during `usage` for a screen nobody is logged on to: where it went
 * is left out (forViewer). The reason stays, as the screen must say why a file failed, with
 * the destination's folder cut out of it.
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
