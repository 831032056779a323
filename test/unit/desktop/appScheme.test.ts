import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APP_INDEX_URL,
  APP_SCHEME_PRIVILEGES,
  appContentType,
  appPathSegments,
  isServedBuildFile,
  serveAppRequest,
} from '../../../electron/core/desktop/appScheme.js';
import { UI_CSP_HEADER, UI_PAGE_CSP } from '../../../electron/core/http/securityHeaders.js';

const SECRET = 'the secret outside the build';

describe('the app:// scheme of the desktop window', () => {
  let base = '';
  let root = '';

  beforeAll(() => {
    // base/secret.txt and base/outside/ are beside the build (base/renderer), never in it.
    base = mkdtempSync(join(tmpdir(), 'app-scheme-'));
    root = join(base, 'renderer');
    mkdirSync(join(root, 'assets', 'fonts'), { recursive: true });
    mkdirSync(join(base, 'outside'));
    writeFileSync(join(base, 'secret.txt'), SECRET);
    writeFileSync(join(base, 'outside', 'secret.js'), SECRET);
    writeFileSync(join(root, 'index.html'), '<!doctype html><title>Labstation</title>');
    writeFileSync(join(root, 'bench.html'), '<!doctype html><title>bench</title>');
    const files: Record<string, string> = {
      'assets/index-abc.js': 'export {};',
      'assets/index-abc.js.map': '{"version":3}',
      'assets/bench-abc.js': 'export {};',
      'assets/index-abc.css': 'body{}',
      'assets/logo.svg': '<svg xmlns="http://www.w3.org/2000/svg"/>',
      'assets/logo.png': 'png',
      'assets/favicon.ico': 'ico',
      'assets/fonts/inter.woff2': 'woff2',
      'assets/data.json': '{}',
      'assets/blob.bin': 'bytes',
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
    // Links: one out of the build (a file, and a folder), one within it.
    symlinkSync(join(base, 'secret.txt'), join(root, 'assets', 'link-out.txt'));
    symlinkSync(join(base, 'outside'), join(root, 'assets', 'dir-out'));
    symlinkSync(join(root, 'assets', 'data.json'), join(root, 'assets', 'link-in.json'));
    // Links to the bench page and its script, standing in for what a case-insensitive file
    // system (BENCH.HTML) or Windows (a trailing dot or space dropped) opens under other names.
    symlinkSync(join(root, 'bench.html'), join(root, 'BENCH.HTML'));
    symlinkSync(join(root, 'bench.html'), join(root, 'bench.html.'));
    symlinkSync(join(root, 'bench.html'), join(root, 'bench.html '));
    symlinkSync(join(root, 'bench.html'), join(root, 'assets', 'page.html'));
    symlinkSync(join(root, 'assets', 'bench-abc.js'), join(root, 'assets', 'Bench-ABC.js'));
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const get = (url: string, method = 'GET'): Promise<Response> =>
    serveAppRequest({ url, method }, root);

  it('serves the page and its assets with their Content-Type, the CSP and nosniff', async () => {
    const page = await get(APP_INDEX_URL);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(UI_CSP_HEADER);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await page.text()).toBe('<!doctype html><title>Labstation</title>');

    const types: Record<string, string> = {
      'assets/index-abc.js': 'text/javascript; charset=utf-8',
      'assets/index-abc.js.map': 'application/json; charset=utf-8',
      'assets/index-abc.css': 'text/css; charset=utf-8',
      'assets/logo.svg': 'image/svg+xml',
      'assets/logo.png': 'image/png',
      'assets/favicon.ico': 'image/x-icon',
      'assets/fonts/inter.woff2': 'font/woff2',
      'assets/data.json': 'application/json; charset=utf-8',
      'assets/blob.bin': 'application/octet-stream',
    };
    for (const [name, type] of Object.entries(types)) {
      const response = await get(`app://labstation/${name}`);
      expect(response.status, name).toBe(200);
      expect(response.headers.get('content-type'), name).toBe(type);
      expect(response.headers.get('content-security-policy'), name).toBe(UI_CSP_HEADER);
      expect(response.headers.get('x-content-type-options'), name).toBe('nosniff');
      expect(Buffer.from(await response.arrayBuffer())).toEqual(readFileSync(join(root, name)));
    }
    expect(appContentType('A.JS')).toBe('text/javascript; charset=utf-8');
  });

  it('takes a real Request, ignores the query and fragment, and follows links within the build', async () => {
    const response = await serveAppRequest(
      new Request('app://labstation/assets/index-abc.js?v=1#top'),
      root,
    );
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('export {};');
    const linked = await get('app://labstation/assets/link-in.json');
    expect(linked.status).toBe(200);
    expect(linked.headers.get('content-type')).toBe('application/json; charset=utf-8');
    // Percent-encoded ordinary characters are only a spelling.
    expect((await get('app://labstation/%61ssets/index-abc.css')).status).toBe(200);
  });

  it('answers HEAD with the headers and no body', async () => {
    const response = await get('app://labstation/assets/index-abc.css', 'HEAD');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(response.headers.get('content-length')).toBe(String('body{}'.length));
    expect(response.body).toBeNull();
  });

  it('refuses every method but GET and HEAD (405)', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const response = await get(APP_INDEX_URL, method);
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, HEAD');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('answers 404 for what is missing, a folder, the bench page, another host', async () => {
    for (const url of [
      'app://labstation/missing.js',
      'app://labstation/assets/missing.css',
      'app://labstation/',
      'app://labstation',
      'app://labstation/assets',
      'app://labstation/assets/',
      'app://labstation/bench.html',
      'app://labstation/assets/bench-abc.js',
      'app://other/index.html',
      'app://labstation.evil/index.html',
      'app://labstation:8080/index.html',
      'app://user@labstation/index.html',
      'app://evil@labstation/index.html',
      'file:///etc/passwd',
      `file://${join(root, 'index.html')}`,
      'http://labstation/index.html',
    ]) {
      const response = await get(url);
      expect(response.status, url).toBe(404);
      expect(response.headers.get('content-security-policy'), url).toBe(UI_CSP_HEADER);
      expect(response.headers.get('x-content-type-options'), url).toBe('nosniff');
    }
  });

  it('never serves the bench page under another spelling or name (404)', async () => {
    for (const url of [
      'app://labstation/BENCH.HTML',
      'app://labstation/bench.html.',
      'app://labstation/bench.html%20',
      'app://labstation/assets/page.html',
      'app://labstation/assets/Bench-ABC.js',
      'app://labstation/ASSETS/BENCH-abc.js',
    ]) {
      const response = await get(url);
      expect(response.status, url).toBe(404);
      expect(await response.text(), url).not.toContain('bench');
    }
    // Windows drops a trailing dot or space of any name: such a segment is refused outright.
    for (const url of [
      'app://labstation/index.html.',
      'app://labstation/index.html%20',
      'app://labstation/index.html. . ',
      'app://labstation/assets./index-abc.js',
      'app://labstation/assets%20/index-abc.js',
    ]) {
      expect(appPathSegments(url), url).toBeNull();
    }
    expect(appPathSegments('app://labstation/assets/a.b%20c.js')).toEqual(['assets', 'a.b c.js']);
    // The decision on the real path (relative to the real root) ignores letter case: on macOS
    // or Windows the file system may give back the URL's spelling, not the name on disk.
    for (const inside of [
      'bench.html',
      'BENCH.HTML',
      'Bench.Html',
      'assets/bench-abc.js',
      'Assets/BENCH-abc.js.map',
      'ASSETS\\Bench-abc.js',
      'a\u017Fsets/bench-abc.js',
    ]) {
      expect(isServedBuildFile(inside), inside).toBe(false);
    }
    for (const inside of [
      'index.html',
      'assets/index-abc.js',
      'assets\\logo.svg',
      'benches.html',
    ]) {
      expect(isServedBuildFile(inside), inside).toBe(true);
    }
  });

  it('refuses every path that would leave the build folder (404, never the file)', async () => {
    const escapes = [
      // '..' plainly, percent-encoded (either case, one dot or both), and '.'
      'app://labstation/../secret.txt',
      'app://labstation/assets/../../secret.txt',
      'app://labstation/%2e%2e/secret.txt',
      'app://labstation/%2E%2E/secret.txt',
      'app://labstation/.%2e/secret.txt',
      'app://labstation/%2e./secret.txt',
      'app://labstation/./index.html',
      'app://labstation/%2e/index.html',
      // an encoded slash or backslash, a plain backslash
      'app://labstation/..%2fsecret.txt',
      'app://labstation/..%2Fsecret.txt',
      'app://labstation/..%5csecret.txt',
      'app://labstation/..%5Csecret.txt',
      'app://labstation/..\\secret.txt',
      'app://labstation/assets%2f..%2f..%2fsecret.txt',
      // an absolute path, on POSIX and Windows
      `app://labstation/${encodeURIComponent(join(base, 'secret.txt'))}`,
      `app://labstation/${join(base, 'secret.txt')}`,
      `app://labstation//${join(base, 'secret.txt')}`,
      'app://labstation//etc/passwd',
      'app://labstation/C:/Windows/win.ini',
      'app://labstation/C%3A%5CWindows%5Cwin.ini',
      'app://labstation/index.html::$DATA',
      // NUL, and a bad escape
      'app://labstation/index.html%00.png',
      'app://labstation/index.html\0.png',
      'app://labstation/%E0%A4%A',
      'app://labstation/%',
      // links pointing out of the build: to a file, through a folder
      'app://labstation/assets/link-out.txt',
      'app://labstation/assets/dir-out/secret.js',
    ];
    for (const url of escapes) {
      const response = await get(url);
      expect(response.status, url).toBe(404);
      expect(await response.text(), url).not.toContain(SECRET);
    }
    expect(appPathSegments('app://labstation/assets/index-abc.js')).toEqual([
      'assets',
      'index-abc.js',
    ]);
    expect(appPathSegments('app://labstation/%2e%2e/secret.txt')).toBeNull();
    expect(appPathSegments('app://labstation/a%2fb')).toBeNull();
  });

  it('gives the scheme the privileges the page needs, not bypassCSP nor CORS', () => {
    expect(APP_SCHEME_PRIVILEGES).toEqual({ standard: true, secure: true, supportFetchAPI: true });
  });

  it("sends the page's meta-tag CSP, with frame-ancestors added, as its header", () => {
    const html = readFileSync(join(import.meta.dirname, '../../../renderer/index.html'), 'utf8');
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]*)"/.exec(html);
    expect(meta?.[1]).toBe(UI_PAGE_CSP);
    expect(UI_CSP_HEADER).toBe(`${UI_PAGE_CSP}; frame-ancestors 'none'`);
  });
});
