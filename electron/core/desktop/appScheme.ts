/**
 * The desktop station window's own scheme: its page is app://labstation/index.html, served from
 * the built renderer (dist/renderer) by serveAppRequest, never from file:// (Electron's
 * security checklist: under file:// the CSP's 'self' would be every local file, and file://
 * pages get privileges a web page has not). The shell (electron/main.ts) registers the scheme
 * before the app is ready and hands every request of the window's session to serveAppRequest.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, sep } from 'node:path';
import { SECURITY_HEADERS, UI_CSP_HEADER } from '../http/securityHeaders.js';
import { isBenchFile, plainSegments, uiFileFilter } from '../http/uiFiles.js';

export const APP_SCHEME = 'app';
export const APP_HOST = 'labstation';
/** What every URL of the window starts with (Chromium lowercases a standard scheme's host). */
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_INDEX_URL = `${APP_ORIGIN}/index.html`;

/** Electron's CustomScheme privileges, the part we set (core has no electron import). */
export interface AppSchemePrivileges {
  standard: true;
  secure: true;
  supportFetchAPI: true;
}

/**
 * standard: a real origin (app://labstation), so relative asset URLs resolve, 'self' means
 * that origin, and web storage works (the UI keeps its choices in localStorage). secure: a
 * secure context, as file:// and https are. supportFetchAPI: the page may fetch its own files
 * (the Electron UI talks to the core over IPC, but a fetch of its own asset must not fail only
 * in the desktop app). Nothing more: no bypassCSP (the CSP holds), no corsEnabled (no other
 * origin may read these files), no service workers, no stream, no code cache.
 */
export const APP_SCHEME_PRIVILEGES: AppSchemePrivileges = {
  standard: true,
  secure: true,
  supportFetchAPI: true,
};

const UTF8 = '; charset=utf-8';
const CONTENT_TYPES: Record<string, string> = {
  '.html': `text/html${UTF8}`,
  '.js': `text/javascript${UTF8}`,
  '.mjs': `text/javascript${UTF8}`,
  '.css': `text/css${UTF8}`,
  '.json': `application/json${UTF8}`,
  '.map': `application/json${UTF8}`,
  '.txt': `text/plain${UTF8}`,
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.wasm': 'application/wasm',
};

/** The Content-Type a file of the build is sent with; unknown kinds as bytes (and nosniff). */
export function appContentType(fileName: string): string {
  return CONTENT_TYPES[extname(fileName).toLowerCase()] ?? 'application/octet-stream';
}

const BASE_HEADERS = { ...SECURITY_HEADERS, 'content-security-policy': UI_CSP_HEADER };
/** The station serves its source maps on loopback too (developer tools); not the bench page. */
const servable = uiFileFilter({ sourceMaps: true });

function plain(status: number, text: string, extra: Record<string, string> = {}): Response {
  return new Response(`${text}\n`, {
    status,
    headers: { ...BASE_HEADERS, 'content-type': `text/plain${UTF8}`, ...extra },
  });
}

/**
 * The path segments of `url` below APP_ORIGIN, decoded, or null when the URL names no file of
 * the build: another scheme, host, port or user; bad encoding; a segment that is not a plain
 * name (isPlainName, the listeners' rule too): empty ('//', a trailing '/', an absolute path),
 * '.' or '..' spelled plainly or percent-encoded, one holding a slash or backslash (encoded or
 * not), a NUL or a ':' (a Windows drive or stream), one ending with '.' or ' ' (Windows drops
 * those, so `bench.html.` and `bench.html%20` would open bench.html). Chromium hands over
 * canonical URLs already; the raw string is checked anyway.
 */
export function appPathSegments(url: string): string[] | null {
  const prefix = `${APP_ORIGIN}/`;
  if (!url.startsWith(prefix)) return null;
  return plainSegments(url.slice(prefix.length).split(/[?#]/, 1)[0]);
}

/**
 * Whether the file at `inside`, its real path relative to the build's real root ('/' or '\\'
 * between names), is served: every file but the bench page, whatever the letter case. The real
 * path is the name the file system found, so this holds where the URL's spelling is another
 * (a case-insensitive file system, a Windows short name, a link).
 */
export function isServedBuildFile(inside: string): boolean {
  return !isBenchFile(`/${inside.split(/[/\\]/).join('/')}`);
}

/**
 * `path` resolved through every link, when it is a file inside `root` (also resolved): its real
 * path and that path relative to the real root.
 */
async function fileInside(
  root: string,
  path: string,
): Promise<{ real: string; inside: string } | null> {
  try {
    const [realRoot, real] = await Promise.all([realpath(root), realpath(path)]);
    const inside = relative(realRoot, real);
    if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
      return null;
    }
    return (await stat(real)).isFile() ? { real, inside } : null;
  } catch {
    return null;
  }
}

/**
 * The answer to one request of the window for `request.url`, from the built renderer in
 * `root`: the file's bytes with its Content-Type (no body for HEAD), 404 for anything that is
 * not a file of the build (missing, a folder, a path that leaves `root` by '..', encoding or a
 * link, another host) and for the bench page however the URL spells it, 405 for a method other
 * than GET and HEAD. Every answer carries the page's CSP and nosniff.
 */
export async function serveAppRequest(
  request: Pick<Request, 'url' | 'method'>,
  root: string,
): Promise<Response> {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return plain(405, 'Method not allowed', { allow: 'GET, HEAD' });
  }
  const segments = appPathSegments(request.url);
  if (segments === null || !servable(`/${segments.join('/')}`)) return plain(404, 'Not found');
  const file = await fileInside(root, join(root, ...segments));
  // Decided again on the real path: the URL may spell the bench page another way.
  if (file === null || !isServedBuildFile(file.inside)) return plain(404, 'Not found');
  // Buffer<ArrayBuffer> (what readFile gives), not Buffer: a Response body for the DOM types
  // too (the e2e specs type-check this file with them).
  let bytes: Buffer<ArrayBuffer>;
  try {
    bytes = await readFile(file.real);
  } catch {
    return plain(404, 'Not found');
  }
  return new Response(request.method === 'HEAD' ? null : bytes, {
    status: 200,
    headers: {
      ...BASE_HEADERS,
      'content-type': appContentType(segments[segments.length - 1]),
      'content-length': String(bytes.length),
      'cache-control': 'no-cache',
    },
  });
}
