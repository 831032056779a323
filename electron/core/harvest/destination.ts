/**
 * Where a file's copy goes: its instrument's destination template (or a pre-transfer hook's)
 * rendered for the file, relative to the storage location's base, and checked.
 */
import { join } from 'node:path';
import { arkBlade, MAX_PROTECTED_LENGTH } from '../../../shared/ark.js';
import {
  FALLBACK_WORD,
  checkDestination,
  renderTemplate,
  windowsNameProblem,
} from '../../../shared/harvest/template.js';
import type { Db } from '../db/open.js';
import { cachedStatement } from '../db/statements.js';
import type { TransferDeps } from './attempt.js';
import type { Instrument } from './config.js';
import { storedUsageContext } from './usageContext.js';
import { inFolders } from './storageGuard.js';
import { arkConfig, type FileRow } from './records.js';

/**
 * Why a copy may not go to `rendered` (relative to the storage location's base): it would lie
 * in a watched folder, or null.
 */
export function intoWatchedFolder(
  deps: Pick<TransferDeps, 'watchedIn'>,
  base: string,
  rendered: string,
): string | null {
  const watched = deps.watchedIn?.(base).find((folder) => inFolders([folder], rendered));
  if (watched === undefined) return null;
  return (
    `the destination ${join(base, ...rendered.split('/'))} lies in the watched folder ` +
    `${join(base, ...watched.split('/'))}: the harvest would take its copy again; change the ` +
    'destination template or the storage location'
  );
}

/**
 * The template's usage fields of a file: from the usage it was made during, held here or (a
 * file of an instrument's history made on another station) as the server described it.
 */
function usageFields(
  db: Db,
  file: Pick<FileRow, 'usage_event_id' | 'usage_elsewhere'>,
): Record<'user' | 'project' | 'usage_event', string> {
  const row =
    file.usage_event_id !== null
      ? (cachedStatement(
          db,
          `SELECT u.username, p.name AS project, e.uuid FROM usage_events e
             JOIN users u ON u.id = e.user_id JOIN projects p ON p.id = e.project_id
             WHERE e.id = ?`,
        ).get(file.usage_event_id) as
          { username: string; project: string; uuid: string } | undefined)
      : elsewhereFields(file.usage_elsewhere);
  return row
    ? { user: row.username, project: row.project, usage_event: row.uuid }
    : { user: FALLBACK_WORD, project: FALLBACK_WORD, usage_event: FALLBACK_WORD };
}

function elsewhereFields(
  json: string | null,
): { username: string; project: string; uuid: string } | undefined {
  const context = storedUsageContext(json);
  return context === null
    ? undefined
    : { username: context.user.username, project: context.project.name, uuid: context.usage_event };
}

/** The destination, relative to the storage location, or why there is none. */
export function renderDestination(
  db: Db,
  template: string,
  instrument: Instrument,
  file: FileRow,
): { ok: true; path: string } | { ok: false; reason: string } {
  // Dates are the station's local calendar day of the first sighting.
  const seen = new Date(file.first_discovered_at);
  const pad = (n: number): string => String(n).padStart(2, '0');
  let blade = '';
  if (template.includes('{ark_blade}')) {
    // The station's shoulder is read only for the ARKs whose blade needs it (arkBlade).
    const found =
      arkBlade(file.persistent_id) ?? arkBlade(file.persistent_id, arkConfig(db).shoulder);
    if (found === null) {
      return {
        ok: false,
        reason:
          `{ark_blade}: the blade of ${file.persistent_id} cannot be told from its shoulder ` +
          `(NAAN/shoulder+blade is ${MAX_PROTECTED_LENGTH} characters long and does not start ` +
          `with the station's shoulder)`,
      };
    }
    blade = found;
  }
  const rendered = renderTemplate(template, {
    instrument: instrument.name,
    yyyy: String(seen.getFullYear()),
    mm: pad(seen.getMonth() + 1),
    dd: pad(seen.getDate()),
    relative_path: file.relative_path,
    filename: file.filename,
    ark_blade: blade,
    ...usageFields(db, file),
  });
  const checked = checkDestination(rendered);
  if (!checked.ok) {
    return { ok: false, reason: `destination ${JSON.stringify(rendered)} ${checked.reason}` };
  }
  const windows = process.platform === 'win32' ? windowsNameProblem(checked.path) : null;
  return windows === null
    ? checked
    : { ok: false, reason: `destination ${JSON.stringify(rendered)}: ${windows}` };
}
