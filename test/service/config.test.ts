import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { projectRoot } from '../../src/paths.js';

describe('configuration (DESIGN §2)', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ PORT: 8080, HOST: '127.0.0.1', BASE_PATH: '', DATA_DIR: '.data', DEFAULT_REPOSITORY: 'default', SESSION_IDLE_MINUTES: 30 });
    expect(config.CONV_MAX_PDF_TO_IMAGE_MAX_NUMBER_OF_PAGES).toBe(10000);
    expect(config.contentStoragePath).toBe(path.resolve('.data/storage'));
  });

  it('accepts the settings-file names as aliases', () => {
    expect(loadConfig({ CONV_PDF_TO_IMAGE_MAX_NUMBER_OF_PAGES: '100' }).CONV_MAX_PDF_TO_IMAGE_MAX_NUMBER_OF_PAGES).toBe(100);
  });

  it('names every bad variable', () => {
    expect(() => loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', BASE_PATH: 'api/' })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', BASE_PATH: 'api/' });
    } catch (error) {
      expect((error as Error).message).toMatch(/PORT/);
      expect((error as Error).message).toMatch(/DATABASE_URL/);
      expect((error as Error).message).toMatch(/BASE_PATH/);
    }
  });

  it('reads the GraphQL switches and refuses bad CORS origins, flags and tokens', () => {
    expect(loadConfig({})).toMatchObject({ CORS_ORIGINS: [], GRAPHQL_INTROSPECTION: true, GATEWAY_HTTP_FAST_PATH: true, GATEWAY_SINGLE_SUBGRAPH_SHORTCUT: true });
    expect(loadConfig({}).METRICS_TOKEN).toBeUndefined();
    const set = loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:3000', GRAPHQL_INTROSPECTION: 'false', METRICS_TOKEN: 'a-long-enough-token' });
    expect(set).toMatchObject({ CORS_ORIGINS: ['https://a.example', 'http://localhost:3000'], GRAPHQL_INTROSPECTION: false, METRICS_TOKEN: 'a-long-enough-token' });
    for (const [name, value] of [
      ['CORS_ORIGINS', '*'],
      ['CORS_ORIGINS', 'null'],
      ['CORS_ORIGINS', 'https://a.example/path'],
      ['GRAPHQL_INTROSPECTION', 'yes'],
      ['METRICS_TOKEN', 'short'],
      ['GRAPHQL_MAX_RESULT_ITEMS', '0'],
    ]) {
      expect(() => loadConfig({ [name!]: value }), `${name}=${value}`).toThrow(new RegExp(name!));
    }
  });

  it('stops the service at start with a message naming the variable', () => {
    const run = spawnSync(process.execPath, [path.join(projectRoot, 'dist/app/main.js')], {
      env: { ...process.env, SESSION_IDLE_MINUTES: '-5' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('SESSION_IDLE_MINUTES');
  });
});
