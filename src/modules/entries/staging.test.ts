import { Readable } from 'node:stream';
import type { EntityManager, PostgreSqlConnection } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperationsBench, type OperationsBench } from '../../../test/helpers/operations.js';
import { createContent } from './contents.js';
import { receiveUpload, stageUpload, sweepUnreferencedFiles, uploadLifetimeMs } from './uploads.js';

let bench: OperationsBench;
beforeAll(async () => {
  bench = await createOperationsBench();
});
afterAll(() => bench?.stop());

const pendingRow = async (em: EntityManager, id: string) => {
  const [row] = await em.execute<Record<string, unknown>[]>(
    `select repository_id, mime_type, file_size, md5, state, creator, storage_path like '%' || id as path_is_id from resource where id = ?`,
    [id],
  );
  return row;
};

describe('an upload staged for its own request to claim (claimedInThisRequest)', () => {
  // the test database runs with synchronous_commit off (ephemeral): each connection is set to 'on' first
  const everyConnection = async <T>(em: EntityManager, statement: string) => {
    const pool = await (em.getConnection() as PostgreSqlConnection).getNativeClient();
    const clients = await Promise.all(Array.from({ length: Math.max(pool.totalCount, 1) }, () => pool.connect()));
    try {
      return await Promise.all(clients.map(async (client) => (await client.query(statement)).rows as T[]));
    } finally {
      for (const client of clients) client.release();
    }
  };

  it('records the same pending row as a durable staging, and leaves every pooled connection committing durably', async () => {
    const scope = await bench.scopeOf('admin', ['ADMIN']);
    await everyConnection(scope.em, 'set synchronous_commit = on');
    const bytes = Buffer.from('the same bytes either way');
    const durable = await stageUpload(scope, { source: Readable.from([bytes]), fileName: 'durable.txt' });
    const unflushed = await stageUpload(scope, { source: Readable.from([bytes]), fileName: 'unflushed.txt' }, { claimedInThisRequest: true });
    expect(await pendingRow(scope.em, unflushed.id)).toEqual(await pendingRow(scope.em, durable.id));
    expect(await pendingRow(scope.em, unflushed.id)).toMatchObject({ state: 'pending', creator: 'admin', file_size: '25', path_is_id: true });
    expect(await bench.services.contentStore.exists(unflushed.storagePath)).toBe(true);
    // the setting lasted for the staging's own transaction only
    const settings = await everyConnection<{ synchronous_commit: string }>(scope.em, 'show synchronous_commit');
    expect(new Set(settings.flat().map((row) => row.synchronous_commit))).toEqual(new Set(['on']));
  });

  it("inside a caller's transaction stages durably: that transaction's commit is left as it was", async () => {
    const scope = await bench.scopeOf('admin', ['ADMIN']);
    const setting = await scope.em.transactional(async (em) => {
      await em.execute('set local synchronous_commit = on');
      await stageUpload({ ...scope, em }, { source: Readable.from([Buffer.from('x')]), fileName: 'in-transaction.txt' }, { claimedInThisRequest: true });
      const [row] = await em.execute<{ synchronous_commit: string }[]>('show synchronous_commit');
      return row!.synchronous_commit;
    });
    expect(setting).toBe('on');
  });
});

describe("REST's create: the bytes placed before their row commits (createContent with received bytes)", () => {
  it('leaves, after a crash between the two, a file the unreferenced-file sweep removes once old enough; the bytes of a created content stay', async () => {
    const scope = await bench.scopeOf('admin', ['ADMIN']);
    const receive = (text: string, fileName: string) => receiveUpload(scope, { source: Readable.from([Buffer.from(text)]), fileName });
    const kept = await receive('a content made of these', 'kept.txt');
    const content = await createContent(scope, { received: kept, name: 'kept.txt' });
    expect(content.resourceId).toBe(kept.id);
    // what createContent does before its statement, and then the process dies: placed, no row
    const orphan = await receive('placed, then the process died', 'orphan.txt');
    await orphan.file.commit(orphan.storagePath);
    const store = bench.services.contentStore;
    const em = bench.services.orm.em.fork();

    // a create in flight holds its placed bytes for a moment: the periodic sweep (files older than an upload's lifetime) leaves them
    expect(await sweepUnreferencedFiles(em, bench.services, uploadLifetimeMs)).toMatchObject({ contents: 0 });
    expect(await store.exists(orphan.storagePath)).toBe(true);
    // once old enough (here: any age), the file no row names goes, and only it
    expect(await sweepUnreferencedFiles(em, bench.services, -60_000)).toMatchObject({ contents: 1 });
    expect(await store.exists(orphan.storagePath)).toBe(false);
    expect(await store.exists(kept.storagePath)).toBe(true);
  });
});
