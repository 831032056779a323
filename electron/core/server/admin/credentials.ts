/**
 * Admin management of the server's secrets: API tokens (for NEMO-compatible API clients) and
 * stations (service accounts whose key a station syncs with). A token or key is returned once,
 * when made; only its SHA-256 is stored, so a lost one is replaced, never shown again.
 */
import type { AdminStation, AdminToken } from '../../../../shared/adminApi.js';
import type { Db } from '../../db/open.js';
import { AppError, fieldError } from '../../util/errors.js';
import { createStationAccount } from '../accounts.js';
import { changedElsewhere } from './facilitySaves.js';
import { createApiToken } from '../auth.js';
import { dropUploadsOfRefused } from '../uploads/refused.js';
import { randomSecret, sha256 } from '../secrets.js';

const TOKEN_SELECT = `
  SELECT t.id, t.user_id, u.email AS user_email, u.username AS user_username, t.name, t.prefix,
    t.created_at, t.last_used_at
  FROM api_tokens t JOIN users u ON u.id = t.user_id`;

export function listTokens(db: Db): { tokens: AdminToken[] } {
  return { tokens: db.prepare(`${TOKEN_SELECT} ORDER BY t.id DESC`).all() as AdminToken[] };
}

export function createToken(
  db: Db,
  input: { user: number; name: string },
): { token: string; info: AdminToken } {
  const user = db
    .prepare('SELECT id, username, is_active FROM users WHERE id = ?')
    .get(input.user) as { id: number; username: string; is_active: number } | undefined;
  if (!user) throw fieldError('user', `no person with id ${input.user}`, 'not_found');
  if (user.is_active !== 1) {
    // By name: the CLI's `--user` gives an e-mail, and no one knows the id.
    throw fieldError('user', `${user.username} is deactivated; a token for them would not work`);
  }
  const { id, token } = createApiToken(db, user.id, input.name);
  return { token, info: db.prepare(`${TOKEN_SELECT} WHERE t.id = ?`).get(id) as AdminToken };
}

export function revokeToken(db: Db, id: number): { ok: true } {
  const gone = db.prepare('DELETE FROM api_tokens WHERE id = ?').run(id).changes;
  if (gone === 0) throw new AppError('not_found', `id: no API token with id ${id}`);
  return { ok: true };
}

const STATION_SELECT = `
  SELECT s.id, s.uuid, s.name, s.description, s.tool_id, t.name AS tool_name, s.enabled,
    s.created_at, s.last_seen_at, s.install_host AS host
  FROM stations s LEFT JOIN tools t ON t.id = s.tool_id`;

function stationById(db: Db, id: number): AdminStation {
  const row = db.prepare(`${STATION_SELECT} WHERE s.id = ?`).get(id) as
    (Omit<AdminStation, 'enabled'> & { enabled: number }) | undefined;
  if (!row) throw new AppError('not_found', `id: no station with id ${id}`);
  return { ...row, enabled: row.enabled === 1 };
}

export function listStations(db: Db): { stations: AdminStation[] } {
  const rows = db.prepare(`${STATION_SELECT} ORDER BY s.name`).all() as (Omit<
    AdminStation,
    'enabled'
  > & { enabled: number })[];
  return { stations: rows.map((row) => ({ ...row, enabled: row.enabled === 1 })) };
}

export function createStation(
  db: Db,
  input: { name: string; description: string; tool: number | null },
): { key: string; station: AdminStation } {
  const { id, key } = createStationAccount(db, input);
  return { key, station: stationById(db, id) };
}

export function updateStation(
  db: Db,
  input: {
    id: number;
    name: string;
    description: string;
    tool: number | null;
    enabled: boolean;
    loaded?:
      { name: string; description: string; tool_id: number | null; enabled: boolean } | undefined;
  },
): { station: AdminStation } {
  db.transaction(() => {
    const current = stationById(db, input.id);
    // Changed by another admin since this editor loaded it (here, or as a service account):
    // saved, it would put back what they changed, a station turned off on again among it.
    const { loaded } = input;
    if (
      loaded !== undefined &&
      (loaded.name !== current.name ||
        loaded.description !== current.description ||
        loaded.tool_id !== current.tool_id ||
        loaded.enabled !== current.enabled)
    ) {
      throw changedElsewhere(`station ${current.name}`);
    }
    if (db.prepare('SELECT 1 FROM stations WHERE name = ? AND id <> ?').get(input.name, input.id)) {
      throw fieldError('name', `a station named ${JSON.stringify(input.name)} exists`, 'conflict');
    }
    if (input.tool !== null && !db.prepare('SELECT 1 FROM tools WHERE id = ?').get(input.tool)) {
      throw fieldError('tool', `no tool with id ${input.tool}`, 'not_found');
    }
    // A station runs one tool, and its instruments are on it (harvest/instrumentChecks.ts):
    // another tool here would leave them harvested by nobody while the instruments page still
    // shows them on this station. Checked only when the tool changes: a station left so by an older
    // version can still be renamed or turned off.
    const others =
      input.tool === current.tool_id
        ? []
        : (db
            .prepare(
              `SELECT i.name, t.name AS tool FROM instruments i JOIN tools t ON t.id = i.tool_id
               WHERE i.station_id = ? AND i.tool_id IS NOT ? ORDER BY i.name`,
            )
            .all(input.id, input.tool) as { name: string; tool: string }[]);
    if (others.length) {
      const named = others.map((i) => `${i.name} (tool ${i.tool})`).join(', ');
      throw fieldError(
        'tool',
        `this station runs instrument${others.length === 1 ? '' : 's'} ${named}; ` +
          `give ${others.length === 1 ? 'it' : 'them'} to another station or tool under Instruments first`,
        'conflict',
      );
    }
    // The sync trigger on stations logs a change of name, tool or enabled: the station pulls it.
    db.prepare(
      'UPDATE stations SET name = ?, description = ?, tool_id = ?, enabled = ? WHERE id = ?',
    ).run(input.name, input.description, input.tool, input.enabled ? 1 : 0, input.id);
    if (!input.enabled) dropUploadsOfRefused(db, input.id);
  }).immediate();
  return { station: stationById(db, input.id) };
}

/** A new key for a station; the old one stops working at once. */
export function newStationKey(db: Db, id: number): { key: string; station: AdminStation } {
  stationById(db, id);
  const key = randomSecret(32);
  // The Labstation that held the old key holds nothing now: the next to use the new key does.
  // Which data dir it was stays (install_id), with what the server took from it, for when the
  // same one comes back with the new key (sync/restored.ts).
  db.transaction(() => {
    db.prepare(
      'UPDATE stations SET key_hash = ?, install_host = NULL, install_seen_at = NULL WHERE id = ?',
    ).run(sha256(key), id);
    // Not resumed with the new key: why in uploads/refused.ts.
    dropUploadsOfRefused(db, id);
  }).immediate();
  return { key, station: stationById(db, id) };
}
