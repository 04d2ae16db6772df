import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';

let service: TestService;
let userSession: string;

const check = (path: string, query: Record<string, string>, session: string | null = service.adminSession) => {
  const params = new URLSearchParams(query);
  if (session !== null) params.set('sessionId', session);
  return call(`${service.adminBase}/repository/connection-check/${path}?${params}`);
};
const entryNames = [
  'database connection configuration',
  'content storage check',
  'cache storage check',
  'content configuration check',
  'conversion check',
  'async configuration check',
  'fulltext configuration check',
];

beforeAll(async () => {
  service = await startTestService();
  userSession = await service.createUserSession('frida');
  await call(`${service.adminBase}/repository?sessionId=${service.adminSession}`, json('POST', { name: 'second', technicalName: 'second_tech', fullTextEnabled: false }));
});
afterAll(() => service?.stop());

describe('connection check (spec endpoint 10)', () => {
  it('answers a CheckResponse with every entry ok, by id, by name and by technical name', async () => {
    for (const [path, query] of [
      ['by-id', { repositoryId: 'svc.repository.second' }],
      ['by-name', { repositoryName: 'second' }],
      ['by-technical-name', { repositoryTechnicalName: 'second_tech' }],
    ] as const) {
      const { status, body } = await check(path, query);
      expect(status, path).toBe(200);
      expect(body).toMatchObject({
        _type: 'svc.model.deployment.service.repository.CheckResponse',
        _id: expect.any(String),
        checkStatus: 'ok',
        duration: expect.any(Number),
        elapsedTimeInMs: expect.any(Number),
        message: expect.stringContaining('second'),
      });
      expect(body.entries.map((e: { name: string }) => e.name)).toEqual(entryNames);
      for (const entry of body.entries) {
        expect(entry).toMatchObject({ _type: 'com.svc.model.check.service.CheckResultEntry', _id: expect.any(String), checkStatus: 'ok', detailsAsMarkdown: false, message: expect.any(String) });
      }
      expect(body.entries.find((e: { name: string }) => e.name === 'fulltext configuration check').message).toContain('disabled');
    }
  });

  it('answers 404 for an unknown repository, 400 for a malformed or missing key, 403 and 401', async () => {
    expect((await check('by-id', { repositoryId: 'svc.repository.nowhere' })).status).toBe(404);
    expect((await check('by-name', { repositoryName: 'nowhere' })).status).toBe(404);
    expect((await check('by-technical-name', { repositoryTechnicalName: 'nowhere' })).status).toBe(404);
    expect((await check('by-id', { repositoryId: 'second' })).status).toBe(400);
    expect((await check('by-id', {})).status).toBe(400);
    expect((await check('by-id', { repositoryId: 'svc.repository.second' }, userSession)).status).toBe(403);
    expect((await check('by-id', { repositoryId: 'svc.repository.second' }, null)).status).toBe(401);
  });

  it('runs once per request through the gateway, however many aliases ask for it', async () => {
    const aliases = Array.from({ length: 8 }, (_, i) => `c${i}: connectionCheck(repositoryName: "default") { _id checkStatus }`).join(' ');
    const answer = await service.graphql<Record<string, { _id: string; checkStatus: string }>>(`{ ${aliases} }`);
    expect(answer.errors).toBeUndefined();
    const ids = new Set(Object.values(answer.data!).map((result) => result._id));
    expect(ids.size).toBe(1);
    // a second request runs it again
    const again = await service.graphql<{ c: { _id: string } }>('{ c: connectionCheck(repositoryName: "default") { _id } }');
    expect(ids.has(again.data!.c._id)).toBe(false);
  });

  it('names the failing part: a cache storage folder that cannot be written', async () => {
    // as root, permissions do not stop a write: the storage's temporary folder becomes a file instead
    const probeArea = path.join(service.config.cacheStoragePath, '.tmp');
    await fs.rm(probeArea, { recursive: true, force: true });
    await fs.writeFile(probeArea, 'not a folder');
    await fs.chmod(service.config.cacheStoragePath, 0o555);
    try {
      const { body } = await check('by-name', { repositoryName: 'default' });
      expect(body.checkStatus).toBe('failed');
      expect(body.message).toContain('cache storage check');
      const failed = body.entries.filter((e: { checkStatus: string }) => e.checkStatus !== 'ok');
      expect(failed.map((e: { name: string }) => e.name)).toEqual(['cache storage check']);
      expect(failed[0].message).toContain('not writable');
    } finally {
      await fs.chmod(service.config.cacheStoragePath, 0o755);
      await fs.rm(probeArea, { force: true });
    }
    expect((await check('by-name', { repositoryName: 'default' })).body.checkStatus).toBe('ok');
  });

  it('names the failing part: the job system stopped', async () => {
    await service.services.jobs.stop();
    const { body } = await check('by-name', { repositoryName: 'default' });
    expect(body.checkStatus).toBe('failed');
    const failed = body.entries.filter((e: { checkStatus: string }) => e.checkStatus !== 'ok');
    expect(failed.map((e: { name: string }) => e.name)).toEqual(['async configuration check']);
    expect(failed[0].message).toContain('not running');
  });
});
