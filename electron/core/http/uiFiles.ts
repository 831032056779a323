/**
 * Which files of the built renderer (dist/renderer) the station's and the server's listeners
 * hand out. The build also holds the page of `npm run bench:forms` (bench.html and its script,
 * served by the bench itself) and a source map per script; neither is part of the app.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { UI_CSP_HEADER } from './securityHeaders.js';

/**
 * The bench page and its entry script (`assets/bench-<hash>.js`, and its map), in any letter
 * case: on a case-insensitive file system (macOS, Windows) /BENCH.HTML reads bench.html. 'u'
 * folds as Unicode does ('ſ' is 's'), not only ASCII.
 */
const BENCH_FILE = /^\/(?:bench\.html|assets\/bench-[^/]*)$/iu;

/** Whether `pathName` ('/' and a path from the build's root) is the bench page or its script. */
export function isBenchFile(pathName: string): boolean {
  return BENCH_FILE.test(pathName);
}

/**
 * Whether `name` (one segment of a path, decoded) may name a file of the build, in the same
 * spelling on every file system: not empty, '.' or '..'; no slash or backslash, NUL, or ':' (a
 * Windows drive or stream: `bench.html::$DATA` is bench.html); not ending with '.' or ' ', which
 * Windows drops (`bench.html.` and `bench.html ` open bench.html). No file of the build is
 * named so. The app scheme (desktop/appScheme.ts) and the listeners (uiFileFilter) both refuse
 * such a path, before the bench page's name is looked at.
 */
export function isPlainName(name: string): boolean {
  return name !== '' && !/[/\\:\0]/.test(name) && !/[. ]$/.test(name);
}

/**
 * The names of `path` (a path from the build's root, still percent-encoded, without its leading
 * '/' and its query), each decoded apart, or null when one is no plain name (isPlainName) or
 * is not well encoded: '%2f' is part of a name, never a separator, and '%2e%2e' is '..'. The
 * listeners and the app scheme (desktop/appScheme.ts) read a path so.
 */
export function plainSegments(path: string): string[] | null {
  const names: string[] = [];
  for (const raw of path.split('/')) {
    let name: string;
    try {
      name = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (!isPlainName(name)) return null;
    names.push(name);
  }
  return names;
}

/**
 * A request's path (percent-encoded, query and all) as the decoded path of a file or folder of
 * the build ('/' and plain names; a trailing '/' asks for a folder's index), or null when it
 * names none.
 */
function plainPathOf(url: string): string | null {
  const path = url.split('?', 1)[0];
  if (!path.startsWith('/')) return null;
  const inner = path.slice(1);
  if (inner === '') return '/';
  const folder = inner.endsWith('/');
  const names = plainSegments(folder ? inner.slice(0, -1) : inner);
  return names === null ? null : `/${names.join('/')}${folder ? '/' : ''}`;
}

/**
 * Whether `pathName` ('/' and a path from the build's root, decoded) names a file or folder of
 * the build with plain names only (isPlainName); a trailing '/' asks for a folder's index.
 */
function isPlainPath(pathName: string): boolean {
  const names = pathName.split('/').slice(1);
  if (names[names.length - 1] === '') names.pop();
  return names.every(isPlainName);
}

export interface UiFileOptions {
  /**
   * Whether `.map` files are served: yes on a station (loopback only, for the developer tools
   * of the desktop window), no on the facility server, which need not show its sources.
   */
  sourceMaps: boolean;
}

/**
 * An `allowedPath` for @fastify/static: true when `pathName` (decoded) may be served. The file
 * sender refuses another spelling of a file on its own (403), where it can tell one; a name
 * that is not plain is refused here first, as the app scheme refuses it, with the 404 of any
 * unknown path.
 */
export function uiFileFilter(options: UiFileOptions): (pathName: string) => boolean {
  return (pathName) => {
    if (!isPlainPath(pathName) || isBenchFile(pathName)) return false;
    return options.sourceMaps || !pathName.endsWith('.map');
  };
}

/**
 * Whether serveUiFiles serves a file at `path` (a request's path, still percent-encoded): a
 * file of `root` that uiFileFilter allows, or a folder's index.html for a path ending in '/'.
 * The listeners' 405 for other methods (allowedMethods.ts) asks it: `OPTIONS /` is 405 with
 * `Allow: GET, HEAD`, as for every other path there is, not 404.
 */
export function uiFileServed(root: string, options: UiFileOptions): (path: string) => boolean {
  const allowed = uiFileFilter(options);
  return (path) => {
    const name = plainPathOf(path);
    if (name === null || !allowed(name)) return false;
    try {
      return statSync(join(root, name.endsWith('/') ? `${name}index.html` : name)).isFile();
    } catch {
      return false;
    }
  };
}

/**
 * Serves the built renderer in `root` on `app`, as uiFileFilter allows. A path that names no
 * file of the build by plain names (plainPathOf: an empty segment, "/api//usage_events/", a
 * mistyped address; '%2e', '%2f' or a NUL in a name) is the 404 of any other unknown path (the
 * app's not-found handler): the file sender would answer some of them 403, as a spelling it
 * cannot vouch for, and a GET of '/assets%2fapp.css' went on to a 405 that allowed GET.
 */
export async function serveUiFiles(
  app: FastifyInstance,
  root: string,
  options: UiFileOptions,
): Promise<void> {
  await app.register(async (files) => {
    files.addHook('onRequest', (request, reply, done) => {
      if (plainPathOf(request.url) === null) return void reply.callNotFound();
      done();
    });
    await files.register(fastifyStatic, {
      root,
      index: 'index.html',
      allowedPath: uiFileFilter(options),
      // The page's policy as a header too: only a header can refuse other sites' frames.
      setHeaders: (reply) => void reply.header('content-security-policy', UI_CSP_HEADER),
    });
  });
}
