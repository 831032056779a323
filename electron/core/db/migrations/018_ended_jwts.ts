import type { Migration } from '../migrations.js';

export const migration018: Migration = {
  version: 18,
  name: 'a JWT logged out of no longer authenticates',
  sql: `
      -- Server side: POST /auth/jwt/logout ends the JWT it is called with (server/app.ts), by
      -- the SHA-256 of the token (any token, those made before this version too), until the
      -- time it would have expired anyway (expires_at, Unix seconds); rows past that are of
      -- no use and are deleted at the next logout.
      CREATE TABLE ended_jwts (
        token_hash TEXT PRIMARY KEY,
        expires_at INTEGER NOT NULL
      ) STRICT, WITHOUT ROWID;
    `,
};
