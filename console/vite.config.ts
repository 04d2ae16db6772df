import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The web console (docs/console.md): Preact through Vite's own JSX transform, built into dist/console
// with hashed asset names; the service serves that folder at {base_url}/console/.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  // relative asset names: the page works under any BASE_PATH
  base: './',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // everything from the service's own origin, nothing inlined into the page (the CSP allows no inline script)
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    reportCompressedSize: true,
  },
});
