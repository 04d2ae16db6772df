import { expect } from 'vitest';
import type { RestRoute } from '../../rest-compat/route.js';
import { restRouter } from '../../rest-compat/router.js';
import { newContent, newFolder, succeeded } from './entries.js';
import { call, json, startTestService, type TestService } from './service.js';

/** Where a test serves the REST rows a fast path replaced, beside it (test/rest/hot-reads.test.ts, search-direct.test.ts). */
export const referencePrefix = '/reference/api/v1';

/**
 * A test service that also serves `documentRows` (the rows as they were, running their GraphQL
 * documents) under `referencePrefix`, with three callers — the administrator, `reader` and `outsider`
 * — in a repository whose root ACL grants nothing (users read what an ACL grants them), and entries
 * whose answers differ by caller: the folder `team` (the reader may read it) holding `inner` and a
 * content `plan.txt` in two versions (`planV1`, `planV2`: tags, properties, a predecessor, a lock), and
 * the folder `secret` the reader may not read.
 */
export async function startBesideReference(documentRows: RestRoute[]): Promise<{ service: TestService; sessions: Record<string, string>; ids: Record<string, string> }> {
  const service = await startTestService({}, { moreRouters: (parts) => [restRouter({ ...parts, routes: documentRows, prefix: referencePrefix, version: 'reference' })] });
  const sessions: Record<string, string> = { admin: service.adminSession, reader: await service.createUserSession('reader'), outsider: await service.createUserSession('outsider') };
  const narrowed = await call(`${service.adminBase}/repository/acl?repositoryId=svc.repository.default&sessionId=${service.adminSession}`, json('PUT', { entries: [] }));
  expect(narrowed.status).toBe(200);

  const ids: Record<string, string> = {};
  ids.team = (await newFolder(service, 'team')).id;
  await succeeded(service, 'PUT', `/folder/${ids.team}/acl`, { entries: [{ principal: 'reader', permission: 'read' }] });
  ids.inner = (await newFolder(service, 'inner', ids.team)).id;
  ids.secret = (await newFolder(service, 'secret')).id;

  // versions, tags, properties, a lock: 1.0 → checked out → 2.0, then locked
  const plan = await newContent(service, { name: 'plan.txt', parentId: ids.team, tags: ['a', 'b'], properties: { k: 'v', n: 1 }, mimeType: 'text/plain' });
  ids.planV1 = plan.id;
  const copy = await succeeded(service, 'POST', `/content/${plan.id}/check-out`);
  ids.planV2 = (await succeeded(service, 'POST', `/content/${copy.id}/check-in`)).id;
  await succeeded(service, 'POST', `/content/${ids.planV2}/lock`);
  return { service, sessions, ids };
}
