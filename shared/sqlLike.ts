/**
 * SQL LIKE patterns, for SQLite's `LIKE ? ESCAPE '\'`. No imports: the harvest's records load
 * it, and the harvest's start is kept light.
 */

/** `%text%`: the text anywhere, its own %, _ and \ taken literally. */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** `text%`: what starts with the text, its own %, _ and \ taken literally. */
export function likePrefix(text: string): string {
  return `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
