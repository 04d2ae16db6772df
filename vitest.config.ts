import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

// Tests run from tsc's output (dist/): type-graphql and MikroORM rely on decorator metadata that
// esbuild does not emit. `npm test` compiles first.
export default defineConfig({
  // The one fix for graphql's dual package (npm installs one copy: `npm ls graphql`): Node loads its
  // CommonJS build (index.js, no `exports` map) for everyone, but vite would resolve our imports to
  // index.mjs — a second realm whose instanceof checks fail. Tests resolve it as Node does.
  resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }] },
  test: {
    include: ['dist/**/*.test.js'],
    globalSetup: ['dist/test/helpers/global-setup.js'],
    setupFiles: ['dist/test/helpers/setup.js'],
    pool: 'forks',
    // the service in the test process paces garbage collection of upload buffers as in production
    execArgv: ['--expose-gc'],
    maxWorkers: 3,
    // the helpers wait up to 60–90 s for a job or an extraction (finishedJob, extracted) and a service
    // process up to 90 s; tests of 10–25 s at load 12–15 went past 30 s at load 20–30 (two cores)
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    // expect.poll waits 1 s unless told: what a test polls for (an event relayed, a page updated) takes
    // longer on a loaded machine. A poll ends as soon as it holds, so only a failure waits the whole bound
    expect: { poll: { timeout: 15_000 } },
    reporters: ['default'],
  },
});
