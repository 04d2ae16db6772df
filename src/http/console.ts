import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import mime from 'mime-types';
import { notFound } from '../errors.js';
import { projectRoot } from '../paths.js';
import { BundledAsset, sendBundledAsset } from './bundled-assets.js';

/*
 * The web console (DESIGN §13, docs/console.md): the single-page application Vite builds from console/
 * into dist/console, served by this process at `{base_url}/console/`. Its scripts and styles carry a
 * content hash in their names, so they are cached for a year as immutable; the page itself is
 * revalidated on every load (no-cache) and names the current ones.
 */

/**
 * Scripts and styles of the console's own origin only; requests to this origin only (CSP Level 3's
 * 'self' also matches ws:/wss: of the same host, which is where graphql-ws subscribes); no inline
 * script, no style attribute in markup, no plug-in, no frame, no form posted elsewhere. `blob:` images:
 * previews of a chosen file.
 */
export const consoleCsp =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const consoleDirectory = path.join(projectRoot, 'dist', 'console');

const immutable = 'public, max-age=31536000, immutable';

function filesUnder(directory: string, prefix = ''): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(path.join(directory, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`],
  );
}

/** `{base_url}/console/` and its hashed assets under `{base_url}/console/assets/`; read once, at start. */
export function consoleRouter(basePath: string, directory = consoleDirectory): Router {
  const router = new Router({ strict: true });
  const built = existsSync(path.join(directory, 'index.html'));
  const assets = new Map<string, BundledAsset>(
    built ? filesUnder(directory).map((name) => [name, new BundledAsset(mime.contentType(path.extname(name)) || 'application/octet-stream', readFileSync(path.join(directory, name)))]) : [],
  );
  router.get(`${basePath}/console/`, async (ctx) => {
    const page = assets.get('index.html');
    if (!page) throw notFound('the console is not built: npm run build makes it (dist/console)');
    await sendBundledAsset(ctx, page, { csp: consoleCsp, cacheControl: 'no-cache' });
  });
  // without the slash the page's relative asset names would resolve one level up
  router.get(`${basePath}/console`, (ctx) => {
    ctx.status = 301;
    ctx.redirect(`${basePath}/console/`);
  });
  router.get(`${basePath}/console/assets/:name`, async (ctx) => {
    const asset = assets.get(`assets/${ctx.params.name}`);
    if (!asset) throw notFound(`no console asset '${ctx.params.name}'`);
    await sendBundledAsset(ctx, asset, { csp: consoleCsp, cacheControl: immutable });
  });
  return router;
}
