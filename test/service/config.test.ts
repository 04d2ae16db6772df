import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { projectRoot } from '../../src/paths.js';
import { createTestDatabase } from '../helpers/service.js';

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

  it('selects S3 storage with S3_BUCKET and S3_CACHE_BUCKET, and refuses a half-given or bad S3 configuration (DESIGN §14)', () => {
    expect(loadConfig({})).toMatchObject({ storageBackend: 'fs', s3: undefined });
    const s3 = loadConfig({ S3_BUCKET: 'contents', S3_CACHE_BUCKET: 'page-images', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_FORCE_PATH_STYLE: 'true', S3_ACCESS_KEY_ID: 'id', S3_SECRET_ACCESS_KEY: 'secret' });
    expect(s3).toMatchObject({ storageBackend: 's3', s3: { bucket: 'contents', cacheBucket: 'page-images', endpoint: 'http://127.0.0.1:9000', region: 'us-east-1', forcePathStyle: true, accessKeyId: 'id', secretAccessKey: 'secret' } });
    // the file system stays the store during a migration back to it
    expect(loadConfig({ S3_BUCKET: 'contents', S3_CACHE_BUCKET: 'page-images', STORAGE_BACKEND: 'fs' }).storageBackend).toBe('fs');
    for (const [env, named] of [
      [{ S3_ENDPOINT: 'http://127.0.0.1:9000' }, /S3_BUCKET: required with S3_ENDPOINT/],
      [{ S3_BUCKET: 'contents' }, /S3_CACHE_BUCKET: required/],
      [{ S3_BUCKET: 'contents', S3_CACHE_BUCKET: 'contents' }, /S3_CACHE_BUCKET: must differ/],
      [{ S3_BUCKET: 'contents', S3_CACHE_BUCKET: 'cache', S3_ACCESS_KEY_ID: 'id' }, /both or neither/],
      [{ S3_BUCKET: 'Not_A_Bucket', S3_CACHE_BUCKET: 'cache' }, /S3_BUCKET: a bucket name/],
      [{ S3_BUCKET: 'contents', S3_CACHE_BUCKET: 'cache', S3_ENDPOINT: 'not a url' }, /S3_ENDPOINT/],
      [{ S3_BUCKET: 'contents', S3_CACHE_BUCKET: 'cache', S3_FORCE_PATH_STYLE: 'yes' }, /S3_FORCE_PATH_STYLE/],
      [{ STORAGE_BACKEND: 's3' }, /STORAGE_BACKEND: s3 needs S3_BUCKET/],
    ] as const) {
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(ConfigError);
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(named);
    }
  });

  it('stops the service at start with a message naming a bucket it cannot use', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'crs-config-'));
    try {
      const run = spawnSync(process.execPath, [path.join(projectRoot, 'dist/app/main.js')], {
        env: { ...process.env, DATABASE_URL: await createTestDatabase(), DATA_DIR: dataDir, PORT: '0', S3_BUCKET: 'contents', S3_CACHE_BUCKET: 'cache', S3_ENDPOINT: 'http://127.0.0.1:9', S3_FORCE_PATH_STYLE: 'true', S3_ACCESS_KEY_ID: 'id', S3_SECRET_ACCESS_KEY: 'secret' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain("S3 bucket 'contents' cannot be used");
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
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
