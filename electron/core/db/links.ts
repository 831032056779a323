/**
 * The link tables between people, projects and tools (user_projects, qualifications), as the
 * admin pages and a bundle's import write them.
 */
import type { Db } from './open.js';

/**
 * Replaces the set of `other` ids linked to `owner` in a link table; returns the other ids
 * whose link was made or removed.
 */
export function replaceLinks(
  db: Db,
  table: 'user_projects' | 'qualifications',
  ownerColumn: string,
  otherColumn: string,
  owner: number,
  others: number[],
): number[] {
  const changed: number[] = [];
  const wanted = new Set(others);
  const current = new Set(
    db
      .prepare(`SELECT ${otherColumn} FROM ${table} WHERE ${ownerColumn} = ?`)
      .pluck()
      .all(owner) as number[],
  );
  // Only the differences are written, so an unchanged save logs no sync change.
  for (const id of current) {
    if (!wanted.has(id)) {
      db.prepare(`DELETE FROM ${table} WHERE ${ownerColumn} = ? AND ${otherColumn} = ?`).run(
        owner,
        id,
      );
      changed.push(id);
    }
  }
  for (const id of wanted) {
    if (!current.has(id)) {
      db.prepare(`INSERT INTO ${table} (${ownerColumn}, ${otherColumn}) VALUES (?, ?)`).run(
        owner,
        id,
      );
      changed.push(id);
    }
  }
  return changed;
}

/**
 * A record whose links another write changed counts as changed: an admin's editor opened on it
 * before is stale (server/admin/facilitySaves.ts unchangedSince).
 */
export function touch(db: Db, table: 'users' | 'tools', ids: number[], now: string): void {
  const stamp = db.prepare(`UPDATE ${table} SET updated_at = ? WHERE id = ?`);
  for (const id of ids) stamp.run(now, id);
}
