/**
 * The interactive docs page, `/docs`: Swagger UI (the swagger-ui-dist package, served by this
 * server so the page works offline) started by a script file of ours, under a strict
 * Content-Security-Policy: no inline script or style, no other origin.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // Swagger UI's stylesheet draws its icons as data: SVGs; downloads of answers are blob: URLs.
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

// URLs are relative to /docs, so the page also works behind a proxy that adds a path prefix.
export const DOCS_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Labstation server API</title>
    <link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png" />
    <link rel="stylesheet" href="docs/assets/swagger-ui.css" />
    <link rel="stylesheet" href="docs/assets/docs.css" />
  </head>
  <body>
    <noscript>This page needs JavaScript; the API is described in <a href="openapi.json">openapi.json</a>.</noscript>
    <div id="swagger-ui" data-spec-url="openapi.json"></div>
    <script src="docs/assets/swagger-ui-bundle.js"></script>
    <script src="docs/assets/docs.js"></script>
  </body>
</html>
`;

// Plain browser JavaScript. queryConfigEnabled stays off, so no link can make the page load
// another document; validatorUrl null keeps it from sending ours to a validator service.
const DOCS_JS = `'use strict';
window.addEventListener('load', function () {
  var root = document.getElementById('swagger-ui');
  SwaggerUIBundle({
    url: root.getAttribute('data-spec-url'),
    domNode: root,
    deepLinking: true,
    filter: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    displayRequestDuration: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

const DOCS_CSS = `html { box-sizing: border-box; overflow-y: scroll; }
*, *::before, *::after { box-sizing: inherit; }
body { margin: 0; background: #fafafa; }
`;

export interface DocsAsset {
  type: string;
  body: Buffer;
  etag: string;
}

const SWAGGER_FILES = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
} as const;

const OWN_FILES = {
  'docs.js': { type: 'text/javascript; charset=utf-8', text: DOCS_JS },
  'docs.css': { type: 'text/css; charset=utf-8', text: DOCS_CSS },
} as const;

export const DOCS_ASSET_NAMES = [...Object.keys(SWAGGER_FILES), ...Object.keys(OWN_FILES)] as (
  keyof typeof SWAGGER_FILES | keyof typeof OWN_FILES
)[];

export type DocsAssetName = (typeof DOCS_ASSET_NAMES)[number];

const loaded = new Map<DocsAssetName, Promise<DocsAsset>>();

/** One of the page's files, read once (Swagger UI's bundle is about 1.7 MB). */
export function docsAsset(name: DocsAssetName): Promise<DocsAsset> {
  let asset = loaded.get(name);
  if (!asset) {
    asset = loadAsset(name);
    loaded.set(name, asset);
    // A failed read is tried again on the next request.
    void asset.catch(() => loaded.delete(name));
  }
  return asset;
}

async function loadAsset(name: DocsAssetName): Promise<DocsAsset> {
  let type: string;
  let body: Buffer;
  if (name in OWN_FILES) {
    const own = OWN_FILES[name as keyof typeof OWN_FILES];
    type = own.type;
    body = Buffer.from(own.text, 'utf8');
  } else {
    type = SWAGGER_FILES[name as keyof typeof SWAGGER_FILES];
    body = await readFile(join(swaggerUiDir(), name));
  }
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { type, body, etag };
}

function swaggerUiDir(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}
