/**
 * The built UI (dist/renderer, from `npm run build`) as the desktop window gets it through
 * app://labstation: the page's scripts, preloads and styles, and the chunks the scripts import
 * (the code editor is loaded on demand), resolve under app://labstation/ to files of the build,
 * each with a type Chromium runs (a module script must come as JavaScript).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { APP_INDEX_URL, serveAppRequest } from '../../electron/core/desktop/appScheme.js';

const RENDERER_DIR = join(import.meta.dirname, '..', '..', 'dist', 'renderer');

async function get(url: string): Promise<Response> {
  return await serveAppRequest(new Request(url), RENDERER_DIR);
}

describe('the built UI under app://labstation', () => {
  it('serves the page and everything it loads, with the types a browser runs them as', async () => {
    const page = await get(APP_INDEX_URL);
    expect(page.status).toBe(200);
    const html = await page.text();
    const refs = [...html.matchAll(/<(script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)]
      .map((match) => ({ tag: match[1], ref: match[2] }))
      .filter(({ ref }) => !ref.startsWith('data:'));
    expect(refs.filter(({ tag }) => tag === 'script')).toHaveLength(1);

    const scripts: string[] = [];
    for (const { ref } of refs) {
      const url = new URL(ref, APP_INDEX_URL).href;
      expect(url.startsWith('app://labstation/assets/'), ref).toBe(true);
      const response = await get(url);
      expect(response.status, url).toBe(200);
      const type = response.headers.get('content-type');
      expect(type, url).toMatch(/^(text\/javascript|text\/css); charset=utf-8$/);
      if (type?.startsWith('text/javascript')) scripts.push(url);
    }

    // The chunks the scripts import, statically or on demand, relative to the script.
    const seen = new Set(scripts);
    for (let i = 0; i < scripts.length; i += 1) {
      const code = await (await get(scripts[i])).text();
      for (const [, ref] of code.matchAll(/"(\.\/[\w.-]+\.js)"/g)) {
        const url = new URL(ref, scripts[i]).href;
        if (seen.has(url)) continue;
        seen.add(url);
        const response = await get(url);
        expect(response.status, url).toBe(200);
        expect(response.headers.get('content-type'), url).toBe('text/javascript; charset=utf-8');
        scripts.push(url);
      }
    }
    expect(scripts.some((url) => /\/CodeEditor-[\w-]+\.js$/.test(url))).toBe(true);
  });

  it('hands out every file of the build as it is on disk, but the bench page', async () => {
    const names = [
      'index.html',
      ...(await readdir(join(RENDERER_DIR, 'assets'))).map((name) => `assets/${name}`),
    ];
    for (const name of names) {
      const response = await get(`app://labstation/${name}`);
      if (/^assets\/bench-/.test(name)) {
        expect(response.status, name).toBe(404);
        continue;
      }
      expect(response.status, name).toBe(200);
      expect(response.headers.get('content-type'), name).not.toBe('application/octet-stream');
      // Buffer.equals: a deep compare of 2 MB of source map bytes takes seconds.
      const same = Buffer.from(await response.arrayBuffer()).equals(
        await readFile(join(RENDERER_DIR, name)),
      );
      expect(same, name).toBe(true);
    }
    expect((await get('app://labstation/bench.html')).status).toBe(404);
  });
});
