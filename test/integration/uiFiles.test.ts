/**
 * The built renderer as the station's and the server's listeners serve it (http/uiFiles.ts),
 * over real HTTP. Links stand for the names a Windows or macOS file system opens the bench page
 * under (another letter case, a trailing dot or space, a stream): Linux opens them too, so the
 * listener's answer to each can be checked here.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveUiFiles } from '../../electron/core/http/uiFiles.js';

const BENCH = '<!doctype html><title>bench</title>';

let root = '';
let app: FastifyInstance;
let port = 0;

/** GET `path` sent as written (fetch would normalize it): status and body. */
function get(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ui-files-'));
  mkdirSync(join(root, 'assets'));
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>Labstation</title>');
  writeFileSync(join(root, 'bench.html'), BENCH);
  writeFileSync(join(root, 'assets', 'bench-abc.js'), 'bench();');
  writeFileSync(join(root, 'assets', 'index-abc.js'), 'index();');
  for (const name of [
    'Bench.html',
    'BENCH.HTML',
    'bench.html.',
    'bench.html ',
    'bench.html::$DATA',
  ]) {
    symlinkSync(join(root, 'bench.html'), join(root, name));
  }
  symlinkSync(join(root, 'assets', 'bench-abc.js'), join(root, 'assets', 'bench-abc.js.'));
  symlinkSync(join(root, 'assets'), join(root, 'assets.'));
  app = Fastify();
  await serveUiFiles(app, root, { sourceMaps: true });
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as AddressInfo).port;
});

afterAll(async () => {
  await app.close();
  rmSync(root, { recursive: true, force: true });
});

describe('the listeners serve the built renderer', () => {
  it('serves the page and its scripts', async () => {
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>Labstation</title>');
    expect(await get('/index.html')).toMatchObject({ status: 200 });
    expect(await get('/assets/index-abc.js')).toEqual({ status: 200, body: 'index();' });
  });

  it('never serves the bench page under any spelling that opens it on Windows or macOS (404)', async () => {
    for (const path of [
      '/bench.html',
      '/Bench.html',
      '/BENCH.HTML',
      '/bench.html.',
      '/bench.html%20',
      '/bench.html%2E',
      '/bench.html::$DATA',
      '/bench.html%3A%3A$DATA',
      '/assets/bench-abc.js',
      '/assets/bench-abc.js.',
      '/assets./bench-abc.js',
      '/assets./index-abc.js',
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(404);
      // The not-found answer names the path: the page's and the script's content are looked for.
      expect(answer.body, path).not.toContain(BENCH);
      expect(answer.body, path).not.toContain('bench();');
    }
  });

  // Mutation: the whole path decoded at once (a '%2f' became a separator: GET found the file,
  // and the listeners' 405 then allowed GET), and names that are not plain left to the file
  // sender (403).
  it('reads each name of a path apart: an encoded slash, dot or NUL names no file (404)', async () => {
    for (const path of [
      '/assets%2findex-abc.js',
      '/assets%2Findex-abc.js',
      '/%2e',
      '/.%2e/',
      '/assets/%2e%2e/index.html',
      '/index.html%00',
      '/assets/..%5c..%5cetc%5cpasswd',
      '/assets//index-abc.js',
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(404);
      expect(answer.body, path).not.toContain('index();');
    }
    // Encoded plain names are names: served.
    expect(await get('/assets/index%2Dabc.js')).toEqual({ status: 200, body: 'index();' });
  });
});
