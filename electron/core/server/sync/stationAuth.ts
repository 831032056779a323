/**
 * How the routes that stations call (sync, uploads) know which station calls:
 * `Authorization: Station <key>`, the key checked against stations.key_hash.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/open.js';
import { cachedStatement } from '../../db/statements.js';
import type { Logger } from '../../util/log.js';
import { FailureLimiter } from '../rateLimit.js';
import { sha256 } from '../secrets.js';
import {
  BAD_IDENTITY,
  HOST_HEADER,
  INSTALL_HEADER,
  KEY_IN_USE,
  PREVIOUS_HEADER,
} from '../../sync/identity.js';
import { UUID_PATTERN } from '../../util/ids.js';
import type { StationAccount } from './export.js';

declare module 'fastify' {
  interface FastifyRequest {
    station?: StationAccount;
  }
}

export type StationAuth = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** The 429 of wrong station keys. */
export const STATION_THROTTLED =
  'Request was throttled: too many wrong station keys from this address. A station whose key ' +
  'was replaced needs the new one (its Settings tab); a valid key still gets in.';

/** One per app, so wrong keys count against one limit whichever station route they try. */
const perApp = new WeakMap<FastifyInstance, StationAuth>();

/**
 * How long a Labstation that holds a key must have been silent before another may take it
 * over. A running station asks the server at least every 30 s (its pull waits 25 s, its
 * retries back off to 30 s), so a holder this quiet has stopped: its data dir was made anew,
 * its PC replaced. LABSTATION_STATION_TAKEOVER_SECONDS sets another (runServer.ts).
 */
export const TAKEOVER_MS = 120_000;

export interface StationAuthDeps {
  db: Db;
  log: Logger;
  /** TAKEOVER_MS unless set. */
  takeoverMs?: number;
  clock?: () => number;
}

/**
 * The onRequest hook (before the body is read) that sets request.station, or answers 401 (429
 * after too many wrong keys, 409 when another Labstation holds the key). The first call for an
 * app makes it, with that call's deps (createServerApp's); later calls get the same one.
 */
export function stationAuth(app: FastifyInstance, deps: StationAuthDeps): StationAuth {
  const known = perApp.get(app);
  if (known) return known;
  const { db, log } = deps;
  const open = new OpenRequests();
  const holds = keyHolder(deps, open);
  const failures = new FailureLimiter(20, 60_000);
  const authenticate: StationAuth = async (request, reply) => {
    const ip = request.ip;
    // A station key cannot be guessed: only bad keys are throttled, a valid one always gets in
    // (stations behind one NAT share an address with one that has an old key).
    const match = /^Station\s+(\S+)$/i.exec(request.headers.authorization?.trim() ?? '');
    if (!match) {
      return reply
        .code(401)
        .send({ detail: 'Station key required: Authorization: Station <key>.' });
    }
    const station = db
      .prepare('SELECT id, uuid, name, tool_id, enabled FROM stations WHERE key_hash = ?')
      .get(sha256(match[1])) as (StationAccount & { enabled: number }) | undefined;
    if (!station || station.enabled !== 1) {
      if (failures.blocked(ip)) {
        void reply.header('retry-after', String(failures.retryAfter(ip)));
        // Says why: a station sees this after its key was replaced, and shows it to staff.
        return reply.code(429).send({ detail: STATION_THROTTLED });
      }
      const count = failures.fail(ip);
      log.warn({ ip, url: request.url, failures: count }, 'rejected station key');
      return reply
        .code(401)
        .send({ detail: station ? 'This station is disabled.' : 'Invalid station key.' });
    }
    const caller = callerOf(request);
    if ('problem' in caller) {
      return reply.code(400).send({ detail: caller.problem, code: BAD_IDENTITY });
    }
    const named = caller.install === null ? null : caller;
    const refusal = holds(station.id, named);
    if (refusal !== null) {
      log.warn({ ip, station: station.name, host: named?.host }, 'station key held elsewhere');
      return reply.code(409).send({ detail: refusal, code: KEY_IN_USE });
    }
    if (named) open.track(named.install, reply);
    request.station = {
      id: station.id,
      uuid: station.uuid,
      name: station.name,
      tool_id: station.tool_id,
      install: named?.install ?? null,
    };
  };
  perApp.set(app, authenticate);
  return authenticate;
}

/**
 * The station of a request let in a while ago (its body read since, or its pull held), as it
 * is now: its key may have been replaced, the station disabled or deleted meanwhile, and its
 * tool changed. What was let in before that is not taken after it: the answer is then the 401
 * the request would get now. Call it where nothing awaits between it and the work it allows.
 */
export function stationNow(
  db: Db,
  request: FastifyRequest,
): { station: StationAccount } | { refused: string } {
  return stationAsNow(db, request.station!, request.headers.authorization);
}

/** stationNow for the station let in and the Authorization header it came with. */
function stationAsNow(
  db: Db,
  letIn: StationAccount,
  authorization: string | undefined,
): { station: StationAccount } | { refused: string } {
  const match = /^Station\s+(\S+)$/i.exec(authorization?.trim() ?? '');
  // Cached: a held pull asks it at every look at the change log (ChangeWaiters, sync/routes.ts).
  const row = cachedStatement(
    db,
    'SELECT uuid, name, tool_id, enabled, key_hash FROM stations WHERE id = ?',
  ).get(letIn.id) as
    | { uuid: string; name: string; tool_id: number | null; enabled: number; key_hash: string }
    | undefined;
  if (!row || !match || row.key_hash !== sha256(match[1])) {
    return { refused: 'Invalid station key.' };
  }
  if (row.enabled !== 1) return { refused: 'This station is disabled.' };
  return { station: { ...letIn, uuid: row.uuid, name: row.name, tool_id: row.tool_id } };
}

/**
 * What a request let in a while ago would be refused now (stationNow's 401 detail), or null
 * while its station still lets it in: for work that outlasts the request's start (a held
 * pull, an upload's body), to be asked where nothing awaits between it and what it allows.
 */
export function refusalNow(db: Db, request: FastifyRequest): () => string | null {
  return refusalFor(db, request.station!, request.headers.authorization);
}

/** refusalNow for the station let in and the Authorization header it came with. */
export function refusalFor(
  db: Db,
  letIn: StationAccount,
  authorization: string | undefined,
): () => string | null {
  return () => {
    const now = stationAsNow(db, letIn, authorization);
    return 'refused' in now ? now.refused : null;
  };
}

interface Caller {
  install: string;
  host: string;
  /** The data dir's id on its machine before (PREVIOUS_HEADER); null when it names none. */
  previous: string | null;
}

function oneHeader(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Who calls, from the headers every Labstation sends (sync/identity.ts); install null for a
 * caller that sends none (a script with the key), which is let in without a hold on the key.
 */
function callerOf(request: FastifyRequest): Caller | { install: null } | { problem: string } {
  const install = oneHeader(request, INSTALL_HEADER);
  if (install === undefined) return { install: null };
  if (!UUID_PATTERN.test(install)) return { problem: `${INSTALL_HEADER}: must be a UUID` };
  const previous = oneHeader(request, PREVIOUS_HEADER) ?? null;
  if (previous !== null && !UUID_PATTERN.test(previous)) {
    return { problem: `${PREVIOUS_HEADER}: must be a UUID` };
  }
  let host = '';
  try {
    host = decodeURIComponent(oneHeader(request, HOST_HEADER) ?? '');
  } catch {
    return { problem: `${HOST_HEADER}: must be URI-encoded` };
  }
  if (host.length > 255) return { problem: `${HOST_HEADER}: must be at most 255 characters` };
  return { install: install.toLowerCase(), host, previous: previous?.toLowerCase() ?? null };
}

/**
 * The requests each data dir has under way. A holder waiting on its pull (held up to 30 s) is
 * in use though its last request began a while ago: it is not silent while one is open.
 */
class OpenRequests {
  private readonly counts = new Map<string, number>();

  track(install: string, reply: FastifyReply): void {
    this.counts.set(install, (this.counts.get(install) ?? 0) + 1);
    reply.raw.once('close', () => {
      const left = (this.counts.get(install) ?? 1) - 1;
      if (left > 0) this.counts.set(install, left);
      else this.counts.delete(install);
    });
  }

  has(install: string): boolean {
    return this.counts.has(install);
  }
}

/**
 * Notes the call on the station (last_seen_at) and, for a Labstation that names itself, holds
 * the key to it: taken when no one holds it, the holder has been silent for the takeover time
 * with no request open, or the caller is the holder or names it as its id before. Returns why
 * another is refused, or null.
 */
function keyHolder(
  deps: StationAuthDeps,
  open: OpenRequests,
): (stationId: number, caller: Caller | null) => string | null {
  const { db } = deps;
  const clock = deps.clock ?? Date.now;
  const takeoverMs = deps.takeoverMs ?? TAKEOVER_MS;
  const read = db.prepare(
    'SELECT install_id, install_host, install_seen_at FROM stations WHERE id = ?',
  );
  const seen = db.prepare('UPDATE stations SET last_seen_at = ? WHERE id = ?');
  // Another data dir taking the key starts with no outbox id acknowledged, unless it is the
  // one before on a new machine (sync/restored.ts: its outbox is that one's).
  const hold = db.prepare(
    `UPDATE stations SET last_seen_at = @at, install_host = @host, install_seen_at = @at,
       install_acked_through = iif(install_id IS @install OR install_id IS @previous,
         install_acked_through, NULL),
       install_ack_seq = iif(install_id IS @install OR install_id IS @previous,
         install_ack_seq, NULL),
       install_id = @install
     WHERE id = @id`,
  );
  const take = db.transaction((stationId: number, caller: Caller | null): string | null => {
    const now = clock();
    const at = new Date(now).toISOString();
    if (caller === null) {
      seen.run(at, stationId);
      return null;
    }
    const held = read.get(stationId) as {
      install_id: string | null;
      install_host: string | null;
      install_seen_at: string | null;
    };
    // The data dir decides, not the host name, which may change under a running station (a
    // laptop on another network). A data dir found on another machine than it was made on
    // makes itself a new id there, naming the one before (sync/identity.ts): restored onto a
    // new PC, or its PC renamed, it takes the key from that one at once. (A PC image cloned
    // with the data dir does the same: the clone then holds the key, and the one it was
    // cloned from is refused, so that the two are still found out.)
    const holder = held.install_id !== null && held.install_seen_at !== null;
    const successor = caller.previous !== null && caller.previous === held.install_id;
    if (holder && held.install_id !== caller.install && !successor) {
      const busy = open.has(held.install_id as string);
      const silentMs = busy ? 0 : now - Date.parse(held.install_seen_at as string);
      if (busy || silentMs < takeoverMs) {
        return (
          `This station key is in use by another Labstation (host ${JSON.stringify(held.install_host)}, ` +
          `data dir ${held.install_id}), last seen ${Math.max(0, Math.round(silentMs / 1000))} s ` +
          'ago. A key serves one station: give each station its own (an admin makes one on the ' +
          "server's Stations page; a new key also frees this one). If that Labstation is gone " +
          `for good, this one takes the key over once it has been silent for ` +
          `${Math.round(takeoverMs / 1000)} s.`
        );
      }
      deps.log.warn(
        {
          stationId,
          from: { install: held.install_id, host: held.install_host },
          to: caller,
        },
        'station key taken over by another Labstation (the one before was silent)',
      );
    }
    hold.run({
      at,
      host: caller.host,
      install: caller.install,
      previous: caller.previous,
      id: stationId,
    });
    return null;
  });
  return (stationId, caller) => take.immediate(stationId, caller);
}
