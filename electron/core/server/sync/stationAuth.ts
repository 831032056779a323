/**
 * How the routes that stations call (sync, uploads) know which station calls:
 * `Authorization: Station <key>`, the key checked against stations.key_hash.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/open.js';
import { nowIso } from '../../util/ids.js';
import type { Logger } from '../../util/log.js';
import { FailureLimiter } from '../rateLimit.js';
import { sha256 } from '../secrets.js';
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

/** The onRequest hook (before the body is read) that sets request.station, or answers 401 (429 after too many wrong keys). */
export function stationAuth(app: FastifyInstance, deps: { db: Db; log: Logger }): StationAuth {
  const known = perApp.get(app);
  if (known) return known;
  const { db, log } = deps;
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
    db.prepare('UPDATE stations SET last_seen_at = ? WHERE id = ?').run(nowIso(), station.id);
    request.station = {
      id: station.id,
      uuid: station.uuid,
      name: station.name,
      tool_id: station.tool_id,
    };
  };
  perApp.set(app, authenticate);
  return authenticate;
}
