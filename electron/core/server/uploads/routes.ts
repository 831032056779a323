/**
 * The upload API (electron/core/sync/uploadProtocol.ts): stations send harvested files into
 * `server` storage locations. Authenticated like the sync API, by the station key.
 */
import { realpathSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  checkDestination,
  DEFAULT_TEMPLATE,
  fixedFolder,
} from '../../../../shared/harvest/template.js';
import type { Db } from '../../db/open.js';
import {
  DESTINATION_BLOCKED,
  DESTINATION_OF_ANOTHER_INSTRUMENT,
  UPLOAD_OFFSET_HEADER,
  UPLOADS_PATH,
  uploadRequestSchema,
  type UploadRequest,
} from '../../sync/uploadProtocol.js';
import type { Logger } from '../../util/log.js';
import type { ApiDocs } from '../openapi/registry.js';
import { refusalNow, stationAuth } from '../sync/stationAuth.js';
import { sweepUploads } from './cleanup.js';
import { describeUploadApi } from './docs.js';
import { leadsOutside } from '../../harvest/place.js';
import { foldersOverlap } from '../../harvest/storageGuard.js';
import { destinationIn, stateOf, UPLOAD_FOLDER, UploadReceiver, UploadRefusal } from './receive.js';
import {
  findLocation,
  locationById,
  serverLocations,
  uploadByUuid,
  type ServerLocation,
  type UploadKey,
  type UploadRow,
} from './store.js';

export interface UploadApiDeps {
  db: Db;
  log: Logger;
  /** Where the routes describe themselves for /openapi.json. */
  docs?: ApiDocs;
  /** How often abandoned uploads are looked for (the first time when the server is ready). */
  sweepEveryMs?: number;
  abandonedAfterMs?: number;
}

const STORAGE_FULL = new Set(['ENOSPC', 'EDQUOT']);

async function refusalOf(error: unknown, reply: FastifyReply): Promise<FastifyReply> {
  if (error instanceof UploadRefusal) {
    return reply.code(error.status).send({ detail: error.detail, ...error.extra });
  }
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (code === 'ENOTDIR') {
    // A file where the destination needs a folder: only an admin who moves it can help.
    return reply.code(409).send({
      detail:
        'destination_path: a file on the server stands where the destination needs a folder ' +
        `(${(error as Error).message}); an admin must move it`,
      code: DESTINATION_BLOCKED,
    });
  }
  if (STORAGE_FULL.has(code)) {
    return reply
      .code(507)
      .send({ detail: `the storage location on the server is full: ${(error as Error).message}` });
  }
  throw error;
}

/**
 * Whether the station may write into the location: one of its instruments stores there, or a
 * redirect hook that applies to them names it. A key does not open every location.
 */
function stationUsesLocation(db: Db, stationId: number, location: ServerLocation): boolean {
  const byInstrument = db
    .prepare('SELECT 1 FROM instruments WHERE station_id = ? AND storage_location_id = ?')
    .get(stationId, location.id);
  if (byInstrument) return true;
  return (
    db
      .prepare(
        `SELECT 1 FROM harvest_hooks h
         WHERE h.kind = 'redirect' AND h.enabled = 1
           AND json_extract(h.config, '$.storage_location') = ?
           AND (h.instrument_id IS NULL
             OR h.instrument_id IN (SELECT id FROM instruments WHERE station_id = ?))`,
      )
      .get(location.name, stationId) !== undefined
  );
}

/**
 * A relative path as a folder comparison on any server must read it: Windows and macOS take
 * names in another letter case (or Unicode form) as the same, and Windows drops a name's
 * trailing dots and spaces, so "SEM-2/", "sem-2./" and "sem-2 /" are the folder "sem-2/" there.
 */
function folderKey(path: string): string {
  return path
    .normalize('NFC')
    .toLowerCase()
    .split('/')
    .map((segment) => segment.replace(/[. ]+$/, ''))
    .join('/');
}

/**
 * The instrument whose own folder of the location `path` lies in, when that instrument runs on
 * another station: each instrument storing in the location owns the folder its destination
 * template fixes with its own name (`{instrument}/...` owns "<name>/"; `{relative_path}` owns
 * none), the deepest such folder deciding. A key does not write into the folders of another
 * station's instruments. What a station may render is not checked beyond that: its own bundle
 * may add redirect hooks the server never sees.
 */
function othersFolder(
  db: Db,
  stationId: number,
  location: ServerLocation,
  path: string,
): { instrument: string; folder: string; holds: boolean } | null {
  const rows = db
    .prepare(
      `SELECT name, station_id, destination_template FROM instruments
       WHERE storage_location_id = ? AND station_id IS NOT NULL`,
    )
    .all(location.id) as {
    name: string;
    station_id: number;
    destination_template: string | null;
  }[];
  let deepest: { folder: string; depth: number; ours: boolean; instrument: string } | null = null;
  // Compared as the server's file system may see them (folderKey): a folder spelled otherwise
  // is the same folder on Windows or macOS.
  const key = folderKey(path);
  for (const row of rows) {
    const folder = fixedFolder(row.destination_template || DEFAULT_TEMPLATE, {
      instrument: row.name,
    });
    if (folder === null) continue;
    const folderAs = folderKey(folder);
    const ours = row.station_id === stationId;
    // A file at the folder's own path, or at a folder holding it, would stand where the other
    // instrument's files must go, and fail each of them.
    if (!ours && folderAs.startsWith(`${key}/`)) {
      return { instrument: row.name, folder, holds: true };
    }
    if (!key.startsWith(folderAs)) continue;
    const depth = folderAs.length;
    if (!deepest || depth > deepest.depth || (depth === deepest.depth && ours)) {
      deepest = { folder, depth, ours, instrument: row.name };
    }
  }
  return deepest && !deepest.ours ? { ...deepest, holds: false } : null;
}

/** The storage location a request names, if this station's uploads may go there. */
function uploadLocation(db: Db, request: UploadRequest, stationId: number): ServerLocation {
  const location = findLocation(db, request.storage_location_uuid, request.storage_location);
  if (!location) {
    throw new UploadRefusal(
      404,
      `storage_location_uuid: the server has no storage location ${request.storage_location_uuid} ` +
        `(nor one named ${JSON.stringify(request.storage_location)})`,
    );
  }
  if (location.type !== 'server') {
    throw new UploadRefusal(
      400,
      `storage_location: ${location.name} is a ${location.type} storage location on the server; ` +
        "uploads go to 'server' ones",
    );
  }
  if (location.enabled !== 1) {
    throw new UploadRefusal(400, `storage_location: ${location.name} is disabled on the server`);
  }
  requireStationUses(db, stationId, location);
  return location;
}

/** The station harvests into `location` (an instrument of its, or a redirect hook for them). */
function requireStationUses(db: Db, stationId: number, location: ServerLocation): void {
  if (!stationUsesLocation(db, stationId, location)) {
    throw new UploadRefusal(
      403,
      `storage_location: ${location.name} is not used by an instrument of this station ` +
        '(nor named by a redirect hook for them)',
    );
  }
}

/**
 * Refuses a location whose base_path has come to lead to the server's data folder (`dataDir`,
 * its real path; null for a database in memory), into it, or to a folder holding it, since it
 * was saved (a link made there later, a share mounted on it), as its save would be
 * (storageLocations.ts pathProblems). Checked as an upload opens and at each of its appends.
 */
async function checkApartFromData(
  db: Db,
  location: ServerLocation,
  dataDir: string | null,
): Promise<void> {
  if (dataDir === null) return;
  const base = await realpath(location.base_path);
  if (foldersOverlap(dataDir, base)) {
    throw new UploadRefusal(
      400,
      `storage_location: ${location.name} (${location.base_path}) leads to ${base}, which is ` +
        `the server's data folder, inside it, or holds it: an admin must move the location`,
    );
  }
  // Nor to another server location's folder (storageLocations.ts pathProblems): an upload
  // through this one would write where the other's instruments own their folders.
  for (const other of serverLocations(db)) {
    if (other.id === location.id) continue;
    const otherBase = await realpath(other.base_path).catch(() => null);
    if (otherBase === null) continue;
    if (foldersOverlap(otherBase, base)) {
      throw new UploadRefusal(
        400,
        `storage_location: ${location.name} (${location.base_path}) leads to ${base}, which is ` +
          `the folder of the server storage location ${other.name}, inside it, or holds it: an ` +
          'admin must move one of them',
      );
    }
  }
}

/**
 * The destination, checked as localCopy.ts checks a local one: inside base_path, links too,
 * and the location apart from the server's data folder (checkApartFromData).
 */
async function checkedDestination(
  db: Db,
  location: ServerLocation,
  raw: string,
  dataDir: string | null,
): Promise<string> {
  const checked = checkDestination(raw);
  if (!checked.ok) throw new UploadRefusal(400, `destination_path: ${checked.reason}`);
  if (folderKey(checked.path.split('/')[0] ?? '') === UPLOAD_FOLDER) {
    throw new UploadRefusal(400, `destination_path: ${UPLOAD_FOLDER} holds the server's uploads`);
  }
  try {
    const base = await stat(location.base_path);
    if (!base.isDirectory()) throw new Error(`${location.base_path} is not a folder`);
  } catch (error) {
    throw new UploadRefusal(
      503,
      `storage_location: ${location.name} (${location.base_path}) is not reachable on the ` +
        `server: ${(error as Error).message}`,
    );
  }
  await checkApartFromData(db, location, dataDir);
  const outside = await leadsOutside(location.base_path, destinationIn(location, checked.path));
  if (outside !== null) {
    throw new UploadRefusal(
      400,
      `destination_path: leads outside the storage location (to ${outside}, through a ` +
        'symbolic link)',
    );
  }
  return checked.path;
}

/** checkedDestination, and not in another station's instrument's folder (othersFolder). */
async function allowedDestination(
  db: Db,
  stationId: number,
  location: ServerLocation,
  raw: string,
  dataDir: string | null,
): Promise<string> {
  const path = await checkedDestination(db, location, raw, dataDir);
  requireNotOthers(db, stationId, location, path);
  return path;
}

/** `path` is in no folder of an instrument that another station runs. */
function requireNotOthers(db: Db, stationId: number, location: ServerLocation, path: string): void {
  const others = othersFolder(db, stationId, location, path);
  if (others) {
    throw new UploadRefusal(
      403,
      `destination_path: ${path} ${others.holds ? 'would stand where' : 'is in'} ` +
        `${others.folder}${others.holds ? ' is' : ''}, the folder of the instrument ` +
        `${others.instrument}, which another station runs`,
      { code: DESTINATION_OF_ANOTHER_INSTRUMENT },
    );
  }
}

function ownUpload(db: Db, request: FastifyRequest): { row: UploadRow; location: ServerLocation } {
  const { id } = request.params as { id: string };
  const row = uploadByUuid(db, id);
  const location = row ? locationById(db, row.storage_location_id) : undefined;
  // Another station's upload is not found either: ids are not secrets, keys are.
  if (!row || !location || row.station_id !== request.station!.id) {
    throw new UploadRefusal(404, 'upload: not found; start it again with POST /sync/uploads');
  }
  return { row, location };
}

function offsetOf(request: FastifyRequest): number {
  const raw = request.headers[UPLOAD_OFFSET_HEADER];
  if (typeof raw !== 'string' || !/^\d{1,16}$/.test(raw.trim())) {
    throw new UploadRefusal(400, 'Upload-Offset: header required, a whole number of bytes');
  }
  return Number(raw.trim());
}

function bodyOf(request: FastifyRequest): { body: Readable | null; length: number | null } {
  const header = request.headers['content-length'];
  const length = header === undefined ? null : Number(header);
  if (request.body === undefined || request.body === null) {
    if (length !== null && length > 0) {
      throw new UploadRefusal(415, 'body: Content-Type must be application/octet-stream');
    }
    return { body: null, length };
  }
  return { body: request.body as Readable, length };
}

const registered = new WeakSet<FastifyInstance>();

/** Once per app: a second call changes nothing. */
export function registerUploadApi(app: FastifyInstance, deps: UploadApiDeps): void {
  if (registered.has(app)) return;
  registered.add(app);
  const { db, log } = deps;
  // The data folder does not move while the server runs: its real path is read once.
  const dataDir = db.memory ? null : realpathSync(dirname(db.name));
  const authenticate = stationAuth(app, { db, log });
  const receiver = new UploadReceiver({ db, log });
  if (deps.docs) describeUploadApi(deps.docs);

  const sweep = (): void => {
    sweepUploads(
      { db, log, receiver },
      deps.abandonedAfterMs === undefined ? {} : { abandonedAfterMs: deps.abandonedAfterMs },
    ).catch((error: unknown) => log.error({ err: error }, 'uploads: cleanup failed'));
  };
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', (done) => {
    sweep();
    timer = setInterval(sweep, deps.sweepEveryMs ?? 3600_000);
    timer.unref();
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    clearInterval(timer);
    done();
  });

  // In its own scope: the body parser that hands over the raw stream applies to these routes
  // only (the rest of the server keeps its 8 MiB limit on bodies read whole).
  void app.register((scope, _options, done) => {
    scope.addContentTypeParser('application/octet-stream', (_request, payload, parsed) =>
      parsed(null, payload),
    );

    scope.post(UPLOADS_PATH, { onRequest: authenticate }, async (request, reply) => {
      const parsed = uploadRequestSchema.safeParse(request.body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        return reply
          .code(400)
          .send({ detail: `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}` });
      }
      try {
        const location = uploadLocation(db, parsed.data, request.station!.id);
        const key: UploadKey = {
          stationId: request.station!.id,
          fileUuid: parsed.data.file_uuid,
          locationId: location.id,
          destination: await allowedDestination(
            db,
            request.station!.id,
            location,
            parsed.data.destination_path,
            dataDir,
          ),
          size: parsed.data.size,
          xxhash: parsed.data.xxhash,
        };
        return await receiver.open(location, key, refusalNow(db, request));
      } catch (error) {
        return refusalOf(error, reply);
      }
    });

    scope.get(`${UPLOADS_PATH}/:id`, { onRequest: authenticate }, (request, reply) => {
      try {
        const { row, location } = ownUpload(db, request);
        return stateOf(row, location);
      } catch (error) {
        return refusalOf(error, reply);
      }
    });

    scope.patch(`${UPLOADS_PATH}/:id`, { onRequest: authenticate }, async (request, reply) => {
      try {
        const { row, location } = ownUpload(db, request);
        if (row.state === 'receiving' && (location.type !== 'server' || location.enabled !== 1)) {
          throw new UploadRefusal(
            400,
            `storage_location: ${location.name} no longer takes uploads (disabled, or not 'server')`,
          );
        }
        if (row.state === 'receiving') {
          // As when it was opened: the station may have lost the instrument since, or another
          // station been given the folder.
          requireStationUses(db, request.station!.id, location);
          requireNotOthers(db, request.station!.id, location, row.destination_path);
          await checkApartFromData(db, location, dataDir);
        }
        const offset = offsetOf(request);
        const { body, length } = bodyOf(request);
        return await receiver.append(row, location, offset, body, length, refusalNow(db, request));
      } catch (error) {
        return refusalOf(error, reply);
      }
    });

    scope.delete(`${UPLOADS_PATH}/:id`, { onRequest: authenticate }, async (request, reply) => {
      try {
        const { row } = ownUpload(db, request);
        if (row.state !== 'receiving') {
          throw new UploadRefusal(409, `upload: already ${row.state}; a finished upload stays`);
        }
        // A request at work on it may place it first: then it stays, as a finished one does.
        const dropped = await receiver.drop(row);
        if (dropped !== 'dropped' && dropped !== 'gone') {
          throw new UploadRefusal(409, `upload: already ${dropped}; a finished upload stays`);
        }
        return reply.code(204).send();
      } catch (error) {
        return refusalOf(error, reply);
      }
    });
    done();
  });
}
