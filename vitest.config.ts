import { defineConfig } from 'vitest/config';

// Tests run from tsc's output (dist/): type-graphql and MikroORM rely on decorator metadata that
// esbuild does not emit. `npm test` compiles first.
export default defineConfig({
  test: {
    include: ['dist/**/*.test.js'],
    globalSetup: ['dist/test/helpers/global-setup.js'],
    setupFiles: ['dist/test/helpers/setup.js'],
    pool: 'forks',
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    reporters: ['default'],
  },
});
