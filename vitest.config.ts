import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

// Tests run from tsc's output (dist/): type-graphql and MikroORM rely on decorator metadata that
// esbuild does not emit. `npm test` compiles first.
export default defineConfig({
  // one copy of graphql: vitest would load index.mjs for our imports and index.js for dependencies
  resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }] },
  test: {
    include: ['dist/**/*.test.js'],
    globalSetup: ['dist/test/helpers/global-setup.js'],
    setupFiles: ['dist/test/helpers/setup.js'],
    pool: 'forks',
    // the service in the test process paces garbage collection of upload buffers as in production
    execArgv: ['--expose-gc'],
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    reporters: ['default'],
  },
});
