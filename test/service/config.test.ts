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
