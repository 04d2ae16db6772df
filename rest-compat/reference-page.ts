import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import Router from '@koa/router';
import { BundledAsset, sendBundledAsset } from '../src/http/bundled-assets.js';

/*
 * The API reference page (DESIGN §13): Swagger UI from the swagger-ui-dist package, served by this
 * process, reading the OpenAPI document of the same origin. Nothing is fetched elsewhere: the page
 * names only its own assets, the validator badge (validator.swagger.io) is off, and the CSP allows
 * no other origin for scripts, styles, images, fonts or requests.
 */

export const referencePageCsp =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const page = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Content repository service: REST API</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/reference.js"></script>
</body>
</html>
`;

/** Starts Swagger UI on the document beside the page (`{base_url}/api/v1/openapi.json`): relative, so any base path works. */
const starter = `window.ui = SwaggerUIBundle({
  url: new URL('v1/openapi.json', window.location.href).href,
  dom_id: '#reference',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

/** The page and its assets, read and compressed once. */
export function referenceAssets(): Record<string, BundledAsset> {
  const dist = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return {
    '': new BundledAsset('text/html; charset=utf-8', page),
    '/swagger-ui-bundle.js': new BundledAsset('text/javascript; charset=utf-8', readFileSync(path.join(dist, 'swagger-ui-bundle.js'))),
    '/swagger-ui.css': new BundledAsset('text/css; charset=utf-8', readFileSync(path.join(dist, 'swagger-ui.css'))),
    '/reference.js': new BundledAsset('text/javascript; charset=utf-8', starter),
  };
}

/** `{base_url}/api/docs` and its assets under `{base_url}/api/docs/`. */
export function referencePageRouter(basePath: string): Router {
  const assets = referenceAssets();
  const router = new Router({ prefix: `${basePath}/api` });
  router.get('/docs', (ctx) => sendBundledAsset(ctx, assets['']!, { csp: referencePageCsp, cacheControl: 'no-cache' }));
  for (const name of Object.keys(assets).filter((name) => name !== '')) router.get(`/docs${name}`, (ctx) => sendBundledAsset(ctx, assets[name]!, { csp: referencePageCsp, cacheControl: 'no-cache' }));
  return router;
}
