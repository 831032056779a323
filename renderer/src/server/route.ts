/** The server UI's routes live in the URL fragment: `#/pending/<usage uuid>` or the home page. */
export type ServerRoute = { page: 'home' } | { page: 'pending'; usage: string };

export function parseRoute(hash: string): ServerRoute {
  const match = /^#\/pending\/([^/?#]+)$/.exec(hash);
  if (match?.[1]) return { page: 'pending', usage: decodeURIComponent(match[1]) };
  return { page: 'home' };
}
